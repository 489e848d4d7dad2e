// The transposed (sm_90a) dK/dV step reads Q and dO twice each: as the B operand of S^T = K Q^T and
// dP^T = V dO^T (along the head dim, K-major) and of dK += dS^T Q and dV += P^T dO (along the query
// rows, N-major). From head dim 128 the generator loads each once and the lowering streams that one
// copy into swizzled panels that both dots read with their own descriptors (Stream::twin): one TMA
// copy per 64-column panel per ring stage. At head dim 64 each dot keeps a load of its own (the one
// copy measured slower there, bench/NOTES.md b14), so every block is copied twice.
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true" | FileCheck %s --check-prefix=TILE
// RUN: flarec %s --grad --arch=sm_90a --tma-fallback=false --emit=gpu | FileCheck %s --check-prefix=GPU

// TILE-LABEL: func.func @d128_bwd(
// TILE: scf.for
// TILE: scf.for
// TILE: %[[Q:[0-9]+]] = tile.load %{{.*}} -> tensor<64x128xbf16>
// TILE-NEXT: %[[DO:[0-9]+]] = tile.load %{{.*}} -> tensor<64x128xbf16>
// TILE-NOT: tile.load %{{.*}} -> tensor<64x128xbf16>
// TILE: tile.trans %[[Q]]
// TILE-NOT: tile.load %{{.*}} -> tensor<64x128xbf16>
// TILE: tile.trans %[[DO]]
// TILE-NOT: tile.load %{{.*}} -> tensor<64x128xbf16>
// TILE: tile.dot %{{.*}}, %[[DO]], %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>
// TILE-NOT: tile.load %{{.*}} -> tensor<64x128xbf16>
// TILE: tile.dot %{{.*}}, %[[Q]], %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>
// TILE-LABEL: func.func @d128_bwd_dq(

// K and V, resident for the whole program instance (the A operands of S^T = K Q^T and dP^T = V dO^T
// inside the GQA group loop), each copied once by TMA into its two swizzled panels; then the first
// ring stages (before the loop) and the refill in the loop: Q's two panels, dO's two.
// GPU-LABEL: gpu.func @d128_bwd(
// GPU-SAME: tgpu.shared_bytes = 164912 : i32
// GPU: tgpu.tma_load %{{.*}}, %[[KM:[0-9]+]][%c0_i32, %[[KV0:[0-9]+]],
// GPU: tgpu.tma_load %{{.*}}, %[[KM]][%c64_i32, %[[KV0]],
// GPU: tgpu.tma_load %{{.*}}, %[[VM:[0-9]+]][%c0_i32, %[[KV0]],
// GPU: tgpu.tma_load %{{.*}}, %[[VM]][%c64_i32, %[[KV0]],
// Waited for once, before the GQA group loop (inside it they cost the dK/dV kernel 12-48 bytes of
// spills: bench/NOTES.md b20).
// GPU: tgpu.mbarrier_wait
// GPU-NEXT: gpu.barrier
// GPU-NEXT: tgpu.mbarrier_wait
// GPU-NEXT: scf.for
// GPU: tgpu.tma_load %{{.*}}, %[[QM:[0-9]+]][%c0_i32, %c0_i32,
// GPU-NOT: tgpu.tma_load
// GPU: tgpu.tma_load %{{.*}}, %[[QM]][%c64_i32, %c0_i32,
// GPU: tgpu.tma_load %{{.*}}, %[[DOM:[0-9]+]][%c0_i32, %c0_i32,
// GPU: tgpu.tma_load %{{.*}}, %[[DOM]][%c64_i32, %c0_i32,
// GPU-NOT: tgpu.tma_load
// GPU: scf.for
// GPU: tgpu.tma_load %{{.*}}, %[[QM]][%c0_i32, %[[ROW:[0-9]+]],
// GPU: tgpu.tma_load %{{.*}}, %[[QM]][%c64_i32, %[[ROW]],
// GPU: tgpu.tma_load %{{.*}}, %[[DOM]][%c0_i32, %[[ROW]],
// GPU: tgpu.tma_load %{{.*}}, %[[DOM]][%c64_i32, %[[ROW]],
// GPU-NOT: tgpu.tma_load
// GPU: gpu.return
func.func @d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// TILE-LABEL: func.func @d64_bwd(
// TILE: scf.for
// TILE: scf.for
// TILE: %[[Q:[0-9]+]] = tile.load %[[QV:[0-9]+]][{{.*}} -> tensor<64x64xbf16>
// TILE-NEXT: %[[DO:[0-9]+]] = tile.load %[[DOV:[0-9]+]][{{.*}} -> tensor<64x64xbf16>
// TILE: tile.trans %[[Q]]
// TILE: %[[DO2:[0-9]+]] = tile.load %[[DOV]][{{.*}} -> tensor<64x64xbf16>
// TILE: tile.trans %[[DO2]]
// TILE: tile.dot %{{.*}}, %[[DO]], %{{.*}} : tensor<128x64xbf16>, tensor<64x64xbf16>
// TILE: %[[Q2:[0-9]+]] = tile.load %[[QV]][{{.*}} -> tensor<64x64xbf16>
// TILE: tile.dot %{{.*}}, %[[Q2]], %{{.*}} : tensor<128x64xbf16>, tensor<64x64xbf16>

// GPU-LABEL: gpu.func @d64_bwd(
// GPU-SAME: tgpu.shared_bytes = 132144 : i32
// GPU: tgpu.tma_load %{{.*}}, %[[KM:[0-9]+]][%c0_i32, %[[KV0:[0-9]+]],
// GPU: tgpu.tma_load %{{.*}}, %[[VM:[0-9]+]][%c0_i32, %[[KV0]],
// GPU: tgpu.mbarrier_wait
// GPU-NEXT: gpu.barrier
// GPU-NEXT: tgpu.mbarrier_wait
// GPU-NEXT: scf.for
// GPU: tgpu.tma_load %{{.*}}, %[[QM:[0-9]+]][%c0_i32, %[[ROW:[0-9]+]],
// GPU: tgpu.tma_load %{{.*}}, %[[DOM:[0-9]+]][%c0_i32, %[[ROW]],
// GPU: tgpu.tma_load %{{.*}}, %[[DOM]][%c0_i32, %[[ROW]],
// GPU: tgpu.tma_load %{{.*}}, %[[QM]][%c0_i32, %[[ROW]],
// GPU-NOT: tgpu.tma_load
// GPU: gpu.return
func.func @d64(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
