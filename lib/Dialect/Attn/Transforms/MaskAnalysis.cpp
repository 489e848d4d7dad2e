//===- MaskAnalysis.cpp - What a mask_mod region keeps, block by block ----===//
#include "MaskAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

using namespace mlir;

namespace flare::attn {

std::optional<LinearExpr> LinearExpr::scaled(int64_t factor) const {
  LinearExpr r = *this;
  bool overflow = llvm::MulOverflow(q, factor, r.q) | llvm::MulOverflow(kv, factor, r.kv) |
                  llvm::MulOverflow(constant, factor, r.constant);
  for (auto &leaf : r.leaves)
    overflow |= llvm::MulOverflow(leaf.first, factor, leaf.first);
  if (overflow)
    return std::nullopt;
  return r;
}

std::optional<LinearExpr> LinearExpr::plus(const LinearExpr &other, int64_t factor) const {
  std::optional<LinearExpr> scaledOther = other.scaled(factor);
  if (!scaledOther)
    return std::nullopt;
  LinearExpr r = *this;
  bool overflow = llvm::AddOverflow(q, scaledOther->q, r.q) | llvm::AddOverflow(kv, scaledOther->kv, r.kv) |
                  llvm::AddOverflow(constant, scaledOther->constant, r.constant);
  if (overflow)
    return std::nullopt;
  r.leaves.append(scaledOther->leaves.begin(), scaledOther->leaves.end());
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
  Analyzer(Block &block, const ModifierRanges &ranges) : block(block), ranges(ranges) {}

  MaskNode analyzeBool(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return generic();
    if (matchPattern(v, m_One()))
      return always();
    if (matchPattern(v, m_Zero()))
      return never();
    if (isa<arith::AndIOp, arith::OrIOp>(def)) {
      const bool isAnd = isa<arith::AndIOp>(def);
      MaskNode node;
      node.kind = isAnd ? MaskNode::Kind::And : MaskNode::Kind::Or;
      for (Value operand : def->getOperands()) {
        MaskNode child = analyzeBool(operand);
        // x and true = x, x or false = x; x and false = false, x or true = true.
        if (isAnd ? child.kind == MaskNode::Kind::True : isNever(child))
          continue;
        if (isAnd ? isNever(child) : child.kind == MaskNode::Kind::True)
          return child;
        if (child.kind == node.kind) // flatten nested conjunctions / disjunctions
          node.children.insert(node.children.end(), child.children.begin(), child.children.end());
        else
          node.children.push_back(std::move(child));
      }
      if (node.children.empty())
        return isAnd ? always() : never();
      if (node.children.size() == 1)
        return std::move(node.children.front());
      return node;
    }
    if (auto cmp = dyn_cast<arith::CmpIOp>(def)) {
      // A comparison the index ranges decide (a window wider than any sequence) is a constant.
      if (std::optional<bool> known = ranges.decided(cmp))
        return *known ? always() : never();
      return analyzeCompare(cmp);
    }
    return generic();
  }

private:
  Block &block;
  const ModifierRanges &ranges;
  DenseMap<Value, bool> dependsMemo;

  static MaskNode generic() { return MaskNode{}; }
  static MaskNode always() { return MaskNode{MaskNode::Kind::True, {}, {}}; }
  static MaskNode never() { return MaskNode{MaskNode::Kind::Constraint, LinearExpr{0, 0, -1, {}}, {}}; } // -1 >= 0
  static bool isNever(const MaskNode &n) {
    return n.kind == MaskNode::Kind::Constraint && n.expr.q == 0 && n.expr.kv == 0 && n.expr.leaves.empty() &&
           n.expr.constant < 0;
  }
  MaskNode constraint(std::optional<LinearExpr> e) const {
    if (!e || e->kv < -1 || e->kv > 1 || !evaluableIn32Bits(*e))
      return generic();
    return MaskNode{MaskNode::Kind::Constraint, std::move(*e), {}};
  }

  /// Whether the generated kernel's 32-bit block arithmetic on `e` cannot overflow: it computes
  /// a * qi + c (+ a block size) for query rows up to the longest sequence plus a block, with c the
  /// constant plus every leaf times its coefficient (each leaf read in 32 bits).
  bool evaluableIn32Bits(const LinearExpr &e) const {
    constexpr __int128 kBlockMargin = 1024, kLimit = __int128(1) << 31;
    auto abs = [](__int128 v) { return v < 0 ? -v : v; };
    __int128 c = abs(e.constant);
    for (auto [coef, leaf] : e.leaves) {
      IntRange r = ranges.range(leaf);
      c += abs(coef) * std::max(abs(r.lo), abs(r.hi)); // |coef| < 2^63, |r| <= 2^80: no overflow
      if (c >= kLimit)
        return false;
    }
    return abs(e.q) * (kMaxSeqLen + kBlockMargin) + c + kBlockMargin < kLimit;
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
    if (!def || def->getNumResults() != 1)
      return std::nullopt;
    // Linear algebra holds only for operations that do not wrap around (their exact results stay in
    // their type, by the index ranges), and a zero-extension only of a non-negative value.
    if (!ranges.exact(def->getResult(0)))
      return std::nullopt;
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(def)) {
      if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(def) && !ranges.range(def->getOperand(0)).nonNegative())
        return std::nullopt;
      return linearize(def->getOperand(0));
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
        if (matchPattern(def->getOperand(i), m_ConstantInt(&factor)) && factor.getSignificantBits() <= 64)
          if (auto other = linearize(def->getOperand(1 - i)))
            return other->scaled(factor.getSExtValue());
      }
    }
    return std::nullopt;
  }

  MaskNode analyzeCompare(arith::CmpIOp cmp) {
    auto lhs = linearize(cmp.getLhs()), rhs = linearize(cmp.getRhs());
    if (!lhs || !rhs)
      return generic();
    std::optional<LinearExpr> diff = lhs->plus(*rhs, -1);    // lhs - rhs
    std::optional<LinearExpr> negDiff = rhs->plus(*lhs, -1); // rhs - lhs
    auto minusOne = [](std::optional<LinearExpr> e) -> std::optional<LinearExpr> {
      if (!e || llvm::SubOverflow(e->constant, int64_t(1), e->constant))
        return std::nullopt;
      return e;
    };
    using P = arith::CmpIPredicate;
    P pred = cmp.getPredicate();
    // Unsigned comparisons of values provably >= 0 are the signed ones; `x <u y` with y >= 0 is
    // 0 <= x < y (a negative x is huge when read unsigned).
    bool lhsNonNeg = ranges.range(cmp.getLhs()).nonNegative(), rhsNonNeg = ranges.range(cmp.getRhs()).nonNegative();
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
      return conjunction(constraint(lhs), std::move(upper));
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

MaskClass classify(const MaskNode &root) {
  using K = MaskNode::Kind;
  if (root.containsGeneric())
    return MaskClass::Generic;
  if (isTopLeftCausal(root))
    return MaskClass::Causal;
  if (isBottomRightCausal(root))
    return MaskClass::CausalBottomRight;
  auto upperBound = [](const MaskNode &c) { return c.kind == K::Constraint && c.expr.kv == -1 && c.expr.q != 0; };
  auto lowerBound = [](const MaskNode &c) { return c.kind == K::Constraint && c.expr.kv == 1 && c.expr.q != 0; };
  if (root.kind == K::And && llvm::any_of(root.children, upperBound) && llvm::any_of(root.children, lowerBound))
    return MaskClass::SlidingWindow;
  if (root.kind == K::Or && root.children.size() == 2) {
    auto prefix = [](const MaskNode &c) { return isConstraint(c, 0, -1); };
    auto causal = [](const MaskNode &c) { return isTopLeftCausal(c) || isBottomRightCausal(c); };
    if ((prefix(root.children[0]) && causal(root.children[1])) ||
        (prefix(root.children[1]) && causal(root.children[0])))
      return MaskClass::PrefixLM;
  }
  return MaskClass::Linear;
}

} // namespace

MaskInfo analyzeMask(AttentionOp op) {
  MaskInfo info;
  Region &region = op.getMaskMod();
  if (region.empty()) {
    info.root.kind = MaskNode::Kind::True;
    info.maskClass = MaskClass::None;
    return info;
  }
  info.hasMask = true;
  Block &block = region.front();
  ModifierRanges ranges(op);
  Analyzer analyzer(block, ranges);
  info.root = analyzer.analyzeBool(cast<YieldOp>(block.getTerminator()).getValue());
  info.maskClass = classify(info.root);
  return info;
}

} // namespace flare::attn
