#!/usr/bin/env bash
# Configures and builds the sanitizer build (FLARE_SANITIZE: clang, ASan+UBSan on Flare's own code, a
# static libflare, the libFuzzer targets) into ${FLARE_SANITIZE_BUILD_DIR:-build-sanitize}.
# Usage: build-sanitize.sh [ninja targets...]   (default: everything)
# scripts/sanitize.sh and scripts/fuzz.sh share this build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/setup.sh" --sanitize
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLARE_SANITIZE=ON \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
