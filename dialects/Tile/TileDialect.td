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
    /// Bool attribute on a tile kernel: false keeps the lowering from letting two warpgroups take
    /// turns issuing the MMAs of a streamed loop (ping-pong; on by default).
    static constexpr ::llvm::StringLiteral kPingPongAttrName = "tile.ping_pong";
    /// Integer attribute on a tile kernel: CTAs that must fit on one SM at once (1 to 8; PTX
    /// `.minnctapersm`), which bounds the registers ptxas may give each thread.
    static constexpr ::llvm::StringLiteral kMinBlocksPerSMAttrName = "tile.min_blocks_per_sm";
    /// Bool attribute on a tile kernel with 4 or 8 warps: true adds a producer warpgroup that issues
    /// the TMA copies of the kernel's streamed loops while the kernel's own warps compute; the
    /// warpgroups' register budgets move with `setmaxnreg` (24 for the producer, the rest for the
    /// others). Implies one CTA per SM. Loops whose copies cannot be issued that way keep theirs.
    static constexpr ::llvm::StringLiteral kProducerWarpgroupAttrName = "tile.producer_warpgroup";
    /// Bool attribute on a tile kernel: true makes it persistent. The body still describes one
    /// program instance of the grid the kernel is launched with, but the runtime starts only as many
    /// CTAs as fit on the device at once and each walks program instances in turn, so that one
    /// instance's epilogue overlaps the next one's first copies (the producer warpgroup runs ahead).
    static constexpr ::llvm::StringLiteral kPersistentAttrName = "tile.persistent";
    /// Bool attribute on a persistent tile kernel: false makes each CTA take one program instance
    /// per turn (c, c + G, c + 2G, ... in x-fastest order) instead of pairs of consecutive ones, so
    /// that more CTAs share an instance's neighbours' data at once (a generated attention kernel's
    /// query blocks of one head: fewer heads' K and V in L2). Pairs are the default: they let a
    /// generator balance a pair's work (heavy and light causal query blocks).
    static constexpr ::llvm::StringLiteral kPairInstancesAttrName = "tile.pair_instances";
    /// Bool attribute on a persistent tile kernel with a producer warpgroup: true has the producer
    /// copy each program instance's operands read before its loops (an attention kernel's Q) after
    /// the first stage of the instance's first streamed loop instead of before it. That stage frees
    /// as soon as the previous instance's P V has read it, the operands' own buffer only after the
    /// previous instance's last product that reads them: issued first, the operands' wait holds back
    /// the copy that the instance's first product also needs. Off by default; a kernel lowered with
    /// the element-wise fallback of its TMA copies keeps them first (its producer's registers).
    static constexpr ::llvm::StringLiteral kOperandsAfterFirstStageAttrName = "tile.operands_after_first_stage";
    /// Bool attribute on a persistent tile kernel whose warpgroups fill their streamed loops' ring
    /// by TMA themselves (no producer warpgroup): true has thread 0 issue the next program
    /// instance's first copies into the ring's stage 0 right after this instance's loops (on that
    /// stage's barriers initialised afresh), so that they travel during the instance's last
    /// products and epilogue; every instance still numbers its ring from 0. Off by default; not
    /// honoured by a kernel lowered with the element-wise fallback of its TMA copies, by one that
    /// splits instances (tile.split_range), or where the body's loops do not all continue one ring.
    static constexpr ::llvm::StringLiteral kPrefetchNextInstanceAttrName = "tile.prefetch_next_instance";
    /// Bool attribute on a persistent wgmma tile kernel: true has its warpgroups read the A operands
    /// that a loop's dots share and that TMA copied before the loops (Q) into wgmma's register
    /// fragments once per program instance, and, where a producer warpgroup copies them, release
    /// their buffer right after that read instead of after the instance's last product reading
    /// them (the producer copies the next instance's block during this one). Off by default; not
    /// honoured with the element-wise fallback of the TMA copies or for operands deeper than 128
    /// (their registers).
    static constexpr ::llvm::StringLiteral kInvariantAInRegistersAttrName = "tile.invariant_a_in_registers";
    /// Bool attribute on a tile kernel: false keeps the warpgroup index (warp id / 4) an ordinary
    /// per-thread value. By default it is lane 0's copy, which ptxas knows to be the same in the
    /// whole warp: wgmma descriptors and per-warpgroup shared addresses derived from it then live in
    /// uniform registers instead of being moved there before every MMA.
    static constexpr ::llvm::StringLiteral kUniformWarpgroupAttrName = "tile.uniform_warpgroup";
    /// Bool attribute on a tile kernel: true lets a streamed wgmma loop whose dot multiplies an A
    /// operand that enters the loop as zeros (an overlapped attention loop's first P V) run its first
    /// iteration without that dot, peeled off before the loop; the loop's body is unchanged.
    static constexpr ::llvm::StringLiteral kPeelZeroFirstAttrName = "tile.peel_zero_first";
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

#endif // FLARE_TILE_DIALECT
