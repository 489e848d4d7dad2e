//===- OutputStores.cpp - A kernel's output blocks stored and summed through TMA ===//
//
// Stores go the other way from TensorMaps.cpp's copies (storeThroughTma): a block stored at the
// kernel's top level (the output tile of an attention or matmul kernel) is written by all threads
// into swizzled panels in shared memory and copied out by thread 0, one `cp.async.bulk.tensor` store
// per panel; rows past the view are left out by the hardware, and so are columns past it when rows
// are a constant number of whole 16-byte chunks (the hardware clips columns by the chunk); in a
// persistent kernel with a producer warpgroup each consumer warpgroup stores its own 64 rows that
// way. A warp writing its accumulator fragment straight to global memory issues one narrow store per
// register pair, 8 rows apart, each waiting for the last to read its register; the TMA copy moves
// whole lines and lets every other thread finish at once. f32 sums that other instances add into
// too (dQ's partials) go out the same way by TMA reduce (reduceThroughTma).
//
// (The tensor maps and the panels' copies: TensorMaps.cpp, BlockCopies.h.)
//
//===----------------------------------------------------------------------===//
#include "OutputStores.h"

namespace flare::tgpu::lowering {

LogicalResult OutputStores::lowerStore(Operation *op, Value value, Value viewValue, ValueRange offsetValues,
                                         bool atomicAdd) {
  SmallVector<Value> offsets;
  for (Value o : offsetValues)
    offsets.push_back(scalars.lookup(o));
  if (atomicAdd ? reduceThroughTma(op, value, viewValue, offsets) : storeThroughTma(op, value, viewValue, offsets))
    return success();
  storeDirect(value, views[viewValue], offsets, atomicAdd);
  return success();
}

void OutputStores::noteRing(int64_t stageBytes, int stages, int64_t stagesBytes) {
  ringStagesBytes = std::max(ringStagesBytes, stagesBytes);
  if (ringStageBytes == 0) {
    ringStageBytes = stageBytes;
    ringStages = stages;
  } else if (ringStageBytes != stageBytes || ringStages != stages) {
    ringStageBytes = ringStages = -1;
  }
}

bool OutputStores::storeThroughTma(Operation *op, Value value, Value viewValue, ArrayRef<Value> offsets) {
  auto type = cast<RankedTensorType>(value.getType());
  // Every thread reaches the store (at the top level, or in branches the whole CTA takes alike:
  // their conditions computed from the arguments and program ids, as the producer could): the CTA
  // barriers around the staging are safe.
  Block *entry = &func.getBody().front();
  for (Operation *at = op; at->getBlock() != entry;) {
    auto branch = dyn_cast<scf::IfOp>(at->getParentOp());
    if (!branch || !producerCanCompute(branch.getCondition()))
      return false;
    at = branch;
  }
  std::optional<TensorMapPlan> plan = planTensorMap(viewValue, type);
  // The hardware leaves out whole 16-byte chunks past the last column, not single elements: rows of
  // a whole number of chunks, known here, and a column offset on a chunk, or no TMA store (measured
  // on the H200: a row of 129 16-bit elements had columns 129-135 written).
  constexpr int64_t kChunkElems = 8;
  auto store = dyn_cast<tile::StoreOp>(op);
  if (!store || !plan || plan->sizes[0][0] != 0 || plan->sizes[0][1] % kChunkElems != 0 ||
      !knownMultipleOf(store.getOffsets().back(), kChunkElems))
    return false;
  // The staging area: the stages of a streamed loop's ring when one is large enough (every loop of
  // this block is done: its copies have landed and the barrier below waits for its last readers),
  // else an area of its own when that fits beside the rest. In a persistent kernel the producer
  // warpgroup may already be filling the ring for the next program instance: an area of its own.
  // Without a producer, the ring's last stage: the next instance's first copy (stage 0) is issued
  // while the store still reads the panels, and only the copies into used stages wait for it
  // (issueStage; NOTES a59: +1-4% at head dim 256).
  constexpr int64_t kSwizzleAlign = 1024;
  const int64_t bytes = type.getNumElements() * 2;
  Value base;
  bool ownArea = false, lastStage = false;
  // (Swizzled panels need a 1024-byte aligned stage: stages of unswizzled streams may not be.)
  if (persistent && !producerMode && ringStages >= 2 && bytes <= ringStageBytes &&
      ringStageBytes % kSwizzleAlign == 0) {
    lastStage = true;
    base = arith::AddIOp::create(b, loc, areas.rings.base(), i32((ringStages - 1) * ringStageBytes));
  } else if (bytes <= ringStagesBytes && !(persistent && producerMode)) {
    base = areas.rings.base();
  } else {
    ownArea = true;
    // A loop after the store may still need scratch of its own.
    if (areas.withStaging(bytes) + (loopAfter(op) ? kReservedSharedBytes : 0) > maxSharedBytes)
      return false;
    areas.staging.grow(bytes, loc);
    base = areas.staging.base();
  }
  // A persistent kernel's instance leaves the copy of its own staging area (or of the ring's last
  // stage) in flight. With a producer warpgroup and an output whose rows split between the two
  // consumer warpgroups (rows 0-63 and 64-127), each warpgroup stores its own half: 64-row boxes,
  // its own named barrier.
  const bool deferWait = persistent && (ownArea || lastStage);
  auto rowsSplit = [&] {
    LinearLayout layout = layoutOf(value);
    auto clearOf64 = [](const LinearLayout::Coord &c) { return (c[0] & 64) == 0; };
    const auto &warps = layout.bases(LayoutInput::Warp);
    return warps.size() == 3 && warps[2] == LinearLayout::Coord{64, 0} && clearOf64(warps[0]) &&
           clearOf64(warps[1]) && llvm::all_of(layout.bases(LayoutInput::Lane), clearOf64) &&
           llvm::all_of(layout.bases(LayoutInput::Reg), clearOf64);
  };
  const bool perWarpgroup = deferWait && producerMode && numWarps == 8 && type.getDimSize(0) == 128 && rowsSplit();
  TensorMapPlan boxPlan = *plan;
  if (perWarpgroup)
    boxPlan.block = RankedTensorType::get({64, type.getDimSize(1)}, type.getElementType());
  TensorMapRead map = tensorMapFor(boxPlan);
  perWarpgroupStores |= perWarpgroup;
  ifThen(tensorMapsUsable(),
         [&] {
           storePanelsByTma(value, map, base, offsets, deferWait,
                            perWarpgroup ? StagingSplit::Rows : StagingSplit::None);
         },
         [&] { storeDirect(value, views[viewValue], offsets, /*atomicAdd=*/false); });
  return true;
}

bool OutputStores::reduceThroughTma(Operation *op, Value value, Value viewValue, ArrayRef<Value> offsets) {
  // f32 sums added into a block of global memory that other program instances add into too (dQ's
  // partial sums in the backward's dK/dV kernel): the threads write the block into swizzled panels of
  // 32 f32 per 128-byte row, and thread 0 adds them with one `cp.reduce.async.bulk.tensor` per panel,
  // instead of every thread issuing one atomic per register. The panels are an area of their own, so
  // the reduce may run on while the loop goes on; the next one (or the kernel's end) waits for it to
  // have read them. Every thread takes the same path through the kernel (no producer warpgroup; a
  // persistent kernel's instances would need the staging per instance): the CTA barriers are safe.
  // Where each of two warpgroups holds whole panels of the block (dQ^T's columns split between
  // them), each writes and adds its own panels behind its own named barrier, so that neither waits for
  // the other's reduce.
  auto type = cast<RankedTensorType>(value.getType());
  if (producerMode || persistent)
    return false;
  std::optional<TensorMapPlan> plan = planTensorMap(viewValue, type, /*sums=*/true); // needs TMA
  // Columns past the view are left out by the 16-byte chunk: rows of whole chunks, a column offset on one.
  constexpr int64_t kChunkElems = 4;
  auto add = dyn_cast<tile::AtomicAddOp>(op);
  if (!add || !plan || plan->sizes[0][0] != 0 || plan->sizes[0][1] % kChunkElems != 0 ||
      !knownMultipleOf(add.getOffsets().back(), kChunkElems))
    return false;
  const int64_t bytes = type.getNumElements() * 4;
  if (areas.withStaging(bytes) + kReservedSharedBytes > maxSharedBytes)
    return false;
  areas.staging.grow(bytes, loc);
  TensorMapRead map = tensorMapFor(*plan);
  const StagingSplit split = panelsSplitByWarpgroup(value, map.boxCols) ? StagingSplit::Panels : StagingSplit::None;
  ifThen(tensorMapsUsable(),
         [&] { storePanelsByTma(value, map, areas.staging.base(), offsets, /*deferWait=*/true, split, /*add=*/true); },
         [&] { storeDirect(value, views[viewValue], offsets, /*atomicAdd=*/true); });
  reducesInFlight = true;
  return true;
}

} // namespace flare::tgpu::lowering
