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
status=0
for f in "$examples"/tile/*.mlir "$examples"/attention/*.mlir; do
  name=$(basename "$(dirname "$f")")-$(basename "$f" .mlir)
  # An example may restrict its architectures with a "// flare-archs: ..." line.
  archs=$(sed -n 's|^// flare-archs: *||p' "$f" | head -1)
  for arch in ${archs:-sm_90a sm_80}; do
    ptx="$out/$name.$arch.ptx"
    # The GPU tests also launch these very files (PTX + launch metadata) for the attention examples.
    "$top/bin/flarec" "$f" --emit=ptx --arch=$arch -o "$ptx" --meta-o "$out/$name.$arch.json"
    if [ -n "$ptxas" ]; then
      # As the runtime has the driver compile PTX (ptxas-jit.sh: relocatable, as the driver's linker,
      # unless the kernel uses setmaxnreg); ptxas reports (C7509, C7518, ...) when it has to
      # serialize a kernel's wgmma instructions.
      report=$(bash "$(dirname "$0")/ptxas-jit.sh" "$ptxas" -arch=$arch -v "$ptx" -o "$out/$name.$arch.o" 2>&1)
      if grep -q "instructions are serialized" <<<"$report"; then
        echo "compiled $name for $arch: WGMMA SERIALIZED"; grep "instructions are serialized" <<<"$report"; status=1
      fi
      regs=$(grep -o "Used [0-9]* registers" <<<"$report" | grep -o "[0-9]*" | paste -sd/ -)
      kernels=$(grep -c "Compiling entry function" <<<"$report" || true)
      clean=$(grep -c " 0 bytes spill stores, 0 bytes spill loads" <<<"$report" || true)
      if [ "$kernels" -gt 0 ] && [ "$kernels" = "$clean" ]; then
        echo "compiled $name for $arch: $kernels kernel(s), registers $regs, no spills"
      elif [ "$arch" = sm_90a ]; then
        # Zero spills is a checked property of every kernel on the target architecture (Hopper).
        echo "compiled $name for $arch: SPILLS"; echo "$report"; status=1
      else
        # On the sm_80 fallback path a spill is reported, not fatal.
        echo "compiled $name for $arch: WARNING, spills:"; grep -B1 "spill stores" <<<"$report" | grep -v "^--"
      fi
    else
      echo "compiled $name for $arch -> $ptx (ptxas not installed: not assembled)"
    fi
  done
done
export FLARE_EXAMPLES_DIR="$examples" FLARE_PTX_DIR="$out"
if "$top/bin/flare-gpu-tests" --gtest_list_tests >/dev/null 2>&1 && [ -e /dev/nvidia0 -o -e /dev/nvidiactl ]; then
  echo "GPU found: running and verifying the examples against float64 references"
  "$top/bin/flare-gpu-tests" || status=1
  "$top/bin/softmax_jit" "$examples/tile/softmax.mlir" || status=1
  "$top/bin/attention_jit" || status=1
  "$top/bin/generation_loop" || status=1
else
  echo "no GPU on this machine: examples compiled to PTX only (not run)"
fi
exit $status
