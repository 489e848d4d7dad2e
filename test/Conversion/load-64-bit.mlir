// Loads of 64-bit elements (i64, f64) from a view with unit innermost stride: like every other element
// type, each thread's contiguous elements (16 bytes = 2 elements) load as one group, vector or element
// by element, and the kernel lowers and compiles.
//
// Fixed bug, kept as a regression test: convert-tgpu-to-nvvm crashes (segmentation fault in arith::ConstantIntOp::create, called from
// lowerLoad) on these loads, in flare-opt and in flarec. The predicated vector load splits the group
// into 32-bit words and computes 32 / bit-width elements per word, which is 0 for 64-bit elements.
// (A non-unit stride, which loads element by element, works; so do 8-, 16- and 32-bit elements.)
// Fixed; kept as a regression test.
//
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s
// RUN: flarec %s -o - | FileCheck %s --check-prefix=PTX

// 64 x i64 on one warp: 2 registers per thread, both stored.
// CHECK-LABEL: gpu.func @copy_i64
// CHECK-COUNT-2: llvm.store %{{.*}} : i64, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// PTX-LABEL: .visible .entry copy_i64(
// PTX: ld.global
// PTX: st.global
func.func @copy_i64(%p: !tile.ptr<i64>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i64> -> !tile.view<i64, 1>
  %x = tile.load %v[%c0] : !tile.view<i64, 1> -> tensor<64xi64>
  tile.store %x, %v[%c0] : tensor<64xi64>, !tile.view<i64, 1>
  return
}

// -----

// The same with f64.
// CHECK-LABEL: gpu.func @copy_f64
// CHECK-COUNT-2: llvm.store %{{.*}} : f64, !llvm.ptr<1>
// PTX-LABEL: .visible .entry copy_f64(
// PTX: ld.global
// PTX: st.global
func.func @copy_f64(%p: !tile.ptr<f64>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f64> -> !tile.view<f64, 1>
  %x = tile.load %v[%c0] : !tile.view<f64, 1> -> tensor<64xf64>
  tile.store %x, %v[%c0] : tensor<64xf64>, !tile.view<f64, 1>
  return
}
