# The torch the extension is built against: the torch of the Python this build
# is for (Python3_EXECUTABLE from the Makefile, Python_EXECUTABLE from the
# wheel build), so that `pip install` into a torch 2.x venv builds against that
# venv's torch and never against another one on the system. Its package root
# and share/cmake go first in CMAKE_PREFIX_PATH: TorchConfig's find_library
# then takes libtorch/libc10 from the same torch as the headers (see
# torch_ext/CMakeLists.txt, which refuses a mix). A Python without torch, or a
# torch without CMake files (Debian's python3-torch: its CMake package is
# libtorch-dev's), leaves the search to CMake's defaults.
#
# Sets TF_HAVE_TORCH, and TF_TORCH_VERSION (the release the extension is built
# against, recorded next to the library for the import-time check).

set(_tf_py "${Python_EXECUTABLE}")
if(NOT _tf_py)
  set(_tf_py "${Python3_EXECUTABLE}")
endif()
if(_tf_py AND NOT TF_BUILD_TORCH STREQUAL "OFF")
  execute_process(
    COMMAND "${_tf_py}" -c "import os, torch, torch.utils as u; print(os.path.dirname(torch.__file__) + ';' + u.cmake_prefix_path)"
    OUTPUT_VARIABLE _tf_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _tf_rc ERROR_QUIET)
  if(_tf_rc EQUAL 0 AND _tf_torch_prefix)
    list(PREPEND CMAKE_PREFIX_PATH ${_tf_torch_prefix})
  endif()
endif()

if(TF_BUILD_TORCH STREQUAL "AUTO")
  find_package(Torch QUIET)
  set(TF_HAVE_TORCH ${Torch_FOUND})
  if(NOT Torch_FOUND)
    message(STATUS "TileFoundry: no torch found: building without the torch extension "
      "(a pip build needs --no-build-isolation to see the environment's torch)")
  endif()
elseif(TF_BUILD_TORCH)
  find_package(Torch REQUIRED)
  set(TF_HAVE_TORCH ON)
else()
  set(TF_HAVE_TORCH OFF)
endif()

if(TF_HAVE_TORCH)
  set(TF_TORCH_VERSION "${Torch_VERSION}")
  message(STATUS "TileFoundry: torch extension against torch ${TF_TORCH_VERSION} at ${TORCH_INSTALL_PREFIX}")
endif()
