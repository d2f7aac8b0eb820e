# help-files.cmake — write amq.1 and the bash, zsh and fish completions
# from the built tool's own help texts (`amq help --man`,
# `amq help --completion SHELL`):
#
#   cmake -DAMQ=path/to/amq -DDIR=outdir -P cmake/help-files.cmake
function(amq_help_file file)
  execute_process(COMMAND "${AMQ}" help ${ARGN} OUTPUT_FILE "${DIR}/${file}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "amq help ${ARGN} failed (${rc})")
  endif()
endfunction()

amq_help_file(amq.1 --man)
foreach(shell bash zsh fish)
  amq_help_file(amq.${shell}-completion --completion ${shell})
endforeach()
