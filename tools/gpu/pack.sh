#!/usr/bin/env bash
# Packs what tools/gpu/check.sh runs on a machine with an NVIDIA GPU: the
# library and the two test programs of `make test-cuda`, built here, and
# the shared libraries they need that such a machine may lack (OpenBLAS,
# oneDNN and theirs), and pytest's wheels. A GPU machine with CUDA torch and a C++ compiler
# then needs none of this project's build dependencies (GoogleTest,
# OpenBLAS and oneDNN headers, Debian's libtorch): check.sh builds only
# the torch extension there, against that machine's own torch.
#
# Usage: make gpu-pack, which builds first; or tools/gpu/pack.sh [DEST]
# after make build (DEST: build/gpu-pack). Writes DEST/pack.tar.xz, which
# travels to the GPU machine beside the source tree, and refuses one over
# 56 MiB.
#
# Left out on purpose: glibc and the compiler's runtime (libstdc++,
# libgcc_s), which a machine with a newer C++ compiler has in newer,
# compatible versions, and which must not shadow the ones its torch
# needs. libgomp goes into fallback/, used only where the machine has none.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-build}
dest=${1:-$build/gpu-pack}

stage=$dest/stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib/fallback"
for prog in tf_compiler_tests tf_capi_test_cuda; do
  strip -o "$stage/bin/$prog" "$build/bin/$prog"
done
lib=$(readlink -f "$build/lib/libtilefoundry.so")
soname=$(basename "$(readlink "$build/lib/libtilefoundry.so")")  # libtilefoundry.so.0
strip -o "$stage/lib/$soname" "$lib"
ln -s "$soname" "$stage/lib/libtilefoundry.so"

# Every shared library the programs load, but glibc's and the compiler's.
ldd "$build/bin/tf_compiler_tests" "$build/bin/tf_capi_test_cuda" "$lib" |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    case $soname in
      libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) ;;
      libtilefoundry.so*) ;;
      libgomp.so.*) cp -L "$path" "$stage/lib/fallback/$soname" ;;
      *) cp -L "$path" "$stage/lib/$soname" ;;
    esac
  done

# pytest, pure-Python wheels, for a GPU machine whose python lacks it (torch
# does not depend on it, and the machine may reach no package index);
# check.sh uses them only there. pip's own index configuration applies.
mkdir -p "$stage/wheels"
if ! "${PIP_PYTHON:-python3}" -m pip download -q --no-deps --only-binary=:all: --platform any \
      --python-version 3.10 --implementation py -d "$stage/wheels" 'pytest>=8' 'pluggy>=1.6' 'iniconfig>=2' \
      'packaging>=24' 'pygments>=2.15' exceptiongroup tomli typing_extensions; then
  echo "pack: no pytest wheels (pip download failed): a GPU machine must bring its own pytest" >&2
fi

tar -cf - -C "$stage" . | xz -T0 -6 > "$dest/pack.tar.xz"
rm -rf "$stage"
bytes=$(stat -c %s "$dest/pack.tar.xz")
echo "pack: $dest/pack.tar.xz, $((bytes >> 20)) MiB"
if (( bytes > 56 << 20 )); then
  echo "pack: over 56 MiB" >&2
  exit 1
fi
