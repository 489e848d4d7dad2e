//===- ScoreModGradient.cpp - d score_mod / d score for the backward kernels ===//
//
// score_mod is straight-line scalar code y = f(x, b, h, qi, kv, aux...) of one float input, the score
// x. The backward pass needs dy/dx per element of the S tile; with one input, forward-mode
// differentiation (a tangent per value, seeded with dx/dx = 1) costs what reverse mode would and
// follows the region's order. Tangents exist only for values that depend on x (Full tiles);
// a missing tangent is zero. Indices and aux tensors are constants of the derivative. An op on
// the path from x to the result that has no rule here is an error at that op.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/Math/IR/Math.h"

namespace flare::attn::generator {

FailureOr<Value> Generator::scoreModDerivative() {
  Region &region = op.getScoreMod();
  Block &blk = region.front();
  const SmallVector<int64_t> full = dims(Shape::Full);
  DenseMap<Value, Value> tangent; // region value -> its tangent (emitted, Full)
  Value one = splatF32(1.0, full);
  tangent[blk.getArgument(0)] = one;
  auto value = [&](Value v) { return at(v, Shape::Full); };
  auto constant = [&](double c, Type like) {
    auto t = cast<RankedTensorType>(like);
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), c)))
        .getResult();
  };
  auto mulF = [&](Value x, Value y) { return arith::MulFOp::create(b, loc, x, y).getResult(); };
  auto divF = [&](Value x, Value y) { return arith::DivFOp::create(b, loc, x, y).getResult(); };
  auto negF = [&](Value x) { return arith::NegFOp::create(b, loc, x).getResult(); };
  for (Operation &inner : blk.without_terminator()) {
    if (inner.getNumResults() != 1 || llvm::none_of(inner.getOperands(), [&](Value v) { return tangent.count(v); }))
      continue;
    Value result = inner.getResult(0);
    if (!isa<FloatType>(result.getType()))
      continue; // comparisons and casts to integers: piecewise constant, no tangent
    auto t = [&](unsigned i) { return tangent.lookup(inner.getOperand(i)); };
    Value y = value(result);
    auto tOrZero = [&](unsigned i) { return t(i) ? t(i) : constant(0.0, y.getType()); };
    Value r;
    if (isa<arith::AddFOp>(inner)) {
      r = !t(0) ? t(1) : !t(1) ? t(0) : arith::AddFOp::create(b, loc, t(0), t(1)).getResult();
    } else if (isa<arith::SubFOp>(inner)) {
      r = !t(1) ? t(0) : !t(0) ? negF(t(1)) : arith::SubFOp::create(b, loc, t(0), t(1)).getResult();
    } else if (isa<arith::MulFOp>(inner)) {
      Value a = value(inner.getOperand(0)), c = value(inner.getOperand(1));
      if (!t(1))
        r = mulF(t(0), c);
      else if (!t(0))
        r = mulF(a, t(1));
      else
        r = arith::AddFOp::create(b, loc, mulF(t(0), c), mulF(a, t(1)));
    } else if (isa<arith::DivFOp>(inner)) { // (ta - y tc) / c
      Value c = value(inner.getOperand(1));
      Value num = tOrZero(0);
      if (t(1))
        num = arith::SubFOp::create(b, loc, num, mulF(y, t(1)));
      r = divF(num, c);
    } else if (isa<arith::NegFOp>(inner)) {
      r = negF(t(0));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp>(inner)) {
      bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(inner);
      Value a = value(inner.getOperand(0)), c = value(inner.getOperand(1));
      Value first = arith::CmpFOp::create(b, loc, isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE, a, c);
      r = arith::SelectOp::create(b, loc, first, tOrZero(0), tOrZero(1));
    } else if (auto sel = dyn_cast<arith::SelectOp>(inner)) {
      if (tangent.count(sel.getCondition()))
        return inner.emitOpError("cannot be differentiated with respect to the score (a float condition)");
      r = arith::SelectOp::create(b, loc, value(sel.getCondition()), tOrZero(1), tOrZero(2));
    } else if (isa<arith::ExtFOp, arith::TruncFOp>(inner)) {
      OperationState state(loc, inner.getName());
      state.addOperands(t(0));
      state.addTypes(y.getType());
      r = b.create(state)->getResult(0);
    } else if (isa<math::ExpOp>(inner)) {
      r = mulF(y, t(0));
    } else if (isa<math::Exp2Op>(inner)) {
      r = mulF(mulF(y, constant(kLn2, y.getType())), t(0));
    } else if (isa<math::LogOp>(inner)) {
      r = divF(t(0), value(inner.getOperand(0)));
    } else if (isa<math::Log2Op>(inner)) {
      r = divF(t(0), mulF(value(inner.getOperand(0)), constant(kLn2, y.getType())));
    } else if (isa<math::TanhOp>(inner)) { // (1 - y^2) t
      r = mulF(arith::SubFOp::create(b, loc, constant(1.0, y.getType()), mulF(y, y)), t(0));
    } else if (isa<math::SqrtOp>(inner)) { // t / (2 y)
      r = divF(t(0), mulF(constant(2.0, y.getType()), y));
    } else if (isa<math::RsqrtOp>(inner)) { // -y t / (2 x)
      r = divF(negF(mulF(y, t(0))), mulF(constant(2.0, y.getType()), value(inner.getOperand(0))));
    } else if (isa<math::AbsFOp>(inner)) {
      Value negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, value(inner.getOperand(0)),
                                             constant(0.0, y.getType()));
      r = arith::SelectOp::create(b, loc, negative, negF(t(0)), t(0));
    } else {
      return inner.emitOpError("cannot be differentiated with respect to the score for the backward pass "
                               "(differentiable: addf, subf, mulf, divf, negf, maximumf, minimumf, select, "
                               "extf, truncf, exp, exp2, log, log2, tanh, sqrt, rsqrt, absf)");
    }
    tangent[result] = r;
  }
  Value out = cast<YieldOp>(blk.getTerminator()).getValue();
  Value slope = tangent.lookup(out);
  if (slope == one)
    return Value(); // score_mod passes the score through: the factor is 1
  if (!slope) // the score does not reach the result: zero gradient
    return constant(0.0, RankedTensorType::get(full, f32));
  if (getElementTypeOrSelf(slope.getType()) != f32)
    slope = arith::ExtFOp::create(b, loc, RankedTensorType::get(full, f32), slope);
  return slope;
}

} // namespace flare::attn::generator
