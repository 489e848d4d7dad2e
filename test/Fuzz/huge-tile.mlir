// flare-fuzz-compile: a 2^30-element tile on one warp made convert-tgpu-to-nvvm unroll 2^25
// registers per thread, past 2 GB of memory in 20 s. Tiles are now verified against a register
// budget per thread before any pass runs.
// RUN: not flarec %s -o /dev/null 2>&1 | FileCheck %s
// CHECK: huge-tile.mlir:[[# @LINE + 5]]:8: error: 'tile.load' op has a tile 'tensor<1073741824xf32>' of 1073741824 elements: 33554432 registers per thread across the kernel's 32 threads, more than the 512 a tile may hold
func.func @k(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<1073741824xf32>
  tile.store %x, %v[%c0] : tensor<1073741824xf32>, !tile.view<f32, 1>
  return
}
