#!/usr/bin/env bash
# `make test-cuda` and `make bench-cuda` on a machine with an NVIDIA GPU,
# CUDA torch and a C++ compiler, from a pack that tools/gpu/pack.sh made on
# the development machine, in one run of a fixed length:
#   1. the torch extension, built here against this machine's torch (the
#      only compile: its C++ ABI is this torch's);
#   2. the C ABI's CUDA test on the device;
#   3. the torch ops on CUDA tensors (tests/python/test_cuda_device.py);
#   4. bench/bench_cuda.py;
#   5. the compiler's tests with every differential suite also run on the
#      device (TF_CUDA_DEVICE=1), in one shard per core.
# Each step has its share of the time and a step that runs out is stopped
# and reported, so whatever ran comes back. OUT receives at most seven
# files: summary.txt (each step's status and seconds, and every failed
# test's name), env.txt, and one log per step.
#
# Usage: tools/gpu/check.sh PACK OUT [SECONDS]   (SECONDS: 540)
# TORCH_PY: the python with CUDA torch (looked for when unset).
# TF_CUDA_DRIVER_LIBRARY: the driver (libcuda.so.1). A dry run on any
# machine names the emulated driver there and the emulated cuBLAS in
# TF_CUBLAS_LIBRARY (a real cuBLAS cannot start on the emulated device);
# the torch steps then find no GPU.
set -uo pipefail
pack=$(readlink -f "$1")
out=$(mkdir -p "$2" && readlink -f "$2")
budget=${3:-540}
root=$(cd "$(dirname "$0")/../.." && pwd)
# Without TORCH_PY: the first python on the usual paths whose torch sees a
# GPU, else the first with torch, else python3 (the torch steps then say why).
find_torch_python() {
  local p with_torch=
  for p in python3 python /opt/conda/bin/python /usr/local/bin/python3 /usr/bin/python3; do
    command -v "$p" > /dev/null || continue
    if "$p" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
      echo "$p"
      return
    fi
    [[ -z $with_torch ]] && "$p" -c 'import torch' 2>/dev/null && with_torch=$p
  done
  echo "${with_torch:-python3}"
}
py=${TORCH_PY:-$(find_torch_python)}
t0=$SECONDS
left() { echo $((budget - (SECONDS - t0))); }

work=$(mktemp -d)
tar -xJf "$pack" -C "$work"
lib=$work/lib
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! ldconfig -p | grep -q 'libgomp\.so\.1 '; then LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$lib/fallback; fi
# NVRTC and cuBLAS: the machine's toolkit where it has one, and the copies
# a pip-installed CUDA torch brings (site-packages/nvidia/...), which the C
# programs would not find on the loader's path; of the NVRTCs found, the
# library takes one the driver loads code from.
torch_cuda_libs=$("$py" - 2>/dev/null <<'PY'
import glob, os, sys
roots = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
dirs = sorted({os.path.dirname(f) for r in roots for name in ("libnvrtc.so.*", "libcublas.so.*")
               for f in glob.glob(os.path.join(r, "nvidia", "**", name), recursive=True)})
print(":".join(dirs))
PY
)
[[ -n $torch_cuda_libs ]] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$torch_cuda_libs
export TF_CUDA_DRIVER_LIBRARY=${TF_CUDA_DRIVER_LIBRARY:-libcuda.so.1}
export TILEFOUNDRY_LIB_DIR=$lib
export PYTHONPATH=$root/torch_ext/python${PYTHONPATH:+:$PYTHONPATH}
# pytest from the pack's wheels where this python has none.
if ! "$py" -c 'import pytest' 2>/dev/null && compgen -G "$work/wheels/*.whl" > /dev/null; then
  for w in "$work"/wheels/*.whl; do "$py" -m zipfile -e "$w" "$work/python"; done
  PYTHONPATH=$PYTHONPATH:$work/python
fi
export TF_CACHE_DIR=$work/cache PYTHONUNBUFFERED=1
mkdir -p "$TF_CACHE_DIR"
cores=$(nproc)
export py root lib work cores  # for the steps' functions, run by timeout in a child bash

summary=$out/summary.txt
: > "$summary"
# step NAME SECONDS COMMAND...: runs it with a time limit, logs to NAME.log
# (a function of this script is exported and run through bash).
step() {
  local name=$1 limit=$2 s=$SECONDS rc
  shift 2
  (( limit > $(left) )) && limit=$(left)
  if (( limit < 10 )); then
    echo "$name: not run (out of time)" >> "$summary"
    return
  fi
  if [[ $(type -t "$1") == function ]]; then
    export -f "$1"
    set -- bash -c '"$@"' bash "$@"
  fi
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  case $rc in
    0) echo "$name: passed in $((SECONDS - s)) s" >> "$summary" ;;
    124|137) echo "$name: STOPPED at its limit of $limit s" >> "$summary" ;;
    *) echo "$name: FAILED (exit $rc) in $((SECONDS - s)) s" >> "$summary" ;;
  esac
}

{
  echo "root: $root  pack: $pack  cores: $cores  budget: $budget s  python: $py"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
  "$py" -c 'import pytest; print("pytest", pytest.__version__, pytest.__file__)' 2>&1
  "$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)' 2>&1
  command -v c++ && c++ --version | head -1
  ldd "$work/bin/tf_compiler_tests" | grep 'not found'
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ldconfig -p | grep -E 'lib(nvrtc|cublas|cuda)\.so' | head -8
} > "$out/env.txt" 2>&1

# 1. The extension, with torch's own flags for extensions (C++ standard,
#    ABI), as a plain library loaded by torch.ops.load_library. torch's
#    loader needs ninja, which torch does not depend on and which a machine
#    that reaches no package index may lack: without it, the compiler
#    directly, one process per source, with the flags the loader would pass.
build_torch_ext() {
  "$py" - "$root" "$lib" "$work/torch_ext" <<'PY'
import os, shutil, subprocess, sys, glob, torch
from torch.utils import cpp_extension
root, lib, build = sys.argv[1:]
os.makedirs(build, exist_ok=True)
sources = sorted(glob.glob(f"{root}/torch_ext/src/*.cc"))
includes = [f"{root}/include", f"{root}/torch_ext/src"]
# torch 1.x builds extensions as C++14; ours needs 17 (2.x's own default).
std = ["-std=c++17"] if int(torch.__version__.split(".")[0]) < 2 else []
built = f"{build}/tilefoundry_torch.so"
if cpp_extension.is_ninja_available():
    cpp_extension.load(
        name="tilefoundry_torch", sources=sources, extra_cflags=std, extra_include_paths=includes,
        extra_ldflags=[f"-L{lib}", "-ltilefoundry"], build_directory=build, is_python_module=False, verbose=True)
else:
    print("no ninja: compiling with", os.environ.get("CXX", "c++"), "directly")
    cxx = os.environ.get("CXX", "c++")
    flags = ["-O2", "-fPIC", "-std=c++17", f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
             "-DTORCH_EXTENSION_NAME=tilefoundry_torch", "-DTORCH_API_INCLUDE_EXTENSION_H"]
    flags += [f"-I{p}" for p in includes] + [f"-isystem{p}" for p in cpp_extension.include_paths()]
    objects = [f"{build}/{os.path.basename(s)}.o" for s in sources]
    jobs = [subprocess.Popen([cxx, *flags, "-c", s, "-o", o]) for s, o in zip(sources, objects)]
    if any(j.wait() != 0 for j in jobs):
        sys.exit("compiling the extension failed")
    link = [f"-L{p}" for p in cpp_extension.library_paths()] + ["-lc10", "-ltorch", "-ltorch_cpu"]
    subprocess.run([cxx, "-shared", *objects, "-o", built, f"-L{lib}", "-ltilefoundry", *link], check=True)
shutil.copy(built, f"{lib}/libtilefoundry_torch.so")
with open(f"{lib}/libtilefoundry_torch.torch-version", "w") as f:
    f.write(torch.__version__ + "\n")
print("built", f"{lib}/libtilefoundry_torch.so", "against torch", torch.__version__)
PY
}
export MAX_JOBS=$cores
step torch_ext 150 build_torch_ext

# 2. The C ABI on the device (the emulated one's own mode in a dry run).
mode=device
[[ $TF_CUDA_DRIVER_LIBRARY == *emulated* ]] && mode=emulated
step capi 60 "$work/bin/tf_capi_test_cuda" "$mode"

# 3. The torch ops on CUDA tensors.
step python 120 "$py" -m pytest -q -rs "$root/tests/python/test_cuda_device.py"
tail -3 "$out/python.log" | sed 's/^/  /' >> "$summary"

# 4. The bench: CUDA kernels against torch eager and torch.compile.
step bench 180 "$py" "$root/bench/bench_cuda.py"

# 5. The compiler's tests, the differential suites through the device too:
#    the longest step, last, with the time that is left. Each shard keeps
#    its own log, so a stopped step still reports what ran.
compiler_shards() {
  local i pids=() rc=0
  for ((i = 0; i < cores; ++i)); do
    GTEST_TOTAL_SHARDS=$cores GTEST_SHARD_INDEX=$i TF_CUDA_DEVICE=1 \
      "$work/bin/tf_compiler_tests" --gtest_brief=1 > "$work/shard.$i.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < cores; ++i)); do wait "${pids[$i]}" || rc=1; done
  return $rc
}
step compiler 600 compiler_shards
cat "$work"/shard.*.log >> "$out/compiler.log" 2>/dev/null
awk '/^\[  PASSED  \] [0-9]+ test/ {p += $4} /^\[  SKIPPED \] [0-9]+ test/ {s += $4}
     END {print "  passed " p + 0 ", skipped " s + 0}' "$out/compiler.log" >> "$summary"
grep -h '^\[  FAILED  \] [A-Za-z]' "$out/compiler.log" | sort -u | sed 's/^/  /' >> "$summary"

echo "total: $((SECONDS - t0)) s of $budget" >> "$summary"
cat "$summary"
rm -rf "$work"
