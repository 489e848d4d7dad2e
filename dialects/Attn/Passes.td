//===- Passes.td - Passes of the attention dialect ------------------------===//
#ifndef FLARE_ATTN_PASSES
#define FLARE_ATTN_PASSES

include "mlir/Pass/PassBase.td"

def AttnClassifyMask : Pass<"attn-classify-mask", "::mlir::ModuleOp"> {
  let summary = "derive from mask_mod which KV blocks of a Q block are empty, full or partial";
  let description = [{
    Analyses the `mask_mod` region of every `attn.attention` op (lib/Dialect/Attn/Transforms/
    MaskAnalysis.h) and records the recognised mask family in the op's `mask_class` attribute:
    `none` (no mask_mod), `causal` (kv <= qi), `causal_bottom_right` (kv <= qi + kv_len - q_len),
    `sliding_window` (a conjunction of an upper and a lower kv bound that move with qi),
    `prefix_lm` (kv < P or a causal bound), `linear` (other conjunctions/disjunctions of linear
    index comparisons), `generic` (anything else: evaluated per element, no block skipping).
    convert-attn-to-tile runs the same analysis to skip empty blocks and drop the mask code of
    full blocks; the attribute makes the result visible and testable.
  }];
}

def AttnChooseConfig : Pass<"attn-choose-config", "::mlir::ModuleOp"> {
  let summary = "attach the generated kernel's configuration (#attn.config) to each attn.attention";
  let description = [{
    The one place a generated attention kernel's configuration is chosen
    (flare::attn::chooseAttentionConfig: target, head dim, element type, mask class, aux reads),
    made to fit the target's shared memory by an estimate of what it needs (fewer keys per step,
    then 64 query rows on four warps, then fewer keys), then overridden by this pass's options (for tuning and
    measurement; not fitted: a given configuration that cannot fit is the allocator's error), then
    normalised: switches that cannot apply are turned off, so that one kernel has one
    configuration. The result is the op's `config` attribute (with the `mask_class` it was chosen
    for); an op that already carries one keeps it.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "target architecture whose configuration is chosen">,
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", /*default=*/"0",
           "the shared memory a CTA may use that the configured choice must fit (0: the target's; "
           "smaller values show the fit step's fallbacks, choose-config-fit.mlir)">,
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "the configuration (#attn.config<...>) of every op without one, instead of the configured "
           "choice; the other options must then be left at their defaults">,
    Option<"blockM", "block-m", "int", /*default=*/"0", "query rows per program (0: configured)">,
    Option<"blockN", "block-n", "int", /*default=*/"0", "key rows per loop step (0: configured)">,
    Option<"numWarps", "num-warps", "int", /*default=*/"0", "warps per program (0: configured)">,
    Option<"overlap", "overlap", "int", /*default=*/"-1",
           "software-pipeline the KV loop so that the softmax of one block overlaps the P V product "
           "of the previous one (1: on, 0: off, -1: configured; on for sm_90a)">,
    Option<"pingPong", "ping-pong", "int", /*default=*/"-1",
           "let the two warpgroups take turns issuing their MMAs (1: on, 0: off, -1: configured); "
           "recorded in the kernel's #tile.schedule (ping_pong)">,
    Option<"lazyRescale", "lazy-rescale", "int", /*default=*/"-1",
           "lazy online softmax (the row max moves only by more than 8, log2 units) with the "
           "accumulator's rescale skipped per thread when alpha is 1 (1: on, 0: off, -1: configured; "
           "on for sm_90a at head dim 256)">,
    Option<"deferRescale", "defer-rescale", "int", /*default=*/"-1",
           "with overlap: apply a block's accumulator rescale at the next step, between its S = Q K^T "
           "and P V products, instead of right after its softmax (1: on, 0: off, -1: configured: "
           "off, since ptxas then serializes the loop's wgmma)">,
    Option<"producer", "producer", "int", /*default=*/"-1",
           "a producer warpgroup issues the K/V copies while the tile's warpgroups compute, recorded "
           "in the kernel's #tile.schedule (producer_warpgroup; 1: on, 0: off, -1: configured)">,
    Option<"lastPvAfterLoops", "last-pv-after-loops", "int", /*default=*/"-1",
           "with overlap: the last block's P V after the loops, its V block loaded before them, "
           "instead of one more step (1: on, 0: off, -1: configured: with the producer warpgroup)">,
    Option<"persistent", "persistent", "int", /*default=*/"-1",
           "a persistent kernel whose CTAs run query blocks in turn, recorded as "
           "its #tile.schedule's persistent (1: on, 0: off, -1: configured)">,
    Option<"splitTail", "split-tail", "int", /*default=*/"-1",
           "in a persistent kernel without a mask: let the schedule split the last program "
           "instances' KV steps between CTAs (tile.split_range; 1: on, 0: off, -1: configured)">,
    Option<"splitKv", "split-kv", "int", /*default=*/"-1",
           "split the keys among program instances (grid z = batch x splits, the splits a launch "
           "argument), each writing a partial output and LSE that `<name>_combine` merges "
           "(flash-decoding; 1: on, which turns the persistent schedule off, 0: off, -1: configured: off)">,
    Option<"packGqa", "pack-gqa", "int", /*default=*/"-1",
           "pack the query heads that share a key/value head into the rows of one program instance "
           "(grid y over key/value heads; the rows of a group at one stride in q and o; 1: on, 0: "
           "off, -1: configured: off)">,
    Option<"blockLists", "block-lists", "int", /*default=*/"-1",
           "for a mask of class generic: visit the key blocks that lists in device memory name, "
           "written by the generated kernel `<name>_block_mask` (1: on, 0: off, -1: configured: off)">,
    Option<"pairInstances", "pair-instances", "int", /*default=*/"-1",
           "in a persistent kernel: its CTAs take pairs of consecutive query blocks per turn (1 or "
           "-1: the configured choice) or one (0; honoured without a mask only, recorded on the "
           "kernel's #tile.schedule as pair_instances = false)">,
    Option<"dynamicInstances", "dynamic-instances", "int", /*default=*/"-1",
           "in a persistent kernel with a producer warpgroup: its CTAs take their query blocks one per "
           "turn from a counter they share instead of every G-th one (the schedule's dynamic_instances; "
           "1: on, 0 or -1: off)">,
    Option<"operandsAfterFirstStage", "operands-after-first-stage", "int", /*default=*/"-1",
           "in a persistent kernel with a producer warpgroup: copy each query block's Q after its "
           "first K/V stage instead of before it (the schedule's operands_after_first_stage; 1: on, 0: off, "
           "-1: configured: on unless the kernel runs pairs of query blocks without a mask)">,
    Option<"prefetchNextInstance", "prefetch-next-instance", "int", /*default=*/"-1",
           "in a persistent kernel without a producer warpgroup: issue the next query block's first "
           "K/V copy after this block's loops (the schedule's prefetch_next_instance; 1: on, 0: off, -1: "
           "configured: on where the CTAs take one query block per turn)">,
    Option<"invariantAInRegisters", "invariant-a-in-registers", "int", /*default=*/"-1",
           "in a persistent kernel: read each query block's Q into register fragments once before "
           "its loops and release its buffer then (the schedule's invariant_a_in_registers; 1: on, 0: off, "
           "-1: configured: on where a producer warpgroup copies one query block per turn)">,
    Option<"peelFirstStep", "peel-first-step", "int", /*default=*/"-1",
           "with overlap: run the first step without its P V of zeros, peeled off the first loop "
           "(the schedule's peel_zero_first; 1: on, 0: off, -1: configured: on at head dim 64)">,
    Option<"partialRowSums", "partial-row-sums", "int", /*default=*/"-1",
           "keep the softmax normalizer as this many partial sums per row (a power of two from 2; "
           "0: one sum per row, completed across lanes every step; -1: configured: 4)">
  ];
}

def AttnOverlap : Pass<"attn-overlap", "::mlir::ModuleOp"> {
  let summary = "the P V product one step behind the softmax (overlap and last_pv_after_loops of #attn.config)";
  let description = [{
    A tile-level variant of the canonical FlashAttention loop that convert-attn-to-tile emits, where
    step j loads the K block at key offset `kv0` (the block index times block_n in a loop over block
    indices, step 1; or the induction variable itself in a loop over keys, step block_n), computes
    `S = Q K^T`, the online softmax, and yields `acc' = P V + acc * alpha` (alpha broadcast along
    the rows) on the V block of the same rows. In each kernel whose `flare.attention_config` has
    `overlap`, the loop is software-pipelined by one stage: step j issues block j - 1's P V right
    behind its own S product (the tensor cores run it while the softmax of block j does), then the
    softmax, then yields `acc' * alpha_j` and its P, which the loop now carries (zeros before the
    first step). The previous block's V rows are the step's own computed from its key offset one
    iteration earlier; the first iteration's is the block the loop before in the same chain (a
    loop that starts from another's state) visited last, or far away (rows that read zeros) for
    the first loop. The last block's P V is either one more step of the last loop, whose K block
    lies far away and whose softmax keeps m and l and does not rescale, or, with
    `last_pv_after_loops`, one product after the loops on the last visited block's V, loaded before
    them (the lowering copies it into shared memory while the loops run). Every bound and key
    offset the later loops use must be known before the first; a loop with a softmax that is not a
    canonical step is an error in a configured kernel. Runs before attn-defer-rescale,
    attn-lazy-rescale and attn-partial-row-sums, which take its loops as input.
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "every function's canonical loops, whatever its configuration (for tile programs written by "
           "hand)">,
    Option<"pvAfterLoops", "pv-after-loops", "bool", /*default=*/"false",
           "with all, in functions not configured to overlap: the last P V after the loops instead of "
           "one more step">,
  ];
  let dependentDialects = ["::flare::tile::TileDialect", "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def AttnDeferRescale : Pass<"attn-defer-rescale", "::mlir::ModuleOp"> {
  let summary = "the accumulator's rescale one step later (defer_rescale of #attn.config)";
  let description = [{
    A tile-level variant of the overlapped loop attn-overlap makes, where step j computes
    `acc' = P_{j-1} V_{j-1} + acc` (a `tile.dot` on the accumulator the loop carries), then the
    softmax of block j, then yields `acc' * alpha_j` (alpha broadcast along the rows). In each kernel
    whose `flare.attention_config` has `defer_rescale`, that rescale moves into step j + 1, right
    before its P V product: the loop carries alpha_j (1 before the first step, or the previous loop's
    last factor where a loop continues another's accumulator), and where the accumulator leaves the
    loops (the last P V after them, the epilogue) the last carried factor is applied once, before
    the first op that reads it. (ptxas serializes the loop's wgmma then: off in every configured
    choice, test/Pipeline/wgmma-not-serialized.test.) Runs before attn-lazy-rescale, which follows
    the carried factor.
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "every function's overlapped loops, whatever its configuration (for tile programs written by "
           "hand)">,
  ];
  let dependentDialects = ["::flare::tile::TileDialect", "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def AttnLazyRescale : Pass<"attn-lazy-rescale", "::mlir::ModuleOp"> {
  let summary = "the lazy rescale of a generated kernel whose #attn.config asks for it (lazy_rescale)";
  let description = [{
    A tile-level variant of the canonical FlashAttention loop that convert-attn-to-tile emits. In
    each kernel whose `flare.attention_config` has `lazy_rescale`, every `tile.online_softmax`
    becomes `lazy` (a row keeps its reference max while a block raises it by at most 8, log2 units,
    so alpha is exactly 1 on almost every step), and every `arith.mulf` of a tile by a row-broadcast
    of an alpha gets `tile.skip_unit_factor` (each thread skips the multiplies by exactly 1). An
    alpha is followed through `arith.select`s and the loops that carry it (the deferred rescale
    applies it one step later, or after the loops). Both changes keep the result up to rounding, so
    the pass may also run on hand-written tile programs (`all`).
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "every function's online softmax steps, whatever its configuration (for tile programs written "
           "by hand)">,
  ];
}

def AttnPartialRowSums : Pass<"attn-partial-row-sums", "::mlir::ModuleOp"> {
  let summary = "the softmax normalizer as partial sums per row (partial_row_sums of #attn.config)";
  let description = [{
    A tile-level variant of the canonical FlashAttention loop that convert-attn-to-tile emits. In
    each kernel whose `flare.attention_config` has `partial_row_sums = G` (G > 0), the normalizer
    `l` of every `tile.online_softmax` becomes G partial sums per row (`tensor<MxGxf32>`, the op's
    partial form): its zero initial value, the loops that carry it and the `arith.select`s it passes
    through are retyped, and where the whole sum is read (the epilogue, a split instance's hand-over)
    one `tile.reduce sum` over the partials is taken, once, right before the first such use. With
    G = 4 a step adds within each thread of the MMA layouts, without cross-lane shuffles. A normalizer
    that does not start at zero, or that reaches an op other than these, is an error at that op.
  }];
  let options = [
    Option<"groups", "groups", "int", /*default=*/"-1",
           "partial sums per row in every function, whatever its configuration (a power of two; for tile "
           "programs written by hand); -1: each kernel's configuration">,
  ];
  let dependentDialects = ["::flare::tile::TileDialect", "::mlir::arith::ArithDialect"];
}

def ConvertAttnToTile : Pass<"convert-attn-to-tile", "::mlir::ModuleOp"> {
  let summary = "generate a FlashAttention tile kernel from each function holding attn.attention";
  let description = [{
    A function whose body is one `attn.attention` on its arguments, returning the op's results,
    becomes a tile kernel of the same name: a grid of (ceil(Sq / BLOCK_M), Hq, B) program
    instances, each keeping a BLOCK_M x D block of Q on chip while BLOCK_N rows of K and V stream
    by under an online softmax. The KV loop is split per Q block into blocks that the mask leaves
    full (no mask code) and blocks it cuts (mask_mod and the Skv bound evaluated per element);
    blocks the mask empties are never visited. Kernel ABI: see the attn dialect's Rationale.md.
    Follows the op's `config` (#attn.config), which attn-choose-config attaches; an op without
    one is an error.

    With `grad`, generates the op's backward pass instead (dQ, dK, dV by recomputation from the
    saved LSE, score_mod's derivative derived from its region): three kernels `<name>_bwd_preprocess`,
    `<name>_bwd` and `<name>_bwd_dq` with one ABI (the attn dialect's Rationale.md, "The backward
    kernels"). The backward kernels choose their own tiles by head dim and `arch`. With
    `deterministic`, and by default on targets with wgmma (backwardSumsDqByAtomics), `<name>_bwd_dq`
    computes dQ itself (S and dP recomputed per query block, dS K summed in registers in key order)
    and the main kernel adds no dQ atomics; `dq-atomics` forces the atomic sums.
  }];
  let options = [
    Option<"grad", "grad", "bool", /*default=*/"false",
           "generate the backward kernels (dQ, dK, dV) instead of the forward kernel">,
    Option<"gradTiles", "grad-tiles", "std::string", /*default=*/"\"\"",
           "the backward's tiles as BLOCK_M,BLOCK_N,WARPS[,TRANSPOSED[,DQ_CHUNK[,SPLIT]]] (query rows per "
           "step, keys per program instance, warps; 1: the step computes S^T = K Q^T; dQ's columns per dot, "
           "0: all; 1: dK and dV in a kernel each); empty: chosen by head dim and arch">,
    Option<"deterministic", "deterministic", "bool", /*default=*/"false",
           "with grad: two runs give identical bits (dQ by a kernel of its own, one block of query rows "
           "per program instance summing over the key blocks in order; the default on sm_90a)">,
    Option<"dqAtomics", "dq-atomics", "bool", /*default=*/"false",
           "with grad: the main kernel sums dQ by f32 atomics (not deterministic; the default without "
           "wgmma, slower on the H200), for measurement">,
    Option<"gradDqTiles", "grad-dq-tiles", "std::string", /*default=*/"\"\"",
           "the dQ kernel's tiles as BLOCK_M,BLOCK_N,WARPS[,PRODUCER[,PING_PONG]] (query rows per program "
           "instance, keys per step, warps; 1: a producer warpgroup issues the K/V copies; 1: the two "
           "warpgroups take turns issuing their MMAs) where dQ has a kernel of its own; empty: chosen by "
           "head dim and arch">,
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "target architecture whose backward tiles are chosen (the forward follows the op's config)">,
    Option<"gradBlockLists", "grad-block-lists", "bool", /*default=*/"false",
           "with grad and a mask of class generic: the kernels visit the blocks that block lists name, "
           "which `<name>_bwd_block_mask` writes (two more arguments, last)">,
  ];
  let dependentDialects = ["::flare::tile::TileDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // FLARE_ATTN_PASSES
