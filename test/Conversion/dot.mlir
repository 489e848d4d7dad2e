// tile.dot lowering. An unmarked dot becomes warp-level nvvm.mma.sync m16n8k16 (sm_80+): for each
// 16x8 block of a warp's accumulator and each 16-deep slice of K, one mma on registers that the mma
// layouts of tgpu-assign-layouts put in place (two 16-bit values packed per 32-bit register). After
// tgpu-accelerate-dot (sm_90a, as flarec runs it), a dot whose warps all stack along M -- M == 16 *
// num_warps, num_warps a multiple of 4, N a multiple of 8 and at most 256 -- is marked
// #tgpu.mma<wgmma> and becomes warpgroup tgpu.wgmma m64nNk16 on operands stored to shared memory; any
// other dot is marked #tgpu.mma<mma_sync> and stays mma.sync.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefixes=CHECK,MMA
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefixes=CHECK,WGMMA
//
// Prefixes: CHECK holds for both runs, MMA for the unmarked one, WGMMA for the one after tgpu-accelerate-dot.

// One mma: [16, 16] x [16, 8] + [16, 8] on one warp (no wgmma: one warp is no warpgroup). The loaded
// tiles are blocked (8 contiguous bf16 per thread) and no register permutation gives the mma operand
// layouts, so both operands go through shared memory ("lazy" operands, read fragment by fragment right
// before the mma): A is 16 x 16 x 2 = 512 bytes, B 16 x 8 x 2 = 256, 768 in all.
// CHECK-LABEL: gpu.func @one_mma
// CHECK-SAME: tgpu.shared_bytes = 768 : i32
// Each thread stores its 8 elements of A, then of B (one barrier after each), ...
// CHECK-COUNT-8: llvm.store %{{.*}} : bf16, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-8: llvm.store %{{.*}} : bf16, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// ...and reads back its fragments, packing pairs of bf16 into i32 (4 registers of A, 2 of B).
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> bf16
// CHECK: %[[PAIR:.*]] = llvm.mlir.undef : vector<2xbf16>
// CHECK: %[[LO:.*]] = llvm.insertelement %{{.*}}, %[[PAIR]][%c0_i32{{[_0-9]*}} : i32] : vector<2xbf16>
// CHECK: %[[HI:.*]] = llvm.insertelement %{{.*}}, %[[LO]][%c1_i32{{[_0-9]*}} : i32] : vector<2xbf16>
// CHECK-NEXT: %[[A0:.*]] = llvm.bitcast %[[HI]] : vector<2xbf16> to i32
// The accumulator is the zero constant (one value for all 4 registers).
// CHECK: %[[D:.*]] = nvvm.mma.sync A[%[[A0]], %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%[[Z:[^,]*]], %[[Z]], %[[Z]], %[[Z]]]
// CHECK-SAME: {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-SAME: : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D0:.*]] = llvm.extractvalue %[[D]][0] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D1:.*]] = llvm.extractvalue %[[D]][1] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D2:.*]] = llvm.extractvalue %[[D]][2] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[D3:.*]] = llvm.extractvalue %[[D]][3] : !llvm.struct<(f32, f32, f32, f32)>
// The operands' shared memory may be reused once every warp has read its fragments.
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// The 4 accumulator registers are what the store writes.
// CHECK: llvm.store %[[D0]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %[[D1]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %[[D2]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %[[D3]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @one_mma(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x8xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %d = tile.dot %at, %bt, %z : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// K = 32: two mmas along K, the second accumulating onto the first's results. (f16 operands are in
// dot-f16.mlir and dot-f16-mma-sync.mlir.)
// CHECK-LABEL: gpu.func @k32
// CHECK: %[[D:.*]] = nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NEXT: %[[D0:.*]] = llvm.extractvalue %[[D]][0]
// CHECK-NEXT: %[[D1:.*]] = llvm.extractvalue %[[D]][1]
// CHECK-NEXT: %[[D2:.*]] = llvm.extractvalue %[[D]][2]
// CHECK-NEXT: %[[D3:.*]] = llvm.extractvalue %[[D]][3]
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[%[[D0]], %[[D1]], %[[D2]], %[[D3]]] {{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
func.func @k32(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x8xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %d = tile.dot %at, %bt, %z : tensor<16x32xbf16>, tensor<32x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// [64, 32] x [32, 64] on 4 warps: the warps stack along M, 16 rows each (M = 16 * 4), so this dot fits
// one warpgroup.
// Default: per warp 1 block along M x 8 blocks along N x 2 slices of K = 16 mma.sync.
// MMA-LABEL: gpu.func @warpgroup_64x64
// MMA-COUNT-16: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 16>
// MMA-NOT: nvvm.mma.sync
// MMA-NOT: nvvm.wgmma
// With wgmma: A (K-major) and B are stored to shared memory as 8x8 core matrices with 16-byte vector
// stores (each thread's 8 contiguous bf16): A 64 x 32 x 2 = 4096 bytes, then B, 8192 in all.
// WGMMA-LABEL: gpu.func @warpgroup_64x64
// WGMMA-SAME: known_block_size = array<i32: 128, 1, 1>
// WGMMA-SAME: tgpu.shared_bytes = 8192 : i32
// WGMMA-NOT: nvvm.mma.sync
// WGMMA-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// The generic-proxy stores are made visible to the async proxy wgmma reads through, then all warps sync.
// WGMMA-NEXT: tgpu.fence_async_shared
// WGMMA-NEXT: gpu.barrier
// The accumulator's 32 registers per thread (64 x 64 / 128 threads) travel as one struct; the
// warpgroup fence orders the register writes before the MMAs.
// WGMMA: llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// Shared-memory descriptors: the 32-bit shared address >> 4, or-ed with the constant fields: the
// leading-byte offset LBO = 128 >> 4 = 8 in bits 16-29 (8 << 16 = 524288) and the stride-byte offset
// SBO = K * 16 = 512, 512 >> 4 = 32 in bits 32-45 (32 << 32 = 137438953472), no swizzle:
// 524288 + 137438953472 = 137439477760. Built once per operand; the second K step (two core matrices,
// 256 bytes, further) adds 256 >> 4 = 16.
// WGMMA: arith.ori %{{.*}}, %c137439477760_i64{{[_0-9]*}} : i64
// WGMMA: tgpu.wgmma_fence
// Two K steps of 16, chained through the accumulator. A is row-major (K-major); B was loaded row by row,
// so its registers run along N and it is stored N-major: wgmma's transposed B, layout row.
// WGMMA: %[[W0:.*]] = tgpu.wgmma %{{.*}}, a_desc %{{.*}}, b_desc %{{.*}} b_n_major n = 64, bf16 : !llvm.struct<(f32{{(, f32){31}[)]}}>
// WGMMA: arith.addi %{{.*}}, %c16_i64{{[_0-9]*}} : i64
// WGMMA: %[[W1:.*]] = tgpu.wgmma %[[W0]], a_desc %{{.*}}, b_desc %{{.*}} b_n_major n = 64, bf16
// WGMMA-NEXT: tgpu.wgmma_commit
// WGMMA-NEXT: tgpu.wgmma_wait 0
// WGMMA-NEXT: llvm.extractvalue %[[W1]][0]
// WGMMA-NOT: = tgpu.wgmma 
// Every warpgroup has read A and B: the space may be reused.
// WGMMA: gpu.barrier
// WGMMA-NOT: nvvm.mma.sync
// WGMMA: gpu.return
func.func @warpgroup_64x64(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %at, %bt, %z : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Q K^T as in attention: B is the transpose of a loaded [64, 64] K tile, so its registers run along K
// and it is stored K-major: wgmma's plain B, layout col. K = 64: four steps.
// MMA-LABEL: gpu.func @transposed_b
// MMA: nvvm.mma.sync
// MMA-NOT: nvvm.wgmma
// WGMMA-LABEL: gpu.func @transposed_b
// WGMMA-NOT: nvvm.mma.sync
// WGMMA: tgpu.wgmma_fence
// WGMMA-COUNT-4: tgpu.wgmma {{.*}} n = 64, bf16
// WGMMA-NEXT: tgpu.wgmma_commit
// WGMMA-NEXT: tgpu.wgmma_wait 0
// WGMMA-NOT: nvvm.mma.sync
// WGMMA: gpu.return
func.func @transposed_b(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %s: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %qv = tile.make_view %q, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %s, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %kt = tile.load %kv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %ktt = tile.trans %kt : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %qt, %ktt, %z : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d, %sv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// 8 warps, [128, 32] x [32, 128] (the matmul example's block): two warpgroups, each computing 64 rows
// with m64n128k16; warpgroup g = warp >> 2 starts 8 * g core-matrix rows (8 * 512 = 4096 bytes) into A.
// g is lane 0's copy (warp-uniform to ptxas, which then builds the descriptors in uniform registers).
// The accumulator is 128 x 128 / 256 threads = 64 registers per thread.
// WGMMA-LABEL: gpu.func @two_warpgroups
// WGMMA-SAME: known_block_size = array<i32: 256, 1, 1>
// WGMMA: %[[WARP:.*]] = arith.shrui %{{.*}}, %c5_i32 : i32
// WGMMA: %[[GROUP0:.*]] = arith.shrui %[[WARP]], %c2_i32{{[_0-9]*}} : i32
// WGMMA: %[[GROUP:.*]] = nvvm.shfl.sync idx %c-1_i32, %[[GROUP0]], %c0_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}} : i32 -> i32
// WGMMA: tgpu.fence_async_shared
// WGMMA: llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// WGMMA: arith.muli %[[GROUP]], %c4096_i32{{[_0-9]*}} : i32
// WGMMA: tgpu.wgmma_fence
// WGMMA-COUNT-2: tgpu.wgmma {{.*}} n = 128, {{.*}} : !llvm.struct<(f32{{(, f32){63}[)]}}>
// WGMMA-NOT: = tgpu.wgmma 
// WGMMA-NOT: nvvm.mma.sync
// WGMMA: gpu.return
// MMA-LABEL: gpu.func @two_warpgroups
// MMA: nvvm.mma.sync
// MMA-NOT: nvvm.wgmma
func.func @two_warpgroups(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x32xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x128xbf16>
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  %d = tile.dot %at, %bt, %z : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<128x128xf32>, !tile.view<f32, 2>
  return
}

// -----

// The same dot with `#tile.schedule<uniform_warpgroup = false>`: the warpgroup index stays the thread's own
// warp >> 2 (no lane-0 copy), and A's warpgroup offset is computed from it.
// WGMMA-LABEL: gpu.func @two_warpgroups_per_thread_group
// WGMMA: %[[WARP:.*]] = arith.shrui %{{.*}}, %c5_i32 : i32
// WGMMA: %[[GROUP:.*]] = arith.shrui %[[WARP]], %c2_i32{{[_0-9]*}} : i32
// WGMMA-NOT: nvvm.shfl.sync
// WGMMA: arith.muli %[[GROUP]], %c4096_i32{{[_0-9]*}} : i32
// WGMMA-COUNT-2: = tgpu.wgmma 
// WGMMA: gpu.return
func.func @two_warpgroups_per_thread_group(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<uniform_warpgroup = false>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x32xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x128xbf16>
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  %d = tile.dot %at, %bt, %z : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<128x128xf32>, !tile.view<f32, 2>
  return
}

// -----

// Dots that do not fit wgmma stay mma.sync even on sm_90a.
// 4 warps with M = 128: each warp has 32 rows (2 blocks along M), not 16. Per warp: 2 x 8 (N = 64) x 2
// (K = 32) = 32 mma.sync.
// CHECK-LABEL: gpu.func @m128_on_4_warps
// CHECK-COUNT-32: nvvm.mma.sync {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK-NOT: tgpu.fence_async_shared
// CHECK: gpu.return
func.func @m128_on_4_warps(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x32xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  %z = arith.constant dense<0.0> : tensor<128x64xf32>
  %d = tile.dot %at, %bt, %z : tensor<128x32xbf16>, tensor<32x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// 2 warps (no warpgroup of 4) with M = 32 = 16 * 2: stacked along M, but not a multiple of 4 warps.
// Per warp: 1 x 4 (N = 32) x 1 (K = 16) = 4 mma.sync.
// CHECK-LABEL: gpu.func @two_warps
// CHECK-COUNT-4: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
func.func @two_warps(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = tile.dot %at, %bt, %z : tensor<32x16xbf16>, tensor<16x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<32x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// 4 warps stacked along M (M = 64) but N = 512: wgmma's N is at most 256. Per warp: 1 x 64 x 1 = 64
// mma.sync.
// CHECK-LABEL: gpu.func @n512
// CHECK-COUNT-64: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
func.func @n512(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x512xbf16>
  %z = arith.constant dense<0.0> : tensor<64x512xf32>
  %d = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x512xbf16>, tensor<64x512xf32> -> tensor<64x512xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x512xf32>, !tile.view<f32, 2>
  return
}
