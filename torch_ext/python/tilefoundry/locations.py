"""Where an installed TileFoundry keeps what C and C++ consumers need.

A wheel installs with the package's directory as its prefix: lib/ (the
shared libraries), include/ (tilefoundry/tilefoundry.h and dlpack/dlpack.h)
and lib/cmake/TileFoundry (the package config for find_package). In a source
tree (PYTHONPATH=torch_ext/python) nothing is installed and these raise.
"""
from pathlib import Path

from . import _lib


def _installed(relative: str) -> Path:
    path = _lib.package_dir() / relative
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist: this tilefoundry package runs from a source tree, not "
            "an install; install it (`pip install --no-build-isolation .`) or use "
            "`make install` and its prefix")
    return path


def cmake_prefix_path() -> str:
    """The prefix to add to CMAKE_PREFIX_PATH for find_package(TileFoundry)."""
    _installed("lib/cmake/TileFoundry/TileFoundryConfig.cmake")
    return str(_lib.package_dir())


def cmake_dir() -> str:
    """The directory holding TileFoundryConfig.cmake (TileFoundry_DIR)."""
    return str(_installed("lib/cmake/TileFoundry"))


def include_dir() -> str:
    """The directory to add to the include path for <tilefoundry/tilefoundry.h>."""
    return str(_installed("include"))


def library_dir() -> str:
    """The directory holding libtilefoundry.so (and libtilefoundry_torch.so)."""
    return str(_lib.find_library("libtilefoundry.so").parent)
