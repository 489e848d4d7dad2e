#!/usr/bin/env bash
# Runs every Flare pass of flare-opt alone on every .mlir file under test/ and examples/ (valid inputs
# and the invalid ones the diagnostics tests hold) and fails when a run dies of a signal or outlives
# the time limit: whatever the input, a pass ends in output or a located diagnostic, never a crash or
# a hang. The passes are read from `flare-opt --help` (attn-, tile-, tgpu-, convert-attn-,
# convert-tgpu-), so a new pass is audited without a change here. ctest runs it (test "pass-audit").
#
#   scripts/pass-audit.sh [FLARE_OPT]      (default: build/bin/flare-opt)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
opt=${1:-$root/build/bin/flare-opt}
limit=${FLARE_PASS_AUDIT_SECONDS:-120}
[ -x "$opt" ] || { echo "pass-audit: no flare-opt at $opt" >&2; exit 1; }
passes=$("$opt" --help | sed -n 's/^ *\(--\(attn\|tile\|tgpu\|convert-attn\|convert-tgpu\)-[a-z-]*\) .*/\1/p' | sort -u)
[ -n "$passes" ] || { echo "pass-audit: found no Flare pass in flare-opt --help" >&2; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
runs=0
failed=0
while read -r input; do
  for pass in $passes; do
    timeout "$limit" "$opt" -split-input-file "$input" "$pass" > /dev/null 2> "$err"
    rc=$?
    runs=$((runs + 1))
    # 0: output; 1: diagnostics. 124: the time limit; above 128: a signal (a crash).
    if [ $rc -ge 124 ]; then
      failed=$((failed + 1))
      echo "pass-audit: $pass on ${input#"$root"/} ended with status $rc$([ $rc -eq 124 ] && echo " (over ${limit} s)")"
      grep -m3 -E "error|Assertion|Stack dump" "$err" | sed 's/^/  /'
    fi
  done
done < <(find "$root/test" "$root/examples" -name '*.mlir' | sort)
echo "pass-audit: $(echo "$passes" | wc -w) passes on every input, $runs runs, $failed crashed or hung"
[ $failed -eq 0 ]
