// convert-attn-to-tile over caches: attn.attention with kv_lens (per-sequence key counts) and
// page_table (a paged K/V cache, [num_pages, Hkv, page_size, D]).
//   - ABI: after the 12 i64 strides, kv_lens adds the i32 [B] lengths; page_table adds the table
//     (i32 [B, max_pages]), its row stride, the view rows one page advances and the cache's rows;
//   - the sequence's key count is lens[program_id z] clamped into [0, seq_kv]; it bounds the visited
//     blocks, the masks and attn.kv_len (the bottom-right causal shift), while the K/V views span the
//     whole allocation (the cache's rows with a page table, seq_kv without one);
//   - with a page table, the K/V views are one head's rows of every page (no batch term), and each
//     block of keys kv0 is read at row table_row[min(kv0 / page, last page)] x page_rows + kv0 % page,
//     or far away (-2^30, nothing is copied) when kv0 is outside [0, len);
//   - on sm_90a at head dims 80-128 the tiles are those of a contiguous cache: a block of keys longer
//     than a page is loaded in row pieces (tile.load row_pieces) of the largest power of two dividing
//     the page size, each piece's first row read through the table: page 64 gives two pieces of 64
//     keys per block of 128, page 48 and 16 eight pieces of 16, page 256 one; any block_n is accepted.
//     Elsewhere (sm_80, head dims 64 and 256) block_n is capped at that power of two instead (a block
//     is copied from one page);
//   - down to PTX (sm_90a): table entries are plain ld.global reads and K/V still travel by TMA, their
//     tensor maps covering the cache's rows, one box of a piece's rows per piece and 64-column panel,
//     landing where one copy of the whole block would put those rows; split_kv with pack_gqa compiles,
//     and its combine kernel finds the parts after the cache arguments;
//   - the backward pass is not generated for caches.
// The inputs are separate files (split-file) so that each run compiles the functions it is about.
// RUN: rm -rf %t && split-file %s %t
// RUN: flare-opt %t/paged.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s
// RUN: flare-opt %t/lens.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=KVLENS
// RUN: flare-opt %t/pages.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s --check-prefix=CONFIG
// RUN: flare-opt %t/pages.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=PAGES
// RUN: flarec --arch=sm_90a --emit=ptx %t/paged.mlir | FileCheck %s --check-prefix=PTX
// RUN: flarec --arch=sm_90a --emit=meta %t/paged.mlir | FileCheck %s --check-prefix=META
// RUN: flarec --arch=sm_90a --emit=tile %t/paged.mlir --attention-config="#attn.config<block_m = 64, block_n = 64, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, last_pv_after_loops, pair_instances, split_kv, pack_gqa>" | FileCheck %s --check-prefix=SPLIT
// RUN: flarec --arch=sm_90a --emit=ptx %t/paged.mlir --attention-config="#attn.config<block_m = 64, block_n = 64, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, last_pv_after_loops, pair_instances, split_kv, pack_gqa>" | FileCheck %s --check-prefix=SPLITPTX
// RUN: flare-opt %t/pages.mlir --attn-classify-mask --attn-choose-config="arch=sm_80" | FileCheck %s --check-prefix=CONFIG80
// RUN: flare-opt %t/pages.mlir --attn-choose-config="block-n=32" --convert-attn-to-tile --attn-overlap | FileCheck %s --check-prefix=BLOCKN32
// Errors: no backward pass over caches.
// RUN: not flare-opt %t/paged.mlir --attn-classify-mask --attn-choose-config --convert-attn-to-tile=grad=true 2>&1 | FileCheck %s --check-prefix=GRAD
// RUN: not flare-opt %t/lens.mlir --attn-classify-mask --attn-choose-config --convert-attn-to-tile=grad=true 2>&1 | FileCheck %s --check-prefix=GRAD
// RUN: not flarec --arch=sm_90a --grad %t/paged.mlir 2>&1 | FileCheck %s --check-prefix=GRAD

//===----------------------------------------------------------------------===//
// paged.mlir: page size 64, head dim 128, bottom-right causal mask, with the LSE
//===----------------------------------------------------------------------===//

// The forward's ABI (Q, K, V, O, LSE; heads_q, heads_kv, seq_q, seq_kv; the (batch, head, row)
// strides of Q, K, V and O), then lens, the table, its row stride, the page's rows and the cache's rows.
// CHECK-LABEL: func.func @paged(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<bf16>, %[[KP:[^:]*]]: !tile.ptr<bf16>, %[[VP:[^:]*]]: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<f32>,
// CHECK-SAME: %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[SQ:[^:]*]]: i32, %[[SKV:[^:]*]]: i32,
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME: %{{[^:]*}}: i64, %[[KHS:[^:]*]]: i64, %[[KRS:[^:]*]]: i64,
// CHECK-SAME: %{{[^:]*}}: i64, %[[VHS:[^:]*]]: i64, %[[VRS:[^:]*]]: i64,
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME: %[[LENS:[^:]*]]: !tile.ptr<i32>, %[[TABLE:[^:]*]]: !tile.ptr<i32>, %[[TSTRIDE:[^:]*]]: i32, %[[PROWS:[^:]*]]: i32, %[[CROWS:[^:]*]]: i32)
// A page of 64 keys keeps the contiguous cache's block_n, 128.
// CHECK-SAME: flare.attention.block_n = 128 : i32
// The sequence's key count: lens[batch] clamped into [0, seq_kv]; the batch's row of the table; the
// last page that holds one of its keys, (max(len, 1) - 1) / 64.
// CHECK: %[[Z:.*]] = tile.program_id z
// CHECK-NEXT: %[[LEN:.*]] = tile.scalar_load %[[LENS]][%[[Z]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[LEN0:.*]] = arith.maxsi %[[LEN]], %c0_i32 : i32
// CHECK-NEXT: %[[SEQ:.*]] = arith.minsi %[[LEN0]], %[[SKV]] : i32
// CHECK-NEXT: %[[TS64:.*]] = arith.extsi %[[TSTRIDE]] : i32 to i64
// CHECK-NEXT: %[[Z64:.*]] = arith.extsi %[[Z]] : i32 to i64
// CHECK-NEXT: %[[TOFF:.*]] = arith.muli %[[Z64]], %[[TS64]] : i64
// CHECK-NEXT: %[[TROW:.*]] = tile.addptr %[[TABLE]], %[[TOFF]] : !tile.ptr<i32>, i64
// CHECK-NEXT: %[[SOME:.*]] = arith.maxsi %[[SEQ]], %c1_i32 : i32
// CHECK-NEXT: %[[SOME1:.*]] = arith.subi %[[SOME]], %c1_i32 : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.divui %[[SOME1]], %c64_i32 : i32
// The blocks visited: ceil(len / 128).
// CHECK: %[[LEN127:.*]] = arith.addi %[[SEQ]], %c127_i32 : i32
// CHECK-NEXT: arith.shrsi %[[LEN127]], %c7_i32 : i32
// K and V: one view per KV head over the cache's rows, no batch offset.
// CHECK: %[[KOFF:.*]] = arith.muli %[[KVH:.*]], %[[KHS]] : i64
// CHECK-NEXT: %[[KBASE:.*]] = tile.addptr %[[KP]], %[[KOFF]] : !tile.ptr<bf16>, i64
// CHECK-NEXT: %[[KRS32:.*]] = arith.trunci %[[KRS]] : i64 to i32
// CHECK-NEXT: %[[KVIEW:.*]] = tile.make_view %[[KBASE]], [%[[CROWS]], %c128_i32], [%[[KRS32]], %c1_i32] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
// CHECK-NEXT: %[[VOFF:.*]] = arith.muli %[[KVH]], %[[VHS]] : i64
// CHECK-NEXT: %[[VBASE:.*]] = tile.addptr %[[VP]], %[[VOFF]] : !tile.ptr<bf16>, i64
// CHECK-NEXT: %[[VRS32:.*]] = arith.trunci %[[VRS]] : i64 to i32
// CHECK-NEXT: %[[VVIEW:.*]] = tile.make_view %[[VBASE]], [%[[CROWS]], %c128_i32], [%[[VRS32]], %c1_i32] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
// attn.kv_len is the sequence's count: the bottom-right diagonal is shifted by len - seq_q.
// CHECK: arith.subi %[[SEQ]], %[[SQ]] : i32
// The first loop: iteration j computes S for block j (kv0 = 128 j) and P x V for block j - 1 (far
// away in the first iteration). A block spans two pages: two row pieces of 64 keys, each piece's
// row through the table.
// CHECK: scf.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %c1_i32 iter_args(
// CHECK-NEXT: %[[FIRSTIT:.*]] = arith.cmpi eq, %[[J]], %{{.*}} : i32
// CHECK-NEXT: %[[JM1:.*]] = arith.subi %[[J]], %c1_i32 : i32
// CHECK-NEXT: %[[PREV:.*]] = arith.muli %[[JM1]], %c128_i32 : i32
// CHECK-NEXT: %[[VKV0:.*]] = arith.select %[[FIRSTIT]], %c-1073741824_i32, %[[PREV]] : i32
// CHECK-NEXT: %[[KV0:.*]] = arith.muli %[[J]], %c128_i32 : i32
// CHECK-NEXT: %[[KIN:.*]] = arith.cmpi ult, %[[KV0]], %[[SEQ]] : i32
// CHECK-NEXT: %[[KPAGE:.*]] = arith.divui %[[KV0]], %c64_i32 : i32
// CHECK-NEXT: %[[KUSED:.*]] = arith.minui %[[KPAGE]], %[[LAST]] : i32
// CHECK-NEXT: %[[KWITHIN:.*]] = arith.remui %[[KV0]], %c64_i32 : i32
// CHECK-NEXT: %[[KENTRY:.*]] = tile.scalar_load %[[TROW]][%[[KUSED]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[KFIRST:.*]] = arith.muli %[[KENTRY]], %[[PROWS]] : i32
// CHECK-NEXT: %[[KROW:.*]] = arith.addi %[[KFIRST]], %[[KWITHIN]] : i32
// CHECK-NEXT: %[[KSEL:.*]] = arith.select %[[KIN]], %[[KROW]], %c-1073741824_i32 : i32
// CHECK-NEXT: %[[KV1:.*]] = arith.addi %[[KV0]], %c64_i32 : i32
// CHECK-NEXT: %[[KIN1:.*]] = arith.cmpi ult, %[[KV1]], %[[SEQ]] : i32
// CHECK-NEXT: %[[KPAGE1:.*]] = arith.divui %[[KV1]], %c64_i32 : i32
// CHECK-NEXT: %[[KUSED1:.*]] = arith.minui %[[KPAGE1]], %[[LAST]] : i32
// CHECK-NEXT: %[[KWITHIN1:.*]] = arith.remui %[[KV1]], %c64_i32 : i32
// CHECK-NEXT: %[[KENTRY1:.*]] = tile.scalar_load %[[TROW]][%[[KUSED1]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[KFIRST1:.*]] = arith.muli %[[KENTRY1]], %[[PROWS]] : i32
// CHECK-NEXT: %[[KROW1:.*]] = arith.addi %[[KFIRST1]], %[[KWITHIN1]] : i32
// CHECK-NEXT: %[[KSEL1:.*]] = arith.select %[[KIN1]], %[[KROW1]], %c-1073741824_i32 : i32
// CHECK-NEXT: tile.load %[[KVIEW]][%[[KSEL]], %[[KSEL1]], %c0_i32] {row_pieces = 2 : i64} : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// CHECK: tile.dot
// CHECK-NEXT: %[[VIN:.*]] = arith.cmpi ult, %[[VKV0]], %[[SEQ]] : i32
// CHECK-NEXT: %[[VPAGE:.*]] = arith.divui %[[VKV0]], %c64_i32 : i32
// CHECK-NEXT: %[[VUSED:.*]] = arith.minui %[[VPAGE]], %[[LAST]] : i32
// CHECK-NEXT: %[[VWITHIN:.*]] = arith.remui %[[VKV0]], %c64_i32 : i32
// CHECK-NEXT: %[[VENTRY:.*]] = tile.scalar_load %[[TROW]][%[[VUSED]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[VFIRST:.*]] = arith.muli %[[VENTRY]], %[[PROWS]] : i32
// CHECK-NEXT: %[[VROW:.*]] = arith.addi %[[VFIRST]], %[[VWITHIN]] : i32
// CHECK-NEXT: %[[VSEL:.*]] = arith.select %[[VIN]], %[[VROW]], %c-1073741824_i32 : i32
// CHECK-NEXT: %[[VKV1:.*]] = arith.addi %[[VKV0]], %c64_i32 : i32
// CHECK: %[[VSEL1:.*]] = arith.select %{{.*}}, %{{.*}}, %c-1073741824_i32 : i32
// CHECK-NEXT: tile.load %[[VVIEW]][%[[VSEL]], %[[VSEL1]], %c0_i32] {row_pieces = 2 : i64} : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// CHECK: scf.yield
// The masked loop reads its blocks the same way.
// CHECK: scf.for
// CHECK: tile.scalar_load %[[TROW]]
// CHECK: tile.load %[[KVIEW]]
// CHECK: tile.scalar_load %[[TROW]]
// CHECK: tile.load %[[VVIEW]]
// CHECK: scf.yield
// CHECK: return

// In the PTX, lens and table entries are plain global loads; the table entry times the page's rows (far
// away outside the sequence) is the row coordinate of K's TMA copies, whose tensor maps are 3-D
// (columns, rows, heads: no batch).
// PTX-LABEL: .visible .entry paged(
// PTX: .param .u64 paged_param_20,
// PTX-NEXT: .param .u64 .ptr .global .align 1 paged_param_21,
// PTX-NEXT: .param .u64 .ptr .global .align 1 paged_param_22,
// PTX-NEXT: .param .u32 paged_param_23,
// PTX-NEXT: .param .u32 paged_param_24,
// PTX-NEXT: .param .u32 paged_param_25,
// PTX: ld.param.b32 %[[PROWS:r[0-9]+]], [paged_param_24];
// PTX: ld.global.b32 %[[LEN:r[0-9]+]], [%rd{{[0-9]+}}];
// PTX-NEXT: max.s32 %[[LEN0:r[0-9]+]], %[[LEN]], 0;
// PTX-NEXT: min.s32 %{{r[0-9]+}}, %[[LEN0]], %r{{[0-9]+}};
// PTX: min.u32 %[[PAGE:r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: mul.wide.u32 %[[OFF:rd[0-9]+]], %[[PAGE]], 4;
// PTX-NEXT: add.s64 %[[ADDR:rd[0-9]+]], %rd{{[0-9]+}}, %[[OFF]];
// PTX-NEXT: ld.global.b32 %[[E:r[0-9]+]], [%[[ADDR]]];
// PTX-NEXT: mul.lo.s32 %[[R:r[0-9]+]], %[[E]], %[[PROWS]];
// PTX-NEXT: selp.b32 %{{r[0-9]+}}, %[[R]], -1073741824, %p{{[0-9]+}};
// PTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: min.u32 %[[PAGE2:r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX-NEXT: mul.wide.u32 %[[OFF2:rd[0-9]+]], %[[PAGE2]], 4;
// PTX-NEXT: add.s64 %[[ADDR2:rd[0-9]+]], %rd{{[0-9]+}}, %[[OFF2]];
// PTX-NEXT: ld.global.b32 %[[E2:r[0-9]+]], [%[[ADDR2]]];
// PTX-NEXT: mul.lo.s32 %[[R2:r[0-9]+]], %[[E2]], %[[PROWS]];
// PTX-NEXT: selp.b32 %[[ROW2:r[0-9]+]], %[[R2]], -1073741824, %p{{[0-9]+}};
// PTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%rd{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %[[ROW2]], %r{{[0-9]+}}}], [%rd{{[0-9]+}}];

// The launch metadata: the 5 + 4 + 12 arguments of the forward, then the cache's 5; V's (pointer 2)
// and K's (pointer 1) tensor maps span argument 25, the cache's rows, and the heads (no batch), in
// boxes of one row piece (64 rows of a block of 128) and one 64-column panel.
// META: "args": [
// META-COUNT-5: "ptr",
// META-COUNT-4: "i32",
// META-COUNT-12: "i64",
// META-NEXT: "ptr",
// META-NEXT: "ptr",
// META-NEXT: "i32",
// META-NEXT: "i32",
// META-NEXT: "i32"
// META-NEXT: ],
// META: "tensorMaps": [
// META: "pointer": 2,
// META-NEXT: "elemBytes": 2,
// META-NEXT: "sizes": [
// META-NEXT: {
// META-NEXT: "const": 128
// META-NEXT: },
// META-NEXT: {
// META-NEXT: "arg": 25
// META-NEXT: },
// META-NEXT: {
// META-NEXT: "const": 2147483648
// META-NEXT: }
// META-NEXT: ],
// META: "box": [
// META-NEXT: 64,
// META-NEXT: 64,
// META-NEXT: 1
// META-NEXT: ],
// META: "pointer": 1,
// META-NEXT: "elemBytes": 2,
// META-NEXT: "sizes": [
// META-NEXT: {
// META-NEXT: "const": 128
// META-NEXT: },
// META-NEXT: {
// META-NEXT: "arg": 25
// META-NEXT: },
// META-NEXT: {
// META-NEXT: "const": 2147483648
// META-NEXT: }
// META-NEXT: ],
// META: "box": [
// META-NEXT: 64,
// META-NEXT: 64,
// META-NEXT: 1
// META-NEXT: ],

// split_kv with pack_gqa: the parts' buffers and the number of parts follow the cache's arguments;
// grid z is (batch, part), and the batch (z / parts) picks lens and the table's row. The combine
// kernel has the same ABI and finds the parts at the right arguments.
// SPLIT-LABEL: func.func @paged(
// SPLIT-SAME: %[[LENS:[^:]*]]: !tile.ptr<i32>, %[[TABLE:[^:]*]]: !tile.ptr<i32>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: !tile.ptr<f32>, %{{[^:]*}}: !tile.ptr<f32>, %[[SPLITS:[^:]*]]: i32)
// SPLIT-SAME: flare.attention.pack_gqa = 1
// SPLIT: %[[Z:.*]] = tile.program_id z
// SPLIT-NEXT: arith.remui %[[Z]], %[[SPLITS]] : i32
// SPLIT-NEXT: %[[B:.*]] = arith.divui %[[Z]], %[[SPLITS]] : i32
// SPLIT-NEXT: tile.scalar_load %[[LENS]][%[[B]]] : !tile.ptr<i32>, i32 -> i32
// SPLIT: %[[B64:.*]] = arith.extsi %[[B]] : i32 to i64
// SPLIT-NEXT: %[[TOFF:.*]] = arith.muli %[[B64]], %{{.*}} : i64
// SPLIT-NEXT: %[[TROW:.*]] = tile.addptr %[[TABLE]], %[[TOFF]] : !tile.ptr<i32>, i64
// SPLIT: scf.for
// SPLIT: tile.scalar_load %[[TROW]]
// SPLIT: tile.load {{.*}} -> tensor<64x128xbf16>
// SPLIT-LABEL: func.func @paged_combine(
// SPLIT-SAME: %{{[^:]*}}: !tile.ptr<i32>, %{{[^:]*}}: !tile.ptr<i32>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[PO:[^:]*]]: !tile.ptr<f32>, %[[PL:[^:]*]]: !tile.ptr<f32>, %[[SPLITS2:[^:]*]]: i32)
// SPLIT-NOT: tile.scalar_load
// SPLIT: tile.addptr %[[PO]]
// SPLIT: tile.addptr %[[PL]]
// SPLIT: scf.for %{{.*}} = %c0_i32 to %[[SPLITS2]] step %c16_i32
// SPLIT: return

// SPLITPTX-LABEL: .visible .entry paged(
// SPLITPTX: .param .u32 paged_param_28,
// SPLITPTX: ld.global.b32
// SPLITPTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SPLITPTX-LABEL: .visible .entry paged_combine(
// SPLITPTX: .param .u32 paged_combine_param_28{{$}}
// SPLITPTX-NEXT: )
// SPLITPTX: ret;

// GRAD: error: 'attn.attention' op convert-attn-to-tile: the backward pass of an attention over kv_lens or a paged cache is not generated (caches are for inference)

//===----------------------------------------------------------------------===//
// lens.mlir: kv_lens without a page table
//===----------------------------------------------------------------------===//

// One i32 pointer after the strides; K and V keep their [B, Hkv, Skv, D] views of seq_kv rows, and
// block j is read at row 128 j; keys from the sequence's count on are masked.
// KVLENS-LABEL: func.func @lens(
// KVLENS-SAME: %{{[^:]*}}: i32, %[[SKV:[^:]*]]: i32, {{(%[^:]*: i64, )+}}%[[LENS:[^:]*]]: !tile.ptr<i32>)
// KVLENS-SAME: flare.attention.block_n = 128 : i32
// KVLENS: %[[Z:.*]] = tile.program_id z
// KVLENS-NEXT: %[[LEN:.*]] = tile.scalar_load %[[LENS]][%[[Z]]] : !tile.ptr<i32>, i32 -> i32
// KVLENS-NEXT: %[[LEN0:.*]] = arith.maxsi %[[LEN]], %c0_i32 : i32
// KVLENS-NEXT: %[[SEQ:.*]] = arith.minsi %[[LEN0]], %[[SKV]] : i32
// KVLENS-NOT: tile.scalar_load
// KVLENS: %[[KVIEW:.*]] = tile.make_view %{{.*}}, [%[[SKV]], %c128_i32]
// KVLENS: %[[VVIEW:.*]] = tile.make_view %{{.*}}, [%[[SKV]], %c128_i32]
// KVLENS: scf.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %c1_i32 iter_args(
// KVLENS: %[[KV0:.*]] = arith.muli %[[J]], %c128_i32 : i32
// KVLENS-NEXT: tile.load %[[KVIEW]][%[[KV0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// KVLENS: scf.for
// KVLENS: %[[LENT:.*]] = tile.splat %[[SEQ]] : i32 -> tensor<128xi32>
// KVLENS-NEXT: arith.cmpi slt, %{{.*}}, %[[LENT]] : tensor<128xi32>
// KVLENS: return

//===----------------------------------------------------------------------===//
// pages.mlir: other page sizes at head dim 128 (no mask)
//===----------------------------------------------------------------------===//

// sm_90a: every page size keeps the contiguous cache's 128 keys per block.
// CONFIG-LABEL: func.func @page48
// CONFIG: config = #attn.config<block_m = 128, block_n = 128,
// CONFIG-LABEL: func.func @page16
// CONFIG: config = #attn.config<block_m = 128, block_n = 128,
// CONFIG-LABEL: func.func @page256
// CONFIG: config = #attn.config<block_m = 128, block_n = 128,
// Pieces only at head dims above 64 up to 128 (measured there): at 256 pages of 16 keep 16 keys per block.
// CONFIG-LABEL: func.func @page16d256
// CONFIG: config = #attn.config<block_m = {{[0-9]+}}, block_n = 16,
// sm_80 (no TMA): a block is copied from one page, so block_n is capped at the largest power of two
// dividing the page size (16 for pages of 48 and 16; 64, the sm_80 default at head dim 128, for 256).
// CONFIG80-LABEL: func.func @page48
// CONFIG80: config = #attn.config<block_m = 128, block_n = 16,
// CONFIG80-LABEL: func.func @page16
// CONFIG80: config = #attn.config<block_m = 128, block_n = 16,
// CONFIG80-LABEL: func.func @page256
// CONFIG80: config = #attn.config<block_m = 128, block_n = 64,

// Page 48 in pieces of 16 (8 per block of 128 keys): piece i of block j starts at key 128 j + 16 i,
// which lies in page (128 j + 16 i) / 48 at row (128 j + 16 i) % 48 of it.
// PAGES-LABEL: func.func @page48(
// PAGES-SAME: %[[PROWS:[^:]*]]: i32, %{{[^:]*}}: i32)
// PAGES-SAME: flare.attention.block_n = 128 : i32
// PAGES: scf.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %c1_i32 iter_args(
// PAGES: %[[KV0:.*]] = arith.muli %[[J]], %c128_i32 : i32
// PAGES-NEXT: arith.cmpi ult, %[[KV0]], %{{.*}} : i32
// PAGES-NEXT: %[[PAGE:.*]] = arith.divui %[[KV0]], %c48_i32 : i32
// PAGES-NEXT: %[[USED:.*]] = arith.minui %[[PAGE]], %{{.*}} : i32
// PAGES-NEXT: %[[WITHIN:.*]] = arith.remui %[[KV0]], %c48_i32 : i32
// PAGES-NEXT: %[[ENTRY:.*]] = tile.scalar_load %{{.*}}[%[[USED]]] : !tile.ptr<i32>, i32 -> i32
// PAGES-NEXT: %[[FIRST:.*]] = arith.muli %[[ENTRY]], %[[PROWS]] : i32
// PAGES-NEXT: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WITHIN]] : i32
// PAGES-NEXT: %[[SEL:.*]] = arith.select %{{.*}}, %[[ROW]], %c-1073741824_i32 : i32
// PAGES-NEXT: %[[KV1:.*]] = arith.addi %[[KV0]], %c16_i32 : i32
// PAGES-NEXT: arith.cmpi ult, %[[KV1]], %{{.*}} : i32
// PAGES-NEXT: arith.divui %[[KV1]], %c48_i32 : i32
// PAGES: %[[KV7:.*]] = arith.addi %[[KV0]], %c112_i32 : i32
// PAGES: tile.load %{{.*}}[%[[SEL]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32] {row_pieces = 8 : i64} : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// PAGES-LABEL: func.func @page16(
// PAGES-SAME: flare.attention.block_n = 128 : i32
// PAGES: scf.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %c1_i32 iter_args(
// PAGES: %[[KV0:.*]] = arith.muli %[[J]], %c128_i32 : i32
// PAGES-NEXT: arith.cmpi ult, %[[KV0]], %{{.*}} : i32
// PAGES-NEXT: arith.divui %[[KV0]], %c16_i32 : i32
// PAGES: tile.scalar_load
// PAGES: tile.load %{{.*}} {row_pieces = 8 : i64} : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// Page 256 in blocks of 128: two blocks per page, one piece each.
// PAGES-LABEL: func.func @page256(
// PAGES-SAME: flare.attention.block_n = 128 : i32
// PAGES: scf.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %c1_i32 iter_args(
// PAGES: %[[KV0:.*]] = arith.muli %[[J]], %c128_i32 : i32
// PAGES-NEXT: arith.cmpi ult, %[[KV0]], %{{.*}} : i32
// PAGES-NEXT: arith.divui %[[KV0]], %c256_i32 : i32
// PAGES-NEXT: arith.minui
// PAGES-NEXT: arith.remui %[[KV0]], %c256_i32 : i32
// PAGES-NEXT: tile.scalar_load
// PAGES: tile.load %{{.*}}[%{{[^,]*}}, %c0_i32] : !tile.view<bf16, 2> -> tensor<128x128xbf16>

// A given block_n of 32 over pages of 48 and 16: two pieces of 16 keys per block.
// BLOCKN32-LABEL: func.func @page48(
// BLOCKN32-SAME: flare.attention.block_n = 32 : i32
// BLOCKN32: tile.load %{{.*}}[%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}] {row_pieces = 2 : i64} : !tile.view<bf16, 2> -> tensor<32x128xbf16>
// BLOCKN32-LABEL: func.func @page16(
// BLOCKN32-SAME: flare.attention.block_n = 32 : i32
// BLOCKN32: tile.load %{{.*}}[%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}] {row_pieces = 2 : i64} : !tile.view<bf16, 2> -> tensor<32x128xbf16>

//--- paged.mlir
func.func @paged(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x64x128xbf16>, %v: tensor<?x?x64x128xbf16>,
                 %lens: tensor<?xi32>, %pages: tensor<?x?xi32>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %nkv = attn.kv_len
      %nq = attn.q_len
      %shift = arith.subi %nkv, %nq : index
      %diag = arith.addi %qi, %shift : index
      %keep = arith.cmpi sle, %kv, %diag : index
      attn.yield %keep : i1
    }
    : tensor<?x?x?x128xbf16>, tensor<?x?x64x128xbf16>, tensor<?x?x64x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

//--- lens.mlir
func.func @lens(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                %lens: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>)
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

//--- pages.mlir
func.func @page48(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x48x128xbf16>, %v: tensor<?x?x48x128xbf16>,
                  %lens: tensor<?xi32>, %pages: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>)
      : tensor<?x?x?x128xbf16>, tensor<?x?x48x128xbf16>, tensor<?x?x48x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @page16(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x16x128xbf16>, %v: tensor<?x?x16x128xbf16>,
                  %lens: tensor<?xi32>, %pages: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>)
      : tensor<?x?x?x128xbf16>, tensor<?x?x16x128xbf16>, tensor<?x?x16x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @page256(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x256x128xbf16>, %v: tensor<?x?x256x128xbf16>,
                   %lens: tensor<?xi32>, %pages: tensor<?x?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>)
      : tensor<?x?x?x128xbf16>, tensor<?x?x256x128xbf16>, tensor<?x?x256x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @page16d256(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x16x256xbf16>, %v: tensor<?x?x16x256xbf16>,
                      %lens: tensor<?xi32>, %pages: tensor<?x?xi32>) -> tensor<?x?x?x256xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>)
      : tensor<?x?x?x256xbf16>, tensor<?x?x16x256xbf16>, tensor<?x?x16x256xbf16> -> tensor<?x?x?x256xbf16>
  return %o : tensor<?x?x?x256xbf16>
}
