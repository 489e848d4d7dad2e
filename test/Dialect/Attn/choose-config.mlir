// attn-choose-config: the one place a generated attention kernel's configuration is chosen, from the
// target, the head dim, the mask class and whether the modifiers read aux tensors, then overridden by
// the pass's options and normalised (a switch that cannot apply is off); the mask class it read is
// recorded too. A config on the op is kept.
//
// sm_90a at head dims 64, 128 and 256 without a mask: two CTAs per SM at 64, the producer warpgroup's
// persistent kernel with stream-K at 128, persistent without ping-pong at 256.
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-choose-config | FileCheck %s --check-prefix=D64
// D64: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 2, partial_row_sums = 4, overlap, ping_pong, lazy_rescale, last_pv_after_loops, peel_first_step, pair_instances, uniform_warpgroup>
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config | FileCheck %s --check-prefix=D128
// D128: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer, last_pv_after_loops, persistent, split_tail, pair_instances, uniform_warpgroup>
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-choose-config | FileCheck %s --check-prefix=D256
// D256: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, lazy_rescale, last_pv_after_loops, persistent, pair_instances>
//
// Masks: causal rows grow and copy Q after the first stage (one sum per row at 128 with a mask); a mask
// evaluated per element (document ids) takes 32 keys per step and no producer; aux reads (the document
// ids, ALiBi's slopes) keep the last P V in the loop where no producer frees registers.
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-choose-config | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, producer, last_pv_after_loops, persistent, pair_instances, operands_after_first_stage, rows_grow, uniform_warpgroup>
// CAUSAL-SAME: mask_class = #attn.mask_class<causal>
// RUN: flare-opt %flare_src/examples/attention/document.mlir --attn-choose-config | FileCheck %s --check-prefix=GENERIC
// GENERIC: config = #attn.config<block_m = 128, block_n = 32, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, pair_instances, uniform_warpgroup>
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/alibi.mlir | flare-opt --attn-choose-config | FileCheck %s --check-prefix=AUX64
// AUX64: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 2, partial_row_sums = 4, overlap, ping_pong, lazy_rescale, peel_first_step, pair_instances, rows_grow, uniform_warpgroup>
//
// sm_80 (mma.sync, no TMA): no overlap, no producer, 64 keys per step at 128; nor the switches of
// wgmma kernels (ping-pong's turns, Q's descriptors in uniform registers), which change nothing there.
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config=arch=sm_80 | FileCheck %s --check-prefix=SM80
// SM80: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, pair_instances>
//
// Overrides, then normalisation: without overlap the last P V after the loops and the peeled step go
// too; single instances per turn (no mask, persistent) keep Q in registers and copy it after the first
// stage with a producer, and prefetch the next instance without one.
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-choose-config=overlap=0 | FileCheck %s --check-prefix=NO-OVERLAP
// NO-OVERLAP: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 2, partial_row_sums = 4, ping_pong, lazy_rescale, pair_instances, uniform_warpgroup>
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config=pair-instances=0 | FileCheck %s --check-prefix=SINGLE
// SINGLE: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer, last_pv_after_loops, persistent, split_tail, operands_after_first_stage, invariant_a_in_registers, uniform_warpgroup>
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-choose-config=pair-instances=0 | FileCheck %s --check-prefix=SINGLE256
// SINGLE256: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, lazy_rescale, last_pv_after_loops, persistent, prefetch_next_instance>
// A tile given by hand leaves the registers to ptxas (min_blocks_per_sm 0).
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-choose-config="block-m=64 num-warps=4" | FileCheck %s --check-prefix=TILE
// TILE: config = #attn.config<block_m = 64, block_n = 64, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 4,
//
// A config already on the op is kept, whatever the options say.
// RUN: flare-opt %s --attn-choose-config="arch=sm_80 overlap=1" | FileCheck %s --check-prefix=KEPT
// KEPT: config = #attn.config<block_m = 64, block_n = 32, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 0, pair_instances>
// KEPT-NOT: flare.attention
//
// Errors, located at the op: an unknown arch, an override the configuration's verifier rejects.
// RUN: not flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config=arch=sm_70 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: plain.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'attn.attention' op attn-choose-config: unknown arch 'sm_70'
// RUN: not flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="block-n=48" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: plain.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'attn.attention' op attn-choose-config: block_m and block_n must be powers of two from 16 to 256, got 128 and 48

func.func @kept(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<block_m = 64, block_n = 32, warps = 4, pair_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}
