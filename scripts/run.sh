#!/usr/bin/env bash
# The main job: set up, build, compile every example kernel to PTX (assembled by ptxas, zero spills
# required, where the CUDA toolkit is installed), and when a GPU is present run and verify them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
exec "$root/scripts/run-examples.sh" "$build"
