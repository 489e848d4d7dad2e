// A layout used first inside a loop body and again after the loop lowers to valid IR: each layout's
// thread coordinates (the XOR of the lane and warp bases selected by the thread's ids) are computed once
// in the kernel's prologue, where every region can use them -- not at the first use, which may be inside
// the loop and would not dominate the uses after it ("operand #N does not dominate this use").
//
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s

// The 32-element layout (one warp, reg 1, 2; lane 4, 8, 16, 0, 0) is first used by the load in the loop,
// then by the load and store after it. Its thread coordinate T = 4*lane[0] ^ 8*lane[1] ^ 16*lane[2] is
// defined before the loop and used both inside it and after it.
// CHECK-LABEL: gpu.func @copy_after_loop
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: arith.addi %[[J]], %[[T:[^ ]*]] : i32
// CHECK: ld.global
// CHECK: llvm.store
// CHECK: arith.addi %c0_i32{{[_0-9]*}}, %[[T]] : i32
// CHECK: ld.global
// CHECK: llvm.store
func.func @copy_after_loop(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  scf.for %j = %c0 to %n step %c32 : i32 {
    %x = tile.load %v[%j] : !tile.view<f32, 1> -> tensor<32xf32>
    tile.store %x, %v[%j] : tensor<32xf32>, !tile.view<f32, 1>
  }
  %y = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<32xf32>
  tile.store %y, %v[%c0] : tensor<32xf32>, !tile.view<f32, 1>
  return
}

// -----

// Row sums accumulated over column blocks, stored after the loop: the accumulator's layout is first
// needed by the convert_layout inside the loop.
// CHECK-LABEL: gpu.func @accumulate_then_store
// CHECK: scf.for
// CHECK: nvvm.shfl.sync bfly
// CHECK: scf.yield
// CHECK: llvm.store
func.func @accumulate_then_store(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c256 = arith.constant 256 : i32
  %zero = arith.constant 0.0 : f32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %q, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %init = tile.splat %zero : f32 -> tensor<4xf32>
  %acc = scf.for %j = %c0 to %n step %c256 iter_args(%a = %init) -> (tensor<4xf32>) : i32 {
    %x = tile.load %v[%c0, %j] : !tile.view<f32, 2> -> tensor<4x256xf32>
    %s = tile.reduce sum %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
    %b = arith.addf %s, %a : tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  tile.store %acc, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}
