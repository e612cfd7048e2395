"""python -m tilefoundry: where the installed package keeps its C/C++ parts.

    cmake -DCMAKE_PREFIX_PATH="$(python -m tilefoundry --cmake-prefix-path)" ...
    cmake -DTileFoundry_DIR="$(python -m tilefoundry --cmake-dir)" ...
"""
import argparse
import sys

from . import __version__, abi_version, locations


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tilefoundry", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--cmake-dir", action="store_true", help="directory of TileFoundryConfig.cmake")
    group.add_argument("--cmake-prefix-path", action="store_true", help="prefix for CMAKE_PREFIX_PATH")
    group.add_argument("--include-dir", action="store_true", help="include directory of the C header")
    group.add_argument("--lib-dir", action="store_true", help="directory of libtilefoundry.so")
    group.add_argument("--version", action="store_true", help="package version and C ABI version")
    args = parser.parse_args(argv)
    try:
        if args.version:
            abi = abi_version()
            print(f"tilefoundry {__version__} (C ABI {abi >> 16}.{abi & 0xFFFF})")
        else:
            print({"cmake_dir": locations.cmake_dir, "cmake_prefix_path": locations.cmake_prefix_path,
                   "include_dir": locations.include_dir,
                   "lib_dir": locations.library_dir}[next(k for k, v in vars(args).items() if v)]())
    except (FileNotFoundError, OSError) as e:
        print(f"python -m tilefoundry: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
