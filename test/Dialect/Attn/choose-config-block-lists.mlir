// attn-choose-config's block-lists option: block lists (the key blocks each block of query rows
// visits, read from lists that the generated `<name>_block_mask` kernel writes) are for masks the
// compiler cannot classify itself, mask class generic. Requested there, the switch is kept and turns
// split_kv and pack_gqa off beside it (one list per block of a head's query rows: not split among
// instances, not packed across heads); requested for a mask attn-classify-mask reads whole (causal),
// it is dropped, as it is where nobody asks for it (the configured choice: off).
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" | FileCheck %s --check-prefix=LISTS
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1 split-kv=1" | FileCheck %s --check-prefix=NO-SPLIT
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1 pack-gqa=1" | FileCheck %s --check-prefix=NO-PACK
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s --check-prefix=DEFAULT
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=0" | FileCheck %s --check-prefix=DEFAULT
// The examples: the block table of block_sparse.mlir is generic too; causal.mlir is not.
// RUN: flare-opt %flare_src/examples/attention/block_sparse.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" | FileCheck %s --check-prefix=SPARSE
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" | FileCheck %s --check-prefix=CAUSAL
// A configuration given by hand is verified: block_lists cannot go with split_kv, pack_gqa or
// split_tail (test/Dialect/Attn/config.mlir has the same errors on the op itself).
// RUN: not flare-opt %flare_src/examples/attention/document.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<overlap,pair_instances,split_kv,block_lists>" 2>&1 | FileCheck %s --check-prefix=WITH-SPLIT
// RUN: not flare-opt %flare_src/examples/attention/document.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<overlap,pair_instances,pack_gqa,block_lists>" 2>&1 | FileCheck %s --check-prefix=WITH-PACK

// Document ids from an aux tensor: mask class generic, block_lists on (last in the switch order).
// LISTS-LABEL: func.func @document
// LISTS: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, producer, last_pv_after_loops, persistent, pair_instances, operands_after_first_stage, uniform_warpgroup, block_lists>
// LISTS-SAME: mask_class = #attn.mask_class<generic>
// The same next to split-kv=1 and pack-gqa=1: the lists win, neither of the others is on.
// NO-SPLIT-LABEL: func.func @document
// NO-SPLIT: config = #attn.config<
// NO-SPLIT-NOT: split_kv
// NO-SPLIT-SAME: block_lists>
// NO-SPLIT-SAME: mask_class = #attn.mask_class<generic>
// NO-PACK-LABEL: func.func @document
// NO-PACK: config = #attn.config<
// NO-PACK-NOT: pack_gqa
// NO-PACK-SAME: block_lists>
// Without the option (or with block-lists=0) a generic mask keeps the configured choice: no lists.
// DEFAULT-LABEL: func.func @document
// DEFAULT: config = #attn.config<block_m = 128, block_n = 32, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, pair_instances, uniform_warpgroup>
// DEFAULT-SAME: mask_class = #attn.mask_class<generic>
func.func @document(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %keep = arith.cmpi eq, %dq, %dk : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A causal mask is linear (mask class causal): its blocks are classified at compile time, and
// block-lists=1 leaves the configured choice as it is.
// LISTS-LABEL: func.func @causal
// LISTS: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, producer, last_pv_after_loops, persistent, pair_instances, operands_after_first_stage, rows_grow, uniform_warpgroup>
// LISTS-SAME: mask_class = #attn.mask_class<causal>
// LISTS-NOT: block_lists
// DEFAULT-LABEL: func.func @causal
// DEFAULT-NOT: block_lists
func.func @causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// No mask at all: nothing to list.
// LISTS-LABEL: func.func @plain
// LISTS: config = #attn.config<
// LISTS-NOT: block_lists
func.func @plain(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// SPARSE: config = #attn.config<block_m = 128, block_n = 128, {{.*}}, producer, {{.*}}, block_lists>
// SPARSE-SAME: mask_class = #attn.mask_class<generic>
// CAUSAL: config = #attn.config<
// CAUSAL-NOT: block_lists
// CAUSAL-SAME: mask_class = #attn.mask_class<causal>

// WITH-SPLIT: document.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'attn.attention' op attn-choose-config: config '#attn.config<overlap,pair_instances,split_kv,block_lists>' is not an #attn.config: block_lists needs split_kv off
// WITH-PACK: document.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'attn.attention' op attn-choose-config: config '#attn.config<overlap,pair_instances,pack_gqa,block_lists>' is not an #attn.config: block_lists needs pack_gqa off
