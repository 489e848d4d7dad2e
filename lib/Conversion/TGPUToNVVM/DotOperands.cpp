//===- DotOperands.cpp - Dot operands that wait in shared memory ---------===//
#include "DotOperands.h"

namespace flare::tgpu::lowering {

void DotOperands::lowerLazyConvert(ConvertLayoutOp conv) {
  LinearLayout from = layoutOf(conv.getSrc());
  Type elem = conv.getSrc().getType().getElementType();
  Type st = scratchType(elem);
  int64_t bytes = from.numElements() * (st.getIntOrFloatBitWidth() / 8);
  constexpr int64_t kAlign = 16;
  Operation *dot = *conv->getUsers().begin();
  const bool persistent = isPersistentDotOperand(conv, dot);
  int64_t offset;
  Value base;
  if (persistent) {
    offset = areas.persistentOperands.append(bytes, kAlign, dot->getLoc()); // the dot that needs the operand
    base = arith::AddIOp::create(b, loc, areas.persistentOperands.base(), i32(offset));
  } else {
    offset = lazyCursor;
    lazyCursor = alignUp(lazyCursor + bytes, kAlign);
    Location saved = loc;
    loc = dot->getLoc(); // charge the dot that needs the operand
    growLazy();
    loc = saved;
    base = arith::AddIOp::create(b, loc, areas.operands.base(), i32(offset));
  }
  Attribute fromAttr = getLayoutAttr(conv.getSrc().getType());
  ArrayRef<Value> srcRegs = regs[conv.getSrc()];
  for (int r = 0; r < from.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(fromAttr, from, r), from.shape());
    LLVM::StoreOp::create(b, loc, toScratch(srcRegs[r]), smemAddress(idx, st, base));
  }
  barrier();
  LazyTile tile{getLayoutAttr(conv.getResult().getType()), layoutOf(conv.getResult()), elem, offset,
                DenseMap<int, Value>(), persistent};
  lazyTiles[conv.getResult()] = std::move(tile);
  if (!persistent)
    ++pendingLazy;
}

Value DotOperands::lazyRegister(Value v, int reg) {
  LazyTile &tile = lazyTiles.find(v)->second;
  if (Value cached = tile.loaded.lookup(reg))
    return cached;
  Type st = scratchType(tile.elem);
  Value base = arith::AddIOp::create(b, loc, (tile.persistent ? areas.persistentOperands : areas.operands).base(),
                                     i32(tile.byteOffset));
  Value idx = linearIndex(regCoord(tile.layoutAttr, tile.layout, reg), tile.layout.shape());
  Value value = fromScratch(LLVM::LoadOp::create(b, loc, st, smemAddress(idx, st, base)), tile.elem);
  tile.loaded[reg] = value;
  return value;
}

} // namespace flare::tgpu::lowering
