//===- MaskAnalysis.cpp - What a mask_mod region keeps, block by block ----===//
#include "MaskAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <optional>

using namespace mlir;

namespace flare::attn {

LinearExpr LinearExpr::scaled(int64_t factor) const {
  LinearExpr r = *this;
  r.q *= factor;
  r.kv *= factor;
  r.constant *= factor;
  for (auto &leaf : r.leaves)
    leaf.first *= factor;
  return r;
}

LinearExpr LinearExpr::plus(const LinearExpr &other, int64_t factor) const {
  LinearExpr r = *this;
  r.q += factor * other.q;
  r.kv += factor * other.kv;
  r.constant += factor * other.constant;
  for (auto [coef, leaf] : other.leaves)
    r.leaves.push_back({factor * coef, leaf});
  return r;
}

bool MaskNode::mayHaveFullBlocks() const {
  switch (kind) {
  case Kind::Generic:
    return false;
  case Kind::And:
    return llvm::all_of(children, [](const MaskNode &c) { return c.mayHaveFullBlocks(); });
  case Kind::Or:
    return llvm::any_of(children, [](const MaskNode &c) { return c.mayHaveFullBlocks(); });
  default:
    return true;
  }
}

bool MaskNode::containsGeneric() const {
  return kind == Kind::Generic || llvm::any_of(children, [](const MaskNode &c) { return c.containsGeneric(); });
}

namespace {

/// Walks the def-use graph of one mask_mod region.
class Analyzer {
public:
  explicit Analyzer(Block &block) : block(block) {}

  MaskNode analyzeBool(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return generic();
    if (matchPattern(v, m_One()))
      return MaskNode{MaskNode::Kind::True, {}, {}};
    if (matchPattern(v, m_Zero()))
      return constraint(LinearExpr{0, 0, -1, {}}); // -1 >= 0: never
    if (isa<arith::AndIOp, arith::OrIOp>(def)) {
      MaskNode node;
      node.kind = isa<arith::AndIOp>(def) ? MaskNode::Kind::And : MaskNode::Kind::Or;
      for (Value operand : def->getOperands()) {
        MaskNode child = analyzeBool(operand);
        if (child.kind == node.kind) // flatten nested conjunctions / disjunctions
          node.children.insert(node.children.end(), child.children.begin(), child.children.end());
        else
          node.children.push_back(std::move(child));
      }
      return node;
    }
    if (auto cmp = dyn_cast<arith::CmpIOp>(def))
      return analyzeCompare(cmp);
    return generic();
  }

private:
  Block &block;
  DenseMap<Value, bool> dependsMemo;

  static MaskNode generic() { return MaskNode{}; }
  static MaskNode constraint(LinearExpr e) {
    if (e.kv < -1 || e.kv > 1)
      return generic();
    return MaskNode{MaskNode::Kind::Constraint, std::move(e), {}};
  }
  static MaskNode conjunction(MaskNode a, MaskNode b) {
    MaskNode n;
    n.kind = MaskNode::Kind::And;
    n.children.push_back(std::move(a));
    n.children.push_back(std::move(b));
    return n;
  }

  bool isQ(Value v) const { return v == block.getArgument(2); }
  bool isKV(Value v) const { return v == block.getArgument(3); }

  /// True when `v` depends on qi, kv or an aux tensor (values that cannot be scalars of the kernel).
  bool dependsOnElement(Value v) {
    if (auto it = dependsMemo.find(v); it != dependsMemo.end())
      return it->second;
    bool result = false;
    if (auto arg = dyn_cast<BlockArgument>(v))
      result = arg.getArgNumber() >= 2; // qi, kv and the aux tensors
    else if (isa<AuxLoadOp>(v.getDefiningOp()))
      result = true;
    else
      result = llvm::any_of(v.getDefiningOp()->getOperands(), [&](Value o) { return dependsOnElement(o); });
    dependsMemo[v] = result;
    return result;
  }

  std::optional<LinearExpr> linearize(Value v) {
    if (isQ(v))
      return LinearExpr{1, 0, 0, {}};
    if (isKV(v))
      return LinearExpr{0, 1, 0, {}};
    APInt constant;
    if (matchPattern(v, m_ConstantInt(&constant)))
      return LinearExpr{0, 0, constant.getSExtValue(), {}};
    if (std::optional<LinearExpr> e = linearizeOp(v.getDefiningOp()))
      return e;
    // Anything else that depends on neither qi nor kv is a leaf (computed once per program).
    if (!dependsOnElement(v))
      return LinearExpr{0, 0, 0, {{1, v}}};
    return std::nullopt;
  }

  std::optional<LinearExpr> linearizeOp(Operation *def) {
    if (!def)
      return std::nullopt;
    // Casts keep the value when they widen or keep at least 32 bits (index and i32 values of
    // realistic sequence lengths do not wrap); a zero-extension only when the value is provably
    // >= 0 (a negative one becomes huge). Anything narrower may wrap: not linear.
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp>(def)) {
      auto bits = [](Type t) { return t.isIndex() ? 64u : t.getIntOrFloatBitWidth(); };
      unsigned from = bits(def->getOperand(0).getType()), to = bits(def->getResult(0).getType());
      if (to < from && to < 32)
        return std::nullopt;
      std::optional<LinearExpr> e = linearize(def->getOperand(0));
      if (e && isa<arith::IndexCastUIOp, arith::ExtUIOp>(def) && !nonNegative(*e))
        return std::nullopt;
      return e;
    }
    if (isa<arith::AddIOp, arith::SubIOp>(def)) {
      auto lhs = linearize(def->getOperand(0)), rhs = linearize(def->getOperand(1));
      if (!lhs || !rhs)
        return std::nullopt;
      return lhs->plus(*rhs, isa<arith::AddIOp>(def) ? 1 : -1);
    }
    if (isa<arith::MulIOp>(def)) {
      for (int i = 0; i < 2; ++i) {
        APInt factor;
        if (matchPattern(def->getOperand(i), m_ConstantInt(&factor)))
          if (auto other = linearize(def->getOperand(1 - i)))
            return other->scaled(factor.getSExtValue());
      }
    }
    return std::nullopt;
  }

  /// Provably >= 0: non-negative coefficients on qi, kv and leaves that are sizes or grid indices.
  bool nonNegative(const LinearExpr &e) const {
    if (e.q < 0 || e.kv < 0 || e.constant < 0)
      return false;
    for (auto [coef, leaf] : e.leaves) {
      bool sizeLike = isa_and_nonnull<QLenOp, KVLenOp>(leaf.getDefiningOp());
      if (auto arg = dyn_cast<BlockArgument>(leaf))
        sizeLike = arg.getArgNumber() < 2; // batch and head indices
      if (coef < 0 || !sizeLike)
        return false;
    }
    return true;
  }

  MaskNode analyzeCompare(arith::CmpIOp cmp) {
    auto lhs = linearize(cmp.getLhs()), rhs = linearize(cmp.getRhs());
    if (!lhs || !rhs)
      return generic();
    LinearExpr diff = lhs->plus(*rhs, -1);     // lhs - rhs
    LinearExpr negDiff = rhs->plus(*lhs, -1);  // rhs - lhs
    auto minusOne = [](LinearExpr e) {
      e.constant -= 1;
      return e;
    };
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    // Unsigned comparisons of values provably >= 0 are the signed ones; `x <u y` with y >= 0 is
    // 0 <= x < y (a negative x is huge when read unsigned).
    bool lhsNonNeg = nonNegative(*lhs), rhsNonNeg = nonNegative(*rhs);
    switch (pred) {
    case P::sge:
      return constraint(diff);
    case P::sgt:
      return constraint(minusOne(diff));
    case P::sle:
      return constraint(negDiff);
    case P::slt:
      return constraint(minusOne(negDiff));
    case P::eq:
      return conjunction(constraint(diff), constraint(negDiff));
    case P::uge:
    case P::ugt:
      if (!lhsNonNeg || !rhsNonNeg)
        return generic();
      return constraint(pred == P::uge ? diff : minusOne(diff));
    case P::ule:
    case P::ult: {
      if (!rhsNonNeg)
        return generic();
      MaskNode upper = constraint(pred == P::ule ? negDiff : minusOne(negDiff));
      if (lhsNonNeg)
        return upper;
      return conjunction(constraint(*lhs), std::move(upper));
    }
    default:
      return generic();
    }
  }
};

bool isConstraint(const MaskNode &n, int64_t q, int64_t kv) {
  return n.kind == MaskNode::Kind::Constraint && n.expr.q == q && n.expr.kv == kv;
}

/// kv <= qi (+ 0): the expression qi - kv with nothing else.
bool isTopLeftCausal(const MaskNode &n) {
  return isConstraint(n, 1, -1) && n.expr.constant == 0 && n.expr.leaves.empty();
}

/// kv <= qi + kv_len - q_len.
bool isBottomRightCausal(const MaskNode &n) {
  if (!isConstraint(n, 1, -1) || n.expr.constant != 0 || n.expr.leaves.size() != 2)
    return false;
  int kvLen = 0, qLen = 0;
  for (auto [coef, leaf] : n.expr.leaves) {
    if (isa_and_nonnull<KVLenOp>(leaf.getDefiningOp()))
      kvLen += static_cast<int>(coef);
    else if (isa_and_nonnull<QLenOp>(leaf.getDefiningOp()))
      qLen += static_cast<int>(coef);
  }
  return kvLen == 1 && qLen == -1;
}

std::string classify(const MaskNode &root) {
  using K = MaskNode::Kind;
  if (root.containsGeneric())
    return "generic";
  if (isTopLeftCausal(root))
    return "causal";
  if (isBottomRightCausal(root))
    return "causal_bottom_right";
  auto upperBound = [](const MaskNode &c) { return c.kind == K::Constraint && c.expr.kv == -1 && c.expr.q != 0; };
  auto lowerBound = [](const MaskNode &c) { return c.kind == K::Constraint && c.expr.kv == 1 && c.expr.q != 0; };
  if (root.kind == K::And && llvm::any_of(root.children, upperBound) && llvm::any_of(root.children, lowerBound))
    return "sliding_window";
  if (root.kind == K::Or && root.children.size() == 2) {
    auto prefix = [](const MaskNode &c) { return isConstraint(c, 0, -1); };
    auto causal = [](const MaskNode &c) { return isTopLeftCausal(c) || isBottomRightCausal(c); };
    if ((prefix(root.children[0]) && causal(root.children[1])) ||
        (prefix(root.children[1]) && causal(root.children[0])))
      return "prefix_lm";
  }
  return "linear";
}

} // namespace

MaskInfo analyzeMask(AttentionOp op) {
  MaskInfo info;
  Region &region = op.getMaskMod();
  if (region.empty()) {
    info.root.kind = MaskNode::Kind::True;
    info.maskClass = "none";
    return info;
  }
  info.hasMask = true;
  Block &block = region.front();
  Analyzer analyzer(block);
  info.root = analyzer.analyzeBool(cast<YieldOp>(block.getTerminator()).getValue());
  info.maskClass = classify(info.root);
  return info;
}

} // namespace flare::attn
