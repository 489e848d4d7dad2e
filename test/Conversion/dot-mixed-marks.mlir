// One kernel, two dots that both fit wgmma on sm_90a (4 warps, 64 x 64 results): tgpu-accelerate-dot
// keeps the hand-written #tgpu.mma<mma_sync> of the first and marks the second wgmma, and
// convert-tgpu-to-nvvm lowers each as marked: mma.sync for the first (each warp's 16 rows x 64 columns
// in 8 blocks of 16 x 8, times 4 K steps of 16: 32), one warpgroup MMA m64n64k16 per K step (4) for
// the second.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s

// CHECK-LABEL: gpu.func @mixed
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: tgpu.wgmma_fence
// CHECK-COUNT-4: = tgpu.wgmma %{{.*}} n = 64
// CHECK: tgpu.wgmma_commit
// CHECK-NOT: nvvm.mma.sync
func.func @mixed(%pa: !tile.ptr<bf16>, %pb: !tile.ptr<bf16>, %pc: !tile.ptr<f32>, %pd: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %va = tile.make_view %pa, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %pb, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %pc, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %vd = tile.make_view %pd, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %a = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %b = tile.load %vb[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c = tile.dot %a, %b, %zero {tgpu.mma = #tgpu.mma<mma_sync>} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %d = tile.dot %a, %b, %zero : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %c, %vc[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  tile.store %d, %vd[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
