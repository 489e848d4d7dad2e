// convert-attn-to-tile follows the op's configuration: the switches that shape a persistent kernel's
// instance starts become the fields of the same name of the kernel's #tile.schedule, for the GPU layer
// (operands_after_first_stage, prefetch_next_instance, invariant_a_in_registers, with the persistent
// schedule and the producer warpgroup they need; the printer leaves out fields at their defaults).
// Which configuration is chosen for which kernel is attn-choose-config's
// (test/Dialect/Attn/choose-config-instance-starts.mlir).
// RUN: flare-opt %s -split-input-file --convert-attn-to-tile | FileCheck %s

// Q after the first K/V stage and Q in registers, on a producer warpgroup's persistent kernel.
// CHECK-LABEL: func.func @registers(
// CHECK-SAME: tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, pair_instances = false, operands_after_first_stage = true, invariant_a_in_registers = true>}
func.func @registers(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v attributes {config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer, last_pv_after_loops, persistent, split_tail, operands_after_first_stage, invariant_a_in_registers, uniform_warpgroup>, mask_class = #attn.mask_class<none>} : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// The next instance's first K/V copy after this instance's loops, on a persistent kernel without a
// producer.
// CHECK-LABEL: func.func @prefetch(
// CHECK-SAME: tile.schedule = #tile.schedule<ping_pong = false, persistent = true, pair_instances = false, prefetch_next_instance = true, uniform_warpgroup = false>}
func.func @prefetch(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>) -> (tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v attributes {config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, lazy_rescale, last_pv_after_loops, persistent, prefetch_next_instance>, mask_class = #attn.mask_class<none>} : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>
}
