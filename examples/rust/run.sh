#!/usr/bin/env bash
# Builds examples/rust/main.rs with rustc alone (no cargo, no crates) against
# <build-dir>/lib/libtilefoundry.so and runs it on examples/c/kernels.tf.
# Usage: bash examples/rust/run.sh [build-dir]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
mkdir -p "$build/bin"
rustc --edition 2021 -O -L "$build/lib" -C link-args="-Wl,-rpath,$build/lib" \
  -o "$build/bin/tf_example_rust" "$root/examples/rust/main.rs"
"$build/bin/tf_example_rust" "$root/examples/c/kernels.tf"
