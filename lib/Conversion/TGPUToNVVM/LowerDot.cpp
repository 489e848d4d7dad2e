//===- LowerDot.cpp - Tensor-core dots: mma.sync and wgmma ----------------===//
//
// tile.dot as mma.sync or wgmma, and an invariant A operand (Q) read once into wgmma's register
// fragments (registerAFits, loadRegisterA). The pipelined K loops of matmul dots: DotPipelines.cpp.
//
//===----------------------------------------------------------------------===//
#include "KernelLowering.h"

#include "flare/Layout/SharedLayout.h"

namespace flare::tgpu::lowering {

LogicalResult KernelLowering::lowerDot(tile::DotOp op) {
  if (runsOnWgmma(op))
    return lowerDotWgmma(op);
  auto aType = op.getA().getType();
  Type elem = aType.getElementType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = op.getB().getType().getDimSize(1);
  Value aValue = op.getA(), bValue = op.getB();
  SmallVector<Value> c(regs[op.getC()]);
  emitMmaSync(m, k, n, numWarps, elem, [&](int r) { return dotRegister(aValue, r); },
              [&](int r) { return dotRegister(bValue, r); }, c);
  regs[op.getResult()] = c;
  // The lazy operands' shared memory may be overwritten once every warp has read its fragments.
  int consumed = 0;
  for (Value operand : {aValue, bValue}) {
    auto it = lazyTiles.find(operand);
    if (it == lazyTiles.end())
      continue;
    if (it->second.persistent) {
      it->second.loaded.clear(); // the fragments were loaded in this dot's block only
      continue;
    }
    lazyTiles.erase(it);
    ++consumed;
  }
  if (consumed) {
    barrier();
    pendingLazy -= consumed;
    if (pendingLazy == 0)
      lazyCursor = 0;
  }
  return success();
}

bool DotOperands::isRegisterA(Value aTile, int64_t m, int64_t k, int64_t n) {
  // wgmma's A fragments are mma.sync's: warp w of warpgroup g holds rows 64g + 16w .. + 15 in the
  // m16n8k16 A order, so the mma operand layout with all warps along M is exactly what it reads.
  return regs.count(aTile) && layoutOf(aTile) == LinearLayout::mmaOperandA(m, k, n, numWarps);
}


/// wgmma.mma_async on shared-memory operands: A and B are stored there (see coreMatrixOffset) right
/// before it unless they already are (streamed or loop-invariant operands, smemOperands); A is read
/// from registers when they are in its fragment layout.
LogicalResult KernelLowering::lowerDotWgmma(tile::DotOp op) {
  auto aType = op.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = op.getB().getType().getDimSize(1);
  Type elem = aType.getElementType();
  Value aTile = wgmmaSources.lookup(op.getA()), bTile = wgmmaSources.lookup(op.getB());
  if (!aTile)
    aTile = op.getA();
  if (!bTile)
    bTile = op.getB();
  SmemOperand aSmem = smemOperands.lookup(op.getA()), bSmem = smemOperands.lookup(op.getB());
  aSmem.descriptorsAtDot = descriptorsAtDot(op);
  // B copied by TMA at its load (loadOperandByTma): wait for the panels.
  if (auto tma = tmaOperands.find(bTile); !bSmem.base && tma != tmaOperands.end() && tma->second.nMajor) {
    waitForTmaOperand(tma->second);
    bSmem = {tma->second.base, /*nMajor=*/true, /*swizzled=*/true};
  }
  SmallVector<Value> aRegs;
  if (auto it = registerAOperands.find(aTile); !aSmem.base && it != registerAOperands.end())
    aRegs = it->second.first;
  else if (!aSmem.base && isRegisterA(aTile, m, k, n))
    aRegs = regs[aTile];
  const bool storeA = !aSmem.base && aRegs.empty(), storeB = !bSmem.base;
  if (storeA || storeB) {
    // Shared memory for the stored operands (core matrices), above the other ops' scratch (see the
    // lazy tiles).
    constexpr int64_t kAlign = 128;
    int64_t cursor = alignUp(lazyCursor, kAlign);
    if (storeA) {
      aSmem.base = arith::AddIOp::create(b, loc, areas.operands.base(), i32(cursor));
      cursor = alignUp(cursor + m * k * 2, kAlign);
    }
    if (storeB) {
      bSmem.base = arith::AddIOp::create(b, loc, areas.operands.base(), i32(cursor));
      cursor += n * k * 2;
    }
    lazyCursor = cursor;
    growLazy();
    if (storeA)
      storeWgmmaOperand(aTile, /*isB=*/false, k, aSmem.base);
    if (storeB)
      bSmem.nMajor = storeWgmmaOperand(bTile, /*isB=*/true, k, bSmem.base);
    // Generic-proxy stores must be visible to the async proxy that wgmma reads through.
    fenceAsyncProxy();
    barrier();
  }
  SmallVector<Value> c(regs[op.getC()]);
  // Zero padding the dot promises (k_extent, n_extent): no MMAs over it.
  const int64_t kExtent = static_cast<int64_t>(op.getKExtent().value_or(k));
  const int64_t nExtent = static_cast<int64_t>(op.getNExtent().value_or(n));
  const int64_t kIssued = kExtent < k ? kExtent : 0, nIssued = nExtent < n ? nExtent : 0;
  if (!storeA && !storeB) {
    // Nothing to release afterwards: leave the MMAs in flight until the result is used.
    const size_t live = issuedRegisters(c.size(), n, nIssued);
    Value acc = emitWgmmaAsync(aSmem, bSmem, m, n, k, elem, packAccumulator(ArrayRef<Value>(c).take_front(live)),
                               aRegs, kIssued, nIssued);
    pendingDots.push_back({op.getResult(), acc, SmallVector<Value>(ArrayRef<Value>(c).drop_front(live))});
    return success();
  }
  waitForDots(); // the wait below covers every group: bind the pending results first
  emitWgmma(aSmem, bSmem, m, n, k, elem, c, aRegs, kIssued, nIssued);
  regs[op.getResult()] = c;
  // Every warpgroup has read A and B once the barrier passes; the space may be reused.
  barrier();
  if (pendingLazy == 0)
    lazyCursor = 0;
  return success();
}

/// The fragments' layout (LinearLayout::mmaOperandA) puts a thread's rows and columns in bits of
/// their own: lanes and warps give the row's low 3 bits and the column's bits 1-2, the registers
/// the rest, column bit 0 being the pair of one 32-bit read. In flare::swizzledOffset only the
/// 16-byte chunk (column bits 3-5) is then XOR-ed with the thread's row % 8, and every register's
/// address is one of 8 per-thread bases plus a constant.
bool DotOperands::registerAFits(int64_t m, int64_t k, int64_t n) {
  constexpr int64_t kMaxDepth = 128;
  if (m % 64 != 0 || k % 64 != 0 || k > kMaxDepth)
    return false;
  LinearLayout layout = LinearLayout::mmaOperandA(m, k, n, numWarps);
  int64_t threadRows = 0, threadCols = 0;
  for (LayoutInput in : {LayoutInput::Lane, LayoutInput::Warp})
    for (const auto &basis : layout.bases(in)) {
      threadRows |= basis[0];
      threadCols |= basis[1];
    }
  if ((threadCols & ~int64_t{6}) != 0 || (threadRows & 7) != 7 || layout.applyInput(LayoutInput::Reg, 1)[1] != 1)
    return false;
  for (int r = 2; r < layout.numRegs(); r += 2) {
    LinearLayout::Coord c = layout.applyInput(LayoutInput::Reg, r);
    if ((c[0] & (threadRows | 7)) != 0 || (c[1] & 7) != 0)
      return false;
  }
  return true;
}

SmallVector<Value> DotOperands::loadRegisterA(Value base, int64_t m, int64_t k, int64_t n, Type elem) {
  LinearLayout layout = LinearLayout::mmaOperandA(m, k, n, numWarps);
  ArrayRef<Value> t = threadCoord(LinearLayoutAttr::get(b.getContext(), layout)); // this thread's row, column
  // base + row * 128 + col * 2, with the row % 8 in the chunk bits (4-6): the panels start at
  // 1024-byte boundaries (TMA's 128-byte swizzle), so the or and the XOR below are exact.
  Value threadBase = arith::AddIOp::create(b, loc, base, arith::MulIOp::create(b, loc, t[0], i32(128)));
  threadBase = arith::AddIOp::create(b, loc, threadBase, arith::ShLIOp::create(b, loc, t[1], i32(1)));
  threadBase = arith::OrIOp::create(
      b, loc, threadBase, arith::ShLIOp::create(b, loc, arith::AndIOp::create(b, loc, t[0], i32(7)), i32(4)));
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto pairType = VectorType::get({2}, elem);
  DenseMap<int64_t, Value> chunkBases;
  SmallVector<Value> out(layout.numRegs());
  for (int r = 0; r < layout.numRegs(); r += 2) {
    LinearLayout::Coord c = layout.applyInput(LayoutInput::Reg, r);
    const int64_t chunk = (c[1] >> 3) & 7, panel = c[1] >> 6;
    Value &chunkBase = chunkBases[chunk];
    if (!chunkBase)
      chunkBase = chunk ? arith::XOrIOp::create(b, loc, threadBase, i32(chunk << 4)).getResult() : threadBase;
    Value offset = arith::AddIOp::create(b, loc, chunkBase, i32(panel * m * 128 + c[0] * 128));
    Value ptr = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), smemBase, ValueRange{offset});
    Value pair = LLVM::LoadOp::create(b, loc, pairType, ptr, /*alignment=*/4);
    out[r] = LLVM::ExtractElementOp::create(b, loc, pair, i32(0));
    out[r + 1] = LLVM::ExtractElementOp::create(b, loc, pair, i32(1));
  }
  return out;
}

} // namespace flare::tgpu::lowering
