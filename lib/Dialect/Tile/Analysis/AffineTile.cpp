//===- AffineTile.cpp - Integer tiles that are affine in their coordinates ===//
#include "flare/Dialect/Tile/AffineTile.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace flare::tile {
namespace {

/// Coefficients stay far inside i64 so that bounds computed from them cannot wrap.
bool modest(int64_t v) { return v > -(int64_t(1) << 31) && v < (int64_t(1) << 31); }

bool modest(const AffineTile &x) {
  return modest(x.constant) && llvm::all_of(x.coef, [](int64_t c) { return modest(c); }) &&
         llvm::all_of(x.uniform, [](auto &u) { return modest(u.second); });
}

std::optional<int64_t> constantOf(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  return std::nullopt;
}

std::optional<AffineTile> combine(std::optional<AffineTile> x, std::optional<AffineTile> y, int64_t sign) {
  if (!x || !y || x->coef.size() != y->coef.size())
    return std::nullopt;
  x->constant += sign * y->constant;
  for (size_t d = 0; d < x->coef.size(); ++d)
    x->coef[d] += sign * y->coef[d];
  for (auto [s, f] : y->uniform)
    x->uniform.push_back({s, sign * f});
  return modest(*x) ? x : std::nullopt;
}

std::optional<AffineTile> scaled(std::optional<AffineTile> x, int64_t k) {
  if (!x || !modest(k))
    return std::nullopt;
  x->constant *= k;
  for (int64_t &c : x->coef)
    c *= k;
  for (auto &u : x->uniform)
    u.second *= k;
  return modest(*x) ? x : std::nullopt;
}

std::optional<AffineTile> affineOf(Value v, int depth) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isInteger(32) || depth > 16)
    return std::nullopt;
  AffineTile r;
  r.coef.assign(type.getRank(), 0);
  if (std::optional<int64_t> c = constantOf(v)) {
    r.constant = *c;
    return r;
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto range = dyn_cast<RangeOp>(def)) {
    r.coef[0] = 1;
    r.constant = static_cast<int32_t>(range.getStart());
    return r;
  }
  if (auto splat = dyn_cast<SplatOp>(def)) {
    if (std::optional<int64_t> c = constantOf(splat.getValue()))
      r.constant = *c;
    else
      r.uniform.push_back({splat.getValue(), 1});
    return r;
  }
  if (auto expand = dyn_cast<ExpandDimsOp>(def)) {
    std::optional<AffineTile> src = affineOf(expand.getSrc(), depth + 1);
    if (!src)
      return std::nullopt;
    src->coef.insert(src->coef.begin() + static_cast<int64_t>(expand.getAxis()), 0);
    return src;
  }
  if (auto bcast = dyn_cast<BroadcastOp>(def)) {
    std::optional<AffineTile> src = affineOf(bcast.getSrc(), depth + 1);
    auto srcType = cast<RankedTensorType>(bcast.getSrc().getType());
    if (!src || srcType.getRank() != type.getRank())
      return std::nullopt;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (srcType.getDimSize(d) == 1) // one coordinate (0) before, every one after: no dependence
        src->coef[d] = 0;
    return src;
  }
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return combine(affineOf(def->getOperand(0), depth + 1), affineOf(def->getOperand(1), depth + 1),
                   isa<arith::AddIOp>(def) ? 1 : -1);
  if (isa<arith::MulIOp>(def)) {
    std::optional<AffineTile> x = affineOf(def->getOperand(0), depth + 1);
    std::optional<AffineTile> y = affineOf(def->getOperand(1), depth + 1);
    if (x && y && y->isConstant())
      return scaled(x, y->constant);
    if (x && y && x->isConstant())
      return scaled(y, x->constant);
    return std::nullopt;
  }
  if (isa<arith::ShLIOp>(def)) {
    std::optional<AffineTile> y = affineOf(def->getOperand(1), depth + 1);
    if (!y || !y->isConstant() || y->constant < 0 || y->constant > 30)
      return std::nullopt;
    return scaled(affineOf(def->getOperand(0), depth + 1), int64_t(1) << y->constant);
  }
  return std::nullopt;
}

std::optional<UniformBound> uniformOf(Value v) {
  if (std::optional<int64_t> c = constantOf(v))
    return UniformBound{Value(), *c};
  if (auto splat = v.getDefiningOp<SplatOp>()) {
    if (std::optional<int64_t> c = constantOf(splat.getValue()))
      return UniformBound{Value(), *c};
    if (splat.getValue().getType().isInteger(32))
      return UniformBound{splat.getValue(), 0};
  }
  return std::nullopt;
}

} // namespace

bool AffineTile::isConstant() const {
  return uniform.empty() && llvm::all_of(coef, [](int64_t c) { return c == 0; });
}

std::pair<int64_t, int64_t> AffineTile::coordinateSpan(ArrayRef<int64_t> shape) const {
  int64_t below = 0, above = 0;
  for (size_t d = 0; d < coef.size(); ++d) {
    below += std::min<int64_t>(0, coef[d] * (shape[d] - 1));
    above += std::max<int64_t>(0, coef[d] * (shape[d] - 1));
  }
  return {below, above};
}

std::optional<AffineTile> affineOf(Value tile) { return affineOf(tile, 0); }

Value emitUniformPart(OpBuilder &b, Location loc, const AffineTile &affine, Type type,
                      llvm::function_ref<Value(Value)> scalar) {
  // In i64 each term stays below 2^62 in magnitude (i32 scalars, factors below 2^31), so a few of
  // them cannot wrap.
  auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, type, v).getResult(); };
  Value sum = constant(affine.constant);
  for (auto [s, f] : affine.uniform) {
    Value v = scalar(s);
    if (v.getType() != type)
      v = arith::ExtSIOp::create(b, loc, type, v);
    Value term = f == 1 ? v : arith::MulIOp::create(b, loc, v, constant(f)).getResult();
    sum = arith::AddIOp::create(b, loc, sum, term);
  }
  return sum;
}

std::pair<Value, Value> emitValueRange(OpBuilder &b, Location loc, const AffineTile &affine, ArrayRef<int64_t> shape,
                                       llvm::function_ref<Value(Value)> scalar) {
  Type i64 = b.getI64Type();
  Value uniform = emitUniformPart(b, loc, affine, i64, scalar);
  auto [below, above] = affine.coordinateSpan(shape);
  Value lowest = arith::AddIOp::create(b, loc, uniform, arith::ConstantIntOp::create(b, loc, i64, below));
  Value highest = arith::AddIOp::create(b, loc, uniform, arith::ConstantIntOp::create(b, loc, i64, above));
  return {lowest, highest};
}

std::optional<ClampedAffine> matchClampedAffine(Value offsets) {
  Operation *outer = offsets.getDefiningOp();
  if (!isa_and_nonnull<arith::MaxSIOp, arith::MinSIOp>(outer))
    return std::nullopt;
  bool minFirst = isa<arith::MaxSIOp>(outer);
  for (int side = 0; side < 2; ++side) {
    Operation *inner = outer->getOperand(side).getDefiningOp();
    std::optional<UniformBound> outerBound = uniformOf(outer->getOperand(1 - side));
    if (!outerBound || !inner || (minFirst ? !isa<arith::MinSIOp>(inner) : !isa<arith::MaxSIOp>(inner)))
      continue;
    for (int innerSide = 0; innerSide < 2; ++innerSide) {
      std::optional<UniformBound> innerBound = uniformOf(inner->getOperand(1 - innerSide));
      Value x = inner->getOperand(innerSide);
      std::optional<AffineTile> affine = affineOf(x);
      if (!innerBound || !affine)
        continue;
      if (minFirst)
        return ClampedAffine{inner, x, *affine, *outerBound, *innerBound, true};
      return ClampedAffine{inner, x, *affine, *innerBound, *outerBound, false};
    }
  }
  return std::nullopt;
}

std::optional<AffineTile> oneAddressForm(GatherOp gather, std::optional<ClampedAffine> *clamped) {
  if (std::optional<AffineTile> affine = affineOf(gather.getOffsets()))
    return affine;
  if (!gather.getBoundsCrossing())
    return std::nullopt;
  std::optional<ClampedAffine> match = matchClampedAffine(gather.getOffsets());
  if (!match)
    return std::nullopt;
  if (clamped)
    *clamped = match;
  return match->affine;
}

} // namespace flare::tile
