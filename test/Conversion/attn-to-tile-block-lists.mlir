// convert-attn-to-tile with block_lists (a mask of class generic, classified at run time):
//   - ABI: the forward kernel takes one more argument, last, the i32 lists; its program's record is
//     ((batch x heads + head) x query blocks + query block) x (2 + key blocks) elements from the
//     start, batch and head taken only where mask_mod reads them (else 0, and one head);
//   - the record is [partial count, full count, slots]: the kernel reads both counts
//     (tile.scalar_load of offsets 0 and 1) and runs the full blocks first (their indices from the
//     back of the slots, no mask code), then the partial ones (from the front, mask code per element;
//     overlapped, one more step for the last P V);
//   - `<name>_block_mask`, with the forward's signature and the launch in its attributes (block_m,
//     block_n, lists_per_batch, lists_per_head), evaluates mask_mod on every element of the key
//     blocks the mask's linear part may keep, counts the kept elements (tile.reduce sum over both
//     axes) and writes each block's index into the slots and the two counts into the record
//     (tile.scalar_store);
//   - block_lists are not generated with kv_lens, a paged cache or cu_seqlens (a located error).
// The inputs are separate files (split-file) so that each run compiles the functions it is about.
// RUN: rm -rf %t && split-file %s %t
// (The configuration is pinned: 32 keys per step, no producer warpgroup, one kernel per query block.)
// RUN: flare-opt %t/document.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<block_n=32,overlap,ping_pong,pair_instances,uniform_warpgroup,block_lists>" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s
// RUN: flare-opt %t/per-head.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<block_n=32,overlap,ping_pong,pair_instances,uniform_warpgroup,block_lists>" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=HEAD
// RUN: flare-opt %t/per-batch.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<block_n=32,overlap,ping_pong,pair_instances,uniform_warpgroup,block_lists>" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=BATCH
// Without the switch the same mask is visited block by block: no lists, no classifier.
// RUN: flare-opt %t/document.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=NO-LISTS
// The configuration given to flarec (as --emit=meta reports it, plus block_lists) gives both kernels.
// RUN: flarec --arch=sm_90a --emit=tile %t/document.mlir --attention-config="#attn.config<block_m = 128, block_n = 32, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, pair_instances, uniform_warpgroup, block_lists>" | FileCheck %s --check-prefix=FLAREC
// Errors: kv_lens, a paged cache or cu_seqlens.
// RUN: not flare-opt %t/lens.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=LENS
// RUN: not flare-opt %t/paged.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=LENS
// RUN: not flare-opt %t/varlen.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=LENS
// A configuration given by hand is attached as it is: block_lists without a mask_mod has nothing to
// classify (the option block-lists=1 drops it there: test/Dialect/Attn/choose-config-block-lists.mlir).
// RUN: not flare-opt %t/no-mask.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<overlap,pair_instances,block_lists>" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=NO-MASK

// The forward kernel: the lists last, after the 12 strides.
// CHECK-LABEL: func.func @document(
// CHECK-SAME: {{(%[^:]*: i64, )+}}%[[LISTS:[^:]*]]: !tile.ptr<i32>)
// CHECK-SAME: flare.attention.block_m = 128 : i32, flare.attention.block_n = 32 : i32
// CHECK-SAME: block_lists>
// CHECK-DAG: %[[X:.*]] = tile.program_id x
// mask_mod reads neither the batch nor the head: the record of query block x is x x (2 + key blocks)
// elements from the start.
// CHECK: %[[KEYBLOCKS:.*]] = arith.shrsi %{{.*}}, %c5_i32 : i32
// CHECK: %[[X64:.*]] = arith.extsi %[[X]] : i32 to i64
// CHECK-NEXT: %[[SIZE:.*]] = arith.addi %[[KEYBLOCKS]], %c2_i32 : i32
// CHECK-NEXT: %[[SIZE64:.*]] = arith.extsi %[[SIZE]] : i32 to i64
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[X64]], %[[SIZE64]] : i64
// CHECK-NEXT: %[[REC:.*]] = tile.addptr %[[LISTS]], %[[OFF]] : !tile.ptr<i32>, i64
// CHECK-NEXT: %[[PARTIALS:.*]] = tile.scalar_load %[[REC]][%c0_i32] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[FULLS:.*]] = tile.scalar_load %[[REC]][%c1_i32] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[LAST:.*]] = arith.addi %[[KEYBLOCKS]], %c1_i32 : i32
// CHECK: %[[STEPS:.*]] = arith.addi %[[PARTIALS]], %c1_i32 : i32
// First the full blocks, block t at slot (key blocks + 1 - t), without mask code (no aux read).
// CHECK: scf.for %[[T:[^ ]*]] = %c0_i32 to %[[FULLS]] step %c1_i32
// CHECK: %[[TF:.*]] = arith.maxsi %[[T]], %c0_i32 : i32
// CHECK-NEXT: %[[FSLOT:.*]] = arith.subi %[[LAST]], %[[TF]] : i32
// CHECK-NEXT: %[[FBLOCK:.*]] = tile.scalar_load %[[REC]][%[[FSLOT]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[FKV0:.*]] = arith.muli %[[FBLOCK]], %c32_i32 : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[FKV0]], %c0_i32] : !tile.view<bf16, 2> -> tensor<32x128xbf16>
// CHECK-NOT: tile.gather
// CHECK: scf.yield
// Then the partial blocks, block t at slot t + 2, one more step for the last P V (overlap), masked.
// CHECK: scf.for %[[U:[^ ]*]] = %c0_i32 to %[[STEPS]] step %c1_i32
// CHECK: %[[UP:.*]] = arith.minsi %[[U]], %{{.*}} : i32
// CHECK-NEXT: %[[PSLOT:.*]] = arith.addi %[[UP]], %c2_i32 : i32
// CHECK-NEXT: tile.scalar_load %[[REC]][%[[PSLOT]]] : !tile.ptr<i32>, i32 -> i32
// CHECK: tile.gather
// CHECK: scf.yield
// CHECK: return

// The classifier: the same signature, four warps, the launch in its attributes.
// CHECK-LABEL: func.func @document_block_mask(
// CHECK-SAME: {{(%[^:]*: i64, )+}}%[[LISTS2:[^:]*]]: !tile.ptr<i32>)
// CHECK-SAME: attributes {flare.attention.block_m = 128 : i32, flare.attention.block_n = 32 : i32, flare.attention.lists_per_batch = 0 : i32, flare.attention.lists_per_head = 0 : i32, tile.kernel, tile.num_warps = 4 : i32}
// CHECK: %[[X2:.*]] = tile.program_id x
// CHECK-NOT: tile.program_id
// CHECK: %[[REC2:.*]] = tile.addptr %[[LISTS2]], %{{.*}} : !tile.ptr<i32>, i64
// The causal part bounds the blocks looked at; each is evaluated whole.
// CHECK: %[[R:.*]]:2 = scf.for %[[J:[^ ]*]] = %c0_i32 to %{{.*}} step %c1_i32 iter_args(%[[NP:[^ ]*]] = %c0_i32, %[[NF:[^ ]*]] = %c0_i32) -> (i32, i32)
// CHECK: tile.gather
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : tensor<128x32xi32>
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<128x32xi32>
// CHECK: %[[ONES:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x32xi1>, tensor<128x32xi32>
// CHECK-NEXT: %[[ROWS:.*]] = tile.reduce sum %[[ONES]] {axis = 1 : i32} : tensor<128x32xi32> -> tensor<128xi32>
// CHECK-NEXT: %[[COUNT:.*]] = tile.reduce sum %[[ROWS]] {axis = 0 : i32} : tensor<128xi32> -> i32
// The block goes into both lists' next slots; the counts decide which one keeps it.
// CHECK: %[[PS:.*]] = arith.addi %[[NP]], %c2_i32 : i32
// CHECK-NEXT: tile.scalar_store %[[J]], %[[REC2]][%[[PS]]] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: %[[FS:.*]] = arith.subi %{{.*}}, %[[NF]] : i32
// CHECK-NEXT: tile.scalar_store %[[J]], %[[REC2]][%[[FS]]] : i32, !tile.ptr<i32>, i32
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tile.scalar_store %[[R]]#0, %[[REC2]][%c0_i32] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: tile.scalar_store %[[R]]#1, %[[REC2]][%c1_i32] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: return

// A mask reading the head index: one record per head, in both kernels (grid y over the heads).
// HEAD-LABEL: func.func @per_head(
// HEAD-SAME: %[[HEADS:[^:]*]]: i32, %{{[^:]*}}: i32, %[[SQ:[^:]*]]: i32,
// HEAD-SAME: %[[LISTS:[^:]*]]: !tile.ptr<i32>)
// HEAD-DAG: %[[X:.*]] = tile.program_id x
// HEAD-DAG: %[[Y:.*]] = tile.program_id y
// HEAD: %[[Y64:.*]] = arith.extsi %[[Y]] : i32 to i64
// HEAD: %[[QB:.*]] = arith.shrsi %{{.*}}, %c7_i32 : i32
// HEAD-NEXT: %[[QB64:.*]] = arith.extsi %[[QB]] : i32 to i64
// HEAD-NEXT: %[[X64:.*]] = arith.extsi %[[X]] : i32 to i64
// HEAD-NEXT: %[[ROW0:.*]] = arith.muli %[[Y64]], %[[QB64]] : i64
// HEAD-NEXT: %[[ROW:.*]] = arith.addi %[[ROW0]], %[[X64]] : i64
// HEAD: %[[OFF:.*]] = arith.muli %[[ROW]], %{{.*}} : i64
// HEAD-NEXT: %[[REC:.*]] = tile.addptr %[[LISTS]], %[[OFF]] : !tile.ptr<i32>, i64
// HEAD-NEXT: tile.scalar_load %[[REC]][%c0_i32]
// HEAD-NEXT: tile.scalar_load %[[REC]][%c1_i32]
// HEAD-LABEL: func.func @per_head_block_mask(
// HEAD-SAME: flare.attention.lists_per_batch = 0 : i32, flare.attention.lists_per_head = 1 : i32
// HEAD-DAG: %[[X2:.*]] = tile.program_id x
// HEAD-DAG: %[[Y2:.*]] = tile.program_id y
// HEAD: %[[Y264:.*]] = arith.extsi %[[Y2]] : i32 to i64
// HEAD: %[[X264:.*]] = arith.extsi %[[X2]] : i32 to i64
// HEAD: arith.muli %[[Y264]], %{{.*}} : i64
// HEAD: tile.addptr
// HEAD: scf.for
// HEAD: tile.scalar_store
// HEAD: tile.scalar_store
// HEAD: tile.scalar_store
// HEAD: tile.scalar_store
// HEAD-NEXT: return

// A mask reading the batch index: one record per batch entry (grid z), shared by the heads.
// BATCH-LABEL: func.func @per_batch_block_mask(
// BATCH-SAME: flare.attention.lists_per_batch = 1 : i32, flare.attention.lists_per_head = 0 : i32
// BATCH-DAG: tile.program_id x
// BATCH-DAG: tile.program_id z
// BATCH-NOT: tile.program_id y
// BATCH: tile.reduce sum
// BATCH: tile.scalar_store

// NO-LISTS-LABEL: func.func @document(
// NO-LISTS-SAME: %{{[^:]*}}: i64) attributes
// NO-LISTS-NOT: tile.scalar_load
// NO-LISTS-NOT: _block_mask
// NO-LISTS-NOT: tile.scalar_store

// FLAREC-LABEL: func.func @document(
// FLAREC-SAME: %{{[^:]*}}: !tile.ptr<i32>) attributes
// FLAREC: tile.scalar_load
// FLAREC: tile.scalar_load
// FLAREC-LABEL: func.func @document_block_mask(
// FLAREC-SAME: %{{[^:]*}}: !tile.ptr<i32>) attributes
// FLAREC: tile.scalar_store

// LENS: {{(lens|paged|varlen)}}.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'attn.attention' op convert-attn-to-tile: block_lists are not generated with kv_lens, a paged cache or cu_seqlens (one list per block of a head's query rows assumes the same keys for every sequence)
// NO-MASK: no-mask.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'attn.attention' op convert-attn-to-tile: block_lists need a mask_mod

//--- document.mlir
func.func @document(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
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

//--- per-head.mlir
// Each head keeps the keys below its own limit (limits[h]).
func.func @per_head(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %limits: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%limits : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %lim: tensor<?xi32>):
      %n = attn.aux_load %lim[%h] : tensor<?xi32>
      %kvi = arith.index_cast %kv : index to i32
      %keep = arith.cmpi slt, %kvi, %n : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

//--- per-batch.mlir
// Document ids per batch entry: ids[b x Skv + i].
func.func @per_batch(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %nkv = attn.kv_len
      %row = arith.muli %b, %nkv : index
      %iq = arith.addi %row, %qi : index
      %ik = arith.addi %row, %kv : index
      %dq = attn.aux_load %ids[%iq] : tensor<?xi32>
      %dk = attn.aux_load %ids[%ik] : tensor<?xi32>
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

//--- lens.mlir
func.func @lens(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                %lens: tensor<?xi32>, %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

//--- paged.mlir
func.func @paged(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x64x128xbf16>, %v: tensor<?x?x64x128xbf16>,
                 %lens: tensor<?xi32>, %pages: tensor<?x?xi32>, %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>) page_table(%pages : tensor<?x?xi32>) aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x64x128xbf16>, tensor<?x?x64x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

//--- varlen.mlir
func.func @varlen(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>, %doc: tensor<?xi32>) -> tensor<1x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    } : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>
  return %o : tensor<1x?x?x128xbf16>
}

//--- no-mask.mlir
func.func @no_mask(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
