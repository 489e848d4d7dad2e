//===- AttnAttrs.td - Attributes of the attention dialect -----------------===//
//
// The mask family that attn-classify-mask derives, and the one typed configuration of a generated
// attention kernel that attn-choose-config picks and convert-attn-to-tile follows.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_ATTN_ATTRS
#define FLARE_ATTN_ATTRS

include "AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_MaskClass : I32EnumAttr<"MaskClass", "the mask family attn-classify-mask recognises", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Causal", 1, "causal">,
    I32EnumAttrCase<"CausalBottomRight", 2, "causal_bottom_right">,
    I32EnumAttrCase<"SlidingWindow", 3, "sliding_window">,
    I32EnumAttrCase<"PrefixLM", 4, "prefix_lm">,
    I32EnumAttrCase<"Linear", 5, "linear">,
    I32EnumAttrCase<"Generic", 6, "generic">]> {
  let cppNamespace = "::flare::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskClassAttr : EnumAttr<Attn_Dialect, Attn_MaskClass, "mask_class"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_ConfigSwitch : I32BitEnumAttr<"ConfigSwitch", "the on/off choices of a generated attention kernel", [
    I32BitEnumAttrCaseNone<"none">,
    I32BitEnumAttrCaseBit<"Overlap", 0, "overlap">,
    I32BitEnumAttrCaseBit<"PingPong", 1, "ping_pong">,
    I32BitEnumAttrCaseBit<"LazyRescale", 2, "lazy_rescale">,
    I32BitEnumAttrCaseBit<"DeferRescale", 3, "defer_rescale">,
    I32BitEnumAttrCaseBit<"Producer", 4, "producer">,
    I32BitEnumAttrCaseBit<"LastPvAfterLoops", 5, "last_pv_after_loops">,
    I32BitEnumAttrCaseBit<"Persistent", 6, "persistent">,
    I32BitEnumAttrCaseBit<"PeelFirstStep", 7, "peel_first_step">,
    I32BitEnumAttrCaseBit<"SplitTail", 8, "split_tail">,
    I32BitEnumAttrCaseBit<"PairInstances", 9, "pair_instances">,
    I32BitEnumAttrCaseBit<"OperandsAfterFirstStage", 10, "operands_after_first_stage">,
    I32BitEnumAttrCaseBit<"PrefetchNextInstance", 11, "prefetch_next_instance">,
    I32BitEnumAttrCaseBit<"InvariantAInRegisters", 12, "invariant_a_in_registers">,
    I32BitEnumAttrCaseBit<"RowsGrow", 13, "rows_grow">,
    I32BitEnumAttrCaseBit<"UniformWarpgroup", 14, "uniform_warpgroup">,
    I32BitEnumAttrCaseBit<"SplitKv", 15, "split_kv">,
    I32BitEnumAttrCaseBit<"PackGqa", 16, "pack_gqa">,
    I32BitEnumAttrCaseBit<"BlockLists", 17, "block_lists">,
    I32BitEnumAttrCaseBit<"DynamicInstances", 18, "dynamic_instances">]> {
  let cppNamespace = "::flare::attn";
  let genSpecializedAttr = 0;
}

def Attn_ConfigAttr : AttrDef<Attn_Dialect, "Config"> {
  let mnemonic = "config";
  let summary = "the configuration of one generated attention kernel";
  let description = [{
    Everything convert-attn-to-tile and the GPU layer decide about a generated attention kernel,
    in one value: tile sizes, warps, and the switches of the schedule. `attn-choose-config` picks it
    once per op from (target, head dim, element type, mask class, aux reads, launch-shape class) and
    attaches it as the op's `config`; a config already on the op (written by hand, or given to
    `flarec --attention-config`) is kept. The runtime decides the same value before compiling and
    keys its kernel cache on it, so that `flarec` reproduces what the JIT launches.

    ```mlir
    #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0,
                 partial_row_sums = 0, overlap, ping_pong, producer, persistent, ...>
    ```
    The integers come first (omitted ones take the values shown by the default configuration),
    then the switches that are on; a switch not named is off. Switches:
    - `overlap`: the KV loop software-pipelined, the softmax of block j under P V of block j - 1.
    - `ping_pong`: the two warpgroups issue their MMAs in turn.
    - `lazy_rescale`: the row max moves only by more than 8 (log2 units); a per-thread branch
      skips the accumulator's rescale by 1.
    - `defer_rescale` (needs `overlap`): block j's rescale applied at step j + 1.
    - `producer`: a producer warpgroup issues the K/V copies (TMA).
    - `last_pv_after_loops` (needs `overlap`): the last P V after the loops.
    - `persistent`: one CTA per SM runs query blocks in turn.
    - `peel_first_step` (needs `overlap`): the first step's P V of zeros peeled off.
    - `split_tail` (needs `persistent`): stream-K split of the last instances' KV steps.
    - `pair_instances`: a persistent kernel's CTAs take pairs of query blocks per turn.
    - `operands_after_first_stage` (needs `persistent` and `producer`): Q copied after the first
      K/V stage.
    - `prefetch_next_instance` (needs `persistent`, not `producer`): the next query block's first
      K/V copy issued after this block's loops.
    - `invariant_a_in_registers` (needs `persistent` and `overlap`): Q read into registers once
      per query block.
    - `rows_grow`: later query rows keep more keys; the longest programs start first.
    - `uniform_warpgroup`: the warpgroup index as a warp-uniform value.
    - `split_kv` (needs `persistent` off): the keys split among the program instances of grid z
      (batch x splits, the splits a launch argument); each instance writes its part's normalised
      output and LSE (f32) into a workspace, and the kernel `<name>_combine` merges the parts into
      the output and LSE (flash-decoding).
    - `pack_gqa`: the query heads that share a key/value head are the rows of one program instance
      (grid y over key/value heads, rows (head in group, query) with the query fastest), so each
      K/V block is read once per group. The rows of a group must lie at one stride in q and o: one
      query per head, or a head stride of Sq rows (flare::attention checks; the kernel reads the
      head stride when Sq is 1, else the row stride).
    - `block_lists` (a mask with a part attn-classify-mask cannot read, mask class `generic`; not
      with `split_kv`, `pack_gqa`, `split_tail`, kv_lens, a paged cache or cu_seqlens): the kernel
      visits the key blocks that lists in device memory name, per (batch, head, block of query
      rows): the blocks kept in part (mask code per element) and those kept entirely (no mask
      code); a block in neither is never visited. The kernel `<name>_block_mask`, generated from
      the same `mask_mod`, writes the lists (dialects/Attn/Rationale.md, "Block lists").
    - `dynamic_instances` (needs `persistent` and `producer`, not `pair_instances` or
      `split_tail`): each CTA takes its next query block as it starts it, from a counter the CTAs
      share, instead of every G-th one (#tile.schedule's `dynamic_instances`): query blocks of
      unequal work (block lists) even out across the CTAs.
  }];
  let parameters = (ins "int64_t":$blockM, "int64_t":$blockN, "int64_t":$numWarps,
                        "int64_t":$minBlocksPerSM, "int64_t":$partialRowSums,
                        "::flare::attn::ConfigSwitch":$switches);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether every switch of `s` is on.
    bool has(::flare::attn::ConfigSwitch s) const;
    /// The configuration's text (`#attn.config<...>`), the form flarec prints and accepts.
    std::string text() const;
  }];
}

#endif // FLARE_ATTN_ATTRS
