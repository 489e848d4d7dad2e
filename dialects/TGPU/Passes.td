//===- Passes.td - Passes of the tgpu layer -------------------------------===//
#ifndef FLARE_TGPU_PASSES
#define FLARE_TGPU_PASSES

include "mlir/Pass/PassBase.td"

def TGPUAssignLayouts : Pass<"tgpu-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "give every tile of every tile kernel a register layout";
  let description = [{
    1. Anchors (loads, ranges, splats, constants) get the blocked layout of their shape.
    2. Layouts flow forward: elementwise ops take their first tiled operand's layout, a reduction the
       sliced layout, expand_dims the expanded one, a broadcast the blocked layout of its result (its
       operand is converted to the layout that makes the broadcast free).
    3. Operands whose layout differs get a `tgpu.convert_layout`; loop-carried tiles keep their init's
       layout and the yielded value is converted to it.
    Rejects tiles whose sizes are not powers of two.
  }];
  let dependentDialects = ["::flare::tgpu::TGPUDialect"];
  let options = [
    Option<"vectorBytes", "vector-bytes", "int", /*default=*/"16",
           "contiguous bytes per thread along a tile's last dimension">
  ];
}

def TGPUAccelerateDot : Pass<"tgpu-accelerate-dot", "::mlir::ModuleOp"> {
  let summary = "choose the tensor-core instruction of every tile.dot";
  let description = [{
    Marks each `tile.dot` of each tile kernel with `tgpu.mma`: `#tgpu.mma<wgmma>` where the target has
    warpgroup MMAs (sm_90a) and the dot's warps all stack along M, 16 rows each (M = 16 x the kernel's
    warps, a multiple of 4; N a multiple of 8 up to 256), else `#tgpu.mma<mma_sync>`.
    convert-tgpu-to-nvvm follows the marks: it runs a kernel's streamed loops, TMA copies, producer
    warpgroup and register-A operands only around its wgmma dots, and lowers an unmarked dot as
    mma.sync. A dot already marked keeps its mark; a wgmma mark that does not fit (or a target
    without wgmma) is an error at the dot.

    Where one loop holds two or more wgmma dots whose A operand is defined outside it (resident in
    shared memory, as K and V in the backward's steps), those dots also get the unit attribute
    `tgpu.descriptors_at_dot`: the lowering makes their descriptors at the dot on every iteration
    instead of leaving them loop-invariant for LICM to hoist (every K step's 64-bit descriptor held
    across the loop spilled the backward's kernels). One such dot (the forward's Q) keeps them
    hoisted, which measured faster (bench/NOTES.md b15).
  }];
  let dependentDialects = ["::flare::tgpu::TGPUDialect"];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "target architecture (flare::Target): wgmma on sm_90a, mma.sync elsewhere">
  ];
}

def TGPUPipelineLoops : Pass<"tgpu-pipeline-loops", "::mlir::ModuleOp"> {
  let summary = "choose the loops whose wgmma dot operands stream through rings of shared-memory stages";
  let description = [{
    The schedule half of software pipelining; convert-tgpu-to-nvvm expands what it marks. For every
    `scf.for` of every tile kernel, outer loops first:
    - `#tgpu.pipeline<dot_loop>`: the K loop of one wgmma dot, `acc = dot(load_a(iv), load_b(iv), acc)`
      (each load behind an optional layout conversion, nothing else in the body): both operands are
      copied into a ring of stages ahead of the MMAs (TMA, or cp.async where the views have no map).
    - `#tgpu.pipeline<streamed>`: a loop with an i32 induction variable, not inside another streamed
      loop, some of whose loads only feed operands of its wgmma dots (through an optional `tile.trans`
      and layout conversion; A never transposed; a second use only as a B operand of another dot,
      read from the same swizzled panels), in 2-D blocks of 16-bit elements from a view made outside
      the loop with contiguous rows, zero padding, and offsets that can be computed for any
      iteration ahead of it (arith over the induction variable, loop-invariant values and
      `tile.scalar_load`s of tables; the column offset loop-invariant). Those loads get the unit
      attribute `tgpu.streamed`: their blocks travel through the loop's ring, the rest of the body
      runs as written.
    Loops that are neither stay unmarked (the dots store their operands). A hand-written mark is kept
    and checked: `#tgpu.pipeline<none>` keeps a loop out of any pipeline, `dot_loop` on a loop of
    another shape is an error, and `streamed` on a loop none of whose loads can stream, or
    `tgpu.streamed` on a load that cannot, is an error at that op. Runs after tgpu-accelerate-dot
    (only wgmma dots stream) and before convert-tgpu-to-nvvm, which streams nothing unmarked.
  }];
  let dependentDialects = ["::flare::tgpu::TGPUDialect"];
}

def TGPUWarpSpecialize : Pass<"tgpu-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "choose the streamed loops whose copies a producer warpgroup issues, and the warps' register budgets";
  let description = [{
    In each tile kernel that asks for a producer warpgroup (`#tile.schedule<producer_warpgroup = true>`, 4 or 8
    warps, one CTA per SM), marks `tgpu.producer_issued` on the top-level loops marked
    #tgpu.pipeline<streamed> (tgpu-pipeline-loops) whose copies that warpgroup can issue on its own:
    their bounds, views and load offsets computed from the kernel's arguments and program ids, and
    every streamed block moved by a tensor map into 128-byte swizzled panels. It also gives such a
    kernel the register budgets of its two roles, `tgpu.warp_roles = #tgpu.warp_roles<...>`: the
    producer keeps 40 registers a thread, the consumers (the kernel's own warps) share out the rest
    of the 64,512 an SM gives one CTA in multiples of 8, at most 256; a hand-written choice is kept,
    and one the CTA cannot hold is an error at the kernel. convert-tgpu-to-nvvm gives the kernel the
    warpgroup (those budgets through setmaxnreg, its copy loops, named barriers for the consumers)
    where it copies by TMA and some loop or operand needs it; the consumers copy for unmarked loops
    themselves.
  }];
  let dependentDialects = ["::flare::tgpu::TGPUDialect"];
}

def TGPUTestTensorMapPlans : Pass<"tgpu-test-tensor-map-plans", "::mlir::ModuleOp"> {
  let summary = "for tests: annotate the blocks a host-encoded tensor map can move";
  let description = [{
    Shows flare::tgpu::planTensorMap (TMA planning, flare/Dialect/TGPU/TensorMapPlan.h) on the IR: every
    `tile.load` and `tile.store` of 16-bit blocks and every `tile.atomic_add` of f32 blocks in a tile
    kernel whose view a tensor map can describe gets `tgpu.test.tensor_map = {pointer = P, sizes = [...],
    strides = [...], outer = N, pieces = K}` (sizes and strides innermost first, each [kind, value]:
    kind 0 a constant, 1 kernel argument `value`, 2 that argument truncated to i32; N outer dimensions
    from the view's offset terms). Nothing else changes; convert-tgpu-to-nvvm decides per copy
    whether it uses the plan.
  }];
}

def TGPUTestTileSchedule : Pass<"tgpu-test-tile-schedule", "::mlir::ModuleOp"> {
  let summary = "for tests: fold a persistent kernel's tile schedule for constant grids and check it";
  let description = [{
    Builds the schedule of a persistent kernel's tile loop (lib/Conversion/TGPUToNVVM/TileSchedule.h,
    the IR convert-tgpu-to-nvvm emits) for `instances` program instances on `ctas` CTAs, folds it and
    prints what each CTA runs, one line per CTA: `cta C: I I ...`, or with `steps` S > 0 (a
    tile.split_range, stream-K) `I[lo,hi)@slot` for each piece. It checks what the kernels rely on
    and reports a violation as an error: every instance runs exactly once (with a split range: its
    pieces cover its S steps exactly, at most two of them, on consecutive CTAs, sharing one slot),
    and the device splits exactly when flare::splitsLaunch says so. With `sweep`, it checks every
    schedule of 1-64 instances on 1-12 CTAs, in pairs and single, without a split range and with
    15, 16 and 40 steps, and prints how many it checked. The module is not changed.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
  let options = [
    Option<"instances", "instances", "int64_t", /*default=*/"1", "program instances of the grid">,
    Option<"ctas", "ctas", "int64_t", /*default=*/"1", "CTAs of the launch">,
    Option<"pairs", "pairs", "bool", /*default=*/"true", "#tile.schedule<pair_instances = ...>">,
    Option<"steps", "steps", "int64_t", /*default=*/"0", "steps of each instance (a split range); 0: none">,
    Option<"sweep", "sweep", "bool", /*default=*/"false", "check many schedules instead of printing one">
  ];
}

def TGPUAllocateSharedMemory : Pass<"tgpu-allocate-shared-memory", "::mlir::ModuleOp"> {
  let summary = "place each kernel's shared-memory areas and check that they fit";
  let description = [{
    In every `gpu.func` kernel, the `tgpu.shared_area` ops (in the order they appear) are laid out one
    after another in the kernel's dynamic shared memory, each at the next multiple of its alignment,
    and each is replaced by its byte offset (an i32 constant). The total goes into the kernel's
    `tgpu.shared_bytes`, the dynamic shared memory a launch must give it. A kernel whose areas need
    more than `max-shared-bytes` is an error at its largest area's location (the op that needs it):
    "kernel 'k' needs N bytes of shared memory (M for this op), more than the L a CTA may use: ...
    (scratch 1024 at 0, rings 196608 at 1024, ...)", each area that holds bytes with its offset.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let options = [
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", /*default=*/"232448",
           "dynamic shared memory one CTA may use (the target's; 227 KiB on sm_90)">
  ];
}

def ConvertTGPUMachineToNVVM : Pass<"convert-tgpu-machine-to-nvvm"> {
  let summary = "lower the tgpu machine protocol ops (mbarriers, named barriers, fences, register budgets, wgmma groups) to NVVM";
  let description = [{
    One conversion pattern per op (lib/Conversion/TGPUToNVVM/MachineToNVVM.cpp), each to the NVVM op
    that implements it: `tgpu.mbarrier_wait` to `nvvm.mbarrier.try_wait.parity` with a suspend-time
    hint, `tgpu.named_barrier_sync` to `nvvm.barrier` with an id and a thread count, ...; an
    `!tgpu.mbarrier` becomes its shared-memory address and a `!tgpu.tensormap` its kernel
    parameter's address. The persistent tile loop's schedule (`tgpu.tile_schedule`, `tgpu.tile_split`,
    `tgpu.tile_instance`) expands into its arithmetic, the per-CTA part at the schedule op (from the
    launch's grid and block ids). Runs on the per-thread code convert-tgpu-to-nvvm produced, before
    the gpu.module goes to LLVM.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect", "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect"];
}

def ConvertTGPUToNVVM : Pass<"convert-tgpu-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "lower laid-out tile kernels to per-thread code in a gpu.module";
  let description = [{
    Every `func.func` marked `tile.kernel` becomes a `gpu.func` kernel in `gpu.module @flare_kernels`
    whose parameters follow Flare's kernel ABI (global pointers as `!llvm.ptr<1>`, i32/i64/f32
    scalars). Each tile becomes one SSA value per register of its layout:
    1. program ids read `ctaid`; lane and warp ids come from `tid.x`;
    2. elementwise `arith`/`math` ops are replayed per register (exp/exp2/log/tanh/rsqrt/sqrt through
       the approximate NVVM instructions, float division as div.full.f32);
    3. loads and stores compute each register's coordinate from the layout, check it against the
       view's sizes and access global memory under that predicate;
    4. reductions combine registers in a thread, then lanes by butterfly shuffles, then warps through
       shared memory; layout conversions permute registers, shuffle inside warps or go through
       shared memory;
    5. `scf.for`/`scf.if` carrying tiles carry their registers.
    6. tile.dot: mma.sync.m16n8k16 per 16x8x16 block (sm_80+), or marked `#tgpu.mma<wgmma>` by
       tgpu-accelerate-dot, warpgroup MMAs
       (m64nNk16) on operands in shared memory: core matrices (K-major, or N-major B), or 128-byte
       swizzled panels for streamed and pipelined operands whose rows are 128 bytes;
       an A operand whose registers already are in the fragment layout (a previous dot's
       accumulator, as P in attention) is read from registers. A dot that stored nothing is left
       in flight (`wgmma.wait_group N` where its result is first used).
    7. loops marked by tgpu-pipeline-loops stream their dot operands: a load marked `tgpu.streamed`
       becomes cp.async copies into a ring of up to 3 shared-memory stages, one iteration ahead,
       guarded by `full`/`empty` mbarriers; loop-invariant register operands (Q) are stored once
       before the loop; with two warpgroups and `ping-pong`, they issue their MMAs in turn (named
       barriers 1 and 2) unless the kernel says `#tile.schedule<ping_pong = false>`. See StreamedLoop.cpp.
    8. around wgmma dots and with `tma`, streamed and pipelined dot operands whose views the host can
       describe (sizes and strides kernel arguments or constants, base = pointer argument + sum of
       value x stride) are copied by TMA instead: the kernel gets hidden parameters (a flag and one
       tensor map per view, described in `tgpu.tensor_maps` for the runtime), thread 0 issues one
       cp.async.bulk.tensor per 64-column panel and the stage's `full` mbarrier counts the bytes;
       launches whose maps do not encode copy element by element, unless `tma-fallback=0` leaves
       those copies out (the kernel is then marked `tgpu.tma_required`; a smaller kernel for
       launchers that check their views first). See TensorMaps.cpp.
    9. a kernel marked `#tile.schedule<producer_warpgroup = true>` (4 or 8 warps, one CTA per SM) gets one
       more warpgroup that issues the TMA copies of its loops marked `tgpu.producer_issued` by
       tgpu-warp-specialize and exits; the
       kernel's own warps only wait for and release the stages, their CTA barriers become named
       barrier 3, and setmaxnreg moves registers from the producer (40) to them. See
       ProducerWarpgroup.cpp.
   10. a kernel marked `#tile.schedule<persistent = true>` gets three hidden i32 parameters (the grid its
       program ids index, `tgpu.persistent` tells the runtime) and runs its body in a loop over
       program instances, two consecutive ones per turn of a CTA; the producer warpgroup walks the
       same instances, its first ring's index runs on across them, and in such a kernel it also
       copies the top-level TMA operands (Q, the last V block) through one-stage rings. The output's
       TMA staging gets its own area, its copy waited for only before the next store; with the
       producer each consumer warpgroup stores its own 64 rows, the MMA turn passes on from one
       instance to the next, and an instance ends without a barrier where nothing needs it.
    The shared memory a kernel uses is one `tgpu.shared_area` per purpose (scratch, dot operands,
    persistent operands, operand barriers, rings, staging), sized here and placed by
    tgpu-allocate-shared-memory, which records `tgpu.shared_bytes` and rejects a kernel over the
    limit; `max-shared-bytes` here bounds how many ring stages and operands are planned.
  }];
  let options = [
    Option<"maxSharedBytes", "max-shared-bytes", "int64_t", /*default=*/"232448",
           "shared memory one CTA may use (227 KiB on sm_90; the pipeline sets it per architecture)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90a\"",
           "target architecture (flare::Target): whether TMA and mbarrier transaction counts exist; "
           "which dots run on wgmma is tgpu-accelerate-dot's mark, checked against it">,
    Option<"tma", "tma", "bool", /*default=*/"true",
           "around wgmma dots, copy streamed and pipelined dot operands by TMA where the host can describe "
           "their views (tensor maps encoded by the runtime at launch)">,
    Option<"tmaFallback", "tma-fallback", "bool", /*default=*/"true",
           "with tma, also emit the element-wise copies that launches whose tensor maps do not encode "
           "take; without them the kernel is smaller and compiles faster, is marked "
           "`tgpu.tma_required`, and the runtime refuses such launches">,
    Option<"pingPong", "ping-pong", "bool", /*default=*/"true",
           "in loops whose dot operands stream through shared memory, let two warpgroups issue their "
           "MMAs in turn (named barriers), so that one's softmax overlaps the other's MMAs">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::flare::tgpu::TGPUDialect"];
}

#endif // FLARE_TGPU_PASSES
