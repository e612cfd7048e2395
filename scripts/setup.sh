#!/usr/bin/env bash
# Installs the Debian packages TileFoundry needs, only those that are missing.
# Idempotent; safe to run on every `make`. Needs root (or sudo) only when
# something is missing.
set -euo pipefail

PKGS=(cmake ninja-build g++ make libgtest-dev libdlpack-dev libtorch-dev python3-torch
      python3-pytest python3-numpy python3-venv libopenblas-dev libdnnl-dev ccache
      openmpi-bin libopenmpi-dev)
# --sanitizers: clang and its sanitizer / libFuzzer runtimes (make test-asan,
# test-tsan, fuzz).
[ "${1:-}" = "--sanitizers" ] && PKGS+=(clang libclang-rt-dev)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
