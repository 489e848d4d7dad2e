// #tile.schedule<min_blocks_per_sm = ...> on a kernel becomes PTX's .minnctapersm, which bounds the
// registers ptxas gives each thread so that that many CTAs fit on one SM (generated head-dim-64 attention kernels ask for 2).
// RUN: flarec %s -o - | FileCheck %s

// CHECK: .visible .entry two_per_sm(
// CHECK: .maxntid 128, 1, 1
// CHECK-NEXT: .minnctapersm 2
// CHECK: .visible .entry unbounded(
// CHECK-NOT: .minnctapersm
// CHECK: ret;

func.func @two_per_sm(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<min_blocks_per_sm = 2>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<128xf32>
  %y = arith.addf %x, %x : tensor<128xf32>
  tile.store %y, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

func.func @unbounded(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<128xf32>
  tile.store %x, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}
