// tile.dot with f16 operands (the verifier accepts bf16 or f16, both the same) on the wgmma path
// (tgpu-accelerate-dot for sm_90a, as flarec runs it): the operands are stored to shared
// memory as f16 and the warpgroup MMA is typed f16. The mma.sync path (every other architecture) is in
// dot-f16-mma-sync.mlir.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s

// [64, 32] x [32, 64] on 4 warps (one warpgroup, 16 rows per warp), as @warpgroup_64x64 in dot.mlir.
// CHECK-LABEL: gpu.func @warpgroup_f16
// CHECK-SAME: tgpu.shared_bytes = 8192 : i32
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK: tgpu.wgmma_fence
// CHECK-COUNT-2: tgpu.wgmma {{.*}} b_n_major n = 64, f16
// CHECK-NEXT: tgpu.wgmma_commit
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @warpgroup_f16(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<f16> -> !tile.view<f16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<f16> -> !tile.view<f16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<f16, 2> -> tensor<64x32xf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<f16, 2> -> tensor<32x64xf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %at, %bt, %z : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
