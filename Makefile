# TileFoundry — the README's commands. Every target first makes sure the
# Debian packages are there (scripts/setup.sh installs only what is missing).
BUILD   ?= build
PREFIX  ?= /usr/local
PYTHON  ?= /usr/bin/python3
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
export PYTHONPATH := $(CURDIR)/torch_ext/python$(if $(PYTHONPATH),:$(PYTHONPATH))
export TILEFOUNDRY_LIB_DIR := $(CURDIR)/$(BUILD)/lib

.PHONY: all setup configure build demo test test-core test-python test-long bench install clean \
        test-asan test-tsan fuzz test-wheel test-torch2 torch2-venv abi-baseline san-setup test-cuda bench-cuda gpu-pack

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) -G Ninja -DPython3_EXECUTABLE=$(PYTHON) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: setup configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bin/tf_example_c examples/c/kernels.tf
	$(PYTHON) examples/python/llama_block.py
	$(PYTHON) examples/python_ctypes/rmsnorm.py
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe \
	  $(BUILD)/bin/tf_example_mpi examples/mpi/mlp.tf
	@if command -v rustc >/dev/null; then bash examples/rust/run.sh $(BUILD); \
	 else echo "demo: rustc not found, skipping examples/rust"; fi

test-core: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python: build
	$(PYTHON) -m pytest -q tests/python

test: test-core test-python

# On a machine with an NVIDIA GPU and its driver (docs/cuda.md): the C ABI's
# CUDA test on the device, the compiler's device tests and its whole
# differential suite (random programs included) run through the CUDA backend
# against the evaluator, and the torch ops on CUDA tensors (those need a
# python whose torch has CUDA and sees this tilefoundry: TORCH_PY, e.g. a
# venv where `pip install --no-build-isolation .` ran; they skip, saying so,
# under Debian's CPU-only torch).
CUDA_DRIVER ?= libcuda.so.1
TORCH_PY    ?= $(PYTHON)
test-cuda: build
	TF_CUDA_DRIVER_LIBRARY=$(CUDA_DRIVER) $(BUILD)/bin/tf_capi_test_cuda device
	TF_CUDA_DRIVER_LIBRARY=$(CUDA_DRIVER) TF_CUDA_DEVICE=1 $(BUILD)/bin/tf_compiler_tests
	TF_CUDA_DRIVER_LIBRARY=$(CUDA_DRIVER) $(TORCH_PY) -m pytest -q -rs tests/python/test_cuda_device.py

# Compiled vs evaluator on 5000 random programs: 50 compiler runs of 100
# generated kernels each, about 80 minutes on two cores.
test-long: build
	TF_RANDOM_PROGRAMS=5000 $(BUILD)/bin/tf_compiler_tests --gtest_filter=RandomPrograms.*

# The torch.compile column needs a torch 2.x: make test-torch2's venv, when built.
bench: build
	$(PYTHON) bench/bench.py $(if $(wildcard $(TORCH2_PY)),--torch2-python $(TORCH2_PY))

# On a machine with an NVIDIA GPU: the CUDA kernels against torch eager and
# torch.compile on the same device, with GB/s against its copy bandwidth
# (bench/bench_cuda.py; TORCH_PY as for test-cuda).
bench-cuda: build
	TF_CUDA_DRIVER_LIBRARY=$(CUDA_DRIVER) $(TORCH_PY) bench/bench_cuda.py

# Both of the above on a GPU machine without this project's build
# dependencies: pack here, then tools/gpu/check.sh there (docs/cuda.md).
gpu-pack: build
	bash tools/gpu/pack.sh $(BUILD)/gpu-pack

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)

# --- robustness (docs/robustness.md) -------------------------------------
# Sanitizer builds use clang, live in their own build dirs and leave torch
# out; they run the core, capi and C example tests (not install/python).
ASAN_BUILD   ?= build-asan
TSAN_BUILD   ?= build-tsan
FUZZ_SECONDS ?= 60
SAN_CMAKE    := -G Ninja -DTF_BUILD_TORCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
# The MPI example runs Open MPI's own code under the sanitizers, whose
# allocations at exit LeakSanitizer reports; its communicator is C code
# the in-process tests already cover (tests/capi/test_spmd.c).
SAN_EXCLUDE  := Install\.|tf_example_mpi
# RandomPrograms checks make test's 300 generated programs under the
# sanitizers too (the same seed makes the same programs in either build).
# The generated kernels are not instrumented; their libraries are the ones
# make test's run left in the kernel cache, so after make test this takes
# 10-15 s, while the generator, evaluator and compile driver run through
# every op under ASan / TSan. Run alone, it compiles them (about 8 minutes).
SAN_ENV      := OPENBLAS_NUM_THREADS=1 \
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
FUZZERS      := parser kernel_run evaluator

# clang and its sanitizer / libFuzzer runtimes are needed only by these targets.
san-setup:
	@bash scripts/setup.sh --sanitizers

# ASan + UBSan; the same build carries libFuzzer coverage for `make fuzz`.
$(ASAN_BUILD)/build.ninja: | san-setup
	cmake -S . -B $(ASAN_BUILD) $(SAN_CMAKE) -DTF_SANITIZE=address,undefined -DTF_FUZZ=ON

# intercept_tls_get_addr=0 (in SAN_ENV): clang 14's runtime takes a dynamic
# TLS block (the emulated CUDA modules' thread_local state, dlopen'ed) for a
# pre-2.25 glibc one whenever its address happens to sit at a certain offset
# in a page, reads the words before it as a block address and length, and
# LeakSanitizer's tracer then segfaults at exit after the test passed
# (CudaEmulated / CudaDevice tests, about half of the runs of two of them
# under ctest -j 2; none of 3 runs of all 20 with the option).
test-asan: san-setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS) -E '$(SAN_EXCLUDE)'

$(TSAN_BUILD)/build.ninja: | san-setup
	cmake -S . -B $(TSAN_BUILD) $(SAN_CMAKE) -DTF_SANITIZE=thread

# OMP_NUM_THREADS=1: libgomp is not built with TSan, so the barriers of an
# OpenMP team (compiled kernels, oneDNN) are invisible to it and every
# parallel region that hands memory back to the calling thread is reported as
# a race. Our own threading is what TSan checks here (tests with their own
# pthreads, tf_set_num_threads still starting a team in tf_capi_test_num_threads).
test-tsan: san-setup $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && $(SAN_ENV) OMP_NUM_THREADS=1 ctest --output-on-failure -j $(JOBS) -E '$(SAN_EXCLUDE)'

# Each fuzzer runs FUZZ_SECONDS on the seeds of tests/fuzz/corpus/<name>,
# growing its own corpus in $(ASAN_BUILD)/fuzz/<name>; a crash leaves its
# input in $(ASAN_BUILD)/fuzz/ and fails the target.
fuzz: san-setup $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZERS))
	@failed=""; for f in $(FUZZERS); do \
	  mkdir -p $(ASAN_BUILD)/fuzz/$$f && \
	  echo "fuzz: fuzz_$$f for $(FUZZ_SECONDS) s" && \
	  $(SAN_ENV) $(ASAN_BUILD)/bin/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=$(ASAN_BUILD)/fuzz/$$f- \
	    $$(test -f tests/fuzz/$$f.dict && echo -dict=tests/fuzz/$$f.dict) \
	    $(ASAN_BUILD)/fuzz/$$f tests/fuzz/corpus/$$f > $(ASAN_BUILD)/fuzz/$$f.log 2>&1; \
	  rc=$$?; tail -n 12 $(ASAN_BUILD)/fuzz/$$f.log; test $$rc -eq 0 || failed="$$failed $$f"; \
	done; test -z "$$failed" || { echo "fuzz: crashes in:$$failed (inputs in $(ASAN_BUILD)/fuzz/)"; exit 1; }

# --- the pip path (README, Install) ----------------------------------------
# Both run tests/install/test_wheel.sh: `pip install --no-build-isolation .`
# into a venv, then, from a scratch directory with no TileFoundry variables, a
# kernel on numpy and through torch.ops, a find_package(TileFoundry) C
# consumer of the installed package, and tests/python against it.
#
# test-wheel: a venv over Debian's Python and torch (--system-site-packages).
# test-torch2: a venv with torch 2.x from the machine's pip index (TORCH2_SPEC;
# pip uses the machine's own configuration: pip.conf, PIP_INDEX_URL,
# PIP_EXTRA_INDEX_URL). TORCH2_VENV=/path reuses an existing venv (pip then
# only checks the spec). Each venv keeps its own wheel build directory, so a
# second run rebuilds only what changed.
WHEEL_DIR    ?= build-wheel
TORCH2_DIR   ?= build-torch2
TORCH2_VENV  ?= $(TORCH2_DIR)/venv
TORCH2_SPEC  ?= torch>=2.1
TORCH2_PY    := $(TORCH2_VENV)/bin/python

test-wheel: | setup
	test -x $(WHEEL_DIR)/venv/bin/python || $(PYTHON) -m venv --system-site-packages $(WHEEL_DIR)/venv
	bash tests/install/test_wheel.sh $(WHEEL_DIR)/venv/bin/python . $(WHEEL_DIR)/build

# torch2-venv alone: the download, which .ci/run starts early and overlaps
# with the builds. numpy too: make bench's torch 2.x children (Inductor, the
# tensor-parallel MLP) import it, and torch only warns without it.
torch2-venv:
	test -x $(TORCH2_PY) || python3 -m venv $(TORCH2_VENV)
	$(TORCH2_PY) -m pip install -q '$(TORCH2_SPEC)' numpy

test-torch2: torch2-venv | setup
	bash tests/install/test_wheel.sh $(TORCH2_PY) . $(TORCH2_DIR)/wheel

# Records the public header's ABI surface in abi/ (refuses a change that the
# version bump does not allow; see abi/abi.py).
# ABI_UNRELEASED=1: the header's version has never been committed, so
# several additions may be assembled into it.
abi-baseline:
	$(PYTHON) abi/abi.py update include/tilefoundry/tilefoundry.h abi/baseline.txt abi/symbols.txt \
	  $(if $(ABI_UNRELEASED),--unreleased)
