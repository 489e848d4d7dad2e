//===- LowerGather.cpp - tile.gather: one load per distinct element --------===//
//
// The gathers of attention modifiers read a table at an index that is an affine function of the
// tile's coordinates (flare/Dialect/Tile/AffineTile.h): kv - q + C for a relative-position bias, a
// row's document id. Where the tile's layout puts every register at the thread's coordinates plus a
// constant, register r's offset is one per-thread base plus a constant k[r], and registers with equal
// constants read the same element (kv - q repeats along the diagonals a thread holds: 34 distinct
// elements of 64 in a wgmma accumulator's registers of 128 x 128). So:
//  - affine offsets: one 64-bit base per thread, each distinct element a load at an immediate offset
//    (tile-version-gathers gives the generator's clamped reads this form where the whole tile lies
//    inside the table);
//  - clamped affine offsets with many distinct elements in tile-version-gathers' else-branch (marked
//    `bounds_crossing`): each distinct element a load predicated on base + k lying inside the
//    clamp, at its immediate offset, else the edge element; the clamp per register spilled there
//    (36-344 bytes), and 34 addresses of 64 bits at once did too (40);
//  - any other offsets: one clamped address and load per register (on sm_80 this spilled least: 24
//    bytes for a relative-position bias at head dim 128 against 208-232).
// Every path reads exactly the elements the IR names.
//
//===----------------------------------------------------------------------===//
#include "BlockCopies.h"

#include "flare/Dialect/Tile/AffineTile.h"

namespace flare::tgpu::lowering {
namespace {

/// Above this many distinct elements a clamped gather in a versioned else-branch predicates its loads.
constexpr size_t kFewElements = 8;

} // namespace

LogicalResult BlockCopies::lowerGather(tile::GatherOp gather) {
  Type elem = gather.getResult().getType().getElementType();
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value base = scalars.lookup(gather.getBase());
  auto loadAt = [&](Value from, Value offset) -> Value {
    if (offset.getType().isInteger(32))
      offset = arith::ExtSIOp::create(b, loc, b.getI64Type(), offset);
    return LLVM::LoadOp::create(b, loc, elem, LLVM::GEPOp::create(b, loc, globalPtr, elem, from, ValueRange{offset}));
  };
  Value offsets = gather.getOffsets();
  LinearLayout layout = layoutOf(offsets);
  // A clamped gather marked `bounds_crossing` (tile-version-gathers' else-branch, taken in the
  // steps whose tile crosses the clamp's bounds) predicates its loads; others clamp per register.
  std::optional<tile::ClampedAffine> clamped;
  std::optional<tile::AffineTile> affine = tile::oneAddressForm(gather, &clamped);
  auto perRegister = [&] {
    SmallVector<Value> out;
    for (Value offset : regs[offsets])
      out.push_back(loadAt(base, offset));
    regs[gather.getResult()] = out;
    return success();
  };
  if (!affine || !layout.registersAddToThread())
    return perRegister();

  // Register r: base + k[r], the thread's part (its coordinates and the uniform terms) and the
  // register's constant; one load per distinct constant.
  SmallVector<int64_t> distinct;
  SmallVector<unsigned> slotOf;
  for (int r = 0; r < layout.numRegs(); ++r) {
    LinearLayout::Coord c = layout.applyInput(LayoutInput::Reg, r);
    int64_t k = 0;
    for (int d = 0; d < layout.rank(); ++d)
      k += affine->coef[d] * c[d];
    auto *at = llvm::find(distinct, k);
    slotOf.push_back(static_cast<unsigned>(at - distinct.begin()));
    if (at == distinct.end())
      distinct.push_back(k);
  }
  if (clamped && distinct.size() <= kFewElements)
    return perRegister();
  // In i32 the thread's base wraps as the IR's arithmetic does: both are the same sum modulo 2^32.
  ArrayRef<Value> thread = threadCoord(getLayoutAttr(offsets.getType()));
  Value threadBase =
      tile::emitUniformPart(b, loc, *affine, b.getI32Type(), [&](Value s) { return scalars.lookup(s); });
  for (int d = 0; d < layout.rank(); ++d)
    if (affine->coef[d])
      threadBase = arith::AddIOp::create(
          b, loc, threadBase,
          affine->coef[d] == 1 ? thread[d] : arith::MulIOp::create(b, loc, thread[d], i32(affine->coef[d])));

  // The thread's address. Unclamped offsets lie inside the allocation, as tile.gather requires: the
  // base (register 0's offset) and every base + k are below 2^31, so base + k in 64 bits is the
  // offset; clamped ones read from it only where base + k is inside the clamp's bounds.
  auto threadPtr = [&] {
    return LLVM::GEPOp::create(b, loc, globalPtr, elem, base,
                               ValueRange{arith::ExtSIOp::create(b, loc, b.getI64Type(), threadBase)});
  };
  SmallVector<Value> loaded;
  if (!clamped) {
    Value from = threadPtr();
    for (int64_t k : distinct)
      loaded.push_back(loadAt(from, i64(k)));
  } else {
    // clamp(base + k) is base + k where that lies in [lo, hi], else the element at lo or hi: one
    // predicated load at an immediate offset from the thread's address and a select.
    // Below lo the clamp gives lo, unless hi < lo: then max(min(x, hi), lo) is lo and min(max(x, lo),
    // hi) is hi for every x. Each edge element is read only when some offset of the tile reaches it.
    auto bound = [&](const tile::UniformBound &bd) { return bd.scalar ? scalars.lookup(bd.scalar) : i32(bd.constant); };
    Value lo = bound(clamped->lo), hi = bound(clamped->hi);
    auto [lowest, highest] = tile::emitValueRange(b, loc, *affine, cast<RankedTensorType>(offsets.getType()).getShape(),
                                                  [&](Value s) { return scalars.lookup(s); });
    auto wide = [&](Value v) { return arith::ExtSIOp::create(b, loc, b.getI64Type(), v).getResult(); };
    Value pad = LLVM::ZeroOp::create(b, loc, elem);
    Value reachesLo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lowest, wide(lo));
    Value reachesHi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, highest, wide(hi));
    Value loIndex = clamped->minFirst ? lo : arith::MinSIOp::create(b, loc, lo, hi).getResult();
    Value hiIndex = clamped->minFirst ? arith::MaxSIOp::create(b, loc, hi, lo).getResult() : hi;
    auto edgeAddr = [&](Value index) { return LLVM::GEPOp::create(b, loc, globalPtr, elem, base, ValueRange{wide(index)}); };
    Value atLo = predicatedLoad(edgeAddr(loIndex), reachesLo, pad, elem);
    Value atHi = predicatedLoad(edgeAddr(hiIndex), reachesHi, pad, elem);
    Value from = threadPtr();
    for (int64_t k : distinct) {
      Value v = arith::AddIOp::create(b, loc, threadBase, i32(k));
      Value aboveLo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, lo);
      Value inside = arith::AndIOp::create(b, loc, aboveLo, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, v, hi));
      Value edge = arith::SelectOp::create(b, loc, aboveLo, atHi, atLo);
      // The offset in the instruction: one address register for every load.
      const int64_t bytes = k * static_cast<int64_t>(elem.getIntOrFloatBitWidth() / 8);
      loaded.push_back(predicatedLoad(from, inside, edge, elem, bytes));
    }
  }
  SmallVector<Value> out;
  for (unsigned slot : slotOf)
    out.push_back(loaded[slot]);
  regs[gather.getResult()] = out;
  return success();
}

} // namespace flare::tgpu::lowering
