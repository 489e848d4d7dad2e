#!/usr/bin/env bash
# Compiles the example kernels with flarec and, with a GPU, runs and verifies them.
# Usage: run-examples.sh <dir holding bin/ and lib/> [examples dir]
# Works in a build tree and in the GPU bundle alike.
set -euo pipefail
top=$(cd "$1" && pwd)
examples=${2:-$(cd "$(dirname "$0")/../examples" && pwd)}
out="$top/examples-ptx"
mkdir -p "$out"
ptxas=$(command -v ptxas || true)
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
# Each example on each of its architectures, as its own job (one per core): its report goes to a log
# of its own, printed in order afterwards; a job that finds a fault leaves a .failed file.
compile() {
  local f=$1 arch=$2 name ptx report regs kernels clean
  name=$(basename "$(dirname "$f")")-$(basename "$f" .mlir)
  ptx="$out/$name.$arch.ptx"
  # The GPU tests also launch these very files (PTX + launch metadata) for the attention examples.
  "$top/bin/flarec" "$f" --emit=ptx --arch=$arch -o "$ptx" --meta-o "$out/$name.$arch.json" || return 1
  if [ -z "$ptxas" ]; then
    echo "compiled $name for $arch -> $ptx (ptxas not installed: not assembled)"
    return 0
  fi
  # As the runtime has the driver compile PTX (ptxas-jit.sh: relocatable, as the driver's linker,
  # unless the kernel uses setmaxnreg); ptxas reports (C7509, C7518, ...) when it has to serialize a
  # kernel's wgmma instructions.
  report=$(bash "$(dirname "$0")/ptxas-jit.sh" "$ptxas" -arch=$arch -v "$ptx" -o "$out/$name.$arch.o" 2>&1)
  if grep -q "instructions are serialized" <<<"$report"; then
    echo "compiled $name for $arch: WGMMA SERIALIZED"; grep "instructions are serialized" <<<"$report"; return 1
  fi
  regs=$(grep -o "Used [0-9]* registers" <<<"$report" | grep -o "[0-9]*" | paste -sd/ -)
  kernels=$(grep -c "Compiling entry function" <<<"$report" || true)
  clean=$(grep -c " 0 bytes spill stores, 0 bytes spill loads" <<<"$report" || true)
  if [ "$kernels" -gt 0 ] && [ "$kernels" = "$clean" ]; then
    echo "compiled $name for $arch: $kernels kernel(s), registers $regs, no spills"
  elif [ "$arch" = sm_90a ]; then
    # Zero spills is a checked property of every kernel on the target architecture (Hopper).
    echo "compiled $name for $arch: SPILLS"; echo "$report"; return 1
  else
    # On the sm_80 fallback path a spill is reported, not fatal.
    echo "compiled $name for $arch: WARNING, spills:"; grep -B1 "spill stores" <<<"$report" | grep -v "^--"
  fi
}
jobs_dir=$(mktemp -d)
trap 'rm -rf "$jobs_dir"' EXIT
cores=$(nproc 2>/dev/null || echo 2)
n=0
for f in "$examples"/tile/*.mlir "$examples"/attention/*.mlir; do
  # An example may restrict its architectures with a "// flare-archs: ..." line.
  archs=$(sed -n 's|^// flare-archs: *||p' "$f" | head -1)
  for arch in ${archs:-sm_90a sm_80}; do
    n=$((n + 1))
    job="$jobs_dir/$(printf %03d $n)"
    (compile "$f" "$arch" > "$job.log" 2>&1 || touch "$job.failed") &
    while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n || true; done
  done
done
wait
status=0
for log in "$jobs_dir"/*.log; do
  cat "$log"
  [ -e "${log%.log}.failed" ] && status=1
done
export FLARE_EXAMPLES_DIR="$examples" FLARE_PTX_DIR="$out"
if "$top/bin/flare-gpu-tests" --gtest_list_tests >/dev/null 2>&1 && [ -e /dev/nvidia0 -o -e /dev/nvidiactl ]; then
  # The GPU tests in FLARE_GPU_TEST_SHARDS processes side by side on the one GPU (GoogleTest's
  # sharding; default 4, 1 runs them as one process), each with a kernel cache of its own, then the
  # JIT examples; the whole suite takes several minutes as one process.
  shards=${FLARE_GPU_TEST_SHARDS:-4}
  echo "GPU found: running and verifying the examples against float64 references ($shards shard(s))"
  pids=()
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i FLARE_CACHE_DIR="$jobs_dir/cache$i" \
      "$top/bin/flare-gpu-tests" > "$jobs_dir/gpu$i.txt" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < shards; i++)); do
    wait "${pids[$i]}" || { status=1; echo "gpu test shard $i of $shards: FAILED"; }
    cat "$jobs_dir/gpu$i.txt"
  done
  "$top/bin/softmax_jit" "$examples/tile/softmax.mlir" || status=1
  "$top/bin/attention_jit" || status=1
  "$top/bin/generation_loop" || status=1
else
  echo "no GPU on this machine: examples compiled to PTX only (not run)"
fi
exit $status
