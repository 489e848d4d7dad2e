#!/usr/bin/env bash
# The unit tests and the lit suite under AddressSanitizer + UndefinedBehaviorSanitizer (and LeakSanitizer):
# builds the sanitizer build (scripts/build-sanitize.sh), runs flare-unit-tests, then lit with the
# sanitized flarec and flare-opt. Every sanitizer report is fatal and written to a log file, so a
# report counts even where a test expects the tool to fail (`not flarec ...`); any report, or any
# failing test, makes the script exit non-zero.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FLARE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
"$root/scripts/build-sanitize.sh" flarec flare-opt flare-unit-tests

logs="$build/sanitizer-logs"
rm -rf "$logs" && mkdir -p "$logs"
symbolizer=/usr/lib/llvm-22/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export ASAN_OPTIONS="log_path=$logs/asan:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:${UBSAN_OPTIONS:-}"

# CHECK lines of these tests follow the order in which g++ evaluates call arguments: the lowering
# creates ops inside the arguments of other ops' create calls, and clang evaluates them in the other
# order, so a clang-built compiler emits the same IR with some lines swapped. They still run here
# (sanitizer reports in them count); lit reports them as XFAIL, and as a failure once they pass.
export LIT_XFAIL="Conversion/atomic-add.mlir;Conversion/attn-to-tile.mlir;\
Conversion/tgpu-to-nvvm-persistent.mlir;Conversion/tgpu-to-nvvm-split.mlir;Conversion/tgpu-to-nvvm.mlir"

status=0
echo "sanitize: unit tests"
"$build/bin/flare-unit-tests" --gtest_brief=1 || status=1
echo "sanitize: lit tests with the sanitized flarec and flare-opt"
/usr/lib/llvm-22/bin/lit -sv "$build/test" || status=1

reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
  for r in $reports; do
    echo "=== sanitizer report $r"
    cat "$r"
  done
  status=1
fi
echo "sanitize: $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
