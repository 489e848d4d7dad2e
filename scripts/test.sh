#!/usr/bin/env bash
# The test command: set up, build, then run every test (GoogleTest units, GPU tests, lit/FileCheck,
# the pass audit of scripts/pass-audit.sh), then check the installed library as a user sees it
# (scripts/check-install.sh) and that README.md's code compiles against it (scripts/check-readme.sh).
# GPU tests skip, saying why, on a machine without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$build"
# ctest hides the output of tests that pass; show why the GPU tests skip (or that they ran) first.
"$build/bin/flare-gpu-tests" --gtest_brief=1 2>&1 | grep -E "no GPU|PASSED|FAILED" | sort -u | head -3 || true
ctest --output-on-failure
"$root/scripts/check-install.sh"
"$root/scripts/check-readme.sh"
