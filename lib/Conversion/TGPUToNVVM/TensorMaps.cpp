//===- TensorMaps.cpp - Streamed blocks copied by TMA through host-encoded tensor maps ===//
//
// On sm_90a a streamed block (StreamedLoop.cpp) whose view the host can describe is copied by the
// Tensor Memory Accelerator: one thread issues one `cp.async.bulk.tensor` per 64-column panel and
// the stage's `full` mbarrier counts the bytes, instead of every thread computing addresses and
// issuing 16-byte cp.async copies.
//
// A tensor map describes a tensor in global memory (base address, sizes and byte strides of up to
// five dimensions, the box one copy moves, the swizzle it lands in). Kernels compute their views'
// bases per program instance, so the map is built over the kernel's pointer argument and the view's
// per-instance offset becomes coordinates: a view
//
//     base = addptr(%arg_ptr, x_1 * s_1 + ... + x_n * s_n),   sizes [R, C], strides [S, 1]
//
// with R, C, S and every s_i kernel arguments or constants is the map
//
//     dims (innermost first) [C, R, 2^31, ...],  strides [1, S, s_1, ..., s_n],  box [64, rows, 1, ...]
//
// read at coordinates (col + 64 p, row, x_1, ..., x_n); which views qualify and the map's description
// are an analysis of the IR (flare::tgpu::planTensorMap, TensorMapPlan.h). The outer dimensions are
// unbounded (the kernel's own arithmetic keeps x_i in range, as it did for the addresses); rows and
// columns past R and C are zero-filled by the hardware, like the cp.async path's padding.
//
// The runtime encodes the maps at launch from the argument values (cuTensorMapEncodeTiled) and passes
// each as a 128-byte grid-constant parameter after the kernel's own, preceded by an i32 that is 1
// when every map could be encoded (16-byte aligned base and strides, a driver with TMA). When it is
// 0 the kernel takes the cp.async path, chosen at run time like the unaligned-rows fallback.
// With `tma-fallback=0` that path is left out (about a fifth of an attention kernel's code and
// compile time): the kernel is marked tgpu.tma_required and the runtime refuses launches whose maps
// do not encode, which launchers that check their views first (flare::attention) never make.
//
// Stores and sums through TMA, the other way: OutputStores.h.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

std::optional<TensorMapPlan> BlockCopies::planTensorMap(Value viewValue, RankedTensorType type, bool sums) {
  return tmaEnabled ? tgpu::planTensorMap(viewValue, type, func, sums) : std::nullopt;
}

Value BlockCopies::tensorMapsUsable() {
  Value flag = params.tmaFlag(tmaFallback);
  if (!flag) // reported by run(); the kernel is not emitted
    return arith::ConstantIntOp::create(b, loc, 0, 1);
  // Without the fallback the flag is taken as set: the canonicalizer removes the other paths.
  if (!tmaFallback)
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, i32(0));
}

std::optional<TensorMapPlan> BlockCopies::planTensorMap(tile::LoadOp load) {
  return tmaEnabled ? tgpu::planTensorMap(load, func) : std::nullopt;
}

TensorMapRead BlockCopies::tensorMapFor(const TensorMapPlan &plan) {
  RankedTensorType type = plan.block;
  TensorMapRead read;
  read.boxCols = tmaPanelCols(type);
  read.pieces = plan.pieces;
  read.boxRows = type.getDimSize(0) / plan.pieces;
  read.panels = type.getDimSize(1) / read.boxCols;
  // Outer coordinates: the terms' values, as i32 (their i32 source when sign-extended).
  for (Value x : plan.outerValues) {
    if (auto ext = x.getDefiningOp<arith::ExtSIOp>(); ext && ext.getIn().getType().isInteger(32))
      read.outerCoords.push_back(scalars.lookup(ext.getIn()));
    else if (x.getType().isInteger(32))
      read.outerCoords.push_back(scalars.lookup(x));
    else
      read.outerCoords.push_back(arith::TruncIOp::create(b, loc, b.getI32Type(), scalars.lookup(x)));
  }
  MLIRContext *ctx = b.getContext();
  auto describe = [&] {
    auto encoded = [&](ArrayRef<std::array<int64_t, 2>> list) {
      SmallVector<Attribute> out;
      for (const std::array<int64_t, 2> &s : list)
        out.push_back(DenseI64ArrayAttr::get(ctx, s));
      return ArrayAttr::get(ctx, out);
    };
    SmallVector<int32_t> box{static_cast<int32_t>(read.boxCols), static_cast<int32_t>(read.boxRows)};
    box.append(plan.outerValues.size(), 1);
    NamedAttrList desc;
    desc.append("pointer", b.getI32IntegerAttr(static_cast<int32_t>(plan.pointerArg)));
    desc.append("elem_bytes", b.getI32IntegerAttr(static_cast<int32_t>(type.getElementTypeBitWidth() / 8)));
    if (type.getElementType().isF32())
      desc.append("float", b.getUnitAttr()); // a reduce adds the elements as f32
    desc.append("sizes", encoded(plan.sizes));
    desc.append("strides", encoded(plan.strides));
    desc.append("box", DenseI32ArrayAttr::get(ctx, box));
    desc.append("swizzle", b.getI32IntegerAttr(128));
    return desc.getDictionary(ctx);
  };
  Value param = params.tensorMap(plan.view, read.boxRows, tmaFallback, describe);
  if (!param) { // reported by run(); the kernel is not emitted
    Value none = LLVM::ZeroOp::create(b, loc, LLVM::LLVMPointerType::get(ctx));
    read.map = TensorMapOp::create(b, loc, TensorMapType::get(ctx), none);
    return read;
  }
  read.map = param;
  return read;
}

void BlockCopies::copyBlockTma(const TensorMapRead &read, ArrayRef<Value> offsets, Value dstBase, Value mbarrier) {
  assert(offsets.size() == static_cast<size_t>(read.pieces + 1) && "a row offset per piece, then the column");
  const int64_t pieceBytes = read.boxRows * read.boxCols * 2; // a piece's rows of one panel
  for (int64_t i = 0; i < read.pieces; ++i)
    copyTileTma(read, offsets[i], offsets.back(), i ? arith::AddIOp::create(b, loc, dstBase, i32(i * pieceBytes)) : dstBase,
                mbarrier);
}

void BlockCopies::copyTileTma(const TensorMapRead &read, Value row, Value col, Value dstBase, Value mbarrier) {
  MLIRContext *ctx = b.getContext();
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3), clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
  const int64_t panelBytes = read.boxRows * read.pieces * read.boxCols * 2;
  for (int64_t p = 0; p < read.panels; ++p) {
    Value at = arith::AddIOp::create(b, loc, dstBase, i32(p * panelBytes));
    Value dst = LLVM::GEPOp::create(b, loc, sharedPtr, b.getI8Type(), smemBase, ValueRange{at});
    // A CTA's own shared memory is its cluster's (a cluster of one).
    dst = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, dst);
    SmallVector<Value> coords{p ? arith::AddIOp::create(b, loc, col, i32(p * read.boxCols)).getResult() : col, row};
    llvm::append_range(coords, read.outerCoords);
    TmaLoadOp::create(b, loc, dst, read.map, coords, mbarrier);
  }
}

bool KernelLowering::loadOperandByTma(tile::LoadOp op) {
  // At the top level every thread reaches the copy, and the wait before each loop (a CTA barrier).
  if (!wgmma || op->getBlock() != &func.getBody().front() || op->use_empty())
    return false;
  if (auto pad = op.getPaddingAttr())
    if (!isa<FloatAttr>(pad) || !cast<FloatAttr>(pad).getValue().isZero())
      return false;
  // Every use is, directly or through a conversion that only feeds wgmma dots, either the A operand of
  // a dot in a top-level loop (Q: storeInvariantOperands hands those dots the panels) or the B operand
  // of a top-level dot with a loop between the load and the dot (the last V block of an overlapped
  // attention kernel, copied while the loops run: lowerDotWgmma waits for it there). B panels are
  // N-major: the block's rows run along K. A dot in a top-level loop is one in its body or, outside
  // persistent kernels (whose producer copies for top-level loops only), in loops nested in it: K and
  // V of the backward, read inside the GQA group loop.
  auto feedsLoopA = [&](OpOperand &use) {
    auto dot = dyn_cast<tile::DotOp>(use.getOwner());
    if (!dot || use.getOperandNumber() != 0 || !runsOnWgmma(dot))
      return false;
    auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
    while (loop && loop->getBlock() != op->getBlock() && !persistent)
      loop = dyn_cast<scf::ForOp>(loop->getParentOp());
    return loop && loop->getBlock() == op->getBlock();
  };
  auto feedsTopLevelB = [&](OpOperand &use) {
    auto dot = dyn_cast<tile::DotOp>(use.getOwner());
    return dot && use.getOperandNumber() == 1 && runsOnWgmma(dot) && dot->getBlock() == op->getBlock() &&
           op->isBeforeInBlock(dot) && loopAfter(op, dot);
  };
  bool asA = false, asB = false, asTransposedA = false;
  auto feeds = [&](OpOperand &use) {
    if (feedsLoopA(use))
      return asA = true;
    if (feedsTopLevelB(use))
      return asB = true;
    return false;
  };
  // Directly or through a conversion that only feeds wgmma dots.
  auto feedsThroughConversion = [&](OpOperand &use, auto &&what) {
    auto conv = dyn_cast<ConvertLayoutOp>(use.getOwner());
    if (!conv)
      return what(use);
    return feedsOnlyWgmma(conv) && llvm::all_of(conv->getUses(), what);
  };
  for (OpOperand &use : op->getUses()) {
    // A transpose read as the A operand of loops' dots (K^T of the backward's dQ^T = K^T dS^T): the
    // same panels, read M-major (storeInvariantOperands). Not in a persistent kernel, whose release of
    // the panels follows only direct readers.
    if (auto trans = dyn_cast<tile::TransOp>(use.getOwner())) {
      if (persistent || trans->use_empty() ||
          !llvm::all_of(trans->getUses(), [&](OpOperand &u) { return feedsThroughConversion(u, feedsLoopA); }))
        return false;
      asTransposedA = true;
      continue;
    }
    if (!feedsThroughConversion(use, feeds))
      return false;
  }
  // One layout of the panels for all uses; B panels, and an A read M-major, need whole 64-column
  // panels along N (M).
  auto blockType = op.getResult().getType();
  const bool wholePanels = blockType.getDimSize(1) % 64 == 0 && blockType.getDimSize(0) % 8 == 0;
  if ((asA && asB) || (asTransposedA && asB) || ((asB || asTransposedA) && !wholePanels))
    return false;
  std::optional<TensorMapPlan> plan = planTensorMap(op);
  auto view = views.find(op.getView());
  if (!plan || view == views.end() || !view->second.unitInnerStride)
    return false;
  // The panels (a swizzle atom needs a 1024-byte aligned address); the mbarrier in the operand
  // barriers' area.
  constexpr int64_t kSwizzleAlign = 1024;
  const int64_t bytes = op.getResult().getType().getNumElements() * 2;
  const int64_t offset = areas.persistentOperands.append(bytes, kSwizzleAlign, op.getLoc());
  const int64_t barrierOffset = areas.operandBarriers.append(kMBarrierBytes, /*align=*/1, op.getLoc());
  areas.persistentOperands.swizzled = true;
  TmaOperand operand;
  operand.nMajor = asB;
  operand.base = arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(offset));
  // A one-stage ring: its `full` barrier completes once per copy (per program instance of a
  // persistent kernel whose producer copies it; once in all otherwise).
  operand.barrier = ringBarrier(operandRing(barrierOffset), i32(0), /*empty=*/false);
  Value base = operand.base, barrierPtr = operand.barrier;
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(scalars.lookup(o));
  TensorMapRead read = tensorMapFor(*plan);
  operand.useTma = tensorMapsUsable();
  // In a persistent kernel, when the producer warpgroup can compute the view and offsets: the
  // producer copies the block (the consumers only copy it themselves when the maps did not encode),
  // Q before the instance's loops, the last V block after them, and the consumers release it after
  // the last top-level op that reads it.
  // Without a producer warpgroup the consumers do the same: after the block's last reader, thread 0
  // waits until every warp has released it and copies the next instance's (issueNextInstance), so
  // that Q travels while they finish this one.
  operand.produced = persistent && tileLoop && producerCanCompute(op.getView()) &&
                     llvm::all_of(op.getOffsets(), [&](Value o) { return producerCanCompute(o); });
  if (operand.produced) {
    areas.operandBarriers.append(kMBarrierBytes, /*align=*/1, op.getLoc()); // `empty` after `full`
    ProducedOperand produced{op, offset, barrierOffset, bytes, *plan, /*afterLoops=*/asB};
    if (producerMode) {
      producedOperands.push_back(produced);
    } else {
      produced.coordsAt = areas.operandBarriers.append(
          alignUp(4 * static_cast<int64_t>(op.getOffsets().size() + plan->outerValues.size()), kMBarrierBytes),
          /*align=*/1, op.getLoc());
      operand.issue = static_cast<int>(consumerIssued.size());
      consumerIssued.push_back(produced);
    }
    Operation *lastReader = op;
    for (OpOperand &use : op->getUses()) {
      SmallVector<Operation *> readers; // the dots, directly or through a conversion
      if (isa<ConvertLayoutOp>(use.getOwner()))
        llvm::append_range(readers, use.getOwner()->getUsers());
      else
        readers.push_back(use.getOwner());
      for (Operation *reader : readers)
        if (Operation *at = op->getBlock()->findAncestorOpInBlock(*reader); at && lastReader->isBeforeInBlock(at))
          lastReader = at;
    }
    releaseAfter[lastReader].push_back(op.getResult());
    // Read by dots inside top-level loops whose bounds all exist before the first of them (so each
    // can tell whether a later one runs): released after the instance's last such product.
    if (isa<scf::ForOp>(lastReader)) {
      EarlyRelease early;
      for (Operation &top : *op->getBlock())
        if (auto loop = dyn_cast<scf::ForOp>(&top);
            loop && op->isBeforeInBlock(loop) && !dotsReading(loop, op.getResult()).empty())
          early.loops.push_back(loop);
      auto definedBefore = [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !def || (def->getBlock() == op->getBlock() && def->isBeforeInBlock(early.loops.front()));
      };
      bool boundsKnown = !early.loops.empty() && early.loops.back() == lastReader;
      for (scf::ForOp loop : early.loops)
        boundsKnown = boundsKnown && definedBefore(loop.getLowerBound()) && definedBefore(loop.getUpperBound()) &&
                      definedBefore(loop.getStep());
      if (boundsKnown) {
        early.inLoop.assign(early.loops.size(), false);
        earlyReleases[op.getResult()] = std::move(early);
      }
    }
    operand.empty = ringBarrier(operandRing(barrierOffset), i32(0), /*empty=*/true);
    if (producerMode)
      waitForProducerInit();
    else
      beginConsumerIssued(consumerIssued.back());
    ifThen(notI1(operand.useTma), [&] {
      copyTileRolled(op, offsets, base);
      fenceAsyncProxy();
    });
    tmaOperands[op.getResult()] = operand;
    return true;
  }
  consumersSetUpState = true;
  ifThen(
      operand.useTma,
      [&] {
        ifThen(isThreadZero(), [&] {
          MBarrierInitOp::create(b, loc, barrierPtr, i32(1));
          fenceAsyncProxy(); // the initialised barrier, visible to the async proxy that completes it
          expectTx(barrierPtr, i32(bytes));
          copyBlockTma(read, offsets, base, barrierPtr);
        });
      },
      [&] {
        // Maps not encoded: every thread copies its chunks element by element and fences them for
        // wgmma's async proxy; the CTA barrier of the wait publishes them.
        copyTileRolled(op, offsets, base);
        fenceAsyncProxy();
      });
  tmaOperands[op.getResult()] = operand;
  return true;
}

void KernelLowering::waitForTmaOperand(TmaOperand &operand) {
  if (operand.waited && insertingWithin(operand.waited))
    return;
  if (operand.produced) {
    // This instance's copy (the tile loop's turn k completes `full` for the k-th time), or, without
    // maps, every consumer's own copies published by a barrier.
    ifThen(
        operand.useTma,
        [&] {
          RingWaitOp::create(b, loc, operand.barrier, tileLoop.turn, /*stages=*/1);
        },
        [&] { barrier(); });
    operand.waited = b.getInsertionBlock();
    return;
  }
  // Read inside nested loops (K and V of the backward, read in each step of the GQA group loop's
  // query loop): waited for once, before the outermost of those loops; the copy precedes it (a
  // top-level load). Waited for in each group instead, the dK/dV kernels at head dim 128 spilled
  // 12-48 bytes (bench/NOTES.md b20, b21).
  OpBuilder::InsertionGuard guard(b);
  for (Operation *loop = b.getInsertionBlock()->getParentOp(); isa<scf::ForOp>(loop);
       loop = loop->getParentOp())
    b.setInsertionPoint(loop);
  // The CTA barrier makes thread 0's barrier initialisation (TMA) or every thread's stores (the
  // fallback) visible; then the TMA bytes are waited for (phase 0: the barrier completes once).
  barrier();
  ifThen(operand.useTma,
         [&] { MBarrierWaitOp::create(b, loc, operand.barrier, i32(0)); });
  operand.waited = b.getInsertionBlock();
}

bool BlockCopies::panelsSplitByWarpgroup(Value value, int64_t panelCols) {
  LinearLayout layout = layoutOf(value);
  const int64_t half = layout.shape()[1] / 2;
  if (numWarps != 8 || half % panelCols != 0)
    return false;
  auto below = [&](const LinearLayout::Coord &c) { return c[1] < half; };
  const auto &warps = layout.bases(LayoutInput::Warp);
  // Every column below `half` from registers, lanes and the first two warp bits; the warpgroup bit
  // adds `half` columns.
  return warps.size() == 3 && warps[2] == LinearLayout::Coord{0, half} && below(warps[0]) && below(warps[1]) &&
         llvm::all_of(layout.bases(LayoutInput::Lane), below) && llvm::all_of(layout.bases(LayoutInput::Reg), below);
}

void BlockCopies::storePanelsByTma(Value value, const TensorMapRead &map, Value base, ArrayRef<Value> offsets,
                                      bool deferWait, StagingSplit split, bool add) {
  auto type = cast<RankedTensorType>(value.getType());
  // Rows: each consumer warpgroup writes its 64 rows of every panel and its first thread stores them
  // as 64-row boxes; Panels: each writes and copies its own panels. Either way the warpgroup's own
  // named barrier is around the staging.
  const bool perWarpgroup = split != StagingSplit::None, byPanels = split == StagingSplit::Panels;
  constexpr int64_t kRowBytes = 128;
  Value group = perWarpgroup ? warpgroupId() : Value();
  Value leader = perWarpgroup ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                                      arith::AndIOp::create(b, loc, threadId, i32(127)), i32(0))
                              : isThreadZero();
  auto sync = [&] {
    if (!perWarpgroup)
      return (void)barrier();
    NamedBarrierSyncOp::create(b, loc, arith::AddIOp::create(b, loc, group, i32(kWarpgroupBarrier)),
                            i32(128));
  };
  // The previous instance of a persistent kernel left its store in flight (or an earlier step its
  // reduce): its issuing thread waits until the copy has read the panels, before the barrier that
  // lets the others write them again.
  if (deferWait || reducesInFlight)
    ifThen(leader, [&] { TmaStoreWaitOp::create(b, loc, 0); });
  sync(); // the area's earlier readers are done (a loop's MMAs, an earlier store's copy)
  const int64_t rows = type.getDimSize(0);
  // 16-byte chunks of 8 16-bit elements or 4 f32.
  const int64_t elemBytes = type.getElementTypeBitWidth() / 8, perChunk = 16 / elemBytes;
  storeTile(
      value, base,
      [&](ArrayRef<Value> c) -> Value {
        Value chunk = arith::ShRUIOp::create(b, loc, c[1], i32(llvm::Log2_64(perChunk)));
        Value inChunk =
            arith::MulIOp::create(b, loc, arith::AndIOp::create(b, loc, c[1], i32(perChunk - 1)), i32(elemBytes));
        return arith::AddIOp::create(b, loc, swizzledChunkOffset(c[0], chunk, rows), inChunk);
      },
      /*vectorDim=*/1,
      // The sums' scalar stores (registers along rows, dQ^T's transposed product): rows 8 apart
      // keep their swizzle, whole panels apart too, so those steps are immediate offsets.
      add ? [&](const LinearLayout::Coord &step) -> std::optional<int64_t> {
        if (step[1] == 0 && step[0] % 8 == 0)
          return step[0] * kRowBytes;
        if (step[0] == 0 && step[1] % (perChunk * 8) == 0)
          return step[1] / (perChunk * 8) * rows * kRowBytes;
        return std::nullopt;
      } : std::function<std::optional<int64_t>(const LinearLayout::Coord &)>());
  fenceAsyncProxy(); // the panels, visible to the TMA unit (async proxy)
  sync();
  ifThen(leader, [&] {
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    const int64_t panelBytes = rows * kRowBytes;
    // This warpgroup's rows: from row 64 g of every panel (Rows); its panels: from panel g P/2 (Panels).
    const bool byRows = perWarpgroup && !byPanels;
    Value firstRow = byRows ? arith::MulIOp::create(b, loc, group, i32(map.boxRows)).getResult() : i32(0);
    Value rowBase = arith::AddIOp::create(b, loc, base, arith::MulIOp::create(b, loc, firstRow, i32(kRowBytes)));
    Value row = arith::AddIOp::create(b, loc, offsets[0], firstRow);
    const int64_t panels = byPanels ? map.panels / 2 : map.panels;
    Value firstPanel = byPanels ? arith::MulIOp::create(b, loc, group, i32(panels)).getResult() : Value();
    for (int64_t p = 0; p < panels; ++p) {
      // (constants where every thread copies the same panels)
      Value panel = byPanels ? arith::AddIOp::create(b, loc, firstPanel, i32(p)).getResult() : Value();
      auto times = [&](int64_t n) {
        return panel ? arith::MulIOp::create(b, loc, panel, i32(n)).getResult() : i32(p * n);
      };
      Value at = arith::AddIOp::create(b, loc, rowBase, times(panelBytes));
      Value src = LLVM::GEPOp::create(b, loc, sharedPtr, b.getI8Type(), smemBase, ValueRange{at});
      SmallVector<Value> coords{arith::AddIOp::create(b, loc, offsets[1], times(map.boxCols)), row};
      llvm::append_range(coords, map.outerCoords);
      if (add)
        TmaReduceAddOp::create(b, loc, map.map, coords, src);
      else
        TmaStoreOp::create(b, loc, map.map, coords, src);
    }
    TmaStoreCommitOp::create(b, loc);
    // The panels must stay until the copies have read them: before the CTA exits or a later loop or
    // store (each starting with a CTA barrier) reuses the area. With `deferWait` it waits only then
    // (the next instance's store into the same area, a copy into the ring's used stages, the end of
    // the tile loop).
    if (!deferWait)
      TmaStoreWaitOp::create(b, loc, 0);
  });
  tmaStoresInFlight |= deferWait && !add;
}

} // namespace flare::tgpu::lowering
