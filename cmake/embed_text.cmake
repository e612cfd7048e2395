# Writes OUTPUT, a C++ source defining `const char* NAMESPACE::FUNCTION()`
# that returns the text of INPUT unchanged, as a raw string literal. Run as a build
# step (cmake -P), so an edit of INPUT rebuilds what embeds it. Used for the
# scalar numerics generated kernels share with the evaluator
# (core/runtime/scalar_numerics.h -> core/compiler/prelude.cc).
#   cmake -DINPUT=... -DOUTPUT=... -DNAMESPACE=... -DFUNCTION=... -DINCLUDE=... -P embed_text.cmake
foreach(var INPUT OUTPUT NAMESPACE FUNCTION INCLUDE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: ${var} is not set")
  endif()
endforeach()

file(READ "${INPUT}" text)
# The literal ends at `)DELIM"`: refuse a text that contains it rather than
# cut the text short.
set(delim "TFEMBED")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains the raw-string delimiter )${delim}\"")
endif()

file(RELATIVE_PATH shown "${CMAKE_CURRENT_LIST_DIR}/.." "${INPUT}")
set(source "// Generated from ${shown} by cmake/embed_text.cmake; do not edit.
#include \"${INCLUDE}\"

namespace ${NAMESPACE} {

const char* ${FUNCTION}() {
  return R\"${delim}(${text})${delim}\";
}

}  // namespace ${NAMESPACE}
")

# Rewrite only on a change, so an unrelated rebuild recompiles nothing.
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL source)
  file(WRITE "${OUTPUT}" "${source}")
endif()
