#!/usr/bin/env bash
# The attention examples' GPU check on a variant of the generated kernels: each example at the head
# dim it is written for (128), compiled by flarec with its configured #attn.config plus the given
# switches (e.g. defer_rescale, which no configured choice uses), launched from FLARE_PTX_DIR by
# Attention.EveryExampleMatchesTheFloat64Reference against the float64 reference (its other head dims
# run the configured kernels). Works in a build tree and in the GPU bundle.
#
#   scripts/check-variant.sh <dir holding bin/> "<switches>" [examples dir]
#   e.g. flare-bundle/scripts/check-variant.sh flare-bundle defer_rescale
#
# The test's other expectations stand, so a variant that makes ptxas serialize wgmma (defer_rescale:
# C7518) fails that one expectation by design; the reference comparisons are what this checks.
set -euo pipefail
top=$(cd "${1:?usage: check-variant.sh <dir holding bin/> \"<switches>\" [examples dir]}" && pwd)
switches=${2:?usage: check-variant.sh <dir holding bin/> \"<switches>\" [examples dir]}
examples=${3:-$(cd "$(dirname "$0")/../examples" && pwd)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in "$examples"/attention/*.mlir; do
  name=$(basename "$f" .mlir)
  config=$("$top/bin/flarec" "$f" --arch=sm_90a --emit=meta | sed -n 's/.*"attentionConfig": *"\([^"]*\)".*/\1/p' | head -1)
  [ -n "$config" ] || { echo "check-variant: no attentionConfig for $name"; exit 1; }
  "$top/bin/flarec" "$f" --arch=sm_90a --emit=ptx --attention-config="${config%>}, $switches>" \
    -o "$out/attention-$name.sm_90a.ptx" --meta-o "$out/attention-$name.sm_90a.json"
  echo "check-variant: $name with ${config%>}, $switches>"
done
export FLARE_EXAMPLES_DIR="$examples" FLARE_PTX_DIR="$out"
"$top/bin/flare-gpu-tests" --gtest_filter=Attention.EveryExampleMatchesTheFloat64Reference
