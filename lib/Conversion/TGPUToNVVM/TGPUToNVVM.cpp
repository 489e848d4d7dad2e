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
#include "flare/Target/Target.h"

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
  // tgpu-pipeline-loops' marks (hand-written, or left on IR changed since) must still hold.
  if (failed(verifyPipelineMarks(func)))
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
  params.begin(gfunc);
  int numThreads = numWarps * kWarpSize;
  gfunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({numThreads, 1, 1}));
  const tile::ScheduleAttr schedule = tile::getSchedule(func);
  if (schedule.getMinBlocksPerSm() > 0)
    gfunc->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                   b.getI32IntegerAttr(static_cast<int32_t>(schedule.getMinBlocksPerSm())));
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
  // tile.wait_prior_grids: nothing before it touches memory (its verifier), so the wait goes first,
  // ahead of the exit conditions (which may read memory) and of any warp's role.
  if (!func.getBody().front().getOps<tile::WaitPriorGridsOp>().empty() && gridDependencies) {
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
    gfunc->setAttr(kDependentLaunchAttrName, b.getUnitAttr());
  }
  // tile.exit_if: an instance with nothing to do ends here, before any warp takes a role, copies or
  // waits (the conditions' scalar chains are lowered again where the body uses them). In a persistent
  // kernel whose CTAs take their instances from a shared counter, the producer's thread skips such
  // instances instead (takeInstance): no warp of the CTA sees them.
  instanceExits.clear();
  for (auto exit : func.getBody().front().getOps<tile::ExitIfOp>()) {
    if (schedule.getPersistent() && !schedule.getDynamicInstances())
      return exit.emitOpError("cannot end a persistent kernel's CTA, which runs other program instances too "
                              "(a kernel whose CTAs take their instances from a shared counter skips them)");
    if (schedule.getPersistent()) {
      instanceExits.push_back(exit);
      continue;
    }
    loc = exit.getLoc();
    produceValue(exit.getCondition());
    auto branch = scf::IfOp::create(b, loc, TypeRange{}, scalars.lookup(exit.getCondition()), /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    NVVM::Exit::create(b, loc);
  }
  // Shared memory, in order: the other ops' scratch, lazy dot operands, persistent operands (stored
  // once per kernel or loop), the TMA operands' barriers, the rings of streamed loops, the panels of
  // TMA stores without a ring; sized at the end, placed by tgpu-allocate-shared-memory.
  areas.create(b, loc);
  // A producer warpgroup (ProducerWarpgroup.cpp) for TMA copies of streamed wgmma loops, with one or
  // two consumer warpgroups and one CTA per SM (setmaxnreg shares out one SM's registers).
  // (The schedule's verifier holds a producer to 4 or 8 warps and one CTA per SM.)
  producerMode = schedule.getProducerWarpgroup() && wgmma && tmaEnabled;
  if (producerMode) {
    gfunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({numThreads + 4 * kWarpSize, 1, 1}));
    beginProducer();
  }
  uniformWarpgroup = schedule.getUniformWarpgroup();
  persistent = schedule.getPersistent();
  operandsAfterFirstStage = schedule.getOperandsAfterFirstStage();
  prefetchNextInstance = schedule.getPrefetchNextInstance();
  invariantAInRegisters = persistent && wgmma && !tmaFallback && schedule.getInvariantAInRegisters();
  if (persistent) {
    if (failed(beginPersistent(schedule, instanceExits)))
      return failure();
    tileLoop = beginTileLoop();
    if (dynamicInstances)
      waitForProducerInit(); // before the first instance is read
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
  if (params.failed())
    return emitError(func.getLoc()) << "internal error: could not add the TMA parameters to kernel '"
                                    << func.getName() << "'";
  // The areas' sizes, alignments and locations (SharedAreas::size), for tgpu-allocate-shared-memory.
  areas.size(func.getLoc());
  if (params.hasTmaFlag() || persistent)
    gfunc->setAttr(kUserArgsAttrName, b.getI32IntegerAttr(static_cast<int32_t>(func.getNumArguments())));
  return success();
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block) {
    if (failed(lowerOp(&op)))
      return failure();
    releaseAfterOp(&op);
  }
  return success();
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
    if (persistent && tileLoop && b.getInsertionBlock() == tileLoop.body)
      endTileLoop();
    // The last TMA reduce must have read its panels before the CTA exits (thread 0 issued it).
    if (reducesInFlight)
      ifThen(isThreadZero(), [&] { TmaStoreWaitOp::create(b, loc, 0); });
    gpu::ReturnOp::create(b, loc);
    return success();
  }
  if (auto pid = dyn_cast<tile::ProgramIdOp>(op)) {
    if (persistent) {
      scalars.map(pid.getResult(), instance.pids[static_cast<int>(pid.getAxis())]);
      return success();
    }
    Value id = gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(pid.getAxis()));
    scalars.map(pid.getResult(), arith::IndexCastUIOp::create(b, loc, b.getI32Type(), id));
    return success();
  }
  if (auto range = dyn_cast<tile::SplitRangeOp>(op)) {
    if (!splitRange || !instance.lo)
      return op->emitOpError("needs the tile loop of a persistent kernel");
    scalars.map(range.getLo(), instance.lo);
    scalars.map(range.getHi(), instance.hi);
    return success();
  }
  if (auto store = dyn_cast<tile::SplitStoreOp>(op))
    return lowerSplitState(op, store.getValues(), /*store=*/true);
  if (auto load = dyn_cast<tile::SplitLoadOp>(op))
    return lowerSplitState(op, load.getResults(), /*store=*/false);
  if (auto np = dyn_cast<tile::NumProgramsOp>(op)) {
    if (persistent) {
      scalars.map(np.getResult(), instanceGrid[static_cast<int>(np.getAxis())]);
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
  if (auto gather = dyn_cast<tile::GatherOp>(op))
    return lowerGather(gather);
  if (isa<tile::ExitIfOp, tile::WaitPriorGridsOp>(op)) // lowered at the kernel's start
    return success();
  if (isa<tile::AllowDependentLaunchOp>(op)) {
    if (gridDependencies)
      NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::launch_dependents);
    return success();
  }
  if (auto load = dyn_cast<tile::ScalarLoadOp>(op)) {
    scalars.map(load.getResult(), loadScalar(load, scalars.lookup(load.getBase()), scalars.lookup(load.getOffset())));
    return success();
  }
  if (auto store = dyn_cast<tile::ScalarStoreOp>(op)) {
    // One thread writes: the instance's stores then land in program order. (Warp 0 of a kernel with a
    // producer warpgroup may not run the op's code.)
    if (producerMode)
      return store.emitOpError("is not supported in a kernel with a producer warpgroup");
    Value first = arith::OrIOp::create(b, loc, laneId, warpId);
    Value writer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, first, i32(0));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, writer, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value offset = scalars.lookup(store.getOffset());
    if (offset.getType().isInteger(32))
      offset = arith::ExtSIOp::create(b, loc, b.getI64Type(), offset);
    Value addr = LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
                                     store.getValue().getType(), scalars.lookup(store.getBase()), ValueRange{offset});
    LLVM::StoreOp::create(b, loc, scalars.lookup(store.getValue()), addr);
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
    if (runsOnWgmma(dot))
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

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  // tgpu-pipeline-loops' marks: a K loop of one dot, or a loop whose marked loads stream.
  if (pipelineOf(op) == PipelineKind::DotLoop) {
    consumersSetUpState = true; // its ring, set up by the kernel's own threads
    return lowerPipelinedDotLoop(op, *matchPipelinedDotLoop(op), // run() checked the mark
                                 [&](scf::ForOp loop) { return lowerForGeneric(loop); });
  }
  SmallVector<Stream> streams = streamsOf(op);
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

} // namespace flare::tgpu::lowering

namespace {
using namespace mlir;
using namespace flare;
using namespace flare::tgpu::lowering;

struct ConvertTGPUToNVVMPass : public flare::tgpu::impl::ConvertTGPUToNVVMBase<ConvertTGPUToNVVMPass> {
  using ConvertTGPUToNVVMBase::ConvertTGPUToNVVMBase;
  void runOnOperation() override {
    ModuleOp top = getOperation();
    std::optional<Target> target = Target::get(arch);
    if (!target) {
      top.emitError() << "convert-tgpu-to-nvvm: unknown architecture '" << arch << "'";
      return signalPassFailure();
    }
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
      bool turns = pingPong && tile::getSchedule(func).getPingPong();
      // tgpu-accelerate-dot's marks: the kernel's wgmma machinery exists around its wgmma dots only.
      bool wgmma = false;
      int numWarps = tile::getNumWarps(func);
      WalkResult marks = func.walk([&](tile::DotOp dot) {
        int64_t m = dot.getA().getType().getDimSize(0), n = dot.getB().getType().getDimSize(1);
        if (failed(tgpu::verifyWgmmaMark(dot, m, n, numWarps, target->hasWgmma, arch)))
          return WalkResult::interrupt();
        wgmma |= tgpu::runsOnWgmma(dot);
        return WalkResult::advance();
      });
      if (marks.wasInterrupted())
        return signalPassFailure();
      if (failed(KernelLowering(func, module, maxSharedBytes, wgmma, turns, tma && target->hasTma, tmaFallback,
                                target->hasGridDependencies)
                     .run()))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
