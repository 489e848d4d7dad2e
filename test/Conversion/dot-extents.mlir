// tile.dot's zero-padding promises on the wgmma path: `k_extent` leaves out the K steps past it,
// `n_extent` issues m64nN'k16 over the first N' columns only, on the accumulator registers of those
// columns (a prefix of the N columns': wgmma's fragments run in 8-column groups), the others keeping
// the accumulator's values. The attention generator sets them on Q K^T and P V when a head dim lies
// between powers of two (96 in tiles of 128).
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s

// K = 64 with k_extent = 32: two of the four 16-deep steps.
// CHECK-LABEL: gpu.func @k_extent
// CHECK: tgpu.wgmma_fence
// CHECK-COUNT-2: tgpu.wgmma {{.*}} n = 64, bf16 : !llvm.struct<(f32{{(, f32){31}[)]}}>
// CHECK-NEXT: tgpu.wgmma_commit
// CHECK-NOT: = tgpu.wgmma
// CHECK: gpu.return
func.func @k_extent(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %at, %bt, %z {k_extent = 32} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// N = 64 with n_extent = 48: m64n48k16 on 24 accumulator registers of the 32 (K = 32: two steps).
// CHECK-LABEL: gpu.func @n_extent
// CHECK: tgpu.wgmma_fence
// CHECK-COUNT-2: tgpu.wgmma {{.*}} n = 48, bf16 : !llvm.struct<(f32{{(, f32){23}[)]}}>
// CHECK-NEXT: tgpu.wgmma_commit
// CHECK-NOT: = tgpu.wgmma
// CHECK: gpu.return
func.func @n_extent(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %at, %bt, %z {n_extent = 48} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
