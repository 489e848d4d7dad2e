// tile.range takes signed i32 bounds: [-4, 4) is the 8 integers -4..3 and must verify.
//
// XFAIL: *
// Known bug: RangeOp::verify reads start/end through the unsigned I32Attr getters, so start = -4 is
// seen as 4294967292 and the op is rejected with "range [4294967292, 4) has -4294967288 elements but
// the result tile has 8". Remove the XFAIL once the verifier reads the bounds as signed values.
//
// RUN: flare-opt %s | FileCheck %s

// CHECK-LABEL: func.func @signed_range
// CHECK: tile.range -4, 4 : tensor<8xi32>
// CHECK: tile.range -16, -8 : tensor<8xi32>
func.func @signed_range() attributes {tile.kernel} {
  %a = tile.range -4, 4 : tensor<8xi32>
  %b = tile.range -16, -8 : tensor<8xi32>
  return
}
