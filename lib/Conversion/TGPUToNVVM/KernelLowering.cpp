//===- KernelLowering.cpp - KernelLowering's shared helpers ---------------===//
//
// The larger helpers of KernelLowering.h that every part of the lowering uses: thread coordinates of
// a layout, the operand area of shared memory, the per-instance scope of a persistent kernel, the
// operand ring of streamed loops and a load's offsets at a loop iteration.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

namespace flare::tgpu::lowering {

ArrayRef<Value> KernelLowering::threadCoord(Attribute layoutAttr) {
  auto it = threadCoords.find(layoutAttr);
  if (it != threadCoords.end())
    return it->second;
  // Computed once, in the kernel's prologue, so that every region can use them.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(prologueAnchor);
  Location savedLoc = loc;
  loc = func.getLoc();
  LinearLayout layout = cast<LinearLayoutAttr>(layoutAttr).getLayout();
  SmallVector<Value> coords;
  for (int d = 0; d < layout.rank(); ++d) {
    Value acc = i32(0);
    for (auto [in, id] : {std::pair<LayoutInput, Value>{LayoutInput::Lane, laneId}, {LayoutInput::Warp, warpId}}) {
      const auto &bases = layout.bases(in);
      for (size_t bit = 0; bit < bases.size(); ++bit) {
        if (bases[bit][d] == 0)
          continue;
        // ((id >> bit) & 1) * basis, XOR-ed in.
        Value sel = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, id, i32(bit)), i32(1));
        acc = arith::XOrIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, sel, i32(bases[bit][d])));
      }
    }
    coords.push_back(acc);
  }
  loc = savedLoc;
  return threadCoords[layoutAttr] = coords;
}

Value KernelLowering::operandAreaPtr(int64_t bytes) {
  return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), b.getI8Type(), smemBase,
                             ValueRange{operandAreaOffset(bytes)});
}

void KernelLowering::inInstanceScope(Value turn, llvm::function_ref<void()> body) {
  inInstanceScope(instanceAt(turn), body);
}

void KernelLowering::inInstanceScope(const TileSchedule::Instance &other, llvm::function_ref<void()> body) {
  ScalarScope instanceScope = freshScalarScope();
  swapScalarScope(instanceScope);
  TileSchedule::Instance saved = instance;
  Location savedLoc = loc;
  instance = other;
  body();
  instance = saved;
  loc = savedLoc;
  swapScalarScope(instanceScope);
}

BarrierRing KernelLowering::operandRing(int64_t barrierAt) {
  return {operandAreaOffset(barrierAt), 1};
}

SmallVector<Value> KernelLowering::loadOffsetsAt(tile::LoadOp load, scf::ForOp op, Value iv, DenseMap<Value, Value> &memo) {
  SmallVector<Value> offsets;
  for (Value o : load.getOffsets())
    offsets.push_back(scalarAt(o, op, iv, memo));
  return offsets;
}

} // namespace flare::tgpu::lowering
