// tile.load with row_pieces through registers (mma.sync targets, and any load that is not streamed
// by TMA): each register's row r of the block reads view row offsets[r / P] + r mod P, P the piece's
// rows. Here 16 x 8 f32 in two pieces of 8 rows starting at view rows %a and %b: a row from 8 on
// reads from %b - 8 + r, the others from %a + r, and the bound check is on that view row.
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm --canonicalize --cse | FileCheck %s
// RUN: flarec %s --arch=sm_80 -o - | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @pieces(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[N:[^:]*]]: i32, %[[A:[^:]*]]: i32, %[[B:[^:]*]]: i32)
// CHECK: %[[SECOND:.*]] = arith.cmpi uge, %[[ROW:.*]], %c8_i32 : i32
// CHECK-NEXT: %[[BSHIFT:.*]] = arith.subi %[[B]], %c8_i32 : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.select %[[SECOND]], %[[BSHIFT]], %[[A]] : i32
// CHECK-NEXT: %[[G:.*]] = arith.addi %[[FIRST]], %[[ROW]] : i32
// CHECK-NEXT: arith.cmpi ult, %[[G]], %[[N]] : i32
// PTX-LABEL: .visible .entry pieces(
// PTX: selp.b32
// PTX: ld.global
// PTX: st.global
func.func @pieces(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32, %a: i32, %b: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %v = tile.make_view %p, [%n, %c8], [%c8, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %q, [%n, %c8], [%c8, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%a, %b, %c0] {row_pieces = 2} : !tile.view<f32, 2> -> tensor<16x8xf32>
  tile.store %x, %w[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}
