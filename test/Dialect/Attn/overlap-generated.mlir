// attn-overlap on the kernels convert-attn-to-tile generates with overlap (the sm_90a default): the
// KV loop is software-pipelined so that the softmax of block j runs while the tensor cores compute
// P_{j-1} V_{j-1}. Step j issues S_j = Q K_j^T, then acc += P_{j-1} V_{j-1} (P of the previous step is
// carried in the loop, its V rows recomputed from j - 1), then the softmax of S_j, then acc *= alpha_j.
// The first step of the first loop has no previous block: its V rows start far below the view (-2^30,
// read as zeros) and P is zero. The last loop takes one extra step that only finishes the previous
// block: there K is read far away as well and m, l and alpha keep their values. (The lowering leaves
// the P V product in flight until acc is used.) The pass alone on small tile kernels: overlap.mlir.
// (64 keys per step, block-n=64, so that the checks read as in attn-to-tile.mlir.)
// RUN: flare-opt %s -split-input-file --attn-choose-config="block-n=64 last-pv-after-loops=0" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale --attn-partial-row-sums --canonicalize --cse | FileCheck %s
// last-pv-after-loops=1 (configured with the producer warpgroup): no extra step; the last block's V is
// loaded before the loops and its P V runs after them.
// RUN: flare-opt %s -split-input-file --attn-choose-config="block-n=64 last-pv-after-loops=1" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale --attn-partial-row-sums --canonicalize --cse | FileCheck %s --check-prefix=TAIL
// Off by option: no carried P.
// RUN: flare-opt %s -split-input-file --attn-choose-config="overlap=0 block-n=64" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale --attn-partial-row-sums --canonicalize --cse | FileCheck %s --check-prefix=OFF
// RUN: flare-opt %s -split-input-file --attn-choose-config="ping-pong=1" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale --attn-partial-row-sums --canonicalize --cse | FileCheck %s --check-prefix=PP
// RUN: flare-opt %s -split-input-file --attn-choose-config --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale --attn-partial-row-sums | FileCheck %s --check-prefix=CFG
// defer-rescale=1: step j applies the previous step's alpha between S_j and P_{j-1} V_{j-1} (alpha is
// carried, 1 before the first step) and yields its own. (ptxas serializes that loop's wgmma: off by
// default, see test/Pipeline/wgmma-not-serialized.test.)
// RUN: flare-opt %s -split-input-file --attn-choose-config="block-n=64 defer-rescale=1 last-pv-after-loops=0" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale --attn-partial-row-sums --canonicalize --cse | FileCheck %s --check-prefix=DEFER

// CHECK-LABEL: func.func @causal(
// CHECK-DAG: %[[FAR:.*]] = arith.constant -1073741824 : i32
// CHECK-DAG: %[[PZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128x64xbf16>
// Both loops' bounds come before the first loop (the lowering may then issue the partial loop's first
// copies from the full loop's last iteration): the partial loop runs one step more than it has blocks
// (n + 1), and after the full loop its last block is pending: (fhi - 1) * 64 if it ran, else nothing.
// CHECK: %[[LASTROW:.*]] = arith.muli %{{.*}}, %c64_i32 : i32
// CHECK-NEXT: %[[RAN:.*]] = arith.cmpi slt, %[[FLO:.*]], %[[FHI:.*]] : i32
// CHECK-NEXT: %[[PENDING:.*]] = arith.select %[[RAN]], %[[LASTROW]], %[[FAR]] : i32
// The full loop over [flo, fhi) carries P (bf16, 128 x 64) beside m, l and acc.
// CHECK-NEXT: %[[FULL:.*]]:4 = scf.for %[[J:.*]] = %[[FLO]] to %[[FHI]] step %c1_i32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[ACC:.*]] = %{{.*}}, %[[PPREV:.*]] = %[[PZERO]]) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x64xbf16>) : i32 {
// The previous block's V rows: (j - 1) * 64, or far away on the first step.
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %[[FLO]] : i32
// CHECK-NEXT: %[[JM1:.*]] = arith.subi %[[J]], %c1_i32 : i32
// CHECK-NEXT: %[[PREV:.*]] = arith.muli %[[JM1]], %c64_i32 : i32
// CHECK-NEXT: %[[VROW:.*]] = arith.select %[[FIRST]], %[[FAR]], %[[PREV]] : i32
// S_j first, then the previous block's P V on the carried P.
// CHECK-NEXT: %[[KV0:.*]] = arith.muli %[[J]], %c64_i32 : i32
// CHECK-NEXT: %[[KT:.*]] = tile.load %{{.*}}[%[[KV0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
// CHECK-NEXT: %[[KTT:.*]] = tile.trans %[[KT]]
// CHECK-NEXT: %[[S:.*]] = tile.dot %{{.*}}, %[[KTT]], %{{.*}} : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
// CHECK-NEXT: %[[VT:.*]] = tile.load %{{.*}}[%[[VROW]], %c0_i32] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
// CHECK-NEXT: %[[PV:.*]] = tile.dot %[[PPREV]], %[[VT]], %[[ACC]] : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
// Full blocks still carry no mask code (no comparison or select on tiles).
// CHECK-NOT: arith.cmpi {{.*}} tensor
// CHECK-NOT: arith.select {{.*}} tensor
// CHECK: %[[P:.*]], %[[M:.*]], %[[L:.*]], %[[ALPHA:.*]] = tile.online_softmax
// CHECK: %[[RESCALED:.*]] = arith.mulf %[[PV]], %{{.*}} : tensor<128x128xf32>
// CHECK-NEXT: %[[P16:.*]] = arith.truncf %[[P]] : tensor<128x64xf32> to tensor<128x64xbf16>
// CHECK-NEXT: scf.yield %[[M]], %[[L]], %[[RESCALED]], %[[P16]]
// The partial loop starts from the full loop's state, right after it.
// CHECK-NEXT: }
// CHECK-NEXT: %{{.*}}:4 = scf.for %[[T:.*]] = %c0_i32 to %[[NP1:.*]] step %c1_i32 iter_args(%[[M0:.*]] = %[[FULL]]#0, %[[L0:.*]] = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2, %{{.*}} = %[[FULL]]#3)
// CHECK-NEXT: %[[VALID:.*]] = arith.cmpi slt, %[[T]], %{{.*}} : i32
// CHECK-NEXT: %[[T0:.*]] = arith.cmpi eq, %[[T]], %c0_i32 : i32
// Step 0 finishes the full loop's pending block.
// CHECK: %{{.*}} = arith.select %[[T0]], %[[PENDING]], %{{.*}} : i32
// The extra step reads K far away ...
// CHECK: %[[KROW:.*]] = arith.select %[[VALID]], %{{.*}}, %[[FAR]] : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[KROW]], %c0_i32]
// ... and keeps m and l, with alpha = 1.
// CHECK: tile.online_softmax
// CHECK-NEXT: %[[KEEP:.*]] = tile.splat %[[VALID]] : i1 -> tensor<128xi1>
// CHECK-NEXT: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT: arith.select %[[KEEP]], %{{.*}}, %[[M0]] : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT: arith.select %[[KEEP]], %{{.*}}, %[[L0]] : tensor<128xi1>, tensor<128xf32>

// TAIL-LABEL: func.func @causal(
// TAIL-DAG: %[[FAR:.*]] = arith.constant -1073741824 : i32
// The last block: the partial loop's last (n > 0), else the full loop's pending one; its V is loaded
// before the loops.
// TAIL: %[[RAN:.*]] = arith.cmpi slt, %[[FLO:.*]], %[[FHI:.*]] : i32
// TAIL-NEXT: %[[PENDING:.*]] = arith.select %[[RAN]], %{{.*}}, %[[FAR]] : i32
// TAIL: %[[ANY:.*]] = arith.cmpi sgt, %[[N:.*]], %c0_i32 : i32
// TAIL: %[[LASTROW:.*]] = arith.select %[[ANY]], %{{.*}}, %[[PENDING]] : i32
// TAIL-NEXT: %[[VLAST:.*]] = tile.load %{{.*}}[%[[LASTROW]], %c0_i32] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
// TAIL-NEXT: %[[FULL:.*]]:4 = scf.for %{{.*}} = %[[FLO]] to %[[FHI]] step %c1_i32
// The partial loop has exactly its n blocks: no `valid` selects on the softmax state.
// TAIL: %[[PART:.*]]:4 = scf.for %{{.*}} = %c0_i32 to %[[N]] step %c1_i32 iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2, %{{.*}} = %[[FULL]]#3)
// TAIL-NOT: tensor<128xi1>
// TAIL: scf.yield
// TAIL-NEXT: }
// The last block's P V on the loaded V, then the epilogue.
// TAIL-NEXT: %{{.*}} = tile.dot %[[PART]]#3, %[[VLAST]], %[[PART]]#2 : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>

// DEFER-LABEL: func.func @causal(
// DEFER-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<128xf32>
// DEFER: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[ACC:.*]] = %{{.*}}, %[[PPREV:.*]] = %{{.*}}, %[[APREV:.*]] = %[[ONE]]) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x64xbf16>, tensor<128xf32>) : i32 {
// DEFER: %[[S:.*]] = tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
// DEFER-NEXT: %[[VT:.*]] = tile.load
// DEFER-NEXT: %[[AE:.*]] = tile.expand_dims %[[APREV]] {axis = 1 : i32}
// DEFER-NEXT: %[[AB:.*]] = tile.broadcast %[[AE]] : tensor<128x1xf32> -> tensor<128x128xf32>
// DEFER-NEXT: %[[RESCALED:.*]] = arith.mulf %[[ACC]], %[[AB]] : tensor<128x128xf32>
// DEFER-NEXT: %[[PV:.*]] = tile.dot %[[PPREV]], %[[VT]], %[[RESCALED]]
// DEFER: %[[P:.*]], %[[M:.*]], %[[L:.*]], %[[ALPHA:.*]] = tile.online_softmax
// DEFER-NEXT: %[[P16:.*]] = arith.truncf %[[P]] : tensor<128x64xf32> to tensor<128x64xbf16>
// DEFER-NEXT: scf.yield %[[M]], %[[L]], %[[PV]], %[[P16]], %[[ALPHA]] :
// The partial loop's extra last step carries alpha = 1 out (nothing left to rescale).
// DEFER: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x64xbf16>, tensor<128xf32>) : i32 {
// DEFER: tile.online_softmax
// DEFER-NEXT: %[[KEEP:.*]] = tile.splat %{{.*}} : i1 -> tensor<128xi1>
// DEFER-NEXT: %[[A1:.*]] = arith.select %[[KEEP]], %{{.*}}, %[[ONE]] : tensor<128xi1>, tensor<128xf32>
// DEFER: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A1]] :

// OFF-LABEL: func.func @causal(
// OFF: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) : i32 {
// OFF-NOT: tensor<128x64xbf16>)
// OFF: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) : i32 {
// Configured, a causal mask at head dim 128 keeps the eager softmax (no lazy max, no skippable rescale)
// and one normalizer per row.
// CFG-LABEL: func.func @causal(
// CFG-NOT: {lazy}
// CFG-NOT: tile.skip_unit_factor
// CFG-NOT: tensor<128x4xf32>
// CFG: return
func.func @causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
      -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// Head dim 256 (configured): 64 keys per step, overlap on, and no warpgroup ping-pong (recorded on the
// kernel's #tile.schedule for the lowering), nor a warp-uniform warpgroup index (uniform_warpgroup =
// false: Q's 16 descriptors per S product would crowd the uniform registers); ping-pong=1 forces the
// turns back on (the schedule's default). The online softmax is lazy (its max moves only by more than
// 8, so alpha is exactly 1 on most steps) and the rescale of the 128 x 256 accumulator by alpha is
// marked for the lowering to skip thread by thread; head dims 64 and 128 keep the plain form (@causal
// above, @d64 below). The normalizer is kept as 4 partial sums per row.
// CHECK-LABEL: func.func @d256(
// CHECK-SAME: attributes {flare.attention.block_m = 128 : i32, flare.attention.block_n = 64 : i32, flare.attention_config = #attn.config<{{[^>]*}}>, tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<ping_pong = false, persistent = true, uniform_warpgroup = false>}
// CHECK: scf.for {{.*}} -> (tensor<128xf32>, tensor<128x4xf32>, tensor<128x256xf32>, tensor<128x64xbf16>)
// CHECK: tile.online_softmax {{.*}} {lazy} : tensor<128x64xf32>, tensor<128xf32>, tensor<128x4xf32>
// CHECK: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<128x256xf32>
// PP-LABEL: func.func @d256(
// PP-SAME: tile.schedule = #tile.schedule<persistent = true, uniform_warpgroup = false>}
// PP: return
func.func @d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>, %v: tensor<?x?x?x256xbf16>)
    -> tensor<?x?x?x256xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>
      -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// Head dim 64 (configured): two CTAs per SM must fit (the schedule's min_blocks_per_sm = 2: 128
// registers a thread), the first step runs without its P V of zeros (peel_zero_first), and the softmax is
// lazy as at head dim 256 (bench/NOTES.md a79); a hand-given tile configuration (block-n=64 above)
// leaves the registers to ptxas and keeps the softmax.
// CFG-LABEL: func.func @d64(
// CFG-SAME: attributes {flare.attention.block_m = 128 : i32, flare.attention.block_n = 64 : i32, flare.attention_config = #attn.config<{{[^>]*}}>, tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<min_blocks_per_sm = 2, peel_zero_first = true>}
// CFG: tile.online_softmax {{.*}} {lazy}
// CFG: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<128x64xf32>
// CHECK-LABEL: func.func @d64(
// CHECK-NOT: #tile.schedule<min_blocks_per_sm
// CHECK: tile.online_softmax {{.*}} {lazy}
// CHECK: return
// lazy-rescale forces the eager softmax (here at head dims 64 and 256) or the lazy one with its
// skippable rescale (at head dim 128, below).
func.func @d64(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
      -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Head dim 128 without a mask (configured): the eager softmax, as with a mask (the lazy one was
// configured here from a34 until Q's descriptors became warp-uniform, bench/NOTES.md a43), and the
// normalizer as 4 partial sums per row (a44).
// CFG-LABEL: func.func @plain128(
// CFG-NOT: {lazy}
// CFG-NOT: tile.skip_unit_factor
// CFG: tile.online_softmax %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<128x128xf32>, tensor<128xf32>, tensor<128x4xf32>
// CFG: return
func.func @plain128(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
      -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
