#!/usr/bin/env bash
# Profiles one generated attention kernel with Nsight Compute on a GPU machine: the third launch of
# `flare_attention` in a Flare-only benchmark run of one shape, with warp-state sampling per SASS
# instruction. Writes <out>/<tag>-details.txt (speed of light, warp states, launch) and
# <out>/<tag>-stalls.txt (ncu_stalls.py on the source page).
#
#     bench/ncu_profile.sh <bundle> <out> <head dim> <causal 0|1> <seqlen> [tag] [ncu_stalls.py options]
set -euo pipefail
bundle=$1 out=$2 hd=$3 causal=$4 seqlen=$5
tag=${6:-d${hd}-c${causal}-s${seqlen}}
shift $(( $# < 6 ? $# : 6 ))
here=$(cd "$(dirname "$0")" && pwd)
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$out"
ncu --clock-control none --kernel-name flare_attention --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section ComputeWorkloadAnalysis \
    --section LaunchStats --section InstructionStats --section SchedulerStats -o "$out/$tag" -f \
    python3 "$here/attention_bench.py" --lib "$bundle/lib/libflare.so" --examples "$bundle/examples" \
    --out "$out/$tag-bench.csv" --no-peers --no-memory --hdims "$hd" --causal "$causal" --seqlens "$seqlen" \
    --iters 2 --rounds 1 > "$out/$tag-ncu.log" 2>&1
ncu -i "$out/$tag.ncu-rep" --page details > "$out/$tag-details.txt"
ncu -i "$out/$tag.ncu-rep" --page source --csv --print-source sass > "$out/$tag-source.csv"
python3 "$here/ncu_stalls.py" "$out/$tag-source.csv" "$@" > "$out/$tag-stalls.txt"
