// convert-attn-to-tile, pack_gqa: grid y runs over KV heads and an instance's rows are rows of its
// group's G x Sq (head in group, query) pairs, the query fastest. Q and O are read and written
// through one view of G x Sq rows from the group's first head, at the head stride when Sq is 1, else
// at the row stride (the launcher packs only where a head stride is Sq rows); the regions' head and
// query indices are one value per row: ALiBi reads a slope per row (head), clamped to the table.
// RUN: flare-opt %flare_src/examples/attention/alibi.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pack-gqa=1" --convert-attn-to-tile --canonicalize --cse | FileCheck %s
// With split_kv, the parts' rows are blocks of G x Sq rows per (batch, KV head, part), and the
// combine kernel finds a head's Sq rows at (head % G) x Sq in its group's block.
// RUN: flare-opt %flare_src/examples/attention/gqa.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pack-gqa=1 split-kv=1" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=SPLIT
// Both on the mma.sync path too (sm_80), down to PTX.
// RUN: flarec --arch=sm_80 --attention-config="#attn.config<block_m = 64, block_n = 64, warps = 4, pair_instances, split_kv, pack_gqa>" %flare_src/examples/attention/alibi.mlir | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @alibi(
// CHECK-SAME: flare.attention.pack_gqa = 1 : i32
// CHECK: %[[X:.*]] = tile.program_id x
// CHECK: %[[KVH:.*]] = tile.program_id y
// CHECK: %[[G:.*]] = arith.divui %[[HQ:[^,]*]], %[[HKV:[^ ]*]] : i32
// CHECK: %[[FIRST:.*]] = arith.muli %[[KVH]], %[[G]] : i32
// CHECK: %[[ROWS:.*]] = arith.muli %[[G]], %[[SQ:[^ ]*]] : i32
// CHECK: %[[START:.*]] = arith.muli %[[X]], %c128_i32 : i32
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[SQ]], %c1_i32 : i32
// CHECK: %[[STRIDE:.*]] = arith.select %[[ONE]], %[[QHS:[^,]*]], %[[QRS:[^ ]*]] : i64
// CHECK: %[[STRIDE32:.*]] = arith.trunci %[[STRIDE]] : i64 to i32
// CHECK: %[[QV:.*]] = tile.make_view %{{.*}}, [%[[ROWS]], %c128_i32], [%[[STRIDE32]], %c1_i32]
// The K and V views are the KV head's.
// CHECK: arith.extsi %[[KVH]] : i32 to i64
// CHECK: tile.load %[[QV]][%[[START]], %c0_i32] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
// Row p: query p % Sq of head first + min(p / Sq, G - 1).
// CHECK: %[[P:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK: %[[SQV:.*]] = tile.splat %[[SQ]] : i32 -> tensor<128xi32>
// CHECK: arith.remui %[[P]], %[[SQV]] : tensor<128xi32>
// CHECK: %[[INGROUP:.*]] = arith.divui %[[P]], %[[SQV]] : tensor<128xi32>
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[INGROUP]], %{{.*}} : tensor<128xi32>
// CHECK: %[[HEADS:.*]] = arith.addi %{{.*}}, %[[CLAMPED]] : tensor<128xi32>
// CHECK: arith.minsi %[[HEADS]], %{{.*}} : tensor<128xi32>
// CHECK: tile.gather %{{.*}} : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
// CHECK: scf.for
// O is stored at the instance's first packed row.
// CHECK: tile.store %{{.*}}[%[[START]], %c0_i32] : tensor<128x128xbf16>, !tile.view<bf16, 2>

// SPLIT-LABEL: func.func @gqa(
// SPLIT-SAME: split_kv, pack_gqa
// SPLIT-LABEL: func.func @gqa_combine(
// SPLIT: %[[HEAD:.*]] = tile.program_id y
// SPLIT: %[[G:.*]] = arith.divui %[[HQ:[^,]*]], %[[HKV:[^ ]*]] : i32
// SPLIT: %[[KVH:.*]] = arith.divui %[[HEAD]], %[[G]] : i32
// SPLIT: %[[IN:.*]] = arith.remui %[[HEAD]], %[[G]] : i32
// SPLIT: scf.for

// SM80: .visible .entry alibi(
// SM80: mma.sync.aligned.m16n8k16
// SM80: .visible .entry alibi_combine(
