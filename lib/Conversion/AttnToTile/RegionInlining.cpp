//===- RegionInlining.cpp - score_mod and mask_mod as tile code ------------===//
//
// The modifier regions are scalar code; every value gets a shape class (Uniform, Row, Col, Full) and
// is emitted as a scalar or a tile of that shape, broadcasting narrower operands; Uniform and Row
// values are computed once before the loops (see AttnToTile.cpp).
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace flare::attn::generator {

void Generator::classify(Region &region, bool isScore) {
  if (region.empty())
    return;
  Block &block = region.front();
  unsigned first = isScore ? 1 : 0; // score_mod starts with the score
  if (isScore)
    shapes[block.getArgument(0)] = Shape::Full;
  shapes[block.getArgument(first + 0)] = Shape::Uniform;
  shapes[block.getArgument(first + 1)] = headsPerRow ? Shape::Row : Shape::Uniform;
  shapes[block.getArgument(first + 2)] = keysAreRows ? Shape::Col : Shape::Row;
  shapes[block.getArgument(first + 3)] = keysAreRows ? Shape::Row : Shape::Col;
  for (Operation &inner : block.without_terminator()) {
    Shape s = Shape::Uniform;
    for (Value operand : inner.getOperands())
      if (!isa<RankedTensorType>(operand.getType()))
        s = join(s, shapes.lookup(operand));
    // A table read happens per query row at least: there is no scalar load in tile kernels, and
    // BLOCK_M identical loads hit the same cache line once, before the KV loop.
    if (isa<AuxLoadOp>(inner) && s == Shape::Uniform)
      s = invariant;
    for (Value r : inner.getResults())
      shapes[r] = s;
  }
}

Value Generator::lookup(Value v) {
  if (body)
    if (Value x = body->lookup(v))
      return x;
  return hoisted.lookup(v);
}

Value Generator::at(Value v, Shape s) {
  Value x = lookup(v);
  Shape from = shapes.lookup(v);
  if (from == s)
    return x;
  auto key = std::make_pair(v, static_cast<int>(s));
  if (broadcasts)
    if (Value cached = broadcasts->lookup(key))
      return cached;
  Value r;
  if (from == Shape::Uniform)
    r = splat(x, dims(s));
  else if (from == Shape::Row)
    r = broadcastRows(x, tileN);
  else
    r = broadcastCols(x, tileM);
  if (broadcasts)
    (*broadcasts)[key] = r;
  return r;
}

/// Math ops the tile backend implements on tiles (approximate NVVM instructions where they exist).
static bool isSupportedMath(Operation *op) {
  return isa<math::Exp2Op, math::ExpOp, math::Log2Op, math::LogOp, math::RsqrtOp, math::SqrtOp, math::AbsFOp,
             math::TanhOp>(op);
}

LogicalResult Generator::emitOp(Operation *inner, DenseMap<Value, Value> &into) {
  Shape s = inner->getNumResults() ? shapes.lookup(inner->getResult(0)) : Shape::Uniform;
  if (auto cst = dyn_cast<arith::ConstantOp>(inner)) {
    Attribute value = cst.getValue();
    if (auto i = dyn_cast<IntegerAttr>(value); i && i.getType().isIndex())
      value = IntegerAttr::get(indexType, i.getValue().sextOrTrunc(indexType.getIntOrFloatBitWidth()));
    into[cst.getResult()] = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
    return success();
  }
  // A comparison the index ranges decide is a constant (e.g. a window bound beyond every sequence).
  if (auto cmp = dyn_cast<arith::CmpIOp>(inner))
    if (std::optional<bool> known = ranges.decided(cmp)) {
      Type i1 = b.getI1Type();
      Attribute value = b.getBoolAttr(*known);
      if (s != Shape::Uniform)
        value = DenseElementsAttr::get(tileType(dims(s), i1), *known);
      into[cmp.getResult()] = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
      return success();
    }
  if (isa<QLenOp, KVLenOp>(inner)) {
    into[inner->getResult(0)] = asIndex(isa<QLenOp>(inner) ? seqQ : seqKV);
    return success();
  }
  if (auto load = dyn_cast<AuxLoadOp>(inner)) {
    unsigned which = cast<BlockArgument>(load.getTensor()).getArgNumber() -
                     (load->getBlock()->getNumArguments() - static_cast<unsigned>(auxPtrs.size()));
    SmallVector<int64_t> shape = dims(s);
    // Clamp into the table: rows past Sq and keys past Skv are evaluated too, and must not fault.
    Value idx = at(load.getIndex(), s);
    Value last = splat(asIndex(sub(auxLens[which], c32(1))), shape);
    Value zero = splat(asIndex(c32(0)), shape);
    idx = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, idx, last), zero);
    if (indexType != i32Type) // in range now: its low 32 bits are the offset
      idx = arith::TruncIOp::create(b, loc, shape.empty() ? i32Type : Type(tileType(shape, i32Type)), idx);
    into[load.getResult()] =
        tile::GatherOp::create(b, loc, tileType(shape, load.getType()), auxPtrs[which], idx);
    return success();
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(inner)) {
    Value src = at(inner->getOperand(0), s);
    Type from = getElementTypeOrSelf(src.getType());
    Type to = convertScalar(inner->getResult(0).getType());
    Type result = shaped(inner->getResult(0).getType(), s);
    unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
    // Index values are i32 here only where ModifierRanges proved every cast exact in 32 bits.
    Value r = src;
    if (tw > fw)
      r = isa<arith::IndexCastUIOp>(inner) ? arith::ExtUIOp::create(b, loc, result, src).getResult()
                                           : arith::ExtSIOp::create(b, loc, result, src).getResult();
    else if (tw < fw)
      r = arith::TruncIOp::create(b, loc, result, src);
    into[inner->getResult(0)] = r;
    return success();
  }
  if (isa<math::MathDialect>(inner->getDialect()) && !isSupportedMath(inner))
    return inner->emitOpError("is not supported in generated attention kernels yet (supported math ops: exp, "
                              "exp2, log, log2, sqrt, rsqrt, absf, tanh)");
  if (inner->getNumResults() != 1)
    return inner->emitOpError("expected one result in a modifier region");
  OperationState state(inner->getLoc(), inner->getName());
  for (Value operand : inner->getOperands())
    state.addOperands(at(operand, s));
  state.addTypes(shaped(inner->getResult(0).getType(), s));
  state.addAttributes(inner->getAttrs());
  into[inner->getResult(0)] = b.create(state)->getResult(0);
  return success();
}

LogicalResult Generator::emitHoistedRegions(unsigned indexArg, llvm::function_ref<Value()> index) {
  for (auto [region, first] : {std::pair<Region *, unsigned>{&op.getScoreMod(), 1}, {&op.getMaskMod(), 0}}) {
    if (region->empty())
      continue;
    Block &blk = region->front();
    hoisted[blk.getArgument(first + 0)] = asIndex(batchIdx);
    hoisted[blk.getArgument(first + 1)] = asIndex(headIdx);
    hoisted[blk.getArgument(first + indexArg)] = index();
    if (failed(emitRegion(*region, /*hoistedPart=*/true, hoisted)))
      return failure();
  }
  return success();
}

LogicalResult Generator::emitRegion(Region &region, bool hoistedPart, DenseMap<Value, Value> &into) {
  if (region.empty())
    return success();
  for (Operation &inner : region.front().without_terminator()) {
    Shape s = inner.getNumResults() ? shapes.lookup(inner.getResult(0)) : Shape::Uniform;
    bool isHoisted = s == Shape::Uniform || s == invariant;
    if (isHoisted != hoistedPart)
      continue;
    if (failed(emitOp(&inner, into)))
      return failure();
  }
  return success();
}

} // namespace flare::attn::generator
