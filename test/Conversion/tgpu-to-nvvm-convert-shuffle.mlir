// A layout conversion whose every warp already holds the elements it needs moves them by warp shuffles,
// one per destination register, with no shared memory and no CTA barrier; a conversion that moves
// elements between warps goes through shared memory between barriers.
//
// RUN: flare-opt %s -split-input-file --convert-tgpu-to-nvvm | FileCheck %s

// The backward's per-query statistics: 64 values, four per lane, lanes 16-31 and every warp repeating
// them, needed in the columns of a transposed accumulator (lane l: columns 2(l%4) + 8j and + 1). Lanes
// 0-15 and 16-31 offer different registers in one round (a select on lane bit 4 of the offering lane).
#row = #tgpu.linear<shape = [64], reg = [[1], [2]], lane = [[4], [8], [16], [32], [0]], warp = [[0], [0], [0]]>
#row2 = #tgpu.linear<shape = [1, 64], reg = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [0, 0]], warp = [[0, 0], [0, 0], [0, 0]]>
#cols = #tgpu.linear<shape = [1, 64], reg = [[0, 1], [0, 8], [0, 16], [0, 32]], lane = [[0, 2], [0, 4], [0, 0], [0, 0], [0, 0]], warp = [[0, 0], [0, 0], [0, 0]]>
// CHECK-LABEL: gpu.func @rows_to_columns
// CHECK-NOT: gpu.barrier
// CHECK-NOT: llvm.store {{.*}}!llvm.ptr<3>
// CHECK-COUNT-16: nvvm.shfl.sync  idx %{{.*}} : f32 -> f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// CHECK-NOT: llvm.store {{.*}}!llvm.ptr<3>
// CHECK: gpu.return
func.func @rows_to_columns(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %o = tile.make_view %q, [%c1, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<64xf32, #row>
  %e = tile.expand_dims %x {axis = 0 : i32} : tensor<64xf32, #row> -> tensor<1x64xf32, #row2>
  %c = tgpu.convert_layout %e : tensor<1x64xf32, #row2> -> tensor<1x64xf32, #cols>
  tile.store %c, %o[%c0, %c0] : tensor<1x64xf32, #cols>, !tile.view<f32, 2>
  return
}

// -----

// 16-bit values travel as the low half of a 32-bit word.
#row = #tgpu.linear<shape = [1, 32], reg = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 0], [0, 0]], warp = [[0, 0], [0, 0]]>
#cols = #tgpu.linear<shape = [1, 32], reg = [[0, 1], [0, 8], [0, 16]], lane = [[0, 2], [0, 4], [0, 0], [0, 0], [0, 0]], warp = [[0, 0], [0, 0]]>
// CHECK-LABEL: gpu.func @bf16_columns
// CHECK-NOT: gpu.barrier
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK-COUNT-8: nvvm.shfl.sync  idx %{{.*}} : i32 -> i32
// CHECK-NOT: gpu.barrier
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: gpu.return
func.func @bf16_columns(%p: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%c1, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<bf16, 2> -> tensor<1x32xbf16, #row>
  %c = tgpu.convert_layout %x : tensor<1x32xbf16, #row> -> tensor<1x32xbf16, #cols>
  tile.store %c, %v[%c0, %c0] : tensor<1x32xbf16, #cols>, !tile.view<bf16, 2>
  return
}

// -----

// Elements that change warps go through shared memory: store, barrier, load.
#blk = #tgpu.linear<shape = [256], reg = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64], [128]]>
#rev = #tgpu.linear<shape = [256], reg = [], lane = [[8], [16], [32], [64], [128]], warp = [[1], [2], [4]]>
// CHECK-LABEL: gpu.func @across_warps
// CHECK-NOT: nvvm.shfl.sync
// CHECK: gpu.barrier
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: gpu.barrier
func.func @across_warps(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<256xf32, #blk>
  %c = tgpu.convert_layout %x : tensor<256xf32, #blk> -> tensor<256xf32, #rev>
  tile.store %c, %v[%c0] : tensor<256xf32, #rev>, !tile.view<f32, 1>
  return
}
