// tile.range takes signed i32 bounds: [-4, 4) is the 8 integers -4..3 and verifies, and the lowering
// adds the signed start to each register's coordinate. (Regression test: the verifier used to read the
// bounds through the unsigned I32Attr getters, saw start = -4 as 4294967292 and rejected the op with
// "range [4294967292, 4) has -4294967288 elements".)
//
// RUN: flare-opt %s | FileCheck %s
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm | FileCheck %s --check-prefix=LOWERED

// The bounds print back as written.
// CHECK-LABEL: func.func @signed_range
// CHECK: tile.range -4, 4 : tensor<8xi32>
// CHECK: tile.range -16, -8 : tensor<8xi32>
// One warp, 8 x i32 blocked with vec 4: registers 0..3 and lanes 0, 1 hold the elements; element i
// of the range is i + start, so every register adds -4 (first range) or -16 (second) to its coordinate.
// LOWERED-LABEL: gpu.func @signed_range
// LOWERED-COUNT-4: arith.addi %{{.*}}, %c-4_i32{{[_0-9]*}} : i32
// LOWERED-COUNT-4: arith.addi %{{.*}}, %c-16_i32{{[_0-9]*}} : i32
// LOWERED: gpu.return
func.func @signed_range(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %a = tile.range -4, 4 : tensor<8xi32>
  %b = tile.range -16, -8 : tensor<8xi32>
  tile.store %a, %v[%c0] : tensor<8xi32>, !tile.view<i32, 1>
  tile.store %b, %v[%c1] : tensor<8xi32>, !tile.view<i32, 1>
  return
}
