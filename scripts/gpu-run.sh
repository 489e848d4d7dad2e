#!/usr/bin/env bash
# Runs inside an unpacked bundle on a GPU machine: the unit tests, then every example compiled by
# flarec (and assembled by ptxas where installed) and verified on the GPU against float64 references.
# With --sanitize, instead: NVIDIA compute-sanitizer (memcheck, racecheck, synccheck) over the GPU
# tests on their small shapes and the JIT examples (scripts/compute-sanitize.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
echo "flare bundle at commit $(cat "$here/COMMIT")"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${1:-}" = --sanitize ]; then
  exec "$here/scripts/compute-sanitize.sh" "$here" "$here/examples"
fi
status=0
"$here/bin/flare-unit-tests" --gtest_brief=1 || status=1
"$here/scripts/run-examples.sh" "$here" "$here/examples" || status=1
echo "gpu-run: $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
