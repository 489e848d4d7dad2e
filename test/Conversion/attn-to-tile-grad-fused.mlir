// The backward's fused step at head dim 128 (dq-atomics with the transposed two-warpgroup tiles,
// 64 queries x 128 keys): dQ's sums come from the dK/dV kernel itself. dS K has only 64 rows, which
// eight warps cannot stack for wgmma, so the generator computes dQ^T = K^T dS^T instead: the head
// dim's 128 rows on the eight warps, K^T the transpose of S^T's K (resident for the whole program
// instance), dS^T the step's own tile as B, and the transposed f32 block added into dQ's sums
// (BackwardKernels.cpp).
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true dq-atomics=true grad-tiles=64,128,8,1" | FileCheck %s --check-prefix=TILE
// The lowering copies K once by TMA into swizzled panels that S^T = K Q^T reads K-major and dQ^T
// reads M-major (a_m_major: the same bytes, no second copy of K), and adds the sums by TMA reduce:
// each warpgroup holds 64 whole columns (two 32-column panels) of the block, writes them behind its
// own named barrier (128 threads) and its first thread adds them, two reduces per warpgroup. Q's and
// dO's ring keeps three stages beside the sums' 32 KiB staging and dS^T's copy for the product
// (bytesStagedByBody counts what the body stores, not the streamed blocks it reads transposed).
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true dq-atomics=true grad-tiles=64,128,8,1" | flarec - --arch=sm_90a --tma-fallback=false --emit=gpu | FileCheck %s --check-prefix=GPU

// TILE-LABEL: func.func @d128_bwd(
// TILE-SAME: flare.attention.block_n = 128 : i32
// TILE-SAME: tile.num_warps = 8 : i32
// K^T, once, before the loops.
// TILE: %[[K:[0-9]+]] = tile.load %{{.*}} -> tensor<128x128xbf16>
// TILE: %[[V:[0-9]+]] = tile.load %{{.*}} -> tensor<128x128xbf16>
// TILE: %[[KT:[0-9]+]] = tile.trans %[[K]] : tensor<128x128xbf16> -> tensor<128x128xbf16>
// TILE-NOT: tile.load %{{.*}} -> tensor<128x128xbf16>
// TILE: scf.for
// TILE: scf.for
// dV += P^T dO; then dK += dS^T Q, dQ^T = K^T dS^T and its transpose added.
// TILE: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
// TILE: %[[DS:[0-9]+]] = arith.truncf %{{.*}} : tensor<128x64xf32> to tensor<128x64xbf16>
// TILE-NEXT: tile.dot %[[DS]], %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
// TILE: %[[DQT:[0-9]+]] = tile.dot %[[KT]], %[[DS]], %{{.*}} : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
// TILE-NEXT: %[[DQ:[0-9]+]] = tile.trans %[[DQT]] : tensor<128x64xf32> -> tensor<64x128xf32>
// TILE-NEXT: tile.atomic_add %[[DQ]], %{{.*}} : tensor<64x128xf32>, !tile.view<f32, 2>

// GPU-LABEL: gpu.func @d128_bwd(
// GPU-SAME: tgpu.shared_bytes = 215040 : i32
// GPU: tgpu.tma_load %{{.*}}, %[[KM:[0-9]+]][%c0_i32, %[[KV0:[0-9]+]],
// GPU: tgpu.tma_load %{{.*}}, %[[KM]][%c64_i32, %[[KV0]],
// GPU-NOT: tgpu.ring<2>
// GPU: tgpu.ring<3>
// GPU-NOT: llvm.atomicrmw
// dQ^T's eight K steps read K M-major.
// GPU-COUNT-8: tgpu.wgmma %{{.*}}, a_desc %{{.*}} a_m_major, b_desc %{{.*}} b_n_major n = 64, bf16
// GPU: tgpu.tma_store_wait 0
// GPU: tgpu.named_barrier_sync %[[BAR:[0-9]+]], %c128_i32
// GPU: tgpu.fence_async_shared
// GPU-NEXT: tgpu.named_barrier_sync %[[BAR]], %c128_i32
// GPU: tgpu.tma_reduce_add
// GPU: tgpu.tma_reduce_add
// GPU-NEXT: tgpu.tma_store_commit
// GPU-NOT: tgpu.tma_reduce_add
// GPU-NOT: llvm.atomicrmw
// GPU: gpu.return
func.func @d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
