//===- TileDialect.td - The tile dialect: block-level GPU programs --------===//
#ifndef FLARE_TILE_DIALECT
#define FLARE_TILE_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::flare::tile";
  let summary = "Block-level GPU programs on tiles, at Triton's level";
  let description = [{
    A tile kernel is a `func.func` marked `tile.kernel`; one instance runs per CTA, and its values are
    tiles (statically shaped `tensor`s whose sizes are powers of two) or scalars. Global memory is
    reached through strided views (`tile.make_view`) read and written a block at a time with bounds
    handling. Elementwise math is plain `arith`/`math` on tiles; loops are `scf.for` carrying tiles.
    The compiler picks register layouts, shared memory and instructions (see the tgpu dialect).
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Unit attribute on a func.func: the function is a tile kernel (a GPU entry point).
    static constexpr ::llvm::StringLiteral kKernelAttrName = "tile.kernel";
    /// The most 32-bit registers per thread one tile of a kernel may take (its bytes spread over the
    /// CTA's threads): twice the 255 a thread has, room for tiles that live in shared memory. The
    /// verifier rejects larger tiles, which the lowering would unroll for minutes and gigabytes.
    static constexpr int64_t kMaxTileRegistersPerThread = 512;
    /// Integer attribute on a tile kernel: warps per CTA (a power of two, 1 to 16; default 4).
    static constexpr ::llvm::StringLiteral kNumWarpsAttrName = "tile.num_warps";
    static constexpr int kDefaultNumWarps = 4;
    /// The kernel's schedule (`#tile.schedule<...>`, below) on a tile kernel; absent: every field's
    /// default.
    static constexpr ::llvm::StringLiteral kScheduleAttrName = "tile.schedule";
    /// Unit attribute on an arith.mulf of a tile by a broadcast tile: the factor is exactly 1 most of
    /// the time (an online softmax's lazy alpha), so the lowering lets each thread skip the multiplies
    /// when all of its factor values are 1 (a branch; the product is then the other operand, exactly).
    static constexpr ::llvm::StringLiteral kSkipUnitFactorAttrName = "tile.skip_unit_factor";
  }];
}

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_PtrType : Tile_Type<"Ptr", "ptr"> {
  let summary = "pointer to elements in global memory";
  let description = [{
    A kernel parameter pointing at elements of `elementType` in global memory, e.g. `!tile.ptr<f32>`.
    It is only dereferenced through a view.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Tile_ViewType : Tile_Type<"View", "view"> {
  let summary = "strided view of a global tensor";
  let description = [{
    `!tile.view<f32, 2>`: a rank-2 tensor of f32 in global memory with run-time sizes and element
    strides. Blocks are loaded from and stored to it at element coordinates; elements outside the
    sizes are never touched.
  }];
  let parameters = (ins "::mlir::Type":$elementType, "unsigned":$rank);
  let assemblyFormat = "`<` $elementType `,` $rank `>`";
}

def Tile_Axis : I32EnumAttr<"Axis", "grid axis", [
    I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"y", 1>, I32EnumAttrCase<"z", 2>]> {
  let cppNamespace = "::flare::tile";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::flare::tile";
}

def Tile_ScheduleAttr : AttrDef<Tile_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "how the GPU layer runs one tile kernel";
  let description = [{
    The schedule of a tile kernel, in one value on its function (`tile.schedule`): the choices the
    GPU layer (tgpu-warp-specialize, convert-tgpu-to-nvvm) follows beyond the kernel's layouts. A
    generated attention kernel's comes from its `#attn.config`; a kernel written by hand states what
    it wants. Fields left out take their defaults, and the printer leaves out the defaults:

    ```mlir
    func.func @k(...) attributes {tile.kernel, tile.num_warps = 8 : i32,
        tile.schedule = #tile.schedule<min_blocks_per_sm = 1, producer_warpgroup = true,
                                       persistent = true>} { ... }
    ```

    - `ping_pong` (default true): two warpgroups may take turns issuing the MMAs of a streamed loop;
      false keeps them from it.
    - `min_blocks_per_sm` (default 0: ptxas decides): CTAs that must fit on one SM at once (1 to 8;
      PTX `.minnctapersm`), which bounds the registers ptxas may give each thread.
    - `producer_warpgroup`: one more warpgroup issues the TMA copies of the kernel's streamed loops
      while the kernel's own warps compute; the register budgets move with `setmaxnreg` (40 for the
      producer, the rest shared out among the others). Needs 4 or 8 warps and implies one CTA per
      SM (`min_blocks_per_sm` 0 or 1). Loops whose copies it cannot issue keep theirs; on a target
      without TMA and wgmma no producer is added.
    - `persistent`: the body still describes one program instance of the grid the kernel is
      launched with, but the runtime starts only as many CTAs as fit on the device at once and each
      walks program instances in turn, so that one instance's epilogue overlaps the next one's first
      copies.
    - `pair_instances` (default true; false needs `persistent`): each CTA takes pairs of consecutive
      program instances per turn (a generator can balance a pair's work: heavy and light causal
      query blocks); false: one instance per turn (c, c + G, c + 2G, ... in x-fastest order), so that
      more CTAs share an instance's neighbours' data at once.
    - `operands_after_first_stage` (needs `persistent` and `producer_warpgroup`): the producer copies
      each program instance's operands read before its loops (an attention kernel's Q) after the
      first stage of the instance's first streamed loop instead of before it: that stage frees as
      soon as the previous instance's last product read it, the operands' own buffer only after the
      previous instance's last product reading them. Not honoured with the element-wise fallback of
      the TMA copies.
    - `prefetch_next_instance` (needs `persistent`, not `producer_warpgroup`): thread 0 issues the
      next program instance's first copies into the ring's stage 0 right after this instance's
      loops, so that they travel during its last products and epilogue. Not honoured with the
      element-wise fallback of the TMA copies, with split instances (tile.split_range), or where the
      body's loops do not all continue one ring.
    - `invariant_a_in_registers` (needs `persistent`): the A operands that a loop's dots share and
      that TMA copied before the loops (Q) are read into wgmma's register fragments once per program
      instance, and, where a producer warpgroup copies them, their buffer is released right after
      that read. Not honoured with the element-wise fallback of the TMA copies, without wgmma, or
      for operands deeper than 128 (their registers).
    - `uniform_warpgroup` (default true): the warpgroup index (warp id / 4) is lane 0's copy, which
      ptxas knows to be the same in the whole warp, so that wgmma descriptors and per-warpgroup
      shared addresses derived from it live in uniform registers; false keeps it an ordinary
      per-thread value (registers for other uses).
    - `dynamic_instances` (needs `persistent`, `producer_warpgroup` and `pair_instances = false`):
      each CTA takes its next program instance as it starts it (its first is its own index, each later
      one the next of a counter in global memory that the CTAs share), instead of every G-th one, so
      that instances of unequal work (block lists of masks known only at run time) even out across
      the CTAs. The producer warpgroup takes the instance and hands it to the consumers through a
      two-slot ring in shared memory; the counter is a launch argument (a hidden parameter after the
      grid), set to zero again by the CTA that finishes last.
    - `peel_zero_first`: a streamed wgmma loop whose dot multiplies an A operand that enters the loop
      as zeros (an overlapped attention loop's first P V) runs its first iteration without that dot,
      peeled off before the loop; the loop's body is unchanged.
  }];
  let parameters = (ins DefaultValuedParameter<"bool", "true">:$ping_pong,
                        DefaultValuedParameter<"int64_t", "0">:$min_blocks_per_sm,
                        DefaultValuedParameter<"bool", "false">:$producer_warpgroup,
                        DefaultValuedParameter<"bool", "false">:$persistent,
                        DefaultValuedParameter<"bool", "true">:$pair_instances,
                        DefaultValuedParameter<"bool", "false">:$operands_after_first_stage,
                        DefaultValuedParameter<"bool", "false">:$prefetch_next_instance,
                        DefaultValuedParameter<"bool", "false">:$invariant_a_in_registers,
                        DefaultValuedParameter<"bool", "true">:$uniform_warpgroup,
                        DefaultValuedParameter<"bool", "false">:$peel_zero_first,
                        DefaultValuedParameter<"bool", "false">:$dynamic_instances);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [AttrBuilder<(ins), [{
    return $_get($_ctxt, true, 0, false, false, true, false, false, false, true, false, false);
  }]>];
}

#endif // FLARE_TILE_DIALECT
