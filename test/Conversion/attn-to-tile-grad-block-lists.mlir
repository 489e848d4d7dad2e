// convert-attn-to-tile grad=true grad-block-lists=true (a mask of class generic: document ids):
//   - ABI: every backward kernel takes two more arguments, last: the key blocks' lists (query blocks
//     per block of keys) and the query blocks' lists (key blocks per dQ block of query rows);
//   - `<name>_bwd_block_mask` (lists_over_queries = 1, the main kernel's tiles in its attributes):
//     its first ceil(Skv / BLOCK_N) program instances each fix a block of keys, walk the query blocks
//     the causal part may keep (from kv0 / BLOCK_M) and count each block's kept elements: full only
//     when every query and key of the tile is kept (8192 = 64 x 128), so a block of keys past Skv has
//     no full block; the others (lists2_* attributes: the dQ kernel's tiles) list key blocks per
//     block of the dQ kernel's query rows, in the same launch;
//   - the transposed (wgmma) main kernel runs one masked loop over the partial blocks and then the
//     full ones (slot t + 2 below the partial count, else from the back); the dQ kernel and the
//     mma.sync main kernel run the full blocks without mask code first, then the partial ones.
// Without the option, or for a mask the compiler classifies (causal), nothing changes.
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-block-lists=true arch=sm_90a" --canonicalize --cse | FileCheck %s
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-block-lists=true arch=sm_80" --canonicalize --cse | FileCheck %s --check-prefix=MMA
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true arch=sm_90a" --canonicalize --cse | FileCheck %s --check-prefix=NOLISTS
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true grad-block-lists=true arch=sm_90a" | FileCheck %s --check-prefix=NOLISTS
// flarec: --block-lists with --grad gives the classifiers; without --grad it is an error.
// RUN: flarec --arch=sm_90a --grad --block-lists --emit=tile %s | FileCheck %s --check-prefix=FLAREC
// RUN: not flarec --arch=sm_90a --block-lists --emit=tile %s 2>&1 | FileCheck %s --check-prefix=NO-GRAD

// The main kernel: its record of the key lists, one loop over partial + full blocks.
// CHECK-LABEL: func.func @document_bwd(
// CHECK-SAME: %[[KEYLISTS:[^:]*]]: !tile.ptr<i32>, %{{[^:]*}}: !tile.ptr<i32>)
// CHECK-DAG: %[[X:.*]] = tile.program_id x
// CHECK: %[[QBLOCKS:.*]] = arith.shrsi %{{.*}}, %c6_i32 : i32
// CHECK: scf.for
// CHECK: %[[X64:.*]] = arith.extsi %[[X]] : i32 to i64
// CHECK-NEXT: %[[SIZE:.*]] = arith.addi %[[QBLOCKS]], %c2_i32 : i32
// CHECK-NEXT: %[[SIZE64:.*]] = arith.extsi %[[SIZE]] : i32 to i64
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[X64]], %[[SIZE64]] : i64
// CHECK-NEXT: %[[REC:.*]] = tile.addptr %[[KEYLISTS]], %[[OFF]] : !tile.ptr<i32>, i64
// CHECK-NEXT: %[[PARTIALS:.*]] = tile.scalar_load %[[REC]][%c0_i32] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[FULLS:.*]] = tile.scalar_load %[[REC]][%c1_i32] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[COUNT:.*]] = arith.addi %[[PARTIALS]], %[[FULLS]] : i32
// CHECK-NEXT: scf.for %[[T:[^ ]*]] = %c0_i32 to %[[COUNT]] step %c1_i32
// CHECK-NEXT: %[[ISP:.*]] = arith.cmpi slt, %[[T]], %[[PARTIALS]] : i32
// CHECK: %[[SLOT:.*]] = arith.select %[[ISP]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[BLOCK:.*]] = tile.scalar_load %[[REC]][%[[SLOT]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[Q0:.*]] = arith.muli %[[BLOCK]], %c64_i32 : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[Q0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
// CHECK-NOT: scf.for
// CHECK: return

// One classifier: its first ceil(Skv / 128) programs write the key blocks' lists, the others the dQ
// kernel's (both walks' tiles in its attributes).
// CHECK-LABEL: func.func @document_bwd_block_mask(
// CHECK-SAME: %[[OUT:[^:]*]]: !tile.ptr<i32>, %[[QOUT:[^:]*]]: !tile.ptr<i32>)
// CHECK-SAME: attributes {flare.attention.block_m = 64 : i32, flare.attention.block_n = 128 : i32, flare.attention.lists2_block_m = 128 : i32, flare.attention.lists2_block_n = 64 : i32, flare.attention.lists_over_queries = 1 : i32, flare.attention.lists_per_batch = 0 : i32, flare.attention.lists_per_head = 0 : i32, tile.kernel, tile.num_warps = 4 : i32}
// CHECK: %[[KX:.*]] = tile.program_id x
// CHECK: %[[NK:.*]] = arith.shrsi %{{.*}}, %c7_i32 : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi slt, %[[KX]], %[[NK]] : i32
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: arith.muli %[[KX]], %c128_i32 : i32
// The causal part: query blocks from kv0 / 64 on.
// CHECK: arith.muli %[[KX]], %c-128_i32 : i32
// CHECK: %[[KREC:.*]] = tile.addptr %[[OUT]], %{{.*}} : !tile.ptr<i32>, i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1_i32 iter_args(%{{.*}} = %c0_i32, %{{.*}} = %c0_i32) -> (i32, i32)
// CHECK: tile.gather
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : tensor<64x128xi32>
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<64x128xi32>
// CHECK: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<64x128xi32> -> tensor<64xi32>
// CHECK: %[[N:.*]] = tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<64xi32> -> i32
// CHECK: arith.cmpi eq, %[[N]], %c8192_i32 : i32
// CHECK: tile.scalar_store %{{.*}}, %[[KREC]][%{{.*}}] : i32, !tile.ptr<i32>, i32
// CHECK: tile.scalar_store %{{.*}}, %[[KREC]][%{{.*}}] : i32, !tile.ptr<i32>, i32
// CHECK: tile.scalar_store %{{.*}}, %[[KREC]][%c0_i32] : i32, !tile.ptr<i32>, i32
// CHECK: tile.scalar_store %{{.*}}, %[[KREC]][%c1_i32] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[QX:.*]] = arith.subi %[[KX]], %[[NK]] : i32
// CHECK-NEXT: arith.muli %[[QX]], %c128_i32 : i32
// CHECK: tile.addptr %[[QOUT]]
// CHECK: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<128x64xi32> -> tensor<128xi32>
// CHECK: tile.scalar_store %{{.*}}, %{{.*}}[%c1_i32] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: }
// CHECK-NEXT: return

// The dQ kernel: full blocks first (no mask: no gather), then the partial ones.
// CHECK-LABEL: func.func @document_bwd_dq(
// CHECK-SAME: %{{[^:]*}}: !tile.ptr<i32>, %[[QLISTS:[^:]*]]: !tile.ptr<i32>)
// CHECK: %[[QREC:.*]] = tile.addptr %[[QLISTS]]
// CHECK-NEXT: %[[QP:.*]] = tile.scalar_load %[[QREC]][%c0_i32]
// CHECK-NEXT: %[[QF:.*]] = tile.scalar_load %[[QREC]][%c1_i32]
// CHECK: scf.for %{{.*}} = %c0_i32 to %[[QF]] step %c1_i32
// CHECK-NOT: tile.gather
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %c0_i32 to %[[QP]] step %c1_i32
// CHECK: tile.gather
// CHECK: return

// mma.sync (sm_80): the main kernel has the full loop and the partial loop, and sums dQ by atomics,
// so only the key lists are written.
// MMA-LABEL: func.func @document_bwd(
// MMA: %[[P:.*]] = tile.scalar_load %[[R:.*]][%c0_i32]
// MMA-NEXT: %[[F:.*]] = tile.scalar_load %[[R]][%c1_i32]
// MMA: scf.for %{{.*}} = %c0_i32 to %[[F]] step %c1_i32
// MMA-NOT: tile.gather
// MMA: tile.atomic_add
// MMA: scf.for %{{.*}} = %c0_i32 to %[[P]] step %c1_i32
// MMA: tile.gather
// MMA: func.func @document_bwd_block_mask(
// MMA-NOT: lists2_
// MMA-SAME: flare.attention.lists_over_queries = 1
// MMA-NOT: scf.if

// NOLISTS-NOT: block_mask
// NOLISTS-NOT: !tile.ptr<i32>)

// FLAREC: func.func @document_bwd_block_mask(
// FLAREC-SAME: lists2_block_m = 128
// NO-GRAD: --block-lists goes with --grad

func.func @document(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                    %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %d: tensor<?xi32>):
      %dq = attn.aux_load %d[%qi] : tensor<?xi32>
      %dk = attn.aux_load %d[%kv] : tensor<?xi32>
      %same = arith.cmpi eq, %dq, %dk : i32
      %causal = arith.cmpi sge, %qi, %kv : index
      %keep = arith.andi %same, %causal : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
