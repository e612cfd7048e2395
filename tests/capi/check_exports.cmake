# Checks the dynamic symbol table of libtilefoundry.so:
#  - every exported (defined) symbol starts with tf_;
#  - the exports equal the sorted manifest symbols.txt;
#  - the manifest equals the functions tilefoundry.h declares.
# Usage: cmake -DLIB=<libtilefoundry.so> -DMANIFEST=<symbols.txt> -DHEADER=<tilefoundry.h>
#              [-DNM=nm] -P check_exports.cmake
if(NOT NM)
  set(NM nm)
endif()
execute_process(COMMAND ${NM} -D --defined-only ${LIB}
                OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc ERROR_VARIABLE nm_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}: ${nm_err}")
endif()

# "<address> <type> <name>[@version]" per line.
string(REPLACE "\n" ";" lines "${nm_out}")
set(exported)
set(leaks)
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([^ @]+)")
    set(sym ${CMAKE_MATCH_1})
    list(APPEND exported ${sym})
    if(NOT sym MATCHES "^tf_")
      list(APPEND leaks ${sym})
    endif()
  endif()
endforeach()
list(SORT exported)
list(REMOVE_DUPLICATES exported)
list(LENGTH exported n_exported)

file(STRINGS ${MANIFEST} manifest)
list(SORT manifest)

file(READ ${HEADER} header_text)
string(REGEX MATCHALL "TF_API[^;]*[ *](tf_[a-z0-9_]+)\\(" decls "${header_text}")
set(declared)
foreach(d IN LISTS decls)
  string(REGEX MATCH "(tf_[a-z0-9_]+)\\($" m "${d}")
  list(APPEND declared ${CMAKE_MATCH_1})
endforeach()
list(SORT declared)

set(ok TRUE)
if(leaks)
  list(LENGTH leaks n_leaks)
  list(SUBLIST leaks 0 20 some)
  message(SEND_ERROR "${n_leaks} exported symbols do not start with tf_, e.g.: ${some}")
  set(ok FALSE)
endif()
if(NOT exported STREQUAL manifest)
  message(SEND_ERROR "exports differ from ${MANIFEST}\n  exported: ${exported}\n  manifest: ${manifest}")
  set(ok FALSE)
endif()
if(NOT declared STREQUAL manifest)
  message(SEND_ERROR "tilefoundry.h declarations differ from ${MANIFEST}\n  declared: ${declared}\n  manifest: ${manifest}")
  set(ok FALSE)
endif()
if(ok)
  message(STATUS "${n_exported} exported symbols, all tf_*, equal to the manifest and the header")
  message(STATUS "3 passed, 0 failed")
endif()
