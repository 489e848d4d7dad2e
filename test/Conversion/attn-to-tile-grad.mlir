// convert-attn-to-tile grad=true: the backward kernels of one attn.attention (dialects/Attn/Rationale.md,
// "The backward kernels"): the ABI shared by the three, the GQA group loop around the query-block
// loops, the query blocks a causal key block visits (the mask read transposed), the masked loop's
// mask, score_mod's derivative, the transposed step, and what the generator rejects.
// The tiles by head dim and arch (chooseBackwardTiles): head dim 64 takes 16 query rows x 128 keys on
// mma.sync at sm_80 and the transposed 64 x 64 step on one warpgroup at sm_90a; 128 takes 16 x 64 at
// sm_80. These are the kernels that sum dQ by atomics (sm_80's default, dq-atomics at sm_90a); the
// dQ kernel of its own is attn-to-tile-grad-deterministic.mlir's.
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true arch=sm_80" | FileCheck %s
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true dq-atomics=true" | FileCheck %s --check-prefix=TR
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true dq-atomics=true grad-tiles=64,64,4,1,32" | FileCheck %s --check-prefix=CHUNK
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-tiles=64,48,4" 2>&1 | FileCheck %s --check-prefix=TILES
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-tiles=64,64,4,1,8" 2>&1 | FileCheck %s --check-prefix=CHUNK8
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-tiles=64,64,4,1,0,1,0" 2>&1 | FileCheck %s --check-prefix=FIELDS
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-tiles=64,64,4,2" 2>&1 | FileCheck %s --check-prefix=TRANS2
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true arch=sm_70" 2>&1 | FileCheck %s --check-prefix=ARCH
// TILES: error: 'attn.attention' op convert-attn-to-tile: grad-tiles must be BLOCK_M,BLOCK_N,WARPS (powers of two, blocks from 16), optionally TRANSPOSED (0 or 1), DQ_CHUNK (0, or a power of two from 16) and SPLIT (0 or 1), got '64,48,4'
// CHUNK8: error: 'attn.attention' op convert-attn-to-tile: grad-tiles must be BLOCK_M,BLOCK_N,WARPS {{.*}}, got '64,64,4,1,8'
// FIELDS: error: 'attn.attention' op convert-attn-to-tile: grad-tiles must be BLOCK_M,BLOCK_N,WARPS {{.*}}, got '64,64,4,1,0,1,0'
// TRANS2: error: 'attn.attention' op convert-attn-to-tile: grad-tiles must be BLOCK_M,BLOCK_N,WARPS {{.*}}, got '64,64,4,2'
// ARCH: error: 'attn.attention' op convert-attn-to-tile: unknown arch 'sm_70'

// CHECK-LABEL: func.func @causal_bwd_preprocess(
// The ABI: q, k, v, o, do, lse, delta, dq_acc, dq, dk, dv, then heads_q, heads_kv, seq_q, seq_kv,
// then (batch, head, row) strides of q, k, v, o, do, dq, dk, dv.
// CHECK-SAME: %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<f32>, %{{[a-z0-9]+}}: !tile.ptr<f32>, %{{[a-z0-9]+}}: !tile.ptr<f32>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: !tile.ptr<bf16>, %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: i32,
// CHECK-SAME: flare.attention.block_m = 64 : i32
// D = rowsum(dO * O) in f32, and the dQ sums start at zero.
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<64x64xf32> -> tensor<64xf32>
// CHECK: tile.store %{{.*}} : tensor<64xf32>, !tile.view<f32, 1>
// CHECK: tile.store %{{.*}} : tensor<64x64xf32>, !tile.view<f32, 2>

// CHECK-LABEL: func.func @causal_bwd_dq(
// CHECK-SAME: flare.attention.block_m = 64 : i32
// CHECK: tile.load %{{.*}} : !tile.view<f32, 2> -> tensor<64x64xf32>
// CHECK: arith.truncf %{{.*}} : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK: tile.store

// CHECK-LABEL: func.func @causal_bwd(
// CHECK-SAME: flare.attention.block_n = 128 : i32
// CHECK-SAME: tile.num_warps = 8 : i32
// No warpgroup turns: each warpgroup runs the whole step on its own keys.
// CHECK-SAME: tile.schedule = #tile.schedule<ping_pong = false>
// The query heads of this KV head's group: dK and dV accumulate across them.
// CHECK: %[[GROUP:.*]] = arith.divui
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GROUP]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<128x64xf32>, tensor<128x64xf32>)
// Causal, read transposed: the first query block that sees the keys [kv0, kv1] is floor(kv0 / 16)
// (an arithmetic shift by log2(16)), the first wholly kept one ceil(kv1 / 16).
// CHECK: arith.shrsi %{{.*}}, %c4_i32
// The full blocks first, without mask code: S, P, dV, dP, dS, dK, dQ.
// CHECK: scf.for
// CHECK-NOT: arith.cmpi
// CHECK: tile.dot %{{.*}} : tensor<16x64xbf16>, tensor<64x128xbf16>, tensor<16x128xf32> -> tensor<16x128xf32>
// CHECK: math.exp2
// CHECK: tile.trans %{{.*}} : tensor<16x128xbf16> -> tensor<128x16xbf16>
// CHECK: tile.dot %{{.*}} : tensor<128x16xbf16>, tensor<16x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
// CHECK: tile.atomic_add %{{.*}} : tensor<16x64xf32>, !tile.view<f32, 2>
// CHECK: scf.yield
// Then the cut blocks, with the mask (the Skv and Sq bounds and kv <= qi).
// CHECK: scf.for
// CHECK: arith.cmpi sle
// CHECK: arith.select
// CHECK: tile.atomic_add
// dK and dV stored once, after every head of the group.
// CHECK: tile.store %{{.*}} : tensor<128x64xbf16>, !tile.view<bf16, 2>
// CHECK: tile.store %{{.*}} : tensor<128x64xbf16>, !tile.view<bf16, 2>

// The transposed step: S^T = K Q^T ([keys, queries]); LSE and D broadcast along the columns;
// P^T and dS^T are the A operands of dV and dK; dQ reads dS^T transposed. One masked loop. dP^T = V dO^T
// is issued right behind S^T (both from zero sums), before P's exp2, so that its product overlaps P's
// recomputation; then dV, dK and dQ.
// TR-LABEL: func.func @causal_bwd(
// TR-SAME: flare.attention.block_n = 64 : i32
// TR-SAME: tile.num_warps = 4 : i32
// TR: scf.for
// TR: scf.for
// TR: %[[ZS:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// TR: tile.dot %{{.*}}, %[[ZS]] : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// TR-NOT: math.exp2
// TR: tile.dot %{{.*}}, %cst{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// TR: tile.expand_dims %{{.*}} {axis = 0 : i32} : tensor<64xf32> -> tensor<1x64xf32>
// TR: math.exp2
// TR: tile.dot %{{.*}}, %arg{{.*}} : tensor<64x64xbf16>
// TR: tile.dot %{{.*}}, %arg{{.*}} : tensor<64x64xbf16>
// TR: tile.atomic_add
// TR-NOT: scf.for
// TR: return
// dQ in column chunks of 32: a dot and an atomic add per chunk, at columns 0 and 32.
// CHUNK-LABEL: func.func @causal_bwd(
// CHUNK: tile.dot %{{.*}} : tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHUNK: tile.atomic_add %{{.*}}[%{{.*}}, %c0_i32{{.*}}] : tensor<64x32xf32>
// CHUNK: tile.dot %{{.*}} : tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHUNK: tile.atomic_add %{{.*}}[%{{.*}}, %c32_i32{{.*}}] : tensor<64x32xf32>
func.func @causal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sle, %kv, %qi : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// -----

// softcap: y = c * tanh(x / c); the generated derivative is (1 - tanh^2) * (1 / c) * c, per element,
// multiplied with the softmax scale into P as soon as P is made (before dV's dot: one tile held until
// dP, not P and the derivative both), and that factor times dP - D is dS.
// CHECK-LABEL: func.func @softcap_bwd(
// CHECK: scf.for
// CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<16x64xf32>
// CHECK: %[[T:.*]] = math.tanh %{{.*}} : tensor<16x64xf32>
// CHECK: %[[SQ:.*]] = arith.mulf %[[T]], %[[T]] : tensor<16x64xf32>
// CHECK: arith.subf %{{.*}}, %[[SQ]] : tensor<16x64xf32>
// CHECK: %[[P:.*]] = math.exp2
// CHECK-NOT: tile.dot
// CHECK: %[[F:.*]] = arith.mulf %[[P]], %{{.*}} : tensor<16x64xf32>
// CHECK: tile.dot
// CHECK: %[[DIFF:.*]] = arith.subf %{{.*}}, %{{.*}} : tensor<16x64xf32>
// CHECK-NEXT: arith.mulf %[[F]], %[[DIFF]] : tensor<16x64xf32>
func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %cap = arith.constant 20.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
