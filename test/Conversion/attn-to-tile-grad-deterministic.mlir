// convert-attn-to-tile grad=true deterministic=true, sm_90a's default: dQ by a kernel of its own
// (backwardSumsDqByAtomics), which is deterministic. The preprocess
// kernel leaves out the dQ sums' zeroing, the main kernel computes dK and dV without dQ atomics,
// and <name>_bwd_dq computes dQ itself: one block of query rows per program instance (grid
// (ceil(Sq / BLOCK_M), Hq, B), the ABI of the other mode), S and dP recomputed per key block, dS K
// summed in registers over the key blocks in order, one store.
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true" | FileCheck %s
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true" | FileCheck %s
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true arch=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true dq-atomics=true" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true grad-dq-tiles=128,32,8" | FileCheck %s --check-prefix=TILES
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true grad-dq-tiles=128,32,8,1,1" | FileCheck %s --check-prefix=SWITCHES
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true grad-dq-tiles=64,48" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true deterministic=true grad-dq-tiles=64,64,4,2" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true dq-atomics=true grad-dq-tiles=64,64,4" 2>&1 | FileCheck %s --check-prefix=NODET
// BOTH: error: 'attn.attention' op convert-attn-to-tile: dq-atomics sums dQ in no fixed order: it cannot be deterministic
// BAD: error: 'attn.attention' op convert-attn-to-tile: grad-dq-tiles must be BLOCK_M,BLOCK_N,WARPS[,PRODUCER[,PING_PONG]] (powers of two, blocks from 16; the switches 0 or 1), got '64
// NODET: error: 'attn.attention' op convert-attn-to-tile: grad-dq-tiles needs a dQ kernel of its own
// sm_80 (mma.sync), deterministic: the same kernels, 64 query rows on four warps at head dim 64.
// SM80-LABEL: func.func @causal_bwd(
// SM80-NOT: tile.atomic_add
// SM80-LABEL: func.func @causal_bwd_dq(
// SM80-SAME: flare.attention.block_m = 64 : i32
// SM80-SAME: tile.num_warps = 4 : i32

// D = rowsum(dO * O) alone: one store, no zeroed sums.
// CHECK-LABEL: func.func @causal_bwd_preprocess(
// CHECK: tile.reduce sum
// CHECK: tile.store %{{.*}} : tensor<64xf32>, !tile.view<f32, 1>
// CHECK-NOT: tile.store
// CHECK: return

// The main kernel: dK and dV only, of 128 keys on two warpgroups.
// CHECK-LABEL: func.func @causal_bwd(
// CHECK-SAME: flare.attention.block_n = 128 : i32
// CHECK-SAME: tile.num_warps = 8 : i32
// CHECK-NOT: tile.atomic_add
// CHECK: tile.store %{{.*}} : tensor<128x64xbf16>, !tile.view<bf16, 2>
// CHECK: tile.store %{{.*}} : tensor<128x64xbf16>, !tile.view<bf16, 2>
// CHECK-NEXT: return

// The dQ kernel: 64 query rows of one query head on one warpgroup; its KV head is the query
// head's group.
// CHECK-LABEL: func.func @causal_bwd_dq(
// CHECK-SAME: flare.attention.block_m = 64 : i32
// CHECK-SAME: tile.num_warps = 4 : i32
// CHECK-SAME: tile.schedule = #tile.schedule<ping_pong = false>}
// CHECK: %[[GROUP:.*]] = arith.divui
// CHECK: arith.divui %{{.*}}, %[[GROUP]]
// Q, dO, LSE and D once, before the key loops.
// CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
// CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
// CHECK: tile.load %{{.*}} : !tile.view<f32, 1> -> tensor<64xf32>
// CHECK: tile.load %{{.*}} : !tile.view<f32, 1> -> tensor<64xf32>
// The key blocks the mask keeps whole, without mask code: S = Q K^T, P, dP = dO V^T, dS, dQ += dS K.
// CHECK: %[[FULL:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x64xf32>)
// CHECK-NOT: arith.cmpi
// CHECK: tile.dot %{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK: math.exp2
// CHECK: tile.dot %{{.*}} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %[[ACC]] : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK-NOT: tile.atomic_add
// CHECK: scf.yield
// The cut ones, with the Skv bound and kv <= qi.
// CHECK: %[[CUT:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[FULL]]) -> (tensor<64x64xf32>)
// CHECK: arith.cmpi sle
// CHECK: arith.select
// CHECK-NOT: tile.atomic_add
// CHECK: scf.yield
// dQ stored once, in the input dtype.
// CHECK: %[[DQ:.*]] = arith.truncf %[[CUT]] : tensor<64x64xf32> to tensor<64x64xbf16>
// CHECK: tile.store %[[DQ]]
// The dQ kernel's switches (grad-dq-tiles PRODUCER, PING_PONG; off by default, above).
// SWITCHES-LABEL: func.func @causal_bwd_dq(
// SWITCHES-SAME: tile.schedule = #tile.schedule<producer_warpgroup = true>}
// TILES-LABEL: func.func @causal_bwd_dq(
// TILES-SAME: flare.attention.block_m = 128 : i32
// TILES-SAME: tile.num_warps = 8 : i32
// TILES: tile.dot %{{.*}} : tensor<128x64xbf16>, tensor<64x32xbf16>, tensor<128x32xf32> -> tensor<128x32xf32>
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

// ALiBi: the per-query part of score_mod (slope * qi) is computed once per instance, the per-key part
// per step; the derivative of an added bias is 1, so dS is P * (dP - D) * scale.
// CHECK-LABEL: func.func @alibi_bwd_dq(
// CHECK: tile.gather
// CHECK: scf.for
// CHECK-NOT: tile.gather
// CHECK: math.exp2
// CHECK: scf.yield
func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                 %slopes: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %m = attn.aux_load %sl[%h] : tensor<?xf32>
      %d = arith.subi %kv, %qi : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %bias = arith.mulf %m, %df : f32
      %r = arith.addf %s, %bias : f32
      attn.yield %r : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Head dim 256 on sm_90a: dK and dV in a main kernel each (backwardSplitsDkDv), both on the transposed
// step of 128 keys x 32 queries on two warpgroups (8 warps); dK's kernel computes dP and dS, dV's only P.
// CHECK-LABEL: func.func @wide_bwd(
// CHECK-SAME: flare.attention.block_n = 128 : i32
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x256xf32>)
// CHECK: math.exp2
// CHECK: arith.subf
// CHECK: tile.dot %{{.*}} : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
// CHECK: tile.store %{{.*}} : tensor<128x256xbf16>, !tile.view<bf16, 2>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @wide_bwd_dv(
// CHECK-SAME: flare.attention.block_n = 128 : i32
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x256xf32>)
// CHECK: math.exp2
// CHECK-NOT: tile.load %{{.*}} : !tile.view<f32, 1>
// CHECK: tile.dot %{{.*}} : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
// CHECK: tile.store %{{.*}} : tensor<128x256xbf16>, !tile.view<bf16, 2>
// CHECK-NEXT: return
// Its dQ kernel: 128 query rows on two warpgroups, 32 keys per step, and a producer warpgroup that
// issues the K and V copies (no producer on sm_80).
// CHECK-LABEL: func.func @wide_bwd_dq(
// CHECK-SAME: flare.attention.block_m = 128 : i32
// CHECK-SAME: tile.num_warps = 8 : i32
// CHECK-SAME: tile.schedule = #tile.schedule<ping_pong = false, producer_warpgroup = true>}
// CHECK: tile.dot %{{.*}} : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
// SM80-LABEL: func.func @wide_bwd(
// SM80-NOT: func.func @wide_bwd_dv(
func.func @wide(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>)
    -> tensor<?x?x?x256xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// Head dim 128 on sm_90a: the dQ kernel takes 128 query rows on two warpgroups (64 keys per step),
// which share each K and V stage, copied by a producer warpgroup; head dim 64 keeps one warpgroup
// of 64 rows without a producer (above).
// CHECK-LABEL: func.func @d128_bwd_dq(
// CHECK-SAME: flare.attention.block_m = 128 : i32
// CHECK-SAME: tile.num_warps = 8 : i32
// CHECK-SAME: tile.schedule = #tile.schedule<ping_pong = false, producer_warpgroup = true>}
// CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x128xf32>)
// CHECK: tile.dot %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
// SM80-LABEL: func.func @d128_bwd_dq(
// SM80-SAME: flare.attention.block_m = 128 : i32
// SM80-SAME: tile.num_warps = 8 : i32
// SM80-NOT: producer_warpgroup = true
// SM80: return
func.func @d128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
