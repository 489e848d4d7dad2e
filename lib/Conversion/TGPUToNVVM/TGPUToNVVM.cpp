//===- TGPUToNVVM.cpp - Lower laid-out tile kernels to per-thread code ----===//
//
// Outline (one KernelLowering per `tile.kernel` function, after tgpu-assign-layouts):
//   1. Create `gpu.func` in `gpu.module @flare_kernels` with Flare's kernel ABI: `!tile.ptr<T>` becomes
//      `!llvm.ptr<1>`, scalars stay; block size = num_warps * 32.
//   2. Walk the body in order. Scalars map 1:1. A tile with layout L becomes L.numRegs() scalars: the
//      value of register i is the element at coordinate
//          c(i) = R(i) ^ T,   T = XOR of the lane and warp bases selected by this thread's ids,
//      so T is computed once per layout and each register adds a constant.
//   3. Loads/stores: element address = base + sum_d (offset_d + c_d) * stride_d in 64 bits, guarded by
//      0 <= offset_d + c_d < size_d (one unsigned compare per dimension); loads pad outside.
//      Stores skip duplicated elements: registers whose index sets a zero register basis, and threads
//      whose lane/warp id sets a bit with a zero basis.
//   4. reduce(axis): (a) registers of a thread that differ only along the axis combine; (b) lanes
//      combine by butterfly shuffles over the lane bits that move along the axis (every lane ends with
//      the same value, since each step is commutative); (c) warps that move along the axis exchange
//      partials through shared memory, combined in increasing warp order so that all threads agree.
//   5. tile.dot: for every 16x8 block of the warp's accumulator and every 16-deep slice of K, one
//      mma.sync.m16n8k16 on the registers the mma layouts put in place (pairs of 16-bit values packed
//      into 32-bit registers); tile.trans is free (its layout already swapped the dimensions).
//   6. Layout conversions and broadcasts permute registers when the thread already holds the value,
//      else go through shared memory (write every register at its row-major index, barrier, read).
//   7. scf.for / scf.if carry and yield every register of a tile.
// Shared memory is one dynamic buffer; its size (the largest scratch any op needs) is recorded on the
// kernel as `tgpu.shared_bytes`.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

#include "flare/Dialect/TGPU/Passes.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_CONVERTTGPUTONVVM
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

namespace flare::tgpu::lowering {

LogicalResult KernelLowering::run() {
  // Every tile must carry a layout before we start.
  WalkResult missing = func.walk([&](Operation *op) {
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (isa<RankedTensorType>(t) && !getLayoutAttr(t)) {
        op->emitOpError("has a tile without a #tgpu.linear layout; run tgpu-assign-layouts first");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (missing.wasInterrupted())
    return failure();

  MLIRContext *ctx = b.getContext();
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> argTypes;
  for (Type t : func.getArgumentTypes())
    argTypes.push_back(isa<tile::PtrType>(t) ? Type(globalPtr) : t);

  b.setInsertionPointToEnd(module.getBody());
  loc = func.getLoc();
  auto gfunc = gpu::GPUFuncOp::create(b, loc, func.getName(), FunctionType::get(ctx, argTypes, {}));
  gfunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernelFunc = gfunc;
  int numThreads = numWarps * kWarpSize;
  gfunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({numThreads, 1, 1}));
  if (auto minBlocks = func->getAttrOfType<IntegerAttr>(tile::TileDialect::kMinBlocksPerSMAttrName))
    gfunc->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(minBlocks.getInt()));
  // Facts for launchers (flare.* attributes, e.g. a generated attention kernel's block size).
  for (NamedAttribute attr : func->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("flare."))
      gfunc->setAttr(attr.getName(), attr.getValue());

  Block &entry = gfunc.getBody().front();
  b.setInsertionPointToStart(&entry);
  for (auto [src, dst] : llvm::zip(func.getArguments(), entry.getArguments()))
    scalars.map(src, dst);
  threadId = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  laneId = arith::AndIOp::create(b, loc, threadId, i32(kWarpSize - 1));
  warpId = arith::ShRUIOp::create(b, loc, threadId, i32(5));
  warpgroup = {};
  smemBase = LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 3), kSharedMemorySymbol);
  prologueAnchor = i32(0).getDefiningOp();
  lazyBase = i32(0).getDefiningOp();
  persistentBase = i32(0).getDefiningOp();
  operandBarrierBase = i32(0).getDefiningOp();
  ringBase = i32(0).getDefiningOp();
  stagingBase = i32(0).getDefiningOp();
  // A producer warpgroup (ProducerWarpgroup.cpp) for TMA copies of streamed wgmma loops, with one or
  // two consumer warpgroups and one CTA per SM (setmaxnreg shares out one SM's registers).
  auto producerAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kProducerWarpgroupAttrName);
  auto minBlocksAttr = func->getAttrOfType<IntegerAttr>(tile::TileDialect::kMinBlocksPerSMAttrName);
  producerMode = producerAttr && producerAttr.getValue() && wgmma && tmaEnabled && (numWarps == 4 || numWarps == 8) &&
                 (!minBlocksAttr || minBlocksAttr.getInt() == 1);
  if (producerMode) {
    gfunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({numThreads + 4 * kWarpSize, 1, 1}));
    beginProducer();
  }
  auto uniformAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kUniformWarpgroupAttrName);
  uniformWarpgroup = !uniformAttr || uniformAttr.getValue();
  auto persistentAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kPersistentAttrName);
  persistent = persistentAttr && persistentAttr.getValue();
  auto pairsAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kPairInstancesAttrName);
  pairInstances = !pairsAttr || pairsAttr.getValue();
  auto lateAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kOperandsAfterFirstStageAttrName);
  operandsAfterFirstStage = lateAttr && lateAttr.getValue();
  auto prefetchAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kPrefetchNextInstanceAttrName);
  prefetchNextInstance = prefetchAttr && prefetchAttr.getValue();
  auto registersAttr = func->getAttrOfType<BoolAttr>(tile::TileDialect::kInvariantAInRegistersAttrName);
  invariantAInRegisters = persistent && wgmma && !tmaFallback && registersAttr && registersAttr.getValue();
  if (persistent) {
    // The grid the body's program ids index: hidden parameters right after the kernel's own.
    for (unsigned d = 0; d < kPersistentGridParams; ++d) {
      unsigned idx = gfunc.getNumArguments();
      if (failed(gfunc.insertArgument(idx, b.getI32Type(), DictionaryAttr::get(ctx), gfunc.getLoc())))
        return emitError(func.getLoc()) << "internal error: could not add the grid parameters to kernel '"
                                        << func.getName() << "'";
      virtualGrid[d] = gfunc.getArgument(idx);
    }
    gfunc->setAttr(kPersistentAttrName, b.getUnitAttr());
    func.walk([&](tile::SplitRangeOp op) { splitRange = op; });
    if (splitRange) {
      // The workspace of split instances: a hidden parameter after the grid.
      unsigned idx = gfunc.getNumArguments();
      if (failed(gfunc.insertArgument(idx, LLVM::LLVMPointerType::get(ctx, 1), DictionaryAttr::get(ctx), gfunc.getLoc())))
        return emitError(func.getLoc()) << "internal error: could not add the split workspace to kernel '"
                                        << func.getName() << "'";
      splitWorkspace = gfunc.getArgument(idx);
      Operation *state = nullptr;
      func.walk([&](Operation *op) {
        if (!state && isa<tile::SplitStoreOp, tile::SplitLoadOp>(op))
          state = op;
      });
      if (state) {
        ValueRange tiles = isa<tile::SplitStoreOp>(state) ? ValueRange(state->getOperands()) : state->getResults();
        for (Value t : tiles)
          splitSlotRegs += layoutOf(t).numRegs();
      }
      gfunc->setAttr(kSplitSlotBytesAttrName,
                     b.getI32IntegerAttr(static_cast<int32_t>(splitSlotRegs * numWarps * kWarpSize * 4)));
    }
    tileLoop = beginTileLoop();
    rebindThreadValues();
  }

  if (failed(lowerBlock(func.getBody().front())))
    return failure();
  restoreThreadValues();
  if (producerMode) {
    if (failed(emitProducer()))
      return failure();
    if (producerMode) { // setmaxnreg is honoured for kernels of one CTA per SM, compiled whole
      gfunc->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
      gfunc->setAttr(kRegisterBudgetsAttrName, b.getUnitAttr());
    }
  }
  if (hiddenParamFailed)
    return emitError(func.getLoc()) << "internal error: could not add the TMA parameters to kernel '"
                                    << func.getName() << "'";
  // Shared memory, in order: the other ops' scratch, lazy dot operands, persistent operands (stored
  // once per kernel or loop), the rings of streamed loops, the panels of TMA stores without a ring.
  // The ring's stages hold 128-byte swizzled panels: 1024-byte aligned (so is the buffer itself).
  constexpr int64_t kAlign = 16, kRingAlign = 128, kSwizzledRingAlign = 1024;
  const int64_t lazyAlign = lazySwizzled ? kSwizzledRingAlign : kAlign;
  int64_t scratch = alignUp(sharedBytes, lazyAlign);
  lazyBase->setAttr("value", b.getI32IntegerAttr(static_cast<int32_t>(scratch)));
  int64_t persistentStart =
      alignUp(scratch + lazyBytes, persistentSwizzled ? kSwizzledRingAlign : persistentBytes ? kRingAlign : kAlign);
  persistentBase->setAttr("value", b.getI32IntegerAttr(static_cast<int32_t>(persistentStart)));
  constexpr int64_t kBarrierAlign = 8;
  int64_t barriersStart = alignUp(persistentStart + persistentBytes, kBarrierAlign);
  operandBarrierBase->setAttr("value", b.getI32IntegerAttr(static_cast<int32_t>(barriersStart)));
  int64_t ringStart = alignUp(barriersStart + operandBarrierBytes, ringBytes ? kSwizzledRingAlign : 1);
  ringBase->setAttr("value", b.getI32IntegerAttr(static_cast<int32_t>(ringStart)));
  sharedBytes = ringStart + ringBytes;
  if (stagingBytes) { // TMA stores' own swizzled panels
    int64_t stagingStart = alignUp(sharedBytes, kSwizzledRingAlign);
    stagingBase->setAttr("value", b.getI32IntegerAttr(static_cast<int32_t>(stagingStart)));
    sharedBytes = stagingStart + stagingBytes;
  }
  if (sharedBytes > maxSharedBytes) {
    // Blame the largest part.
    int64_t worst = std::max({scratch, lazyBytes, persistentBytes, ringBytes});
    Location where = worst == ringBytes ? ringUser : worst == lazyBytes ? lazyUser : largestSharedUser;
    return emitError(where) << "kernel '" << func.getName() << "' needs " << sharedBytes
                            << " bytes of shared memory (" << worst << " for this op), more than the "
                            << maxSharedBytes << " a CTA may use: use smaller tiles or fewer warps";
  }
  gfunc->setAttr(kSharedBytesAttrName, b.getI32IntegerAttr(static_cast<int32_t>(sharedBytes)));
  if (tensorMapFlag || persistent)
    gfunc->setAttr(kUserArgsAttrName, b.getI32IntegerAttr(static_cast<int32_t>(func.getNumArguments())));
  return success();
}

scf::ForOp KernelLowering::beginTileLoop() {
  auto asI32 = [&](Value index) { return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index).getResult(); };
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) { return arith::CmpIOp::create(b, loc, pred, x, y); };
  Value ctas = asI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  Value cta = asI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value total = arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, virtualGrid[0], virtualGrid[1]),
                                      virtualGrid[2]);
  // CTA c of G takes chunks c, c + G, c + 2G, ... of `size` consecutive instances: pairs when there
  // are at least two per CTA (a generator can make each pair's work equal, e.g. a causal kernel's
  // heavy and light query blocks of one head), single instances otherwise or when the kernel asks
  // for them (tile.pair_instances = false).
  Value pairs = pairInstances
                    ? cmp(arith::CmpIPredicate::uge, total, arith::AddIOp::create(b, loc, ctas, ctas))
                    : arith::ConstantIntOp::create(b, loc, 0, 1).getResult();
  Value shift = arith::ExtUIOp::create(b, loc, b.getI32Type(), pairs); // log2 of the chunk size
  Value chunks = arith::ShRUIOp::create(b, loc, arith::AddIOp::create(b, loc, total, shift), shift);
  Value has = cmp(arith::CmpIPredicate::ult, cta, chunks);
  Value lastOfAll = arith::SubIOp::create(b, loc, chunks, i32(1));
  Value later = arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, lastOfAll, cta), ctas);
  Value mine = arith::SelectOp::create(b, loc, has, arith::AddIOp::create(b, loc, later, i32(1)), i32(0)); // chunks of this CTA
  // An odd total leaves the last chunk one instance short.
  Value lastChunk = arith::AddIOp::create(b, loc, cta, arith::MulIOp::create(b, loc, later, ctas));
  Value odd = cmp(arith::CmpIPredicate::ne, arith::AndIOp::create(b, loc, total, shift), i32(0));
  Value isShort = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, has, odd),
      cmp(arith::CmpIPredicate::eq, lastChunk, lastOfAll));
  Value trips = arith::SubIOp::create(b, loc, arith::ShLIOp::create(b, loc, mine, shift),
                                      arith::ExtUIOp::create(b, loc, b.getI32Type(), isShort));
  if (splitRange) {
    // Stream-K (see splitRange): instances in x-fastest order, single ones; without splits the
    // chunks above.
    auto sel = [&](Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y).getResult(); };
    auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
    auto sub = [&](Value x, Value y) { return arith::SubIOp::create(b, loc, x, y).getResult(); };
    auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, loc, x, y).getResult(); };
    auto div = [&](Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y).getResult(); };
    produceValue(splitRange.getSteps());
    Value steps = scalars.lookup(splitRange.getSteps());
    Value safeSteps = arith::MaxUIOp::create(b, loc, steps, i32(1));
    Value rounds = div(total, ctas), rest = sub(total, mul(rounds, ctas));
    // flare::splitsLaunch, on the device: a remainder, at least one whole round, enough steps, and
    // the tail's steps (fewer than 2 G S) within 32 bits.
    auto i64 = [&](Value x) { return arith::ExtUIOp::create(b, loc, b.getI64Type(), x).getResult(); };
    Value fits = cmp(arith::CmpIPredicate::ult, arith::MulIOp::create(b, loc, i64(steps), i64(ctas)),
                     arith::ConstantIntOp::create(b, loc, kSplitMaxStepsTimesCtas, 64));
    Value on = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::ne, rest, i32(0)),
                              cmp(arith::CmpIPredicate::uge, rounds, i32(1))),
        arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::uge, steps, i32(kSplitMinSteps)), fits));
    Value whole = sel(on, sub(rounds, i32(1)), rounds);
    // The cut points c * T * S / G (T tail instances of S steps on G CTAs) in 32 bits: with T S =
    // q G + r, that is c q + c r / G, and c r < G^2. A 64-bit division would be a call, and a call
    // makes ptxas serialize every wgmma of the kernel (C7509).
    Value tailSteps = mul(sub(total, mul(whole, ctas)), safeSteps);
    Value perCta = div(tailSteps, ctas), spare = sub(tailSteps, mul(perCta, ctas));
    auto cut = [&](Value c) { return add(mul(c, perCta), div(mul(c, spare), ctas)); };
    Value next = add(cta, i32(1));
    Value hasTail = cmp(arith::CmpIPredicate::ult, cta, rest);
    Value s0 = sel(on, cut(cta), mul(cta, steps));
    Value s1 = sel(on, cut(next), mul(next, steps));
    Value first = sel(on, div(s0, safeSteps), cta);
    Value last = div(sub(s1, i32(1)), safeSteps);
    Value count = sel(on, add(sub(last, first), i32(1)), arith::ExtUIOp::create(b, loc, b.getI32Type(), hasTail));
    splitSchedule = {on, whole, first, s0, s1, steps};
    trips = sel(on, add(whole, count), trips);
  }
  auto loop = scf::ForOp::create(b, loc, i32(0), trips, i32(1), ValueRange{i32(0)});
  tileSchedule = {ctas, cta, shift};
  enterLoopBody(loop);
  virtualPids = instancePids(loop.getInductionVar());
  return loop;
}

Value KernelLowering::splitInstance(Value turn, Value chunked) {
  auto [on, rounds, first, s0, s1, steps] = splitSchedule;
  auto sel = [&](Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y).getResult(); };
  auto sub = [&](Value x, Value y) { return arith::SubIOp::create(b, loc, x, y).getResult(); };
  auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, loc, x, y).getResult(); };
  Value ctas = tileSchedule.ctas, cta = tileSchedule.cta;
  Value whole = arith::OrIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, turn, rounds),
                                     arith::XOrIOp::create(b, loc, on, arith::ConstantIntOp::create(b, loc, 1, 1)));
  Value tailIndex = arith::AddIOp::create(b, loc, first, sub(turn, rounds)); // of the tail instances
  Value instance = sel(on, sel(whole, arith::AddIOp::create(b, loc, mul(turn, ctas), cta),
                                arith::AddIOp::create(b, loc, mul(rounds, ctas), tailIndex)),
                       chunked);
  Value at = mul(tailIndex, steps); // the instance's first step in the tail's numbering
  Value lo = sel(whole, i32(0), arith::MaxSIOp::create(b, loc, sub(s0, at), i32(0)));
  Value hi = sel(whole, steps, arith::MinSIOp::create(b, loc, sub(s1, at), steps));
  // A piece that ends an instance uses this CTA's slot; one that begins it, the next CTA's.
  Value ends = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, lo, i32(0));
  splitItem = {lo, hi, sel(ends, cta, arith::AddIOp::create(b, loc, cta, i32(1)))};
  return instance;
}

LogicalResult KernelLowering::lowerSplitState(Operation *op, ValueRange tiles, bool store) {
  if (!splitWorkspace || !tileLoop)
    return op->emitOpError("needs the tile loop of a persistent kernel with a tile.split_range");
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  const int64_t threads = numWarps * kWarpSize;
  Type f32 = b.getF32Type(), i32Type = b.getI32Type();
  // Slots of splitSlotRegs * threads floats, then one i32 flag per CTA.
  Value slotFloats = i32(splitSlotRegs * threads);
  Value flagPtr = LLVM::GEPOp::create(
      b, loc, globalPtr, i32Type, splitWorkspace,
      ValueRange{arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, tileSchedule.ctas, slotFloats),
                                       splitItem.slot)});
  Value flag = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), flagPtr);
  Value slot = arith::MulIOp::create(b, loc, splitItem.slot, slotFloats);
  auto address = [&](int64_t reg) {
    Value index = arith::AddIOp::create(b, loc, slot, arith::AddIOp::create(b, loc, i32(reg * threads), threadId));
    return LLVM::GEPOp::create(b, loc, globalPtr, f32, splitWorkspace,
                               ValueRange{arith::ExtUIOp::create(b, loc, b.getI64Type(), index)})
        .getResult();
  };
  auto asmOp = [&](StringRef text) {
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{flag}, text, "l,~{memory}", /*has_side_effects=*/true,
                              /*is_align_stack=*/false, LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  };
  if (!store) {
    // Thread 0 waits for the other piece's flag (and clears it for the next launch); a lost signal
    // traps after about 2^30 polls instead of hanging.
    ifThen(isThreadZero(), [&] {
      asmOp("{\n.reg .pred p;\n.reg .b32 v, n;\nmov.u32 n, 0;\nWAIT:\nld.acquire.gpu.global.b32 v, [$0];\n"
            "setp.ne.b32 p, v, 0;\n@p bra DONE;\nadd.u32 n, n, 1;\nsetp.lt.u32 p, n, 1073741824;\n@p bra WAIT;\n"
            "trap;\nDONE:\nst.relaxed.gpu.global.b32 [$0], 0;\n}");
    });
    barrier();
  }
  int64_t reg = 0;
  for (Value t : tiles) {
    const int64_t n = layoutOf(t).numRegs();
    SmallVector<Value> values;
    for (int64_t r = 0; r < n; ++r) {
      Value at = address(reg + r);
      if (store)
        LLVM::StoreOp::create(b, loc, regs[t][r], at);
      else
        values.push_back(LLVM::LoadOp::create(b, loc, f32, at));
    }
    if (!store)
      regs[t] = values;
    reg += n;
  }
  if (reg != splitSlotRegs)
    return op->emitOpError() << "carries " << reg << " registers a thread, the kernel's slots " << splitSlotRegs;
  if (store) {
    // Every thread's stores, then one release of them.
    barrier();
    ifThen(isThreadZero(), [&] { asmOp("{\nfence.acq_rel.gpu;\nst.relaxed.gpu.global.b32 [$0], 1;\n}"); });
  }
  return success();
}

std::array<Value, 3> KernelLowering::instancePids(Value turn) {
  auto [ctas, cta, shift] = tileSchedule;
  Value chunk = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, arith::ShRUIOp::create(b, loc, turn, shift), ctas), cta);
  Value instance = arith::AddIOp::create(b, loc, arith::ShLIOp::create(b, loc, chunk, shift),
                                         arith::AndIOp::create(b, loc, turn, shift));
  if (splitRange)
    instance = splitInstance(turn, instance);
  Value yz = arith::DivUIOp::create(b, loc, instance, virtualGrid[0]);
  return {arith::RemUIOp::create(b, loc, instance, virtualGrid[0]).getResult(),
          arith::RemUIOp::create(b, loc, yz, virtualGrid[1]).getResult(),
          arith::DivUIOp::create(b, loc, yz, virtualGrid[1]).getResult()};
}

Value KernelLowering::warpUniform(Value v) {
  return NVVM::ShflOp::create(b, loc, b.getI32Type(), i32(-1), v, i32(0), i32(kWarpSize - 1), NVVM::ShflKind::idx,
                              UnitAttr());
}

Value KernelLowering::warpgroupId() {
  if (!warpgroup) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(warpId);
    warpgroup = arith::ShRUIOp::create(b, loc, warpId, i32(2));
    if (uniformWarpgroup)
      warpgroup = warpUniform(warpgroup);
  }
  return warpgroup;
}

void KernelLowering::rebindThreadValues() {
  kernelThread = {threadId, laneId, warpId, warpgroup, smemBase, prologueAnchor};
  // LLVM would hoist everything the body derives from the thread id and the shared buffer's address
  // out of the tile loop (wgmma descriptors, shared addresses: dozens of registers), and keep it live
  // through every instance's epilogue. A zero it cannot see through, made once per instance, keeps
  // them where the body computes them.
  Value zero = LLVM::InlineAsmOp::create(b, loc, b.getI32Type(), ValueRange{}, "mov.u32 $0, 0;", "=r",
                                         /*has_side_effects=*/true, /*is_align_stack=*/false,
                                         LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                   .getResult(0);
  threadId = arith::AddIOp::create(b, loc, kernelThread.threadId, zero);
  laneId = arith::AndIOp::create(b, loc, threadId, i32(kWarpSize - 1));
  warpId = arith::ShRUIOp::create(b, loc, threadId, i32(5));
  warpgroup = {};
  smemBase = LLVM::GEPOp::create(b, loc, smemBase.getType(), b.getI8Type(), kernelThread.smemBase, ValueRange{zero});
  prologueAnchor = i32(0).getDefiningOp();
  threadCoords.clear();
}

void KernelLowering::restoreThreadValues() {
  if (!kernelThread.threadId)
    return;
  threadId = kernelThread.threadId;
  laneId = kernelThread.laneId;
  warpId = kernelThread.warpId;
  warpgroup = kernelThread.warpgroup;
  smemBase = kernelThread.smemBase;
  prologueAnchor = kernelThread.prologueAnchor;
  threadCoords.clear();
  kernelThread = {};
}

void KernelLowering::withKernelThreadValues(const std::function<void()> &body) {
  auto swapAll = [&](auto &saved) {
    std::swap(threadId, saved.threadId);
    std::swap(laneId, saved.laneId);
    std::swap(warpId, saved.warpId);
    std::swap(warpgroup, saved.warpgroup);
    std::swap(smemBase, saved.smemBase);
    std::swap(prologueAnchor, saved.prologueAnchor);
  };
  auto saved = kernelThread;
  swapAll(saved);
  std::swap(threadCoords, savedThreadCoords);
  body();
  std::swap(threadCoords, savedThreadCoords);
  swapAll(saved);
  kernelThread.warpgroup = saved.warpgroup; // made by `body`, for the next visit
}

void KernelLowering::endTileLoop() {
  // The next instance overwrites what this one's threads read (operands' panels, a TMA store's
  // staging, a ring's barriers they set up): every consumer is done here. Unless nothing of that is
  // theirs: the producer's rings and operands order themselves, each warpgroup's staging has its own
  // barriers, scratch users start with one; then only launches whose maps did not encode (the
  // consumers copy the operands themselves) need it.
  const bool ownStateOnly = producerMode && perWarpgroupStores && !consumersSetUpState && lazyBytes == 0;
  if (ownStateOnly)
    ifThen(notI1(tensorMapsUsable()), [&] { barrier(); });
  else
    barrier();
  scf::YieldOp::create(b, loc, tileRingNext ? tileRingNext : tileLoop.getRegionIterArgs()[0]);
  b.setInsertionPointAfter(tileLoop);
  restoreThreadValues();
  // The MMA turns: when every loop that takes turns sits in the instance's body, warpgroup 1 gives
  // the first turn once before the tile loop and warpgroup 0 takes the last back after it, so that
  // the turn passes on from one instance's last loop to the next one's first (as between a ring's
  // loops), and neither warpgroup waits for the other at an instance's end.
  SmallVector<Operation *> turns;
  bool allInBody = true;
  kernelFunc.walk([&](scf::IfOp ifOp) {
    if (!ifOp->hasAttr(kTurnAttrName))
      return;
    ifOp->removeAttr(kTurnAttrName);
    turns.push_back(ifOp);
    allInBody &= ifOp->getBlock() == tileLoop.getBody();
  });
  if (allInBody && !turns.empty()) {
    for (Operation *turn : turns)
      turn->erase();
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(tileLoop);
      giveFirstTurn();
    }
    takeTurnBack();
  }
  // The last TMA stores must have read their panels before the CTA exits (each warpgroup's first
  // thread issued its own).
  if (tmaStoresInFlight) {
    Value issuer = perWarpgroupStores ? arith::AndIOp::create(b, loc, threadId, i32(127)).getResult() : threadId;
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, issuer, i32(0)),
           [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr()); });
  }
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block) {
    if (failed(lowerOp(&op)))
      return failure();
    // Produced operands whose last reader this was: each consumer warp releases them (its dots that
    // read them are done) for the producer's next copy.
    auto it = releaseAfter.find(&op);
    if (it == releaseAfter.end())
      continue;
    if (auto dot = dyn_cast<tile::DotOp>(op))
      waitForDots(dot.getResult());
    for (Value v : it->second) {
      // Unless a loop released it already: loop j did when it ran and no later loop did.
      Value unreleased;
      if (auto early = earlyReleases.find(v); early != earlyReleases.end())
        for (size_t j = 0; j < early->second.loops.size(); ++j) {
          if (!early->second.inLoop[j])
            continue;
          Value released =
              arith::AndIOp::create(b, loc, loopRuns(early->second.loops[j]), laterLoopsIdle(early->second, j));
          unreleased = unreleased ? arith::AndIOp::create(b, loc, unreleased, notI1(released)).getResult()
                                  : notI1(released);
        }
      arriveFromLane0(tmaOperands[v].empty, unreleased);
    }
    for (Value v : it->second)
      if (tmaOperands[v].issue >= 0)
        issueNextInstance(v);
  }
  return success();
}

void KernelLowering::waitForProducerInit() {
  if (producerInitWaited)
    return;
  producerInitWaited = true;
  OpBuilder::InsertionGuard guard(b);
  if (persistent)
    b.setInsertionPoint(tileLoop);
  NVVM::BarrierOp::create(b, loc, TypeRange{}, i32(kRingReady), i32((numWarps + 4) * kWarpSize), {}, Value());
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  // Results of wgmma dots still in flight are waited for where they are first used; ops with
  // regions may use any of them.
  if (op->getNumRegions() || isa<func::ReturnOp>(op))
    waitForDots();
  else
    for (Value operand : op->getOperands())
      waitForDots(operand);
  if (isa<func::ReturnOp>(op)) {
    if (persistent && tileLoop && b.getInsertionBlock() == tileLoop.getBody())
      endTileLoop();
    gpu::ReturnOp::create(b, loc);
    return success();
  }
  if (auto pid = dyn_cast<tile::ProgramIdOp>(op)) {
    if (persistent) {
      scalars.map(pid.getResult(), virtualPids[static_cast<int>(pid.getAxis())]);
      return success();
    }
    Value id = gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(pid.getAxis()));
    scalars.map(pid.getResult(), arith::IndexCastUIOp::create(b, loc, b.getI32Type(), id));
    return success();
  }
  if (auto range = dyn_cast<tile::SplitRangeOp>(op)) {
    if (!splitRange || !splitItem.lo)
      return op->emitOpError("needs the tile loop of a persistent kernel");
    scalars.map(range.getLo(), splitItem.lo);
    scalars.map(range.getHi(), splitItem.hi);
    return success();
  }
  if (auto store = dyn_cast<tile::SplitStoreOp>(op))
    return lowerSplitState(op, store.getValues(), /*store=*/true);
  if (auto load = dyn_cast<tile::SplitLoadOp>(op))
    return lowerSplitState(op, load.getResults(), /*store=*/false);
  if (auto np = dyn_cast<tile::NumProgramsOp>(op)) {
    if (persistent) {
      scalars.map(np.getResult(), virtualGrid[static_cast<int>(np.getAxis())]);
      return success();
    }
    Value n = gpu::GridDimOp::create(b, loc, static_cast<gpu::Dimension>(np.getAxis()));
    scalars.map(np.getResult(), arith::IndexCastUIOp::create(b, loc, b.getI32Type(), n));
    return success();
  }
  if (auto add = dyn_cast<tile::AddPtrOp>(op)) {
    Value offset = scalars.lookup(add.getOffset());
    if (offset.getType().isInteger(32))
      offset = arith::ExtSIOp::create(b, loc, b.getI64Type(), offset);
    Type elem = add.getBase().getType().getElementType();
    scalars.map(add.getResult(), LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), elem,
                                                     scalars.lookup(add.getBase()), ValueRange{offset}));
    return success();
  }
  if (auto gather = dyn_cast<tile::GatherOp>(op)) {
    Type elem = gather.getResult().getType().getElementType();
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    Value base = scalars.lookup(gather.getBase());
    SmallVector<Value> out;
    for (Value offset : regs[gather.getOffsets()]) {
      Value addr = LLVM::GEPOp::create(b, loc, globalPtr, elem, base,
                                       ValueRange{arith::ExtSIOp::create(b, loc, b.getI64Type(), offset)});
      out.push_back(LLVM::LoadOp::create(b, loc, elem, addr));
    }
    regs[gather.getResult()] = out;
    return success();
  }
  if (auto view = dyn_cast<tile::MakeViewOp>(op)) {
    ViewInfo info;
    info.base = scalars.lookup(view.getBase());
    for (Value s : view.getSizes())
      info.sizes.push_back(scalars.lookup(s));
    for (Value s : view.getStrides())
      info.strides.push_back(arith::ExtSIOp::create(b, loc, b.getI64Type(), scalars.lookup(s)));
    APInt innerStride;
    info.unitInnerStride = !view.getStrides().empty() &&
                           matchPattern(view.getStrides().back(), m_ConstantInt(&innerStride)) && innerStride == 1;
    views[view.getResult()] = std::move(info);
    return success();
  }
  if (auto load = dyn_cast<tile::LoadOp>(op))
    return loadOperandByTma(load) ? success() : lowerLoad(load);
  if (auto store = dyn_cast<tile::StoreOp>(op))
    return lowerStore(op, store.getValue(), store.getView(), store.getOffsets(), /*atomicAdd=*/false);
  if (auto add = dyn_cast<tile::AtomicAddOp>(op))
    return lowerStore(op, add.getValue(), add.getView(), add.getOffsets(), /*atomicAdd=*/true);
  if (auto dot = dyn_cast<tile::DotOp>(op))
    return lowerDot(dot);
  if (isa<tile::TransOp, tile::ReshapeOp>(op)) {
    // The layouts already re-express the coordinates: every register keeps its value.
    SmallVector<Value> same = regs.lookup(op->getOperand(0)); // copied first: regs[...] may rehash
    regs[op->getResult(0)] = std::move(same);
    return success();
  }
  if (auto range = dyn_cast<tile::RangeOp>(op)) {
    LinearLayout layout = layoutOf(range.getResult());
    Attribute attr = getLayoutAttr(range.getResult().getType());
    SmallVector<Value> out;
    for (int r = 0; r < layout.numRegs(); ++r)
      out.push_back(arith::AddIOp::create(b, loc, regCoord(attr, layout, r)[0], i32(range.getStart())));
    regs[range.getResult()] = out;
    return success();
  }
  if (auto splat = dyn_cast<tile::SplatOp>(op)) {
    regs[splat.getResult()] =
        SmallVector<Value>(layoutOf(splat.getResult()).numRegs(), scalars.lookup(splat.getValue()));
    return success();
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(op); cst && isa<RankedTensorType>(cst.getType())) {
    auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
    if (!dense)
      return op->emitOpError("only splat constants are supported on tiles");
    Value v = arith::ConstantOp::create(b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    regs[cst.getResult()] = SmallVector<Value>(layoutOf(cst.getResult()).numRegs(), v);
    return success();
  }
  if (auto expand = dyn_cast<tile::ExpandDimsOp>(op)) {
    SmallVector<Value> same = regs.lookup(expand.getSrc()); // copied first: regs[...] may rehash
    regs[expand.getResult()] = std::move(same);
    return success();
  }
  if (auto bcast = dyn_cast<tile::BroadcastOp>(op)) {
    SmallVector<Value> out;
    if (failed(lowerConvert(bcast.getSrc(), bcast.getResult(), regs[bcast.getSrc()], out)))
      return failure();
    regs[bcast.getResult()] = out;
    return success();
  }
  if (auto conv = dyn_cast<ConvertLayoutOp>(op); conv && feedsOnlyWgmma(conv)) {
    // The dots store the source registers straight into shared memory (or stream them): the
    // converted registers are never needed.
    wgmmaSources[conv.getResult()] = conv.getSrc();
    return success();
  }
  if (auto conv = dyn_cast<ConvertLayoutOp>(op); conv && isLazyDotOperand(conv)) {
    auto dot = cast<tile::DotOp>(*conv->getUsers().begin());
    if (canUseWgmma(dot))
      wgmmaSources[conv.getResult()] = conv.getSrc();
    else
      lowerLazyConvert(conv);
    return success();
  }
  if (auto conv = dyn_cast<ConvertLayoutOp>(op)) {
    SmallVector<Value> out;
    if (failed(lowerConvert(conv.getSrc(), conv.getResult(), regs[conv.getSrc()], out)))
      return failure();
    regs[conv.getResult()] = out;
    return success();
  }
  if (auto reduce = dyn_cast<tile::ReduceOp>(op))
    return lowerReduce(reduce);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIf(ifOp);
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return lowerElementwise(op);
  return op->emitOpError("cannot be lowered to NVVM by convert-tgpu-to-nvvm");
}

static Value combine(OpBuilder &b, Location loc, tile::ReduceKind kind, Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case tile::ReduceKind::sum:
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult() : arith::AddIOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::max:
    return isFloat ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                   : arith::MaxSIOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::min:
    return isFloat ? arith::MinimumFOp::create(b, loc, x, y).getResult()
                   : arith::MinSIOp::create(b, loc, x, y).getResult();
  }
  llvm_unreachable("unknown reduction");
}

LogicalResult KernelLowering::lowerReduce(tile::ReduceOp op) {
  auto srcType = op.getSrc().getType();
  Type elem = srcType.getElementType();
  if (elem.getIntOrFloatBitWidth() != 32)
    return op.emitOpError() << "reductions of " << elem << " are not supported yet; extend to 32 bits first";
  const int axis = op.getAxis();
  LinearLayout src = layoutOf(op.getSrc());
  std::optional<LinearLayout> sliced = src.sliceReduced(axis);
  if (!sliced)
    return op.emitOpError("source layout mixes the reduced axis with other dimensions");
  auto project = [&](LinearLayout::Coord c) {
    c.erase(c.begin() + axis);
    return c;
  };
  ArrayRef<Value> in = regs[op.getSrc()];

  // (a) Inside the thread: registers with the same projected coordinate combine, in register order.
  SmallVector<Value> partial;
  for (int j = 0; j < sliced->numRegs(); ++j) {
    LinearLayout::Coord want = sliced->applyInput(LayoutInput::Reg, j);
    Value acc;
    for (int r = 0; r < src.numRegs(); ++r)
      if (project(src.applyInput(LayoutInput::Reg, r)) == want)
        acc = acc ? combine(b, loc, op.getKind(), acc, in[r]) : in[r];
    if (!acc)
      return op.emitOpError("internal error: reduced register without a source");
    partial.push_back(acc);
  }

  // (b) Across lanes: butterfly shuffles over the lane bits that move along the axis.
  const auto &laneBases = src.bases(LayoutInput::Lane);
  Value fullMask = i32(-1), clamp = i32(kWarpSize - 1);
  for (size_t bit = 0; bit < laneBases.size(); ++bit) {
    if (laneBases[bit][axis] == 0)
      continue;
    for (Value &v : partial) {
      Value other = NVVM::ShflOp::create(b, loc, elem, fullMask, v, i32(1 << bit), clamp, NVVM::ShflKind::bfly,
                                         UnitAttr());
      v = combine(b, loc, op.getKind(), v, other);
    }
  }

  // (c) Across warps, through shared memory laid out as [warp][row-major output element].
  const auto &warpBases = src.bases(LayoutInput::Warp);
  int axisWarpMask = 0;
  for (size_t bit = 0; bit < warpBases.size(); ++bit)
    if (warpBases[bit][axis] != 0)
      axisWarpMask |= 1 << bit;
  if (axisWarpMask) {
    LinearLayout::Coord outShape = project(src.shape());
    int64_t outElems = 1;
    for (int64_t s : outShape)
      outElems *= s;
    needShared(static_cast<int64_t>(src.numWarps()) * outElems * 4);
    Attribute slicedAttr = LinearLayoutAttr::get(b.getContext(), *sliced);
    SmallVector<Value> outIndex;
    for (int j = 0; j < sliced->numRegs(); ++j)
      outIndex.push_back(sliced->rank() ? linearIndex(regCoord(slicedAttr, *sliced, j), sliced->shape()) : i32(0));
    Value warpRow = arith::MulIOp::create(b, loc, warpId, i32(outElems));
    for (int j = 0; j < sliced->numRegs(); ++j)
      LLVM::StoreOp::create(b, loc, partial[j], smemAddress(arith::AddIOp::create(b, loc, warpRow, outIndex[j]), elem));
    barrier();
    Value baseWarp = arith::AndIOp::create(b, loc, warpId, i32(~axisWarpMask));
    for (int j = 0; j < sliced->numRegs(); ++j) {
      Value acc;
      for (int combo = 0; combo < src.numWarps(); ++combo) {
        if ((combo & ~axisWarpMask) != 0)
          continue;
        Value w = arith::OrIOp::create(b, loc, baseWarp, i32(combo));
        Value idx = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, w, i32(outElems)), outIndex[j]);
        Value v = LLVM::LoadOp::create(b, loc, elem, smemAddress(idx, elem));
        acc = acc ? combine(b, loc, op.getKind(), acc, v) : v;
      }
      partial[j] = acc;
    }
    barrier();
  }

  if (isa<RankedTensorType>(op.getResult().getType()))
    regs[op.getResult()] = partial;
  else
    scalars.map(op.getResult(), partial.front());
  return success();
}

LogicalResult KernelLowering::lowerConvert(Value src, Value dst, ArrayRef<Value> srcRegs, SmallVectorImpl<Value> &out) {
  LinearLayout from = layoutOf(src), to = layoutOf(dst);
  if (std::optional<std::vector<int>> perm = to.registerPermutationFrom(from)) {
    for (int r : *perm)
      out.push_back(srcRegs[r]);
    return success();
  }
  if (from.shape() != to.shape())
    return emitError(loc) << "broadcast source layout " << from.str() << " cannot feed " << to.str();
  // Through shared memory: every thread writes what it holds at the row-major index, then reads.
  Type elem = cast<RankedTensorType>(src.getType()).getElementType();
  Type st = scratchType(elem);
  needShared(from.numElements() * std::max(4u, st.getIntOrFloatBitWidth() / 8));
  Attribute fromAttr = getLayoutAttr(src.getType()), toAttr = getLayoutAttr(dst.getType());
  barrier(); // earlier readers of the scratch buffer are done
  for (int r = 0; r < from.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(fromAttr, from, r), from.shape());
    LLVM::StoreOp::create(b, loc, toScratch(srcRegs[r]), smemAddress(idx, st));
  }
  barrier();
  for (int r = 0; r < to.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(toAttr, to, r), to.shape());
    out.push_back(fromScratch(LLVM::LoadOp::create(b, loc, st, smemAddress(idx, st)), elem));
  }
  barrier();
  return success();
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  if (auto loads = matchPipelinedDotLoop(op))
    return lowerPipelinedDotLoop(op, *loads);
  SmallVector<Stream> streams = matchStreamedLoop(op);
  // A streamed loop issues its first copies ahead of the invariant operands' stores (Q's loads from
  // global memory and the first K/V copies are then in flight together).
  Operation *beforeInvariant = streams.empty() ? nullptr : i32(0).getDefiningOp();
  SmallVector<Value> invariant = storeInvariantOperands(op);
  LogicalResult result = streams.empty() ? lowerForGeneric(op) : lowerStreamedLoop(op, streams, beforeInvariant);
  if (beforeInvariant)
    beforeInvariant->erase();
  for (Value operand : invariant)
    smemOperands.erase(operand);
  return result;
}

LogicalResult KernelLowering::lowerForGeneric(scf::ForOp op) {
  SmallVector<Value> inits = flatten(op.getInitArgs());
  auto newFor = scf::ForOp::create(b, loc, scalars.lookup(op.getLowerBound()), scalars.lookup(op.getUpperBound()),
                                   scalars.lookup(op.getStep()), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    enterLoopBody(newFor);
    scalars.map(op.getInductionVar(), newFor.getInductionVar());
    unflatten(op.getRegionIterArgs(), newFor.getRegionIterArgs());
    for (Operation &inner : op.getBody()->without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
    waitForDots();
    scf::YieldOp::create(b, yield.getLoc(), flatten(yield.getOperands()));
  }
  unflatten(op.getResults(), newFor.getResults());
  return success();
}

LogicalResult KernelLowering::lowerIf(scf::IfOp op) {
  SmallVector<Type> types = flattenTypes(op.getResultTypes());
  bool hasElse = !op.getElseRegion().empty();
  auto newIf = scf::IfOp::create(b, loc, types, scalars.lookup(op.getCondition()), hasElse);
  for (auto [from, to] : {std::pair<Region *, Region *>{&op.getThenRegion(), &newIf.getThenRegion()},
                          {&op.getElseRegion(), &newIf.getElseRegion()}}) {
    if (from->empty())
      continue;
    OpBuilder::InsertionGuard guard(b);
    Block *block = &to->front();
    if (!block->empty() && isa<scf::YieldOp>(block->back()))
      block->back().erase();
    b.setInsertionPointToEnd(block);
    for (Operation &inner : from->front().without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    auto yield = cast<scf::YieldOp>(from->front().getTerminator());
    waitForDots();
    scf::YieldOp::create(b, yield.getLoc(), flatten(yield.getOperands()));
  }
  unflatten(op.getResults(), newIf.getResults());
  return success();
}

bool KernelLowering::lowerSkippableMul(arith::MulFOp op) {
  if (!op->hasAttr(tile::TileDialect::kSkipUnitFactorAttrName) || !isa<RankedTensorType>(op.getType()))
    return false;
  Value factor = op.getRhs(), other = op.getLhs();
  if (!factor.getDefiningOp<tile::BroadcastOp>())
    std::swap(factor, other);
  if (!factor.getDefiningOp<tile::BroadcastOp>() || !regs.count(factor) || !regs.count(other))
    return false;
  // The factor's registers repeat a few values (a row's alpha in every column of it): compare those.
  constexpr size_t kMaxDistinct = 8;
  llvm::SetVector<Value> distinct(regs[factor].begin(), regs[factor].end());
  if (distinct.size() > kMaxDistinct)
    return false;
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(getElementTypeOrSelf(op.getType()), 1.0));
  Value anyNotOne;
  for (Value f : distinct) {
    Value ne = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, f, one);
    anyNotOne = anyNotOne ? arith::OrIOp::create(b, loc, anyNotOne, ne).getResult() : ne;
  }
  SmallVector<Value> lhs = regs[other], rhs = regs[factor];
  SmallVector<Type> types(lhs.size(), getElementTypeOrSelf(op.getType()));
  auto ifOp = scf::IfOp::create(b, loc, types, anyNotOne, /*withElseRegion=*/true);
  for (bool multiply : {true, false}) {
    OpBuilder::InsertionGuard guard(b);
    Block *block = multiply ? ifOp.thenBlock() : ifOp.elseBlock();
    if (!block->empty() && isa<scf::YieldOp>(block->back()))
      block->back().erase();
    b.setInsertionPointToEnd(block);
    SmallVector<Value> out = lhs;
    if (multiply)
      for (auto [i, x] : llvm::enumerate(lhs))
        out[i] = arith::MulFOp::create(b, loc, x, rhs[i]);
    scf::YieldOp::create(b, loc, out);
  }
  regs[op.getResult()] = SmallVector<Value>(ifOp.getResults());
  return true;
}

LogicalResult KernelLowering::lowerElementwise(Operation *op) {
  if (op->getNumRegions() != 0)
    return op->emitOpError("ops with regions are not supported in tile kernels");
  if (auto mul = dyn_cast<arith::MulFOp>(op); mul && lowerSkippableMul(mul))
    return success();
  int numRegs = 1;
  for (Value r : op->getResults())
    if (isa<RankedTensorType>(r.getType()))
      numRegs = layoutOf(r).numRegs();
  // f32 -> 16-bit narrowing in register pairs: one paired conversion (cvt.rn.bf16x2.f32) per two.
  if (auto trunc = dyn_cast<arith::TruncFOp>(op); trunc && numRegs % 2 == 0 && regs.count(trunc.getIn()) &&
                                                  getElementTypeOrSelf(trunc.getIn().getType()).isF32()) {
    Type narrow = getElementTypeOrSelf(trunc.getType());
    ArrayRef<Value> in = regs[trunc.getIn()];
    SmallVector<Value> out;
    for (int i = 0; i < numRegs; i += 2) {
      Value v = LLVM::UndefOp::create(b, loc, VectorType::get({2}, b.getF32Type()));
      v = LLVM::InsertElementOp::create(b, loc, v, in[i], i32(0));
      v = LLVM::InsertElementOp::create(b, loc, v, in[i + 1], i32(1));
      Value pair = arith::TruncFOp::create(b, loc, VectorType::get({2}, narrow), v);
      out.push_back(LLVM::ExtractElementOp::create(b, loc, pair, i32(0)));
      out.push_back(LLVM::ExtractElementOp::create(b, loc, pair, i32(1)));
    }
    regs[trunc.getResult()] = out;
    return success();
  }
  SmallVector<SmallVector<Value>> results(op->getNumResults());
  for (int i = 0; i < numRegs; ++i) {
    SmallVector<Value> operands;
    for (auto [pos, v] : llvm::enumerate(op->getOperands())) {
      Value lowered = isa<RankedTensorType>(v.getType()) ? (regs.count(v) ? regs[v][i] : Value())
                                                         : scalars.lookupOrNull(v);
      if (!lowered)
        return op->emitOpError() << "operand #" << pos
                                 << " has not been lowered (an unsupported producer or a value from outside the kernel)";
      operands.push_back(lowered);
    }
    if (op->getNumResults() != 1)
      return op->emitOpError("expected one result");
    Type resultType = getElementTypeOrSelf(op->getResult(0).getType());
    FailureOr<Value> r = emitScalar(op, operands, resultType);
    if (failed(r))
      return failure();
    results[0].push_back(*r);
  }
  Value res = op->getResult(0);
  if (isa<RankedTensorType>(res.getType()))
    regs[res] = results[0];
  else
    scalars.map(res, results[0][0]);
  return success();
}

/// Emits one scalar instance of an elementwise op. Transcendentals use the approximate NVVM
/// instructions (what the fast path of every attention kernel uses); 16-bit inputs compute in f32.
FailureOr<Value> KernelLowering::emitScalar(Operation *op, ValueRange operands, Type resultType) {
  // Float division as Triton's `/`: div.full.f32 (2 ulp), never IEEE div.rn / rcp.rn. Those expand
  // to a subroutine call in the driver's relocatable (cuLink) compilation, and one call anywhere in a
  // kernel makes ptxas serialize every wgmma of it (warning C7509).
  if (isa<arith::DivFOp>(op) && resultType.getIntOrFloatBitWidth() <= 32) {
    Type f32 = b.getF32Type();
    SmallVector<Value> args;
    for (Value v : operands)
      args.push_back(v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v).getResult());
    Value q = LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr("llvm.nvvm.div.full"), args).getResult(0);
    return resultType == f32 ? q : arith::TruncFOp::create(b, loc, resultType, q).getResult();
  }
  if (!isa<math::MathDialect>(op->getDialect())) {
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultType);
    state.addAttributes(op->getAttrs());
    Operation *scalar = b.create(state);
    // Multiplies may fuse with the adds that consume them (one FMA, as CUDA compiles a * b + c):
    // the online softmax's scale and max subtraction become one instruction per score.
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(scalar))
      if (isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(scalar))
        scalar->setAttr(fm.getFastMathAttrName(),
                        arith::FastMathFlagsAttr::get(b.getContext(), fm.getFastMathFlagsAttr().getValue() |
                                                                          arith::FastMathFlags::contract));
    return scalar->getResult(0);
  }
  if (!isa<FloatType>(resultType) || operands.size() != 1)
    return op->emitOpError("is not supported in tile kernels yet"), failure();
  Type f32 = b.getF32Type();
  Value x = operands[0];
  if (resultType != f32)
    x = arith::ExtFOp::create(b, loc, f32, x);
  auto intrinsic = [&](StringRef name, Value arg) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr(name), ValueRange{arg}).getResult(0);
  };
  auto mulConst = [&](Value v, double c) -> Value {
    return arith::MulFOp::create(b, loc, v, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(c)));
  };
  Value y;
  // exp2 flushes results below 2^-126 to zero (ex2.approx.ftz.f32, as CUDA's exp2f under fast math):
  // without .ftz ptxas wraps every MUFU.EX2 in a range check and two predicated multiplies to produce
  // denormals, three more instructions per softmax element.
  if (isa<math::Exp2Op>(op))
    y = intrinsic("llvm.nvvm.ex2.approx.ftz.f", x);
  else if (isa<math::ExpOp>(op))
    y = intrinsic("llvm.nvvm.ex2.approx.ftz.f", mulConst(x, kLog2E));
  else if (isa<math::Log2Op>(op))
    y = intrinsic("llvm.nvvm.lg2.approx.f", x);
  else if (isa<math::LogOp>(op))
    y = mulConst(intrinsic("llvm.nvvm.lg2.approx.f", x), kLn2);
  else if (isa<math::RsqrtOp>(op))
    y = intrinsic("llvm.nvvm.rsqrt.approx.f", x);
  else if (isa<math::SqrtOp>(op))
    y = intrinsic("llvm.nvvm.sqrt.approx.f", x); // as Triton's sqrt; sqrt.rn would serialize wgmma (above)
  else if (isa<math::AbsFOp>(op))
    y = intrinsic("llvm.fabs.f32", x);
  else if (isa<math::TanhOp>(op))
    // tanh.approx.f32 (sm_75+) has no LLVM intrinsic: one inline PTX instruction.
    y = LLVM::InlineAsmOp::create(b, loc, f32, ValueRange{x}, "tanh.approx.f32 $0, $1;", "=f,f",
                                  /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
                                  LLVM::AsmDialectAttr(), ArrayAttr())
            .getResult(0);
  else
    return op->emitOpError("is not supported in tile kernels yet"), failure();
  if (resultType != f32)
    y = arith::TruncFOp::create(b, loc, resultType, y);
  return y;
}

} // namespace flare::tgpu::lowering

namespace {
using namespace mlir;
using namespace flare;
using namespace flare::tgpu::lowering;

struct ConvertTGPUToNVVMPass : public flare::tgpu::impl::ConvertTGPUToNVVMBase<ConvertTGPUToNVVMPass> {
  using ConvertTGPUToNVVMBase::ConvertTGPUToNVVMBase;
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : top.getOps<func::FuncOp>())
      if (tile::isKernel(func))
        kernels.push_back(func);
    if (kernels.empty())
      return;
    OpBuilder b(top.getContext());
    top->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    b.setInsertionPointToEnd(top.getBody());
    auto module = gpu::GPUModuleOp::create(b, top.getLoc(), kKernelModuleName);
    b.setInsertionPointToStart(module.getBody());
    // One dynamic shared-memory buffer for the whole module: `.extern .shared .align 16 .b8 __flare_smem[]`.
    LLVM::GlobalOp::create(b, top.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0), /*isConstant=*/false,
                           LLVM::Linkage::External, kSharedMemorySymbol, Attribute(), /*alignment=*/1024,
                           /*addrSpace=*/3);
    for (func::FuncOp func : kernels) {
      auto kernelPingPong = func->getAttrOfType<BoolAttr>(tile::TileDialect::kPingPongAttrName);
      bool turns = pingPong && (!kernelPingPong || kernelPingPong.getValue());
      if (failed(KernelLowering(func, module, maxSharedBytes, wgmma, turns, tma, tmaFallback).run()))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
