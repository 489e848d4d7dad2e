// Configurations that fit what the modifiers need: a score_mod that gathers from an aux table per
// score element (a relative-position bias indexed by kv - q) loads its values in the layout of the
// scores they are added to (tgpu-assign-layouts, test/Dialect/TGPU/assign-layouts-gather.mlir), so it
// needs no shared memory of its own and takes the dense kernel's tiles: 128 keys per step with the
// producer warpgroup at head dims 64 and 128 (at 64 one persistent CTA per SM: 64 keys on two CTAs
// spilled), no split tail (it spilled), at 256 no overlap (it spilled); each compiles without spills
// at sm_90a. A per-row aux read (ALiBi's slopes) keeps the usual choice, split tail included.
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s
// RUN: flarec %s --emit=ptx -o %t.ptx --meta-o=%t.json && FileCheck %s --check-prefix=META < %t.json
// META-COUNT-4: "sharedBytes"

// CHECK-LABEL: func.func @relpos64
// CHECK: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, lazy_rescale, producer, last_pv_after_loops, persistent, peel_first_step, pair_instances, uniform_warpgroup>
func.func @relpos64(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %bias: tensor<?xf32>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xf32>):
      %off = arith.constant 4096 : index
      %d = arith.subi %kv, %qi : index
      %i = arith.addi %d, %off : index
      %x = attn.aux_load %t[%i] : tensor<?xf32>
      %y = arith.addf %s, %x : f32
      attn.yield %y : f32
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// CHECK-LABEL: func.func @relpos128
// CHECK: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer, last_pv_after_loops, persistent, pair_instances, uniform_warpgroup>
func.func @relpos128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %bias: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xf32>):
      %off = arith.constant 4096 : index
      %d = arith.subi %kv, %qi : index
      %i = arith.addi %d, %off : index
      %x = attn.aux_load %t[%i] : tensor<?xf32>
      %y = arith.addf %s, %x : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// CHECK-LABEL: func.func @relpos256
// CHECK: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, lazy_rescale, persistent, pair_instances>
func.func @relpos256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>, %bias: tensor<?xf32>) -> tensor<?x?x?x256xbf16> {
  %o = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xf32>):
      %off = arith.constant 4096 : index
      %d = arith.subi %kv, %qi : index
      %i = arith.addi %d, %off : index
      %x = attn.aux_load %t[%i] : tensor<?xf32>
      %y = arith.addf %s, %x : f32
      attn.yield %y : f32
    } : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// CHECK-LABEL: func.func @per_row
// CHECK: config = #attn.config<block_m = 128, block_n = 128, {{.*}}producer{{.*}}split_tail
func.func @per_row(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %slopes: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %x = attn.aux_load %sl[%h] : tensor<?xf32>
      %y = arith.addf %s, %x : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
