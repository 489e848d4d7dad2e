// Everything that only feeds unused results is dropped by tgpu-assign-layouts, not just the last op of
// the chain: a dead reduction or layout conversion would still cost shuffles, shared memory and barriers
// once lowered.
//
// XFAIL: *
// Known bug: the final dead-code sweep is a single post-order walk collecting isOpTriviallyDead ops.
// A producer is visited before its users, while they are still alive, so only the last op of a dead
// chain is erased. Here the dead `arith.addf` goes but the `arith.mulf`, the `tgpu.convert_layout` and
// the `tile.reduce` feeding it stay, and flarec emits a cross-warp reduction with 4 bar.sync for a
// value nobody uses. (Also leaves the blocked original of a re-laid-out weak tile behind, see
// @weak_follows_strong in assign-layouts.mlir.) Remove the XFAIL once the sweep iterates to a fixpoint
// or walks each block backwards.
//
// RUN: flare-opt %s --tgpu-assign-layouts | FileCheck %s

// CHECK-LABEL: func.func @dead_chain
// CHECK: tile.load
// CHECK: tile.store
// CHECK-NOT: tile.reduce
// CHECK-NOT: tgpu.convert_layout
// CHECK-NOT: arith.mulf
// CHECK: return
func.func @dead_chain(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %b = tile.load %w[%n] : !tile.view<f32, 1> -> tensor<4xf32>
  tile.store %b, %w[%n] : tensor<4xf32>, !tile.view<f32, 1>
  // Dead from here on: the row maxima (sliced layout) are converted to %b's layout for the product,
  // whose only user is unused.
  %x = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  %q = arith.mulf %b, %m : tensor<4xf32>
  %q2 = arith.addf %q, %q : tensor<4xf32>
  return
}
