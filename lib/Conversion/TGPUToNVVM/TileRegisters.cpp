//===- TileRegisters.cpp - The source kernel's values as lowered ---------===//
#include "TileRegisters.h"

namespace flare::tgpu::lowering {

ArrayRef<Value> TileRegisters::threadCoord(Attribute layoutAttr) {
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

void TileRegisters::storeTile(Value tile, Value byteBase, const std::function<Value(ArrayRef<Value>)> &offsetOf,
                               int vectorDim,
                               const std::function<std::optional<int64_t>(const LinearLayout::Coord &)> &constantStep) {
  Attribute attr = getLayoutAttr(tile.getType());
  LinearLayout layout = layoutOf(tile);
  Type elem = cast<RankedTensorType>(tile.getType()).getElementType();
  int dupRegs = zeroBasisMask(layout, LayoutInput::Reg);
  // Registers holding consecutive elements along `vectorDim` land in consecutive bytes of a core
  // matrix row (16 bytes): one vector store each, as wide as both allow.
  const int elemBytes = elem.getIntOrFloatBitWidth() / 8;
  const int vec = contiguousRegsAlong(layout, vectorDim, kCoreRowBytes / elemBytes);
  ArrayRef<Value> values = regs[tile];
  // Register bits whose step moves the address by a constant: each a single coordinate bit that no
  // other basis vector (register, lane or warp) sets, so that adding it is the same as XOR-ing it.
  int constantBits = 0;
  SmallVector<int64_t> stepBytes(layout.numBits(LayoutInput::Reg), 0);
  if (constantStep) {
    const auto &regBases = layout.bases(LayoutInput::Reg);
    for (size_t i = 0; i < regBases.size(); ++i) {
      const LinearLayout::Coord &step = regBases[i];
      std::optional<int64_t> bytes = constantStep(step);
      if (!bytes || (1 << i) < vec || llvm::count_if(step, [](int64_t x) { return x != 0; }) != 1 ||
          llvm::any_of(step, [](int64_t x) { return x != 0 && !llvm::isPowerOf2_64(x); }))
        continue;
      bool alone = true;
      for (LayoutInput in : {LayoutInput::Reg, LayoutInput::Lane, LayoutInput::Warp})
        for (const LinearLayout::Coord &other : layout.bases(in))
          if (&other != &step)
            for (size_t d = 0; d < step.size(); ++d)
              alone &= (other[d] & step[d]) == 0;
      if (alone) {
        constantBits |= 1 << i;
        stepBytes[i] = *bytes;
      }
    }
  }
  DenseMap<int, Value> classOffset; // the computed offset of each register with no constant bits
  // The thread's coordinates through an opaque copy at the store: LICM cannot hoist the classes'
  // addresses out of an enclosing loop (one 64-bit register each, held across it), which costs a
  // few integer operations per store site.
  SmallVector<Value> opaqueThread;
  if (constantBits)
    for (Value t : threadCoord(attr))
      opaqueThread.push_back(LLVM::InlineAsmOp::create(b, loc, b.getI32Type(), ValueRange{t}, "mov.b32 $0, $1;",
                                                       "=r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
                                                       LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                                 .getResult(0));
  for (int first = 0; first < layout.numRegs(); first += vec) {
    if (first & dupRegs)
      continue;
    Value off;
    if (constantBits) {
      const int rep = first & ~constantBits;
      Value &base = classOffset[rep];
      if (!base)
        base = arith::AddIOp::create(b, loc, byteBase, offsetOf(regCoord(opaqueThread, layout, rep)));
      int64_t bytes = 0;
      for (size_t i = 0; i < stepBytes.size(); ++i)
        if (first & constantBits & (1 << i))
          bytes += stepBytes[i];
      off = bytes ? arith::AddIOp::create(b, loc, base, i32(bytes)).getResult() : base;
    } else {
      off = arith::AddIOp::create(b, loc, byteBase, offsetOf(regCoord(attr, layout, first)));
    }
    Value addr = smemAddress(off, b.getI8Type());
    if (vec == 1) {
      LLVM::StoreOp::create(b, loc, values[first], addr);
      continue;
    }
    Value v = LLVM::UndefOp::create(b, loc, VectorType::get({vec}, elem));
    for (int i = 0; i < vec; ++i)
      v = LLVM::InsertElementOp::create(b, loc, v, values[first + i], i32(i));
    LLVM::StoreOp::create(b, loc, v, addr, /*alignment=*/vec * elemBytes);
  }
}

bool TileRegisters::storeWgmmaOperand(Value tile, bool isB, int64_t k, Value base) {
  if (!isB) {
    storeTile(tile, base, [&](ArrayRef<Value> c) { return coreMatrixOffset(c[0], c[1], k); }, /*vectorDim=*/1);
    return false;
  }
  // B is stored N-major (n contiguous inside a core-matrix row, wgmma's transposed B) when its
  // registers run along N, as after a row-major load; K-major otherwise (after a transpose, say).
  const bool nMajor = contiguousRegsAlong(layoutOf(tile), 1, 8) > 1;
  if (nMajor)
    storeTile(tile, base, [&](ArrayRef<Value> c) { return coreMatrixOffset(c[1], c[0], k, /*transposed=*/true); }, 1);
  else
    storeTile(tile, base, [&](ArrayRef<Value> c) { return coreMatrixOffset(c[1], c[0], k); }, 0);
  return nMajor;
}

Value TileRegisters::scalarAt(Value v, scf::ForOp op, Value iv, DenseMap<Value, Value> &memo) {
  if (v == op.getInductionVar())
    return iv;
  if (op.isDefinedOutsideOfLoop(v))
    return scalars.lookup(v);
  if (Value known = memo.lookup(v))
    return known;
  Operation *def = v.getDefiningOp();
  if (auto load = dyn_cast<tile::ScalarLoadOp>(def)) {
    Value base = scalarAt(load.getBase(), op, iv, memo);
    Value result = loadScalar(load, base, scalarAt(load.getOffset(), op, iv, memo));
    memo[v] = result;
    return result;
  }
  OperationState state(loc, def->getName());
  for (Value operand : def->getOperands())
    state.addOperands(scalarAt(operand, op, iv, memo));
  state.addTypes(v.getType());
  state.addAttributes(def->getAttrs());
  Value result = b.create(state)->getResult(0);
  memo[v] = result;
  return result;
}

Value TileRegisters::loadScalar(tile::ScalarLoadOp load, Value base, Value offset) {
  if (offset.getType().isInteger(32))
    offset = arith::ExtSIOp::create(b, loc, b.getI64Type(), offset);
  Type elem = load.getResult().getType();
  Value addr = LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), elem, base,
                                   ValueRange{offset});
  return LLVM::LoadOp::create(b, loc, elem, addr);
}

SmallVector<Value> TileRegisters::loadOffsetsAt(tile::LoadOp load, scf::ForOp op, Value iv, DenseMap<Value, Value> &memo) {
  SmallVector<Value> offsets;
  for (Value o : load.getOffsets())
    offsets.push_back(scalarAt(o, op, iv, memo));
  return offsets;
}

void TileRegisters::rebindThreadValues() {
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

void TileRegisters::restoreThreadValues() {
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

void TileRegisters::withKernelThreadValues(const std::function<void()> &body) {
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

} // namespace flare::tgpu::lowering
