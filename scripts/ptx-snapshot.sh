#!/usr/bin/env bash
# Writes the PTX and launch metadata of every shipped kernel variant, as one flarec compiles them, into
# a directory: each attention example at head dims 64, 128 and 256 on sm_90a and sm_80 (forward,
# backward, deterministic backward), on sm_90a also without the TMA fallback, with block lists (a
# fixed configuration, and for masks of class generic the one the runtime chooses with lists, as
# flare-opt --attn-choose-config reports it with the options flare::attention's launch rule adds:
# query blocks from a shared counter up to head dim 128, one CTA per block with a producer warpgroup
# above) and with the backward's block lists; the serving kernels (packed sequences and paged caches
# on both targets, as configured, and the split decoding kernel of paged caches on sm_90a), whose
# modules are the lit tests'; and each tile example on both targets. Two snapshots (before and
# after a change to the compiler) compared with `diff -r` show every kernel the change touched; a
# restructuring that should not change code generation must leave them byte-identical. A variant
# flarec refuses (a configuration that does not fit a head dim) leaves its diagnostic in NAME.err,
# so a change in what is refused shows too.
#
#   scripts/ptx-snapshot.sh OUTDIR [FLAREC]      (FLAREC: default build/bin/flarec; flare-opt beside it)
#   diff -rq before/ after/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: ptx-snapshot.sh OUTDIR [FLAREC]}
flarec=${2:-$root/build/bin/flarec}
flareopt=$(dirname "$flarec")/flare-opt
# Without flare-opt the block-list and split variants, whose configurations it chooses, would be left
# out without a word; and the binaries load the libflare of their build, which must not change meanwhile.
for tool in "$flarec" "$flareopt"; do
  [ -x "$tool" ] || { echo "ptx-snapshot: $tool not found (flare-opt must sit beside flarec)" >&2; exit 1; }
done
mkdir -p "$out"
input=$(mktemp --suffix=.mlir)
trap 'rm -f "$input"' EXIT
# emit NAME FLAREC-ARGS...: NAME.ptx, or NAME.err with flarec's diagnostic.
emit() {
  local name=$1
  shift
  if ! "$flarec" "$@" -o "$out/$name.ptx" 2> "$out/$name.err"; then
    rm -f "$out/$name.ptx"
    sed -i "s|$input|INPUT|g" "$out/$name.err"
  else
    rm -f "$out/$name.err"
  fi
}
lists='#attn.config<block_n=32,overlap,ping_pong,pair_instances,uniform_warpgroup,block_lists>'
for example in "$root"/examples/attention/*.mlir; do
  name=$(basename "$example" .mlir)
  for d in 64 128 256; do
    sed "s/x128x/x${d}x/g" "$example" > "$input"
    for arch in sm_90a sm_80; do
      emit "$name-$d-$arch" --arch=$arch "$input" --meta-o="$out/$name-$d-$arch.json"
      emit "$name-$d-$arch-grad" --arch=$arch --grad "$input"
      emit "$name-$d-$arch-grad-det" --arch=$arch --grad --deterministic "$input"
    done
    emit "$name-$d-nofb" --arch=sm_90a --tma-fallback=false "$input"
    emit "$name-$d-lists" --arch=sm_90a --attention-config="$lists" "$input"
    # flare::attention's launch rule for lists: the counter up to head dim 128, one CTA per query
    # block beside a producer warpgroup above.
    launch="dynamic-instances=1"
    [ "$d" -gt 128 ] && launch="persistent=0 producer=1"
    chosen=$("$flareopt" "$input" --attn-choose-config="block-lists=1 $launch" 2>/dev/null |
             grep -o '#attn.config<[^>]*block_lists[^>]*>' | head -1 || true)
    if [ -n "$chosen" ]; then
      emit "$name-$d-lists-chosen" --arch=sm_90a --attention-config="$chosen" "$input"
    fi
  done
  cp "$example" "$input"
  emit "$name-128-grad-lists" --arch=sm_90a --grad --block-lists "$input"
done
# The serving kernels, whose modules are the lit tests' (split-file parts): packed sequences
# (cu_seqlens) and paged caches at each head dim and target as configured, and the split decoding
# kernel flare::attention asks for (64 packed rows, 64 keys per step, one warpgroup) on sm_90a.
parts=$(mktemp -d)
trap 'rm -f "$input"; rm -rf "$parts"' EXIT
split="block-m=64 block-n=64 num-warps=4 split-kv=1 pack-gqa=1 producer=0"
"${SPLIT_FILE:-/usr/lib/llvm-22/bin/split-file}" "$root/test/Conversion/attn-to-tile-paged.mlir" "$parts/p"
for module in "$root"/test/Conversion/attn-to-tile-varlen.mlir "$parts/p/paged.mlir" "$parts/p/pages.mlir"; do
  name=$(basename "$module" .mlir)
  for d in 64 128 256; do
    sed "s/x128x/x${d}x/g; s/x128xbf16/x${d}xbf16/g" "$module" > "$input"
    for arch in sm_90a sm_80; do
      emit "serving-$name-$d-$arch" --arch=$arch "$input" --meta-o="$out/serving-$name-$d-$arch.json"
    done
    [ "$name" = attn-to-tile-varlen ] && continue # packed sequences are not split
    decode=$("$flareopt" "$input" --attn-classify-mask --attn-choose-config="arch=sm_90a $split" 2>/dev/null |
             grep -o '#attn.config<[^>]*split_kv[^>]*>' | head -1 || true)
    if [ -n "$decode" ]; then
      emit "serving-$name-$d-split" --arch=sm_90a --attention-config="$decode" "$input"
    fi
  done
done
for example in "$root"/examples/tile/*.mlir; do
  name=$(basename "$example" .mlir)
  for arch in sm_90a sm_80; do
    cp "$example" "$input"
    emit "tile-$name-$arch" --arch=$arch "$input" --meta-o="$out/tile-$name-$arch.json"
  done
done
echo "ptx-snapshot: $(ls "$out"/*.ptx | wc -l) kernels' PTX, $(ls "$out"/*.err 2>/dev/null | wc -l) refused variants, in $out"
