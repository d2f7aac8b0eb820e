# uninstall.cmake — remove what the last `make install` / `cmake --install`
# from this build directory installed, as listed in its install manifest:
#
#   cmake -DMANIFEST=build/install_manifest.txt -P cmake/uninstall.cmake
#
# Directories of amq's own (…/include/amq, …/cmake/amq, the Python package
# with the bytecode python3 left in it) are removed when they end up empty; shared directories (bin, lib, share/man) never are.
if(NOT DEFINED MANIFEST OR NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "amq: nothing to uninstall: no install manifest "
                      "'${MANIFEST}' (install from this build directory first)")
endif()
file(STRINGS "${MANIFEST}" files)
set(dirs "")
foreach(f IN LISTS files)
  set(path "$ENV{DESTDIR}${f}")
  if(EXISTS "${path}" OR IS_SYMLINK "${path}")
    file(REMOVE "${path}")
    message(STATUS "Removed: ${path}")
  endif()
  get_filename_component(dir "${path}" DIRECTORY)
  list(APPEND dirs "${dir}")
endforeach()
list(REMOVE_DUPLICATES dirs)
foreach(dir IN LISTS dirs)
  get_filename_component(name "${dir}" NAME)
  if(name STREQUAL "amq")  # what python3 compiled of the installed package
    file(REMOVE_RECURSE "${dir}/__pycache__")
  endif()
  file(GLOB left "${dir}/*")
  if(name STREQUAL "amq" AND IS_DIRECTORY "${dir}" AND NOT left)
    file(REMOVE_RECURSE "${dir}")
    message(STATUS "Removed: ${dir}")
  endif()
endforeach()
execute_process(COMMAND id -u OUTPUT_VARIABLE uid
                OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(LDCONFIG ldconfig PATHS /sbin /usr/sbin)
if("$ENV{DESTDIR}" STREQUAL "" AND uid STREQUAL "0" AND LDCONFIG)
  execute_process(COMMAND ${LDCONFIG})
endif()
