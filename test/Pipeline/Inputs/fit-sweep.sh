#!/usr/bin/env bash
# fit-sweep.sh SRC OUT ARCH...: every attention example (and the per-element gathers of relpos.mlir)
# at every head dim from 32 to 256 in steps of 16, forward and backward, compiled on each ARCH with the
# configured choice down to per-thread code (the shared-memory allocator's check included). One line
# a compile: "<example> <head dim> <arch> <fwd|grad> ok", or "... FAILED: <first diagnostic>".
src=$1 out=$2
shift 2
mkdir -p "$out"
for f in "$src"/examples/attention/*.mlir "$src"/test/Pipeline/Inputs/relpos.mlir; do
  n=$(basename "$f" .mlir)
  for d in $(seq 32 16 256); do
    sed "s/x128x/x${d}x/g" "$f" > "$out/$n.$d.mlir"
    for arch in "$@"; do
      for pass in fwd grad; do
        flag=; [ $pass = grad ] && flag=--grad
        if flarec $flag --arch="$arch" --emit=gpu "$out/$n.$d.mlir" -o /dev/null 2> "$out/err"; then
          echo "$n $d $arch $pass ok"
        else
          echo "$n $d $arch $pass FAILED: $(grep -m1 error: "$out/err")"
        fi
      done
    done
  done
done
