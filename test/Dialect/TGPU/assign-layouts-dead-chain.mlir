// Everything that only feeds unused results is dropped by tgpu-assign-layouts, not just the last op of
// the chain: a dead reduction or layout conversion would still cost shuffles, shared memory and barriers
// once lowered. The final dead-code sweep repeats until nothing is left to erase. (Regression test: a
// single post-order sweep erased only the last op of each dead chain, here the `arith.addf`, and left
// the `arith.mulf`, the `tgpu.convert_layout` and the `tile.reduce` feeding it, so flarec emitted a
// cross-warp reduction with barriers for a value nobody used.)
//
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=NVVM

// Only the live view, load and store are left: the second load (whose only user was the dead
// reduction) and its 2-D view go too (a load only reads memory, so an unused one is dead).
// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: tile.make_view {{.*}} -> !tile.view<f32, 1>
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.store
// CHECK-NEXT: return
// Lowered: no shuffle, no barrier, no shared memory.
// NVVM-LABEL: gpu.func @dead_chain
// NVVM-SAME: tgpu.shared_bytes = 0 : i32
// NVVM-NOT: nvvm.shfl.sync
// NVVM-NOT: gpu.barrier
// NVVM: gpu.return
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

// -----

// A dead chain inside a loop body: the loop stays (its body stores), but nothing in it computes the
// unused product, its reduction or their load any more.
// CHECK-LABEL: func.func @dead_in_loop
// CHECK: scf.for
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.store
// CHECK-NEXT: }
// CHECK-NEXT: return
// NVVM-LABEL: gpu.func @dead_in_loop
// NVVM-NOT: nvvm.shfl.sync
// NVVM-NOT: gpu.barrier
// NVVM: gpu.return
func.func @dead_in_loop(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  scf.for %j = %c0 to %n step %c4 : i32 {
    %b = tile.load %w[%j] : !tile.view<f32, 1> -> tensor<4xf32>
    tile.store %b, %w[%j] : tensor<4xf32>, !tile.view<f32, 1>
    %x = tile.load %v[%j, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
    %m = tile.reduce sum %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
    %q = arith.mulf %b, %m : tensor<4xf32>
  }
  return
}
