//===- TGPUMachineOps.td - The machine protocol ops of the tgpu dialect ---===//
//
// The synchronisation protocol of Hopper kernels as ops of their own: mbarriers and their phases,
// named barriers, the async-proxy fence, register budgets and wgmma groups. convert-tgpu-to-nvvm
// emits them into the per-thread code, where `flarec --emit=gpu` shows them; the patterns of
// convert-tgpu-machine-to-nvvm lower each to its NVVM op. dialects/TGPU/Rationale.md describes who
// waits on which barrier in which phase.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TGPU_MACHINE_OPS
#define FLARE_TGPU_MACHINE_OPS

include "TGPUDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class TGPU_MachineOp<string mnemonic, list<Trait> traits = []> : Op<TGPU_Dialect, mnemonic, traits>;

def TGPU_SharedPointer : Type<
    CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self) && "
          "::llvm::cast<::mlir::LLVM::LLVMPointerType>($_self).getAddressSpace() == 3">,
    "pointer to shared memory (!llvm.ptr<3>)">;

def TGPU_Pointer : Type<CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">, "LLVM pointer">;

def TGPU_GlobalPointer : Type<
    CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self) && "
          "::llvm::cast<::mlir::LLVM::LLVMPointerType>($_self).getAddressSpace() == 1">,
    "pointer to global memory (!llvm.ptr<1>)">;

def TGPU_TensorMapOp : TGPU_MachineOp<"tensor_map", [Pure]> {
  let summary = "the tensor map a kernel parameter holds";
  let description = [{
    `%map = tgpu.tensor_map %param : !llvm.ptr`: the tensor map the host encoded into the hidden
    kernel parameter `%param` (128 bytes, passed by value and grid-constant: its address is what TMA
    reads), as a `!tgpu.tensormap` for the TMA ops.
  }];
  let arguments = (ins TGPU_Pointer:$param);
  let results = (outs TGPU_TensorMapType:$map);
  let assemblyFormat = "$param attr-dict `:` type($param)";
}

def TGPU_MBarrierInitOp : TGPU_MachineOp<"mbarrier_init"> {
  let summary = "initialise an mbarrier for a number of arrivals per phase";
  let description = [{
    `tgpu.mbarrier_init %bar, %count`: the 8-byte mbarrier at `%bar` (shared memory) completes a
    phase when `%count` arrivals (and every byte announced by `mbarrier_arrive_expect_tx`) have
    come. One thread initialises; a CTA barrier (or a named one) publishes it before others use it,
    and `fence_async_shared` before TMA completes it.
  }];
  let arguments = (ins TGPU_MBarrierType:$barrier, I32:$count);
  let assemblyFormat = "$barrier `,` $count attr-dict";
}

def TGPU_MBarrierArriveOp : TGPU_MachineOp<"mbarrier_arrive"> {
  let summary = "arrive on an mbarrier";
  let description = [{
    `tgpu.mbarrier_arrive %bar`: one arrival of this thread on the barrier's current phase (a ring's
    `empty` barrier counts one per warp: lane 0 arrives for its warp).
  }];
  let arguments = (ins TGPU_MBarrierType:$barrier);
  let assemblyFormat = "$barrier attr-dict";
}

def TGPU_MBarrierArriveExpectTxOp : TGPU_MachineOp<"mbarrier_arrive_expect_tx"> {
  let summary = "arrive on an mbarrier and announce bytes of asynchronous copies";
  let description = [{
    `tgpu.mbarrier_arrive_expect_tx %bar, %bytes`: one arrival, and the phase also waits for
    `%bytes` bytes of TMA copies that complete on this barrier (the issuing thread announces the
    stage's bytes before issuing its copies).
  }];
  let arguments = (ins TGPU_MBarrierType:$barrier, I32:$bytes);
  let assemblyFormat = "$barrier `,` $bytes attr-dict";
}

def TGPU_MBarrierWaitOp : TGPU_MachineOp<"mbarrier_wait"> {
  let summary = "wait until an mbarrier's phase of the given parity has completed";
  let description = [{
    `tgpu.mbarrier_wait %bar, %parity`: returns once the phase whose parity is `%parity` (i32, 0 or
    1) has completed. The k-th use of a ring stage waits for parity (k / stages) & 1. Lowered to
    `mbarrier.try_wait.parity` with a suspend-time hint, which the hardware retries until done.
  }];
  let arguments = (ins TGPU_MBarrierType:$barrier, I32:$parity);
  let assemblyFormat = "$barrier `,` $parity attr-dict";
}

def TGPU_RingOp : TGPU_MachineOp<"ring", [Pure]> {
  let summary = "a ring of shared-memory stages whose mbarriers start at a byte offset";
  let description = [{
    `%ring = tgpu.ring %smem[%at] : !llvm.ptr<3> -> !tgpu.ring<3>`: the ring of 3 stages whose
    mbarriers lie from byte `%at` (i32) of the kernel's shared memory `%smem` on (the `full` barrier
    of every stage, then the `empty` ones, 8 bytes each). Its stages' bytes are placed by the lowering
    beside it; the ring names their barriers (`tgpu.ring_barrier`).
  }];
  let arguments = (ins TGPU_SharedPointer:$smem, I32:$at);
  let results = (outs TGPU_RingType:$ring);
  let assemblyFormat = "$smem `[` $at `]` attr-dict `:` type($smem) `->` qualified(type($ring))";
}

def TGPU_RingBarrierOp : TGPU_MachineOp<"ring_barrier", [Pure]> {
  let summary = "the full or empty mbarrier of one stage of a ring";
  let description = [{
    `%bar = tgpu.ring_barrier full %ring[%s] : !tgpu.ring<3>`: stage `%s`'s `full` barrier, which
    completes when the stage's copies have landed (TMA bytes counted by expect-tx, or one cp.async
    arrival per thread), or its `empty` barrier, which completes when its readers have released it
    (one arrival per warp).
  }];
  let arguments = (ins TGPU_RingType:$ring, I32:$stage, UnitAttr:$empty);
  let results = (outs TGPU_MBarrierType:$barrier);
  let assemblyFormat = [{
    (`empty` $empty^):(`full`)? $ring `[` $stage `]` attr-dict `:` qualified(type($ring))
  }];
}

def TGPU_RingWaitOp : TGPU_MachineOp<"ring_wait"> {
  let summary = "wait for the completion of a ring barrier that belongs to one ring index";
  let description = [{
    `tgpu.ring_wait %bar, use %i of 3`: `%bar` is a barrier of the stage that ring
    index `%i` (i32, >= 0) uses in a ring of `stages` stages; it completes once per round of the ring,
    so ring index i waits for the phase of parity (i / stages) & 1 (`tgpu.mbarrier_wait` with that
    parity).
  }];
  let arguments = (ins TGPU_MBarrierType:$barrier, I32:$use, ConfinedAttr<I64Attr, [IntPositive]>:$stages);
  let assemblyFormat = "$barrier `,` `use` $use `of` $stages attr-dict";
}

def TGPU_NamedBarrierSyncOp : TGPU_MachineOp<"named_barrier_sync"> {
  let summary = "wait on a named CTA barrier until a number of threads arrived";
  let description = [{
    `tgpu.named_barrier_sync %id, %threads`: barrier `%id` (0-15; 0 is the whole CTA's
    `gpu.barrier`) completes when `%threads` threads (a multiple of 32) have arrived or synced on
    it; this thread waits for that. Flare's kernels use 1-2 for the warpgroups' MMA turns,
    `kConsumerBarrier` for the consumers of a producer warpgroup, and the ring-ready and producer
    barriers (KernelLowering.h names them).
  }];
  let arguments = (ins I32:$id, I32:$threads);
  let assemblyFormat = "$id `,` $threads attr-dict";
  let hasVerifier = 1;
}

def TGPU_NamedBarrierArriveOp : TGPU_MachineOp<"named_barrier_arrive"> {
  let summary = "arrive on a named CTA barrier without waiting";
  let description = [{
    `tgpu.named_barrier_arrive %id, %threads`: counts this thread towards `%threads` arrivals on
    barrier `%id` and goes on (a warpgroup hands the MMA turn to the other this way).
  }];
  let arguments = (ins I32:$id, I32:$threads);
  let assemblyFormat = "$id `,` $threads attr-dict";
  let hasVerifier = 1;
}

def TGPU_FenceAsyncSharedOp : TGPU_MachineOp<"fence_async_shared"> {
  let summary = "make this thread's shared-memory writes visible to the async proxy";
  let description = [{
    `tgpu.fence_async_shared`: shared-memory writes of the generic proxy (st.shared, mbarrier.init)
    before it are seen by the async proxy (wgmma operand reads, TMA) after it.
  }];
  let assemblyFormat = "attr-dict";
}

def TGPU_SetMaxRegistersOp : TGPU_MachineOp<"set_max_registers"> {
  let summary = "move this warpgroup's register budget";
  let description = [{
    `tgpu.set_max_registers decrease 40` / `increase 232`: a warp-specialised kernel's producer
    warpgroup gives registers back and its consumer warpgroups take them (setmaxnreg; the count is
    per thread, a multiple of 8 from 24 to 256).
  }];
  let arguments = (ins UnitAttr:$increase, I32Attr:$count);
  let assemblyFormat = "(`increase` $increase^):(`decrease`)? $count attr-dict";
  let hasVerifier = 1;
}

def TGPU_WgmmaFenceOp : TGPU_MachineOp<"wgmma_fence"> {
  let summary = "order register writes before the wgmma ops that read them";
  let description = [{
    `tgpu.wgmma_fence`: before the first wgmma of a group, so that accumulator and A-operand
    registers written by ordinary instructions are what the asynchronous MMAs read.
  }];
  let assemblyFormat = "attr-dict";
}

def TGPU_WgmmaCommitOp : TGPU_MachineOp<"wgmma_commit"> {
  let summary = "close the group of wgmma ops issued since the last commit";
  let assemblyFormat = "attr-dict";
}

def TGPU_WgmmaWaitOp : TGPU_MachineOp<"wgmma_wait"> {
  let summary = "wait until at most a number of wgmma groups are in flight";
  let description = [{
    `tgpu.wgmma_wait 1`: returns once at most `pending` committed groups of this warpgroup are still
    running; their accumulators (and shared-memory operands) are not touched before that.
  }];
  let arguments = (ins I64Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
  let hasVerifier = 1;
}

def TGPU_TmaLoadOp : TGPU_MachineOp<"tma_load"> {
  let summary = "copy a box of a tensor map into shared memory, completing an mbarrier";
  let description = [{
    `tgpu.tma_load %dst, %map[%col, %row, ...], %bar`: the box of the tensor map `%map` (a 128-byte
    CUtensorMap the runtime encodes, from a kernel parameter by `tgpu.tensor_map`) at the coordinates (innermost first) lands
    at `%dst` (shared memory, shared::cluster addressing); its bytes count towards the phase of the
    mbarrier `%bar` that `mbarrier_arrive_expect_tx` announced. Out-of-bounds elements read as zero.
  }];
  let arguments = (ins TGPU_Pointer:$dst, TGPU_TensorMapType:$map, Variadic<I32>:$coords,
                       TGPU_MBarrierType:$barrier);
  let assemblyFormat = [{
    $dst `,` $map `[` $coords `]` `,` $barrier attr-dict `:` type($dst)
  }];
  let hasVerifier = 1;
}

def TGPU_TmaStoreOp : TGPU_MachineOp<"tma_store"> {
  let summary = "copy shared memory into a box of a tensor map";
  let description = [{
    `tgpu.tma_store %map[%col, %row, ...], %src`: the box at the coordinates is written from `%src`
    (rows past the tensor's bounds are left out). Stores are grouped by `tma_store_commit` and
    waited for by `tma_store_wait`.
  }];
  let arguments = (ins TGPU_TensorMapType:$map, Variadic<I32>:$coords, TGPU_SharedPointer:$src);
  let assemblyFormat = "$map `[` $coords `]` `,` $src attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def TGPU_TmaReduceAddOp : TGPU_MachineOp<"tma_reduce_add"> {
  let summary = "add shared memory into a box of a tensor map, element by element";
  let description = [{
    `tgpu.tma_reduce_add %map[%col, %row, ...], %src`: each element of the box at the coordinates is
    increased by the element of `%src` at the same place, atomically per element (other CTAs may add
    into the same box at the same time); the addition is the map's element type's (f32 for dQ's
    sums). Rows past the tensor's bounds are left out. Grouped, committed and waited for like
    `tma_store`: `tma_store_commit`, `tma_store_wait`.
  }];
  let arguments = (ins TGPU_TensorMapType:$map, Variadic<I32>:$coords, TGPU_SharedPointer:$src);
  let assemblyFormat = "$map `[` $coords `]` `,` $src attr-dict `:` type($src)";
  let hasVerifier = 1;
}

def TGPU_TmaStoreCommitOp : TGPU_MachineOp<"tma_store_commit"> {
  let summary = "close the group of TMA stores issued since the last commit";
  let assemblyFormat = "attr-dict";
}

def TGPU_TmaStoreWaitOp : TGPU_MachineOp<"tma_store_wait"> {
  let summary = "wait until at most a number of TMA store groups still read their source";
  let description = [{
    `tgpu.tma_store_wait 0`: after it, the shared memory the committed stores read may be written
    again (their global writes may still be in flight).
  }];
  let arguments = (ins I32Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def TGPU_WgmmaOp : TGPU_MachineOp<"wgmma", [AttrSizedOperandSegments, AllTypesMatch<["acc", "result"]>]> {
  let summary = "issue one warpgroup MMA (m64nNk16, f32 accumulator) into the open group";
  let description = [{
    ```mlir
    %d = tgpu.wgmma %acc, a_desc %descA, b_desc %descB n = 128, bf16 : !llvm.struct<(f32, ...)>
    %d = tgpu.wgmma %acc, a_regs(%a0, %a1, %a2, %a3), b_desc %descB b_n_major n = 64, f16
        : !llvm.struct<(f32, ...)>
    ```
    acc += A B over one 16-deep K step of a warpgroup's 64 rows: A from shared memory (a wgmma
    descriptor, i64) or from registers (four i32 registers of packed 16-bit pairs, the fragment
    layout of LinearLayout::mmaOperandA); B from shared memory (a descriptor), K-major or, with
    `b_n_major`, N-major. The accumulator is the warpgroup's n/2 f32 registers per thread as an
    LLVM struct, tied to the result. A in shared memory is K-major or, with `a_m_major`, M-major
    (its rows run along K: a block stored K-major for another dot read as its transpose; 16-bit
    elements only, as PTX's transposed A). It runs asynchronously: between `wgmma_fence` and
    `wgmma_commit`, and its result is read only after a `wgmma_wait` that covers its group.
  }];
  let arguments = (ins AnyType:$acc, Optional<I64>:$descA, Variadic<I32>:$regsA, I64:$descB, I64Attr:$n,
                       TypeAttr:$element_type, UnitAttr:$b_n_major, UnitAttr:$a_m_major);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $acc `,` (`a_desc` $descA^)? (`a_m_major` $a_m_major^)? (`a_regs` `(` $regsA^ `)`)? `,` `b_desc` $descB
    (`b_n_major` $b_n_major^)?
    `n` `=` $n `,` $element_type attr-dict `:` type($acc)
  }];
  let hasVerifier = 1;
}

def TGPU_CpAsyncOp : TGPU_MachineOp<"cp_async"> {
  let summary = "copy 16 bytes from global to shared memory asynchronously";
  let description = [{
    `tgpu.cp_async %dst, %src, %bytes`: 16 bytes at `%dst` (shared memory) from `%src` (global),
    of which the first `%bytes` (0 to 16) are read and the rest filled with zeros (cp.async.cg: the
    copy bypasses L1). Completed by `cp_async_wait` of its group, or announced on an mbarrier by
    `cp_async_mbarrier_arrive`.
  }];
  let arguments = (ins TGPU_SharedPointer:$dst, TGPU_Pointer:$src, I32:$bytes);
  let assemblyFormat = "$dst `,` $src `,` $bytes attr-dict `:` type($dst) `,` type($src)";
}

def TGPU_CpAsyncCommitOp : TGPU_MachineOp<"cp_async_commit"> {
  let summary = "close the group of cp.async copies issued since the last commit";
  let assemblyFormat = "attr-dict";
}

def TGPU_CpAsyncWaitOp : TGPU_MachineOp<"cp_async_wait"> {
  let summary = "wait until at most a number of cp.async groups are in flight";
  let arguments = (ins I32Attr:$pending);
  let assemblyFormat = "$pending attr-dict";
}

def TGPU_CpAsyncMBarrierArriveOp : TGPU_MachineOp<"cp_async_mbarrier_arrive"> {
  let summary = "arrive on an mbarrier once this thread's cp.async copies have landed";
  let description = [{
    `tgpu.cp_async_mbarrier_arrive %bar`: the arrival happens when the copies this thread issued
    before it complete, and counts as one of the arrivals the barrier expects (.noinc): a stage's
    `full` barrier in a ring filled by cp.async expects every copying thread.
  }];
  let arguments = (ins TGPU_MBarrierType:$barrier);
  let assemblyFormat = "$barrier attr-dict";
}


//===----------------------------------------------------------------------===//
// The persistent tile loop's schedule
//===----------------------------------------------------------------------===//

def TGPU_ChunkedTileSchedule : Type<
    CPred<"::llvm::isa<::flare::tgpu::TileScheduleType>($_self) && "
          "!::llvm::cast<::flare::tgpu::TileScheduleType>($_self).getSplit()">,
    "chunked tile schedule (!tgpu.tile_schedule)">,
  BuildableType<"::flare::tgpu::TileScheduleType::get($_builder.getContext(), false)">;
def TGPU_SplitTileSchedule : Type<
    CPred<"::llvm::isa<::flare::tgpu::TileScheduleType>($_self) && "
          "::llvm::cast<::flare::tgpu::TileScheduleType>($_self).getSplit()">,
    "split tile schedule (!tgpu.tile_schedule<split>)">,
  BuildableType<"::flare::tgpu::TileScheduleType::get($_builder.getContext(), true)">;

def TGPU_TileScheduleOp : TGPU_MachineOp<"tile_schedule", [Pure]> {
  let summary = "the schedule of a persistent kernel's tile loop: this CTA's turns";
  let description = [{
    ```mlir
    %schedule, %turns = tgpu.tile_schedule grid(%x, %y, %z) pairs
    ```
    A persistent kernel runs the N = x * y * z program instances of the grid (i32, the hidden
    parameters its program ids index) on the G CTAs of its launch, in a loop of `%turns` turns;
    `tgpu.tile_instance` says what each turn runs. CTA c takes chunks c, c + G, c + 2G, ... of
    consecutive instances (x fastest): chunks of two with `pairs` when N >= 2G, else of one; an odd N
    leaves the last chunk one instance short. The per-CTA values are computed here, once, before
    the loop. convert-tgpu-machine-to-nvvm expands it (lib/Conversion/TGPUToNVVM/TileSchedule.h);
    `tgpu-test-tile-schedule` checks that arithmetic on thousands of grids.
  }];
  let arguments = (ins I32:$grid_x, I32:$grid_y, I32:$grid_z, UnitAttr:$pairs);
  let results = (outs TGPU_ChunkedTileSchedule:$schedule, I32:$turns);
  let assemblyFormat = "`grid` `(` $grid_x `,` $grid_y `,` $grid_z `)` (`pairs` $pairs^)? attr-dict";
}

def TGPU_TileSplitOp : TGPU_MachineOp<"tile_split", [Pure]> {
  let summary = "stream-K: a schedule whose last instances are cut into equal ranges of steps";
  let description = [{
    ```mlir
    %split, %turns = tgpu.tile_split %schedule steps(%s)
    ```
    The schedule of a kernel with a tile.split_range of S steps per instance, from the chunked one
    `%schedule`: the launch splits when N > G, N mod G != 0, S >= 16 and S G < 2^31
    (flare::splitsLaunch, the host's rule): D = N / G - 1 rounds of whole instances (instance
    turn * G + c), then the other instances' steps cut into G equal ranges, range c being CTA c's,
    so that a range's first and last instances may be pieces (`tgpu.tile_instance` gives each turn's
    piece and hand-over slot). Otherwise `%turns` and the instances are those of `%schedule`.
  }];
  let arguments = (ins TGPU_ChunkedTileSchedule:$input, I32:$steps);
  let results = (outs TGPU_SplitTileSchedule:$schedule, I32:$turns);
  let assemblyFormat = "$input `steps` `(` $steps `)` attr-dict";
}

def TGPU_TileInstanceOp : TGPU_MachineOp<"tile_instance",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "what one turn of a persistent CTA runs: an instance's program ids (and its piece)";
  let description = [{
    ```mlir
    %x, %y, %z = tgpu.tile_instance %schedule[%turn] : !tgpu.tile_schedule
    %x, %y, %z, %lo, %hi, %slot = tgpu.tile_instance %split[%turn] : !tgpu.tile_schedule<split>
    ```
    The program ids (i32) of the instance this CTA runs at turn `%turn` (0 <= turn < the turns of
    `tgpu.tile_schedule` or `tgpu.tile_split`). With a split schedule also the turn's piece of that instance's steps,
    [%lo, %hi), and its hand-over slot: a piece that ends an instance (lo > 0) hands its state over
    through its own CTA's slot, and the piece that begins it (on the CTA before) takes it from
    there; whole instances are [0, S).
  }];
  let arguments = (ins TGPU_TileScheduleType:$schedule, I32:$turn);
  let results = (outs I32:$x, I32:$y, I32:$z, Variadic<I32>:$piece);
  let assemblyFormat = "$schedule `[` $turn `]` attr-dict `:` qualified(type($schedule))";
}

def TGPU_TileTakeOp : TGPU_MachineOp<"tile_take"> {
  let summary = "the instance a persistent CTA takes from a counter its CTAs share";
  let description = [{
    ```mlir
    %index = tgpu.tile_take %counters grid(%x, %y, %z) turn(%turn) : !llvm.ptr<1>
    ```
    The linear index of the program instance (x fastest) this CTA runs at turn `%turn` of a
    schedule of instances taken one by one (`#tile.schedule<dynamic_instances>`): at turn 0 its own
    CTA index, afterwards the CTA count plus the next value of the i32 counter `%counters[0]`
    (relaxed, GPU scope). A CTA whose index is at or past the grid's x y z instances takes no
    more: it counts itself at `%counters[1]` (acquire-release, so that the last count sees every
    CTA's takes) and the last of the CTAs sets both counters back to zero for the next launch. One
    thread per CTA runs it (the producer warpgroup's first), at most once per turn, turns in order;
    the counters are zero before a launch (the runtime's workspace, per stream).
  }];
  let arguments = (ins TGPU_GlobalPointer:$counters, I32:$x, I32:$y, I32:$z, I32:$turn);
  let results = (outs I32:$index);
  let assemblyFormat = "$counters `grid` `(` $x `,` $y `,` $z `)` `turn` `(` $turn `)` attr-dict `:` qualified(type($counters))";
}

//===----------------------------------------------------------------------===//
// Roles and shared memory
//===----------------------------------------------------------------------===//

def TGPU_WarpSpecializeOp : TGPU_MachineOp<"warp_specialize",
    [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "split a CTA into consumer warpgroups and a producer warpgroup with register budgets";
  let description = [{
    ```mlir
    tgpu.warp_specialize(%warp) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
      ... the producer's code: ring set-up, then per stage wait `empty`, expect-tx, TMA copies ...
      tgpu.warp_exit
    }
    ... the consumers' code ...
    ```
    The CTA runs `consumer_warps + producer_warps` warps; `%warp` is the executing warp's index in
    it. Warps from `consumer_warps` on (one warpgroup) give registers back down to
    `producer_registers` a thread, run the region and leave the kernel at its `tgpu.warp_exit`; the consumer
    warps raise their budget to `consumer_registers` and go on after the op. Both budgets are
    multiples of 8 from 24 to 256 and share out the SM's 64K registers (less the 512 the allocator
    keeps); ptxas honours them only in a kernel of one CTA per SM (`nvvm.minctasm = 1`).
    The region sees the values defined above it; the roles meet only through mbarriers and named
    barriers (dialects/TGPU/Rationale.md). convert-tgpu-machine-to-nvvm lowers it to a branch on
    the warp index with `setmaxnreg` on both sides and `exit` at the region's end.
  }];
  let arguments = (ins I32:$warp, I32Attr:$consumer_warps, I32Attr:$consumer_registers,
                       I32Attr:$producer_warps, I32Attr:$producer_registers);
  let regions = (region SizedRegion<1>:$producer);
  let assemblyFormat = [{
    `(` $warp `)` `consumers` `(` $consumer_warps `warps` `,` $consumer_registers `registers` `)`
    `producer` `(` $producer_warps `warps` `,` $producer_registers `registers` `)` $producer attr-dict
  }];
  let hasVerifier = 1;
}

def TGPU_WarpExitOp : TGPU_MachineOp<"warp_exit", [Terminator, HasParent<"WarpSpecializeOp">]> {
  let summary = "the producer warps leave the kernel (end of a warp_specialize region)";
  let assemblyFormat = "attr-dict";
}

def TGPU_SharedAreaOp : TGPU_MachineOp<"shared_area"> {
  let summary = "a byte range of the kernel's shared memory, placed by tgpu-allocate-shared-memory";
  let description = [{
    ```mlir
    %ring = tgpu.shared_area "rings" 98304 bytes align 1024
    ```
    The byte offset (i32) of an area of `bytes` bytes in the kernel's dynamic shared memory
    (`__flare_smem`, 1024-byte aligned), at a multiple of `alignment` (a power of two).
    `tgpu-allocate-shared-memory` lays out the areas of a `gpu.func` one after another in the order
    they appear, replaces each by its offset and records the total; the lowering that emits them
    only sizes them. An area of zero bytes still aligns what follows it. `name` says what it holds
    (`scratch`, `operands`, `rings`, ...), for the reader and for the error when the areas do not fit,
    which the allocator reports at the area's location.
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$bytes, I64Attr:$alignment);
  let results = (outs I32:$offset);
  let assemblyFormat = "$name $bytes `bytes` `align` $alignment attr-dict";
  let hasVerifier = 1;
}

#endif // FLARE_TGPU_MACHINE_OPS
