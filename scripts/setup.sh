#!/usr/bin/env bash
# Installs what building and testing Flare needs on Debian 12, only where it is missing:
# LLVM/MLIR 22 (headers, static archives, mlir-tblgen, lit, FileCheck), GoogleTest, CMake, Ninja,
# zlib/zstd, and the CUDA Driver API header (cuda.h). libcuda itself is loaded at run time and is
# not needed to build. With --sanitize, also clang-22 and its sanitizer runtimes.
set -euo pipefail

packages=(cmake ninja-build g++ python3 xz-utils llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          libzstd-dev zlib1g-dev libgtest-dev)
# --sanitize: also clang with its sanitizer and libFuzzer runtimes (scripts/sanitize.sh, scripts/fuzz.sh).
if [ "${1:-}" = --sanitize ]; then
  packages+=(clang-22 libclang-rt-22-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

cuda_header() {
  for d in "${CUDA_HOME:-/usr/local/cuda}/include" /usr/local/cuda/include /usr/include; do
    [ -f "$d/cuda.h" ] && return 0
  done
  return 1
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ${#missing[@]} -gt 0 ] || ! cuda_header; then
  as_root apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! cuda_header; then
  # Debian ships the CUDA headers in its non-free component.
  echo "setup: cuda.h not found; installing Debian's nvidia-cuda-dev (non-free)"
  if ! grep -rqs "non-free" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm main contrib non-free non-free-firmware" |
      as_root tee /etc/apt/sources.list.d/flare-non-free.list >/dev/null
    as_root apt-get update -qq
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nvidia-cuda-dev >/dev/null
fi
echo "setup: ok"
