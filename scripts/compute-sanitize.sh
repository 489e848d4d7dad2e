#!/usr/bin/env bash
# Runs NVIDIA compute-sanitizer's memcheck (with leak checking), racecheck and synccheck over every
# kernel family Flare generates: the GPU tests (tile kernels, the tile examples, every attention
# example and flare::attention's variants) on their small shapes (FLARE_GPU_TESTS_SMALL=1), and the two
# JIT examples. Prints PASS or FAIL per tool and program; the full reports are kept in
# <dir>/compute-sanitizer/<tool>-<program>.log.
# Usage: compute-sanitize.sh <dir holding bin/ and lib/> [examples dir]   (gpu-run.sh --sanitize)
# FLARE_SANITIZE_GTEST_FILTER replaces the GPU tests' filter. Without a GPU it says so and exits 0.
set -uo pipefail
top=$(cd "$1" && pwd)
examples=${2:-$(cd "$(dirname "$0")/../examples" && pwd)}

if ! [ -e /dev/nvidiactl ] && ! [ -e /dev/nvidia0 ]; then
  echo "compute-sanitizer: no GPU on this machine: not run"
  exit 0
fi
sanitizer=$(command -v compute-sanitizer || true)
[ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$sanitizer" ]; then
  echo "compute-sanitizer: FAIL: not found on PATH or in /usr/local/cuda/bin (it comes with the CUDA toolkit)"
  exit 1
fi
echo "compute-sanitizer: $("$sanitizer" --version | grep -i version | head -1)"

logs="$top/compute-sanitizer"
mkdir -p "$logs"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
# The JIT examples compile into a fresh kernel cache; the GPU tests keep private caches of their own.
export FLARE_GPU_TESTS_SMALL=1 FLARE_EXAMPLES_DIR="$examples" FLARE_CACHE_DIR="$cache"
# CompileTimeOfOneKernel only times the compiler and the driver's JIT; it launches nothing.
filter=${FLARE_SANITIZE_GTEST_FILTER:--*CompileTimeOfOneKernel*}

# name, then the command (small problems: the sanitizers slow kernels down 10-1000x).
programs=(
  "flare-gpu-tests|$top/bin/flare-gpu-tests --gtest_brief=1 --gtest_filter=$filter"
  "softmax_jit|$top/bin/softmax_jit $examples/tile/softmax.mlir 257 999"
  "attention_jit|$top/bin/attention_jit 1 4 2 300 300"
  "generation_loop|$top/bin/generation_loop 3 16"
)
# An exit status no program here uses: compute-sanitizer returns it when it reported an error.
readonly kFound=86

status=0
for tool in memcheck racecheck synccheck; do
  options=(--tool "$tool" --error-exitcode "$kFound" --target-processes all --print-limit 200)
  [ "$tool" = memcheck ] && options+=(--leak-check full)
  verdict=PASS
  for entry in "${programs[@]}"; do
    name=${entry%%|*}
    read -r -a command <<<"${entry#*|}"
    log="$logs/$tool-$name.log"
    start=$(date +%s)
    "$sanitizer" "${options[@]}" "${command[@]}" >"$log" 2>&1
    rc=$?
    seconds=$(($(date +%s) - start))
    summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1 | sed 's/^=* *//')
    if [ $rc = 0 ] && ! grep -qE "ERROR SUMMARY: [1-9]" "$log"; then
      echo "compute-sanitizer $tool $name: PASS (${seconds}s; ${summary:-no summary})"
    else
      verdict=FAIL
      why=$([ $rc = $kFound ] && echo "errors reported" || echo "exit status $rc")
      echo "compute-sanitizer $tool $name: FAIL ($why, ${seconds}s; ${summary:-no summary}; log $log)"
      grep -E "^========= (Invalid|Race|Barrier|Leaked|Program hit|Error|Warning|    at )" "$log" | head -40
      grep -E "^\[  FAILED  \]" "$log" | head -20
    fi
  done
  echo "compute-sanitizer $tool: $verdict"
  [ $verdict = PASS ] || status=1
done
echo "compute-sanitizer: $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
