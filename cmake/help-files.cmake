# help-files.cmake — write amq.1 and the bash completion from the built
# tool's own help texts (`amq help --man`, `amq help --completion`):
#
#   cmake -DAMQ=path/to/amq -DDIR=outdir -P cmake/help-files.cmake
foreach(pair "--man;amq.1" "--completion;amq.bash-completion")
  list(GET pair 0 flag)
  list(GET pair 1 file)
  execute_process(COMMAND "${AMQ}" help ${flag} OUTPUT_FILE "${DIR}/${file}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "amq help ${flag} failed (${rc})")
  endif()
endforeach()
