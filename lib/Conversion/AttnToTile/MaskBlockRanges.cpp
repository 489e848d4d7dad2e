//===- MaskBlockRanges.cpp - the KV blocks a mask may keep, computed in the kernel ---===//
//
// From MaskAnalysis.h's formula of the mask, the code a program instance runs to find its KV block
// ranges: the blocks that may hold a kept element and those kept entirely, per query block, and the
// last key each query row keeps where the mask has that form.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

namespace flare::attn::generator {

Value Generator::evalLeaves(const LinearExpr &e) {
  Value c = c32(e.constant);
  for (auto [coef, leaf] : e.leaves) {
    Value x = hoisted.lookup(leaf);
    Type t = x.getType();
    if (t.isInteger(64))
      x = arith::TruncIOp::create(b, loc, i32Type, x);
    else if (t.getIntOrFloatBitWidth() < 32)
      x = arith::ExtSIOp::create(b, loc, i32Type, x);
    c = add(c, mul(c32(coef), x));
  }
  return c;
}

/// (non-empty, full) block intervals of `node` along `axis` (MaskAnalysis.h): the KV blocks of the
/// forward's query rows, or the query blocks of the backward's keys.
std::pair<Interval, Interval> Generator::blocksOf(const MaskNode &node, const BlockAxis &axis) {
  Value zero = c32(0);
  Interval all{zero, axis.numBlocks}, none{zero, zero};
  auto floorBy = [&](Value x) { return arith::ShRSIOp::create(b, loc, x, c32(llvm::Log2_64(axis.block))).getResult(); };
  auto ceilBy = [&](Value x) { return floorBy(add(x, c32(axis.block - 1))); };
  switch (node.kind) {
  case MaskNode::Kind::True:
    return {all, all};
  case MaskNode::Kind::Generic:
    return {all, none};
  case MaskNode::Kind::Constraint: {
    // var * x + fix * y + c >= 0 for the blocked index x and the fixed one y in [y0, y1].
    const LinearExpr &e = node.expr;
    const int64_t var = axis.overQueries ? e.q : e.kv, fix = axis.overQueries ? e.kv : e.q;
    if (var < -1 || var > 1)
      return {all, none};
    Value c = evalLeaves(e);
    Value ay0 = mul(c32(fix), axis.fixedLo), ay1 = mul(c32(fix), axis.fixedHi);
    Value ayMax = fix >= 0 ? ay1 : ay0, ayMin = fix >= 0 ? ay0 : ay1;
    if (var == -1) { // x <= fix*y + c
      Value hiAny = add(floorBy(add(ayMax, c)), c32(1));
      Value hiAll = floorBy(add(add(ayMin, c), c32(1)));
      return {{zero, hiAny}, {zero, hiAll}};
    }
    if (var == 1) { // x >= -(fix*y + c)
      Value loAny = floorBy(sub(sub(zero, ayMax), c));
      Value loAll = ceilBy(sub(sub(zero, ayMin), c));
      return {{loAny, axis.numBlocks}, {loAll, axis.numBlocks}};
    }
    // fix*y + c >= 0: the same for every x.
    Value any = cmp(arith::CmpIPredicate::sge, add(ayMax, c), zero);
    Value every = cmp(arith::CmpIPredicate::sge, add(ayMin, c), zero);
    return {{zero, select(any, axis.numBlocks, zero)}, {zero, select(every, axis.numBlocks, zero)}};
  }
  case MaskNode::Kind::And: {
    auto [ne, full] = blocksOf(node.children.front(), axis);
    for (const MaskNode &child : ArrayRef<MaskNode>(node.children).drop_front()) {
      auto [cne, cfull] = blocksOf(child, axis);
      ne = {smax(ne.lo, cne.lo), smin(ne.hi, cne.hi)};
      full = {smax(full.lo, cfull.lo), smin(full.hi, cfull.hi)};
    }
    return {ne, full};
  }
  case MaskNode::Kind::Or: {
    auto [ne, full] = blocksOf(node.children.front(), axis);
    for (const MaskNode &child : ArrayRef<MaskNode>(node.children).drop_front()) {
      auto [cne, cfull] = blocksOf(child, axis);
      // Keys kept by either lie in the hull of the two ranges.
      ne = {smin(ne.lo, cne.lo), smax(ne.hi, cne.hi)};
      // Blocks full under either are full; the union is one interval when the two overlap or
      // touch, else keep the longer one. An empty interval never wins.
      Value aEmpty = cmp(arith::CmpIPredicate::sge, full.lo, full.hi);
      Value bEmpty = cmp(arith::CmpIPredicate::sge, cfull.lo, cfull.hi);
      Value touch = cmp(arith::CmpIPredicate::sle, smax(full.lo, cfull.lo), smin(full.hi, cfull.hi));
      Value aLonger = cmp(arith::CmpIPredicate::sge, sub(full.hi, full.lo), sub(cfull.hi, cfull.lo));
      Value uLo = smin(full.lo, cfull.lo), uHi = smax(full.hi, cfull.hi);
      Value pickLo = select(aLonger, full.lo, cfull.lo), pickHi = select(aLonger, full.hi, cfull.hi);
      Value lo = select(touch, uLo, pickLo), hi = select(touch, uHi, pickHi);
      lo = select(bEmpty, full.lo, select(aEmpty, cfull.lo, lo));
      hi = select(bEmpty, full.hi, select(aEmpty, cfull.hi, hi));
      full = {lo, hi};
    }
    return {ne, full};
  }
  }
  return {all, none};
}

/// For a mask whose constraints each bound kv from above (kv <= a*qi + c) or concern qi alone,
/// joined by And / Or (causal, bottom-right causal, prefix-LM): per query row the last key it keeps,
/// so that an element is kept exactly when kv <= bound (And takes the minimum, Or the maximum).
/// One comparison per element then replaces the mask's and the key range's. Null otherwise.
Value Generator::keptKeyBound(const MaskNode &node) {
  const int64_t bm = config.getBlockM();
  auto rows = [&](int64_t v) { return splat(c32(v), {bm}); };
  constexpr int64_t kNone = std::numeric_limits<int32_t>::min(), kAll = std::numeric_limits<int32_t>::max();
  switch (node.kind) {
  case MaskNode::Kind::True:
    return rows(kAll);
  case MaskNode::Kind::Generic:
    return Value();
  case MaskNode::Kind::Constraint: {
    const LinearExpr &e = node.expr;
    if (e.kv != -1 && e.kv != 0) // a lower bound on kv
      return Value();
    // a*qi + c, without the multiply by 1 or the zero added of the usual constraints.
    Value bound = e.q == 1 ? qRows : arith::MulIOp::create(b, loc, rows(e.q), qRows).getResult();
    if (e.q == 0)
      bound = splat(evalLeaves(e), {bm});
    else if (e.constant != 0 || !e.leaves.empty())
      bound = arith::AddIOp::create(b, loc, bound, splat(evalLeaves(e), {bm}));
    if (e.kv == -1)
      return bound;
    // a*qi + c >= 0: every key of the rows that hold, none of the others.
    Value holds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, bound, rows(0));
    return arith::SelectOp::create(b, loc, holds, rows(kAll), rows(kNone));
  }
  case MaskNode::Kind::And:
  case MaskNode::Kind::Or: {
    Value bound;
    for (const MaskNode &child : node.children) {
      Value c = keptKeyBound(child);
      if (!c)
        return Value();
      if (!bound)
        bound = c;
      else if (node.kind == MaskNode::Kind::And)
        bound = arith::MinSIOp::create(b, loc, bound, c);
      else
        bound = arith::MaxSIOp::create(b, loc, bound, c);
    }
    return bound;
  }
  }
  return Value();
}

} // namespace flare::attn::generator
