//===- TGPUDialect.td - The tgpu dialect: tiles mapped onto a GPU ---------===//
#ifndef FLARE_TGPU_DIALECT
#define FLARE_TGPU_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/EnumAttr.td"

def TGPU_Dialect : Dialect {
  let name = "tgpu";
  let cppNamespace = "::flare::tgpu";
  let summary = "Tiles mapped onto threads, registers and shared memory of an NVIDIA GPU";
  let description = [{
    The layer between tile programs and NVVM: every tile gets a register layout (`#tgpu.linear`, a
    linear map from register, lane and warp bits to tile coordinates), conversions between layouts are
    explicit (`tgpu.convert_layout`), and later shared-memory rings, barriers, TMA and tensor-core ops
    live here.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Discardable attribute of a `tile.dot`: the tensor-core instruction it runs on
    /// (`#tgpu.mma<...>`), chosen by tgpu-accelerate-dot and followed by convert-tgpu-to-nvvm.
    static constexpr ::llvm::StringLiteral kMmaAttrName = "tgpu.mma";
    /// Discardable unit attribute of a wgmma `tile.dot` whose A operand is resident in shared memory
    /// across its loop: its descriptors are made at the dot on every iteration rather than hoisted
    /// out of the loop (tgpu-accelerate-dot; Rationale.md).
    static constexpr ::llvm::StringLiteral kDescriptorsAtDotAttrName = "tgpu.descriptors_at_dot";
    /// Discardable attribute of an `scf.for` of a tile kernel: how its dot operands reach shared
    /// memory (`#tgpu.pipeline<...>`), chosen by tgpu-pipeline-loops and expanded by
    /// convert-tgpu-to-nvvm.
    static constexpr ::llvm::StringLiteral kPipelineAttrName = "tgpu.pipeline";
    /// Discardable unit attribute of a `tile.load` in a loop marked `#tgpu.pipeline<streamed>`: its
    /// blocks are copied into the loop's ring of shared-memory stages (tgpu-pipeline-loops).
    static constexpr ::llvm::StringLiteral kStreamedAttrName = "tgpu.streamed";
    /// Discardable unit attribute of an `scf.for` marked `#tgpu.pipeline<streamed>`: a producer
    /// warpgroup, where the kernel has one, issues the loop's copies (tgpu-warp-specialize).
    static constexpr ::llvm::StringLiteral kProducerIssuedAttrName = "tgpu.producer_issued";
    /// Discardable attribute of a tile kernel that asks for a producer warpgroup: the register
    /// budgets of its warps' two roles (`#tgpu.warp_roles<...>`), chosen by tgpu-warp-specialize
    /// (a hand-written one is kept) and followed by convert-tgpu-to-nvvm.
    static constexpr ::llvm::StringLiteral kWarpRolesAttrName = "tgpu.warp_roles";
  }];
}

class TGPU_Type<string name, string typeMnemonic> : TypeDef<TGPU_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def TGPU_MBarrierType : TGPU_Type<"MBarrier", "mbarrier"> {
  let summary = "an mbarrier in shared memory";
  let description = [{
    `!tgpu.mbarrier`: the 8-byte barrier object of the machine protocol (dialects/TGPU/Rationale.md,
    "The machine protocol as ops"), made by `tgpu.ring_barrier` and read by the ops that initialise
    it, arrive on it, announce bytes to it, wait for its phases or complete them (TMA, cp.async).
    convert-tgpu-machine-to-nvvm turns it into its shared-memory address (`!llvm.ptr<3>`).
  }];
}

def TGPU_RingType : TGPU_Type<"Ring", "ring"> {
  let summary = "a ring of shared-memory stages and their mbarriers";
  let description = [{
    `!tgpu.ring<3>`: a ring of 3 shared-memory stages that copies fill in turn (ring index i, the
    i-th fill, uses stage i % 3), with a `full` and an `empty` mbarrier per stage: 8 bytes each,
    every stage's `full` barrier first, then every `empty` one. `tgpu.ring` places one at a byte
    offset of the kernel's shared memory; `tgpu.ring_barrier` names a stage's barriers.
  }];
  let parameters = (ins "int64_t":$stages);
  let assemblyFormat = "`<` $stages `>`";
  let genVerifyDecl = 1;
}

def TGPU_TensorMapType : TGPU_Type<"TensorMap", "tensormap"> {
  let summary = "a TMA tensor map";
  let description = [{
    `!tgpu.tensormap`: the 128-byte description of a global tensor that TMA copies boxes of (its
    base, sizes, strides, box and swizzle; encoded by the host, passed as a grid-constant kernel
    parameter), made by `tgpu.tensor_map` from that parameter and read by `tgpu.tma_load`,
    `tgpu.tma_store` and `tgpu.tma_reduce_add`. convert-tgpu-machine-to-nvvm turns it into the
    parameter's address (`!llvm.ptr`).
  }];
}

def TGPU_TileScheduleType : TGPU_Type<"TileSchedule", "tile_schedule"> {
  let summary = "which program instances a persistent CTA runs, turn by turn";
  let description = [{
    `!tgpu.tile_schedule` (chunks of one or two instances) or `!tgpu.tile_schedule<split>` (stream-K:
    whole instances, then pieces of their steps): the per-CTA values of a persistent kernel's
    schedule, made by `tgpu.tile_schedule` (and `tgpu.tile_split`) and read by `tgpu.tile_instance`,
    which tells what one turn runs. convert-tgpu-machine-to-nvvm expands both into the schedule's arithmetic.
  }];
  let parameters = (ins "bool":$split);
  let hasCustomAssemblyFormat = 1;
}

def TGPU_MmaEngine : I32EnumAttr<"MmaEngine", "the tensor-core instruction a tile.dot runs on", [
    I32EnumAttrCase<"MmaSync", 0, "mma_sync">,
    I32EnumAttrCase<"Wgmma", 1, "wgmma">]> {
  let cppNamespace = "::flare::tgpu";
  let genSpecializedAttr = 0;
}

def TGPU_MmaEngineAttr : EnumAttr<TGPU_Dialect, TGPU_MmaEngine, "mma"> {
  let summary = "the tensor-core instruction of a tile.dot";
  let description = [{
    `tile.dot ... {tgpu.mma = #tgpu.mma<wgmma>}`: the dot runs as warpgroup MMAs (m64nNk16, sm_90a)
    on operands in shared memory (A possibly in registers); `#tgpu.mma<mma_sync>`: as warp-level
    mma.sync.m16n8k16 on register fragments (sm_80 and later). tgpu-accelerate-dot chooses it for every
    dot without one; a hand-written choice is kept when it fits.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def TGPU_PipelineKind : I32EnumAttr<"PipelineKind", "how a loop's dot operands reach shared memory", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"DotLoop", 1, "dot_loop">,
    I32EnumAttrCase<"Streamed", 2, "streamed">]> {
  let cppNamespace = "::flare::tgpu";
  let genSpecializedAttr = 0;
}

def TGPU_PipelineKindAttr : EnumAttr<TGPU_Dialect, TGPU_PipelineKind, "pipeline"> {
  let summary = "the software pipeline of an scf.for around wgmma dots";
  let description = [{
    `scf.for ... {tgpu.pipeline = #tgpu.pipeline<streamed>}`: the loads of the body marked
    `tgpu.streamed` are copied into a ring of shared-memory stages (TMA or cp.async, a stage or more
    ahead of the iteration that reads it, `full`/`empty` mbarriers per stage) and the dots read their
    operands there. `#tgpu.pipeline<dot_loop>`: the loop is the K loop of one dot,
    `acc = dot(load(iv), load(iv), acc)`, whose two operands are copied into a ring of their own.
    `#tgpu.pipeline<none>`: the loop runs as written (each dot stores its operands). tgpu-pipeline-loops
    chooses it for every loop without one and checks a hand-written one.
  }];
  let assemblyFormat = "`<` $value `>`";
}

def TGPU_WarpRolesAttr : AttrDef<TGPU_Dialect, "WarpRoles"> {
  let mnemonic = "warp_roles";
  let summary = "the register budgets of a warp-specialized kernel's consumers and producer warpgroup";
  let description = [{
    `func.func @k(...) attributes {tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 232,
    producer_registers = 40>, ...}`: where convert-tgpu-to-nvvm builds a producer warpgroup for the
    kernel (its streamed loops' TMA copies, `tgpu.producer_issued`), that warpgroup gives its
    registers back down to `producer_registers` per thread (setmaxnreg.dec) and the kernel's own
    warps, the consumers, raise theirs to `consumer_registers` (setmaxnreg.inc): the
    `tgpu.warp_specialize` op it emits carries these budgets. Each is a multiple of 8 from 24 to 256,
    and all of the CTA's warps together (the kernel's `tile.num_warps` consumers and 4 producer warps)
    fit the 64,512 registers an SM gives one CTA. tgpu-warp-specialize chooses them for every kernel
    that asks for a producer warpgroup and has none: 40 for the producer (which only issues copies;
    24 spills its element-wise fallback) and the rest shared out among the consumers, at most 256.
  }];
  let parameters = (ins "int64_t":$consumer_registers, "int64_t":$producer_registers);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TGPU_LinearLayoutAttr : AttrDef<TGPU_Dialect, "LinearLayout",
                                   [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = "linear";
  let summary = "register layout of a tile as a linear map over register, lane and warp bits";
  let description = [{
    Each basis vector gives the tile coordinate moved by one input bit; the coordinate held by
    (reg, lane, warp) is the XOR of the bases of the set bits:

    ```
    #tgpu.linear<reg = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]],
                 warp = [[4, 0]]>
    ```
    on a tensor<8x32xf32>: every thread holds 4 contiguous columns (reg bits), 8 lanes cover a row of
    32, 4 lanes go down 4 rows, and 2 warps stack to 8 rows:

    ```
           cols 0-3  4-7  ...  28-31
    row 0:  L0       L1   ...  L7     (warp 0)
    row 1:  L8       L9   ...  L15
    ...
    row 4:  L0       L1   ...  L7     (warp 1)
    ```
    The shape is the tensor's; the math lives in flare::LinearLayout.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "tile shape">:$shape,
    ArrayRefParameter<"int64_t", "register bases, flattened">:$reg,
    ArrayRefParameter<"int64_t", "lane bases, flattened">:$lane,
    ArrayRefParameter<"int64_t", "warp bases, flattened">:$warp);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The layout as a flare::LinearLayout.
    ::flare::LinearLayout getLayout() const;
    static LinearLayoutAttr get(::mlir::MLIRContext *ctx, const ::flare::LinearLayout &layout);
  }];
}

#endif // FLARE_TGPU_DIALECT
