// convert-attn-to-tile turns a function `return attn.attention(args)` into a FlashAttention tile kernel
// of the same name. One program instance owns BLOCK_M query rows of one (batch, head) and streams
// BLOCK_N-row blocks of K and V through an online softmax. The mask analysis
// (lib/Dialect/Attn/Transforms/MaskAnalysis.h) gives, per Q block and at run time, the KV blocks the
// mask may keep [lo, hi) and the sub-range it keeps entirely [flo, fhi):
//   - blocks outside [lo, hi) are never visited (a causal kernel skips the blocks right of the diagonal);
//   - a first scf.for over [flo, fhi) runs the FULL blocks with no mask code at all;
//   - a second scf.for over [lo, flo) u [fhi, hi) runs the PARTIAL blocks, evaluating kv < Skv and the
//     inlined mask_mod per element and replacing dropped scores by -inf.
// The software-pipelined form (overlap, the sm_90a default) is tested in attn-to-tile-overlap.mlir;
// here it is off. The output is canonicalized and CSE'd as `flarec --emit=tile` does, which hoists constants to the top
// of the kernel and folds the generator's `1 * x + 0` forms.
// The key block is fixed at 64 (block-n=64) so that the checks read as 64-key steps; the configured
// choice per head dim is tested in test/Tools/flarec-emit-attn.test.
// RUN: flare-opt %s -split-input-file --attn-choose-config="overlap=0 block-n=64 split-tail=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s
// The document and head-dim-64 kernels are checked with the configured key block (prefix DEFAULT).
// RUN: flare-opt %s -split-input-file --attn-choose-config="overlap=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=DEFAULT
// Explicit options override the per-arch configuration (the causal kernel only, prefix OPTS).
// RUN: flare-opt %s -split-input-file --attn-choose-config="block-m=64 block-n=64 num-warps=4 overlap=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=OPTS
// RUN: flare-opt %s -split-input-file --attn-choose-config="overlap=0 persistent=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=LAUNCHED
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a block-m=128 block-n=128 num-warps=8 persistent=1" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=PAIR64
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=LAUNCHED
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a persistent=1 producer=1 dynamic-instances=1" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=DYNORDER

// Causal attention, head dim 128, with the LSE: the "causal kernel skips empty KV blocks and full
// blocks have no mask code" test.
// Kernel ABI: pointers to Q, K, V, O and the LSE, then heads_q, heads_kv, seq_q, seq_kv (i32), then the
// (batch, head, row) strides of Q, K, V and O (12 x i64). Head dim 128 on sm_90a: 128 query rows on
// 8 warps (two warpgroups), 64 keys per step here (block-n=64).
// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.ptr<bf16>, %[[K:[^:]*]]: !tile.ptr<bf16>, %[[V:[^:]*]]: !tile.ptr<bf16>, %[[O:[^:]*]]: !tile.ptr<bf16>, %[[LSE:[^:]*]]: !tile.ptr<f32>,
// CHECK-SAME: %[[HQ:[^:]*]]: i32, %[[HKV:[^:]*]]: i32, %[[SQ:[^:]*]]: i32, %[[SKV:[^:]*]]: i32,
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64)
// CHECK-SAME: attributes {flare.attention.block_m = 128 : i32, flare.attention.block_n = 64 : i32, flare.attention_config = #attn.config<{{[^>]*}}>, tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, operands_after_first_stage = true>} {
// No score_mod: scale * log2(e) = 0.0883883 * 1.442695 is one multiply of the scores.
// CHECK-DAG: %[[NINF:.*]] = arith.constant dense<0xFF800000> : tensor<128x64xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<0.127517432> : tensor<128x64xf32>
// Grid (ceil(Sq / 128), Hq, B); query head h reads KV head h / (Hq / Hkv). Causal rows keep more keys
// further down. The kernel is persistent (a CTA runs programs 2i and 2i + 1 in turn): program x takes
// query block n - 1 - x / 2 when x is even and x / 2 when odd, so that every pair holds the same work.
// CHECK: %[[PID:.*]] = tile.program_id x
// CHECK-NEXT: %[[NP:.*]] = tile.num_programs x
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[NP]], %c1_i32 : i32
// CHECK-NEXT: %[[HALF:.*]] = arith.shrui %[[PID]], %c1_i32 : i32
// CHECK-NEXT: %[[ODDBIT:.*]] = arith.andi %[[PID]], %c1_i32 : i32
// CHECK-NEXT: %[[ODD:.*]] = arith.cmpi ne, %[[ODDBIT]], %c0_i32 : i32
// CHECK-NEXT: %[[HEAVY:.*]] = arith.subi %[[LAST]], %[[HALF]] : i32
// CHECK-NEXT: %[[MB:.*]] = arith.select %[[ODD]], %[[HALF]], %[[HEAVY]] : i32
// CHECK-NEXT: %[[H:.*]] = tile.program_id y
// CHECK-NEXT: %{{.*}} = tile.program_id z
// CHECK-NEXT: %[[GROUP:.*]] = arith.divui %[[HQ]], %[[HKV]] : i32
// The pairing follows the mask, not the heaviest-first order: a persistent causal kernel of an
// explicit tile at head dim 64 still pairs its query blocks.
// PAIR64-LABEL: func.func @causal(
// PAIR64-SAME: persistent = true
// PAIR64: %[[PID:.*]] = tile.program_id x
// PAIR64-NEXT: %[[NP:.*]] = tile.num_programs x
// PAIR64-NEXT: %[[LAST:.*]] = arith.subi %[[NP]], %c1_i32 : i32
// PAIR64-NEXT: %[[HALF:.*]] = arith.shrui %[[PID]], %c1_i32 : i32
// PAIR64-NEXT: %[[ODDBIT:.*]] = arith.andi %[[PID]], %c1_i32 : i32
// PAIR64-NEXT: %[[ODD:.*]] = arith.cmpi ne, %[[ODDBIT]], %c0_i32 : i32
// PAIR64-NEXT: %[[HEAVY:.*]] = arith.subi %[[LAST]], %[[HALF]] : i32
// PAIR64-NEXT: arith.select %[[ODD]], %[[HALF]], %[[HEAVY]] : i32
// A kernel that is not persistent (also head dim 64's configured one, two CTAs per SM): program x
// takes query block (programs - 1 - x), so that the GPU, which starts programs in index order, starts
// the longest first.
// LAUNCHED-LABEL: func.func @causal(
// LAUNCHED-NOT: persistent = true
// LAUNCHED: %[[PID:.*]] = tile.program_id x
// LAUNCHED-NEXT: %[[NP:.*]] = tile.num_programs x
// LAUNCHED-NEXT: %[[LAST:.*]] = arith.subi %[[NP]], %c1_i32 : i32
// LAUNCHED-NEXT: %[[MB:.*]] = arith.subi %[[LAST]], %[[PID]] : i32
// LAUNCHED-NEXT: tile.program_id y
// A persistent kernel whose CTAs take instances from a shared counter in the grid's order (x
// fastest): the i-th instance handed out, in groups of 16 (head, batch) units of n row blocks each
// (the last group may hold fewer), is row block n - 1 - r of unit u, where r and u are i's place in
// its group divided and taken modulo by the group's units: heaviest first in every group.
// DYNORDER-LABEL: func.func @causal(
// DYNORDER-SAME: dynamic_instances = true
// DYNORDER: %[[PID:.*]] = tile.program_id x
// DYNORDER-NEXT: %[[NP:.*]] = tile.num_programs x
// DYNORDER-NEXT: %[[LAST:.*]] = arith.subi %[[NP]], %c1_i32 : i32
// DYNORDER-NEXT: %[[Y:.*]] = tile.program_id y
// DYNORDER-NEXT: %[[Z:.*]] = tile.program_id z
// DYNORDER-NEXT: %[[NY:.*]] = tile.num_programs y
// DYNORDER-NEXT: %[[NZ:.*]] = tile.num_programs z
// DYNORDER-NEXT: %[[UNITS:.*]] = arith.muli %[[NY]], %[[NZ]] : i32
// DYNORDER-NEXT: %[[ZY:.*]] = arith.muli %[[Z]], %[[NY]] : i32
// DYNORDER-NEXT: %[[YZ:.*]] = arith.addi %[[Y]], %[[ZY]] : i32
// DYNORDER-NEXT: %[[BEFORE:.*]] = arith.muli %[[YZ]], %[[NP]] : i32
// DYNORDER-NEXT: %[[I:.*]] = arith.addi %[[PID]], %[[BEFORE]] : i32
// DYNORDER-NEXT: %[[PER:.*]] = arith.muli %[[NP]], %c16_i32 : i32
// DYNORDER-NEXT: %[[G:.*]] = arith.divui %[[I]], %[[PER]] : i32
// DYNORDER-NEXT: %[[IN:.*]] = arith.remui %[[I]], %[[PER]] : i32
// DYNORDER-NEXT: %[[FIRST:.*]] = arith.muli %[[G]], %c16_i32 : i32
// DYNORDER-NEXT: %[[LEFT:.*]] = arith.subi %[[UNITS]], %[[FIRST]] : i32
// DYNORDER-NEXT: %[[GU:.*]] = arith.minsi %[[LEFT]], %c16_i32 : i32
// DYNORDER-NEXT: %[[R:.*]] = arith.divui %[[IN]], %[[GU]] : i32
// DYNORDER-NEXT: %[[UOFF:.*]] = arith.remui %[[IN]], %[[GU]] : i32
// DYNORDER-NEXT: %[[U:.*]] = arith.addi %[[FIRST]], %[[UOFF]] : i32
// DYNORDER-NEXT: %[[H:.*]] = arith.remui %[[U]], %[[NY]] : i32
// DYNORDER-NEXT: %{{.*}} = arith.divui %[[U]], %[[NY]] : i32
// DYNORDER-NEXT: %[[MB:.*]] = arith.subi %[[LAST]], %[[R]] : i32
// DYNORDER: arith.divui %[[H]],
// DYNORDER: arith.muli %[[MB]], %c128_i32 : i32
// CHECK-NEXT: %{{.*}} = arith.divui %[[H]], %[[GROUP]] : i32
// Rows [q0, q1] of this program; q1 is the last row that exists (min(q0 + 128, Sq) - 1), and the number
// of KV blocks is ceil(Skv / 64) = (Skv + 63) >> 6.
// CHECK-NEXT: %[[Q0:.*]] = arith.muli %[[MB]], %c128_i32 : i32
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[Q0]], %c128_i32 : i32
// CHECK-NEXT: %[[ENDC:.*]] = arith.minsi %[[END]], %[[SQ]] : i32
// CHECK-NEXT: %[[Q1:.*]] = arith.subi %[[ENDC]], %c1_i32 : i32
// CHECK-NEXT: %[[SKVR:.*]] = arith.addi %[[SKV]], %c63_i32 : i32
// CHECK-NEXT: %[[NB:.*]] = arith.shrsi %[[SKVR]], %c6_i32 : i32
// The Q block is loaded once.
// CHECK: %[[QT:.*]] = tile.load %{{.*}}[%[[Q0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// The query rows q0 + 0..127 (qi of mask_mod).
// CHECK: %[[ROWS:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<128xi32>
// Causal block ranges: kv <= qi keeps, for some row, the keys up to q1: hi = (q1 >> 6) + 1 (the blocks
// right of the diagonal are never visited), and for every row the keys up to q0: blocks below
// (q0 + 1) >> 6 are full.
// CHECK-NEXT: %[[LASTB:.*]] = arith.shrsi %[[Q1]], %c6_i32 : i32
// CHECK-NEXT: %[[HIANY:.*]] = arith.addi %[[LASTB]], %c1_i32 : i32
// CHECK-NEXT: %[[Q0P1:.*]] = arith.addi %[[Q0]], %c1_i32 : i32
// CHECK-NEXT: %[[HIALL:.*]] = arith.shrsi %[[Q0P1]], %c6_i32 : i32
// hi = clamp(hiAny, 0, number of blocks).
// CHECK-NEXT: %[[HI0:.*]] = arith.minsi %[[HIANY]], %[[NB]] : i32
// CHECK-NEXT: %[[HI:.*]] = arith.maxsi %[[HI0]], %c0_i32 : i32
// Keys past Skv are masked: only blocks wholly below Skv (Skv >> 6) can be full.
// CHECK-NEXT: %[[SKVB:.*]] = arith.shrsi %[[SKV]], %c6_i32 : i32
// CHECK-NEXT: %[[FHI0:.*]] = arith.minsi %[[HIALL]], %[[SKVB]] : i32
// CHECK-NEXT: %[[FLO:.*]] = arith.minsi %[[HI]], %c0_i32 : i32
// CHECK-NEXT: %[[FHI1:.*]] = arith.maxsi %[[FHI0]], %[[FLO]] : i32
// CHECK-NEXT: %[[FHI:.*]] = arith.minsi %[[FHI1]], %[[HI]] : i32
// Masked steps compare each key with its row's last kept key: min(qi, Skv - 1) for kv <= qi.
// CHECK-NEXT: %[[SKVM1:.*]] = arith.subi %[[SKV]], %c1_i32 : i32
// CHECK-NEXT: %[[SKVM1S:.*]] = tile.splat %[[SKVM1]] : i32 -> tensor<128xi32>
// CHECK-NEXT: %[[BOUND:.*]] = arith.minsi %[[ROWS]], %[[SKVM1S]] : tensor<128xi32>
// The second loop's bound, (flo - lo) + (hi - fhi) partial blocks (lo folds to 0 here), before the
// first loop.
// CHECK-NEXT: %[[RIGHT:.*]] = arith.subi %[[HI]], %[[FHI]] : i32
// CHECK-NEXT: %[[COUNT:.*]] = arith.addi %[[FLO]], %[[RIGHT]] : i32
// First loop: the full blocks [flo, fhi). S = Q K^T, one multiply, online softmax, acc += P V, and no
// mask code: neither a comparison nor a select between the loop's start and its yield.
// CHECK-NEXT: %[[FULL:.*]]:3 = scf.for %[[J:.*]] = %[[FLO]] to %[[FHI]] step %c1_i32 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>)  : i32 {
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: %[[KV0:.*]] = arith.muli %[[J]], %c64_i32 : i32
// CHECK-NEXT: %[[KT:.*]] = tile.load %{{.*}}[%[[KV0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
// CHECK-NEXT: %[[KTT:.*]] = tile.trans %[[KT]] : tensor<64x128xbf16> -> tensor<128x64xbf16>
// CHECK-NEXT: %[[S:.*]] = tile.dot %[[QT]], %[[KTT]], %{{.*}} : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
// CHECK-NEXT: %[[SS:.*]] = arith.mulf %[[S]], %[[SCALE]] : tensor<128x64xf32>
// CHECK-NEXT: %[[P:.*]], %[[M:.*]], %[[L:.*]], %[[ALPHA:.*]] = tile.online_softmax %[[SS]], %{{.*}}, %{{.*}} : tensor<128x64xf32>, tensor<128xf32>
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: scf.yield
// Second loop: the partial blocks, from the first loop's state.
// CHECK-NEXT: }
// CHECK-NEXT: %[[PART:.*]]:3 = scf.for %[[T:.*]] = %c0_i32 to %[[COUNT]] step %c1_i32 iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
// Iteration t visits lo + t below the full range, then fhi + (t - (flo - lo)) above it.
// CHECK-NEXT: %[[ABOVE:.*]] = arith.subi %[[T]], %[[FLO]] : i32
// CHECK-NEXT: %[[JA:.*]] = arith.addi %[[FHI]], %[[ABOVE]] : i32
// CHECK-NEXT: %[[BELOW:.*]] = arith.cmpi slt, %[[T]], %[[FLO]] : i32
// CHECK-NEXT: %[[J2:.*]] = arith.select %[[BELOW]], %[[T]], %[[JA]] : i32
// CHECK-NEXT: %[[KV02:.*]] = arith.muli %[[J2]], %c64_i32 : i32
// CHECK: %[[S2:.*]] = tile.dot %[[QT]], %{{.*}} -> tensor<128x64xf32>
// The key indices kv0 + 0..63 (kv of mask_mod).
// CHECK: %[[COLS:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64xi32>
// One comparison per element covers the key range and mask_mod: kv <= min(qi, Skv - 1).
// CHECK-NEXT: tile.expand_dims %[[COLS]] {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
// CHECK-NEXT: %[[KVI:.*]] = tile.broadcast %{{.*}} : tensor<1x64xi32> -> tensor<128x64xi32>
// CHECK-NEXT: tile.expand_dims %[[BOUND]] {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
// CHECK-NEXT: %[[LASTKEPT:.*]] = tile.broadcast %{{.*}} : tensor<128x1xi32> -> tensor<128x64xi32>
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sle, %[[KVI]], %[[LASTKEPT]] : tensor<128x64xi32>
// Dropped scores become -inf before the one multiply by scale * log2(e) (which the softmax folds into
// its exp2 argument as an FMA).
// CHECK-NEXT: %[[MASKED:.*]] = arith.select %[[KEEP]], %[[S2]], %[[NINF]] : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK-NEXT: %[[SS2:.*]] = arith.mulf %[[MASKED]], %[[SCALE]] : tensor<128x64xf32>
// CHECK-NEXT: tile.online_softmax %[[SS2]], %{{.*}}, %{{.*}} : tensor<128x64xf32>, tensor<128xf32>
// CHECK: scf.yield
// Epilogue: O = acc / l (1 where l = 0, a row that kept no key) stored at row q0; LSE = (m + log2 l) * ln 2.
// CHECK: %[[NOKEY:.*]] = arith.cmpf oeq, %[[PART]]#1, %{{.*}} : tensor<128xf32>
// CHECK: tile.store %{{.*}}, %{{.*}}[%[[Q0]], %c0_i32] : tensor<128x128xbf16>, !tile.view<bf16, 2>
// CHECK: math.log2
// CHECK: tile.store %{{.*}}, %{{.*}}[%[[Q0]]] : tensor<128xf32>, !tile.view<f32, 1>
// CHECK-NEXT: return
// The attention function itself is gone.
// CHECK-NOT: attn.attention
// With block-m=64 num-warps=4 the same kernel has 64 x 64 blocks on one warpgroup: the Q block, the rows
// and the last-row bound follow BLOCK_M, the block shifts follow BLOCK_N (unchanged).
// OPTS-LABEL: func.func @causal(
// OPTS-SAME: attributes {flare.attention.block_m = 64 : i32, flare.attention.block_n = 64 : i32, flare.attention_config = #attn.config<{{[^>]*}}>, tile.kernel, tile.num_warps = 4 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, operands_after_first_stage = true>} {
// OPTS: %[[Q0:.*]] = arith.muli %{{.*}}, %c64_i32 : i32
// OPTS-NEXT: %[[END:.*]] = arith.addi %[[Q0]], %c64_i32 : i32
// OPTS: tile.load %{{.*}}[%[[Q0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
// OPTS: arith.shrsi %{{.*}}, %c6_i32 : i32
// OPTS: scf.for
// OPTS: tile.dot {{.*}} -> tensor<64x64xf32>
// OPTS: tile.online_softmax {{.*}} : tensor<64x64xf32>, tensor<64xf32>
// OPTS: scf.for
// OPTS: arith.cmpi sle, %{{.*}}, %{{.*}} : tensor<64x64xi32>
// OPTS: tile.store %{{.*}}, %{{.*}}[%[[Q0]], %c0_i32] : tensor<64x128xbf16>, !tile.view<bf16, 2>
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

// Plain attention, no LSE: every block may be kept (lo = 0, hi = ceil(Skv / 64)) and the blocks
// wholly below Skv are full. The partial loop (at most the last block) only checks kv < Skv: no
// comparison on 128 x 64 tiles, the broadcast bound selects directly. Without an LSE the kernel has
// no LSE pointer. Every row block does the same work: programs take them in index order.
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[SKV:[^:]*]]: i32, %{{[^:]*}}: i64,
// CHECK-SAME: tile.num_warps = 8 : i32
// CHECK-NOT: tile.num_programs
// CHECK-DAG: %[[NINF:.*]] = arith.constant dense<0xFF800000> : tensor<128x64xf32>
// CHECK: %[[NB:.*]] = arith.shrsi %{{.*}}, %c6_i32 : i32
// CHECK: %[[HI:.*]] = arith.maxsi %[[NB]], %c0_i32 : i32
// CHECK-NEXT: %[[SKVB:.*]] = arith.shrsi %[[SKV]], %c6_i32 : i32
// CHECK: scf.for
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: tile.online_softmax
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: %[[COLS:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK-NOT: tensor<128x64xi32>
// CHECK: %[[INR:.*]] = arith.cmpi slt, %[[COLS]], %{{.*}} : tensor<64xi32>
// CHECK-NOT: tensor<128x64xi32>
// CHECK: %[[KEEP:.*]] = tile.broadcast %{{.*}} : tensor<1x64xi1> -> tensor<128x64xi1>
// CHECK-NEXT: arith.select %[[KEEP]], %{{.*}}, %[[NINF]] : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: tile.online_softmax
// CHECK: scf.yield
// CHECK-NOT: math.log2
// CHECK: tile.store %{{.*}} : tensor<128x128xbf16>, !tile.view<bf16, 2>
// CHECK-NEXT: return
func.func @plain(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Soft-capping score_mod (cap 50): the region is inlined on 128 x 64 tiles in BOTH loops, after the
// explicit scale and before the multiply by log2(e) (scale and log2(e) are not folded together when
// a score_mod sits between them).
// CHECK-LABEL: func.func @softcap(
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant dense<1.44269502> : tensor<128x64xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<2.000000e-02> : tensor<128x64xf32>
// CHECK-DAG: %[[CAP:.*]] = arith.constant 5.000000e+01 : f32
// CHECK: scf.for
// CHECK: %[[S:.*]] = tile.dot
// CHECK-NEXT: %[[SS:.*]] = arith.mulf %[[S]], %[[SCALE]] : tensor<128x64xf32>
// CHECK-NEXT: %[[CAPT:.*]] = tile.splat %[[CAP]] : f32 -> tensor<128x64xf32>
// CHECK-NEXT: %[[X:.*]] = arith.divf %[[SS]], %[[CAPT]] : tensor<128x64xf32>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[X]] : tensor<128x64xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[T]], %[[CAPT]] : tensor<128x64xf32>
// CHECK-NEXT: %[[Y2:.*]] = arith.mulf %[[Y]], %[[LOG2E]] : tensor<128x64xf32>
// CHECK-NEXT: tile.online_softmax %[[Y2]]
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: math.tanh %{{.*}} : tensor<128x64xf32>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK: arith.select
// CHECK: tile.online_softmax
// CHECK: scf.yield
func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v attributes {scale = 0.02 : f32}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %cap = arith.constant 50.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// ALiBi with a causal mask: the aux tensor becomes a pointer argument after the LSE/output pointers and
// its length an i32 after the four sizes. The slope of the program's head does not depend on the KV
// block: it is read once, before the loops, with a tile.gather at the head index clamped into
// [0, len - 1] (rows are gathered, as there is no scalar load in tile kernels).
// CHECK-LABEL: func.func @alibi(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %[[SLOPES:[^:]*]]: !tile.ptr<f32>,
// CHECK-SAME: %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[NSLOPES:[^:]*]]: i32, %{{[^:]*}}: i64,
// CHECK: %[[H:.*]] = tile.program_id y
// CHECK: %[[HS:.*]] = tile.splat %[[H]] : i32 -> tensor<128xi32>
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[NSLOPES]], %c1_i32 : i32
// CHECK-NEXT: %[[LASTS:.*]] = tile.splat %[[LAST]] : i32 -> tensor<128xi32>
// CHECK-NEXT: %[[ZEROS:.*]] = tile.splat %c0_i32 : i32 -> tensor<128xi32>
// CHECK-NEXT: %[[MIN:.*]] = arith.minsi %[[HS]], %[[LASTS]] : tensor<128xi32>
// CHECK-NEXT: %[[IDX:.*]] = arith.maxsi %[[MIN]], %[[ZEROS]] : tensor<128xi32>
// CHECK-NEXT: %[[SLOPE:.*]] = tile.gather %[[SLOPES]][%[[IDX]]] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
// Inside the loops the slope is only broadcast over the keys: no gather.
// CHECK: scf.for
// CHECK-NOT: tile.gather
// CHECK: %[[DIST:.*]] = arith.subi %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK-NEXT: %[[DF:.*]] = arith.sitofp %[[DIST]] : tensor<128x64xi32> to tensor<128x64xf32>
// CHECK-NEXT: tile.expand_dims %[[SLOPE]] {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
// CHECK-NEXT: %[[SLOPEB:.*]] = tile.broadcast %{{.*}} : tensor<128x1xf32> -> tensor<128x64xf32>
// CHECK-NEXT: %[[BIAS:.*]] = arith.mulf %[[SLOPEB]], %[[DF]] : tensor<128x64xf32>
// CHECK-NEXT: arith.addf %{{.*}}, %[[BIAS]] : tensor<128x64xf32>
// CHECK-NOT: tile.gather
// CHECK: scf.yield
// CHECK: scf.for
// CHECK-NOT: tile.gather
// CHECK: arith.sitofp
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK-NOT: tile.gather
// CHECK: scf.yield
// CHECK-NOT: tile.gather
// CHECK: return
func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                 %slopes: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %slope = attn.aux_load %sl[%h] : tensor<?xf32>
      %dist = arith.subi %kv, %qi : index
      %di = arith.index_cast %dist : index to i32
      %df = arith.sitofp %di : i32 to f32
      %bias = arith.mulf %slope, %df : f32
      %y = arith.addf %s, %bias : f32
      attn.yield %y : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Document mask (generic: per-element comparison of aux ids) and-ed with causal: no KV block can be
// proven full, so there is ONE loop, over the partial blocks only; the causal bound still limits it to
// the blocks left of the diagonal. A generic mask uses 32 keys per step (shift by 5). The query rows'
// ids are gathered once before the loop, the keys' ids in the loop (one per key, then broadcast).
// DEFAULT-LABEL: func.func @document(
// DEFAULT-SAME: %[[IDS:[^:]*]]: !tile.ptr<i32>,
// DEFAULT-SAME: attributes {flare.attention.block_m = 128 : i32, flare.attention.block_n = 32 : i32, flare.attention_config = #attn.config<{{[^>]*}}>, tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<>} {
// DEFAULT: %[[Q1:.*]] = arith.subi %{{.*}}, %c1_i32 : i32
// DEFAULT: %[[QIDS:.*]] = tile.gather %[[IDS]][%{{.*}}] : !tile.ptr<i32>, tensor<128xi32> -> tensor<128xi32>
// DEFAULT-NEXT: %[[LASTB:.*]] = arith.shrsi %[[Q1]], %c5_i32 : i32
// DEFAULT-NEXT: %[[HIANY:.*]] = arith.addi %[[LASTB]], %c1_i32 : i32
// DEFAULT: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32
// DEFAULT: %[[KIDS:.*]] = tile.gather %[[IDS]][%{{.*}}] : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
// DEFAULT: %[[QIDSB:.*]] = tile.broadcast %{{.*}} : tensor<128x1xi32> -> tensor<128x32xi32>
// DEFAULT: %[[KIDSB:.*]] = tile.broadcast %{{.*}} : tensor<1x32xi32> -> tensor<128x32xi32>
// DEFAULT-NEXT: %[[SAME:.*]] = arith.cmpi eq, %[[QIDSB]], %[[KIDSB]] : tensor<128x32xi32>
// DEFAULT: %[[CAUSAL:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<128x32xi32>
// DEFAULT-NEXT: %[[BOTH:.*]] = arith.andi %[[SAME]], %[[CAUSAL]] : tensor<128x32xi1>
// DEFAULT-NEXT: %[[KEEP:.*]] = arith.andi %{{.*}}, %[[BOTH]] : tensor<128x32xi1>
// DEFAULT-NEXT: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : tensor<128x32xi1>, tensor<128x32xf32>
// DEFAULT: scf.yield
// DEFAULT-NOT: scf.for
// DEFAULT: return
func.func @document(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                    %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %same = arith.cmpi eq, %dq, %dk : i32
      %causal = arith.cmpi sge, %qi, %kv : index
      %keep = arith.andi %same, %causal : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Head dim 64, by default (chosen by measurement): 128 query rows on two warpgroups (8 warps), 64
// keys per step, two CTAs per SM (128 registers a thread), fp16 inputs.
// DEFAULT-LABEL: func.func @d64(
// DEFAULT-SAME: %{{[^:]*}}: !tile.ptr<f16>,
// DEFAULT-SAME: attributes {flare.attention.block_m = 128 : i32, flare.attention.block_n = 64 : i32, flare.attention_config = #attn.config<{{[^>]*}}>, tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<min_blocks_per_sm = 2>} {
// 1 / sqrt(64) * log2(e)
// DEFAULT-DAG: arith.constant dense<0.180336878> : tensor<128x64xf32>
// DEFAULT: %[[Q0:.*]] = arith.muli %{{.*}}, %c128_i32 : i32
// DEFAULT: tile.load %{{.*}}[%[[Q0]], %c0_i32] : !tile.view<f16, 2> -> tensor<128x64xf16>
// DEFAULT: scf.for
// DEFAULT: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xf16>, tensor<64x64xf16>, tensor<128x64xf32> -> tensor<128x64xf32>
// DEFAULT: tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xf32>, tensor<128xf32>
// DEFAULT: scf.for
// DEFAULT: arith.cmpi sle, %{{.*}}, %{{.*}} : tensor<128x64xi32>
// DEFAULT: tile.store %{{.*}}, %{{.*}}[%[[Q0]], %c0_i32] : tensor<128x64xf16>, !tile.view<f16, 2>
func.func @d64(%q: tensor<2x8x1024x64xf16>, %k: tensor<2x8x1024x64xf16>, %v: tensor<2x8x1024x64xf16>)
    -> tensor<2x8x1024x64xf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16> -> tensor<2x8x1024x64xf16>
  return %o : tensor<2x8x1024x64xf16>
}

// -----

// Causal sliding window of 256 keys: the lower bound kv >= qi - 255 also moves with the rows, so the
// blocks LEFT of the window are skipped too, and the partial blocks lie on both sides of the full range.
// CHECK-LABEL: func.func @sliding_window(
// CHECK: %[[MB:.*]] = tile.program_id x
// CHECK: %[[Q1:.*]] = arith.subi %{{.*}}, %c1_i32 : i32
// The first block any row keeps holds key q0 - 255: (q0 - 255) >> 6 (here -255 - (-128 * pid)); the first
// block every row keeps wholly starts at or after q1 - 255: ceil((q1 - 255) / 64) = (q1 - 192) >> 6.
// CHECK: %[[NQ0:.*]] = arith.muli %[[MB]], %c-128_i32 : i32
// CHECK-NEXT: %[[NQ1:.*]] = arith.muli %[[Q1]], %c-1_i32 : i32
// CHECK-NEXT: %[[A:.*]] = arith.subi %c-255_i32, %[[NQ0]] : i32
// CHECK-NEXT: %[[LOANY:.*]] = arith.shrsi %[[A]], %c6_i32 : i32
// CHECK-NEXT: %[[B:.*]] = arith.subi %c-192_i32, %[[NQ1]] : i32
// CHECK-NEXT: %[[LOALL:.*]] = arith.shrsi %[[B]], %c6_i32 : i32
// CHECK-NEXT: %[[LO0:.*]] = arith.maxsi %[[LOANY]], %c0_i32 : i32
// CHECK: %[[FLO0:.*]] = arith.maxsi %[[LOALL]], %c0_i32 : i32
// CHECK: %[[LO:.*]] = arith.maxsi %[[LO0]], %c0_i32 : i32
// CHECK: %[[FLO1:.*]] = arith.maxsi %[[FLO0]], %[[LO]] : i32
// CHECK-NEXT: %[[FLO:.*]] = arith.minsi %[[FLO1]], %[[HI:.*]] : i32
// Partial blocks: flo - lo of them left of the full range, then hi - fhi right of it.
// CHECK: %[[LEFT:.*]] = arith.subi %[[FLO]], %[[LO]] : i32
// CHECK-NEXT: %[[RIGHT:.*]] = arith.subi %[[HI]], %[[FHI:.*]] : i32
// CHECK-NEXT: %[[N:.*]] = arith.addi %[[LEFT]], %[[RIGHT]] : i32
// Full blocks, no mask code.
// CHECK-NEXT: scf.for %{{.*}} = %[[FLO]] to %[[FHI]] step %c1_i32
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for %[[T:.*]] = %c0_i32 to %[[N]] step %c1_i32
// CHECK-NEXT: %[[AB:.*]] = arith.subi %[[T]], %[[LEFT]] : i32
// CHECK-NEXT: %[[JA:.*]] = arith.addi %[[FHI]], %[[AB]] : i32
// CHECK-NEXT: %[[JB:.*]] = arith.addi %[[LO]], %[[T]] : i32
// CHECK-NEXT: %[[ISL:.*]] = arith.cmpi slt, %[[T]], %[[LEFT]] : i32
// CHECK-NEXT: arith.select %[[ISL]], %[[JB]], %[[JA]] : i32
// Both bounds are evaluated per element there.
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK-NEXT: arith.subi %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK-NEXT: tile.splat %c256_i32 : i32 -> tensor<128x64xi32>
// CHECK-NEXT: arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<128x64xi32>
// CHECK: scf.yield
func.func @sliding_window(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %window = arith.constant 256 : index
      %causal = arith.cmpi sge, %qi, %kv : index
      %dist = arith.subi %qi, %kv : index
      %near = arith.cmpi slt, %dist, %window : index
      %keep = arith.andi %causal, %near : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Prefix-LM (kv < 256 or kv <= qi): both constraints bound kv from above, so a partial block compares
// each key with one bound per row: max(255, qi) (Or), then min(.., Skv - 1) (the key range).
// CHECK-LABEL: func.func @prefix_lm(
// CHECK: %[[ROWS:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK: %[[P:.*]] = tile.splat %c255_i32 : i32 -> tensor<128xi32>
// CHECK-NEXT: %[[EITHER:.*]] = arith.maxsi %[[P]], %[[ROWS]] : tensor<128xi32>
// CHECK-NEXT: %[[SKVM1:.*]] = arith.subi %{{.*}}, %c1_i32 : i32
// CHECK-NEXT: %[[SKVS:.*]] = tile.splat %[[SKVM1]] : i32 -> tensor<128xi32>
// CHECK-NEXT: %[[BOUND:.*]] = arith.minsi %[[EITHER]], %[[SKVS]] : tensor<128xi32>
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: scf.for
// CHECK-NOT: arith.ori
// CHECK: tile.expand_dims %[[BOUND]] {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
// CHECK-NEXT: %[[LASTKEPT:.*]] = tile.broadcast %{{.*}} : tensor<128x1xi32> -> tensor<128x64xi32>
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sle, %{{.*}}, %[[LASTKEPT]] : tensor<128x64xi32>
// CHECK-NEXT: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK-NOT: arith.ori
// CHECK: scf.yield
func.func @prefix_lm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %prefix = arith.constant 256 : index
      %in_prefix = arith.cmpi slt, %kv, %prefix : index
      %causal = arith.cmpi sge, %qi, %kv : index
      %keep = arith.ori %in_prefix, %causal : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
