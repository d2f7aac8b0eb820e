# help-files.cmake — write a tool's man page and its bash, zsh and fish
# completions from the built tool's own help texts (`TOOL help --man`,
# `TOOL help --completion SHELL`):
#
#   cmake -DTOOL=path/to/amq -DNAME=amq -DDIR=outdir -P cmake/help-files.cmake
#
# writes outdir/NAME.1 and outdir/NAME.{bash,zsh,fish}-completion.
function(amq_help_file file)
  execute_process(COMMAND "${TOOL}" help ${ARGN} OUTPUT_FILE "${DIR}/${file}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NAME} help ${ARGN} failed (${rc})")
  endif()
endfunction()

amq_help_file(${NAME}.1 --man)
foreach(shell bash zsh fish)
  amq_help_file(${NAME}.${shell}-completion --completion ${shell})
endforeach()
