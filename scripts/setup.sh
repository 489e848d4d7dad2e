#!/usr/bin/env bash
# Installs what building and testing Flare needs on Debian 12, only where it is missing:
# LLVM/MLIR 22 (headers, static archives, mlir-tblgen, lit, FileCheck), GoogleTest, CMake, Ninja,
# zlib/zstd, pkg-config (scripts/check-install.sh), clang (scripts/check-readme.sh compiles README.md's
# code with g++ and clang++), and the CUDA Driver API header (cuda.h). libcuda itself is loaded at
# run time and is not needed to build. With --sanitize, also clang-22 and its sanitizer runtimes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(cmake ninja-build g++ python3 xz-utils llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          libzstd-dev zlib1g-dev libgtest-dev pkg-config clang)
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
  # Debian ships the CUDA headers in its non-free component: add it to the Debian sources this machine
  # already uses (scripts/apt-add-non-free.sh; no new source, no other repository touched).
  echo "setup: cuda.h not found; installing Debian's nvidia-cuda-dev (non-free)"
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || { echo "setup: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
  as_root bash "$root/scripts/apt-add-non-free.sh" /etc/apt "$codename"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nvidia-cuda-dev >/dev/null || {
    echo "setup: cannot install nvidia-cuda-dev: is a Debian $codename source configured under /etc/apt?" >&2
    exit 1
  }
fi
echo "setup: ok"
