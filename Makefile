# TileFoundry — the README's commands. Every target first makes sure the
# Debian packages are there (scripts/setup.sh installs only what is missing).
BUILD   ?= build
PREFIX  ?= /usr/local
PYTHON  ?= /usr/bin/python3
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=
export PYTHONPATH := $(CURDIR)/torch_ext/python$(if $(PYTHONPATH),:$(PYTHONPATH))
export TILEFOUNDRY_LIB_DIR := $(CURDIR)/$(BUILD)/lib

.PHONY: all setup configure build demo test test-core test-python bench install clean

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

test-core: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python: build
	$(PYTHON) -m pytest -q tests/python

test: test-core test-python

bench: build
	$(PYTHON) bench/bench.py

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
