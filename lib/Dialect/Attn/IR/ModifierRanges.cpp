//===- ModifierRanges.cpp - Integer ranges of attention modifier regions --===//
//
// Outline (see include/flare/Dialect/Attn/ModifierRanges.h):
//   1. Bounds of b, h, qi, kv, q_len and kv_len from the op's static dimensions, else the limits of
//      generated kernels.
//   2. Each region's ops in order: an exact interval of the operation's result from its operands'
//      intervals (constants, add, sub, mul, the divisions and remainders, min/max, bitwise ops of
//      non-negative values, shifts, select, casts). A result whose exact interval leaves its type is
//      wrapped: its range becomes the type's, and it is not exact. Other ops: the type's range.
//   3. Ops without a defined result are recorded for the verifier.
//   4. Index values that reach the yield (not through a decided comparison) decide whether 32-bit
//      index arithmetic is exact.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Attn/ModifierRanges.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <initializer_list>

using namespace mlir;

namespace flare::attn {

namespace {

using i128 = __int128;

/// Interval bounds are kept within +-2^80: far outside every 64-bit type, and products of two such
/// bounds are computed with an overflow check.
constexpr i128 kHuge = i128(1) << 80;

i128 clampHuge(i128 v) { return std::clamp<i128>(v, -kHuge, kHuge); }

i128 mulSat(i128 a, i128 b) {
  i128 r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? -kHuge : kHuge;
  return clampHuge(r);
}

IntRange hull(std::initializer_list<i128> values) {
  IntRange r{*std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end())};
  return {clampHuge(r.lo), clampHuge(r.hi)};
}

i128 absMax(const IntRange &r) { return std::max(r.lo < 0 ? -r.lo : r.lo, r.hi < 0 ? -r.hi : r.hi); }

/// Quotients rounded toward zero, -inf or +inf.
enum class Round { Zero, Floor, Ceil };
i128 divide(i128 n, i128 d, Round round) {
  i128 q = n / d, r = n % d;
  if (r != 0 && round == Round::Floor && ((n < 0) != (d < 0)))
    --q;
  if (r != 0 && round == Round::Ceil && ((n < 0) == (d < 0)))
    ++q;
  return q;
}

/// A quotient's range over a divisor range that excludes 0: division is monotone in each operand on
/// either side of 0, so the extremes sit at the corners.
IntRange quotient(const IntRange &n, const IntRange &d, Round round) {
  return hull({divide(n.lo, d.lo, round), divide(n.lo, d.hi, round), divide(n.hi, d.lo, round),
               divide(n.hi, d.hi, round)});
}

/// The smallest 2^k - 1 >= v (v >= 0): a bound on or / xor of non-negative values up to v.
i128 ones(i128 v) {
  i128 m = 0;
  while (m < v)
    m = m * 2 + 1;
  return m;
}

bool isDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp,
             arith::RemSIOp, arith::RemUIOp>(op);
}

bool isSignedDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::CeilDivSIOp, arith::FloorDivSIOp, arith::RemSIOp>(op);
}

bool isShift(Operation *op) { return isa<arith::ShLIOp, arith::ShRSIOp, arith::ShRUIOp>(op); }

} // namespace

IntRange IntRange::ofWidth(unsigned bits) {
  if (bits > 80) // not an integer type of a region (the verifier rejects them); no 128-bit shift
    return {-kHuge, kHuge};
  i128 half = i128(1) << (bits - 1);
  return {-half, half - 1};
}

unsigned integerWidth(Type type) {
  if (type.isIndex())
    return 64;
  if (auto i = dyn_cast<IntegerType>(type))
    return i.getWidth();
  return 0;
}

ModifierRanges::ModifierRanges(AttentionOp op) : op_(op) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  // [1, max] for a dynamic size, [n, n] for a static one.
  auto size = [](int64_t dim, int64_t max) {
    return ShapedType::isDynamic(dim) || dim <= 0 ? IntRange{1, max} : IntRange::point(dim);
  };
  // Packed sequences (cu_seqlens): each is at most the packed total long, their count unknown.
  auto upTo = [&](int64_t dim, int64_t max) {
    return op.isVarlen() ? IntRange{1, ShapedType::isDynamic(dim) ? max : std::max<int64_t>(dim, 1)} : size(dim, max);
  };
  batch_ = op.isVarlen() ? IntRange{1, kMaxBatchOrHeads} : size(q.getDimSize(0), kMaxBatchOrHeads);
  heads_ = size(q.getDimSize(1), kMaxBatchOrHeads);
  seqQ_ = upTo(q.getDimSize(2), kMaxSeqLen);
  // Per-sequence lengths (kv_lens) lie in [0, Skv]; a sequence of none evaluates no modifier, so
  // kv_len is at least 1 wherever a region runs. A paged cache's Skv is max_pages x page_size.
  seqKV_ = upTo(op.getKeyCount(), kMaxSeqLen);
  analyze(op.getScoreMod(), /*firstIndexArg=*/1);
  analyze(op.getMaskMod(), /*firstIndexArg=*/0);
}

IntRange ModifierRanges::range(Value v) const {
  if (auto it = facts_.find(v); it != facts_.end())
    return it->second.range;
  unsigned bits = integerWidth(v.getType());
  return IntRange::ofWidth(std::max(bits, 2u));
}

bool ModifierRanges::exact(Value v) const {
  auto it = facts_.find(v);
  return it == facts_.end() || it->second.exact;
}

void ModifierRanges::analyze(Region &region, unsigned firstIndexArg) {
  if (region.empty())
    return;
  Block &block = region.front();
  // An index in [0, size - 1] for each of b, h, qi, kv.
  const IntRange *sizes[] = {&batch_, &heads_, &seqQ_, &seqKV_};
  for (unsigned i = 0; i < 4 && firstIndexArg + i < block.getNumArguments(); ++i)
    facts_[block.getArgument(firstIndexArg + i)] = Fact{{0, sizes[i]->hi - 1}, true};
  for (Operation &inner : block.without_terminator()) {
    checkDefined(&inner);
    if (inner.getNumResults() != 1)
      continue;
    unsigned bits = integerWidth(inner.getResult(0).getType());
    if (bits < 2)
      continue;
    Fact f = transfer(&inner);
    IntRange type = IntRange::ofWidth(bits);
    if (!f.range.within(type))
      f = Fact{type, false}; // wraps around: anywhere in the type
    facts_[inner.getResult(0)] = f;
  }
  checkNarrow(region);
}

ModifierRanges::Fact ModifierRanges::transfer(Operation *op) {
  Value result = op->getResult(0);
  const unsigned bits = integerWidth(result.getType());
  const IntRange type = IntRange::ofWidth(bits);
  const Fact whole{type, true};
  auto in = [&](unsigned i) { return range(op->getOperand(i)); };
  auto exactly = [](IntRange r) { return Fact{r, true}; };

  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (auto attr = dyn_cast<IntegerAttr>(cst.getValue()))
      return exactly(IntRange::point(attr.getValue().getSExtValue()));
    return whole;
  }
  if (isa<QLenOp>(op))
    return exactly(seqQ_);
  if (isa<KVLenOp>(op))
    return exactly(seqKV_);
  if (op->getNumOperands() >= 1 && isa<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
                                       arith::IndexCastUIOp>(op)) {
    unsigned from = integerWidth(op->getOperand(0).getType());
    if (from == 1) // i1 is 0 or 1; sign-extended, 0 or -1
      return exactly(isa<arith::ExtSIOp>(op) ? IntRange{-1, 0} : IntRange{0, 1});
    IntRange x = in(0);
    if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(op) && !x.nonNegative() && bits > from)
      return exactly({0, IntRange::ofWidth(from).hi * 2 + 1}); // a negative value zero-extended
    return exactly(x); // wraps (truncation) when it leaves the result type
  }
  if (isa<arith::AddIOp>(op))
    return exactly(hull({in(0).lo + in(1).lo, in(0).hi + in(1).hi}));
  if (isa<arith::SubIOp>(op))
    return exactly(hull({in(0).lo - in(1).hi, in(0).hi - in(1).lo}));
  if (isa<arith::MulIOp>(op)) {
    IntRange a = in(0), b = in(1);
    return exactly(hull({mulSat(a.lo, b.lo), mulSat(a.lo, b.hi), mulSat(a.hi, b.lo), mulSat(a.hi, b.hi)}));
  }
  if (isDivision(op)) {
    IntRange n = in(0), d = in(1);
    bool isUnsigned = isa<arith::DivUIOp, arith::CeilDivUIOp, arith::RemUIOp>(op);
    if (d.contains(0) || (isUnsigned && !(n.nonNegative() && d.nonNegative())))
      return whole;
    if (isa<arith::RemSIOp, arith::RemUIOp>(op)) {
      i128 m = absMax(d) - 1; // |n rem d| < |d|, with n's sign
      return exactly({n.lo < 0 ? std::max(n.lo, -m) : 0, n.hi > 0 ? std::min(n.hi, m) : 0});
    }
    Round round = isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op) ? Round::Ceil
                  : isa<arith::FloorDivSIOp>(op)                  ? Round::Floor
                                                                  : Round::Zero;
    return exactly(quotient(n, d, round)); // MIN / -1 leaves the type: wrapped
  }
  if (isa<arith::MinSIOp, arith::MaxSIOp>(op)) {
    IntRange a = in(0), b = in(1);
    return isa<arith::MinSIOp>(op) ? exactly({std::min(a.lo, b.lo), std::min(a.hi, b.hi)})
                                   : exactly({std::max(a.lo, b.lo), std::max(a.hi, b.hi)});
  }
  if (isa<arith::MinUIOp, arith::MaxUIOp>(op)) {
    IntRange a = in(0), b = in(1);
    if (!a.nonNegative() || !b.nonNegative())
      return whole;
    return isa<arith::MinUIOp>(op) ? exactly({std::min(a.lo, b.lo), std::min(a.hi, b.hi)})
                                   : exactly({std::max(a.lo, b.lo), std::max(a.hi, b.hi)});
  }
  if (isa<arith::AndIOp>(op)) {
    IntRange a = in(0), b = in(1);
    if (a.nonNegative() && b.nonNegative())
      return exactly({0, std::min(a.hi, b.hi)});
    if (a.nonNegative() || b.nonNegative()) // masking with a non-negative value
      return exactly({0, a.nonNegative() ? a.hi : b.hi});
    return whole;
  }
  if (isa<arith::OrIOp, arith::XOrIOp>(op)) {
    IntRange a = in(0), b = in(1);
    if (!a.nonNegative() || !b.nonNegative())
      return whole;
    return exactly({0, ones(std::max(a.hi, b.hi))});
  }
  if (isShift(op)) {
    IntRange x = in(0), s = in(1);
    if (s.lo < 0 || s.hi >= bits) // undefined: the verifier rejects it
      return whole;
    if (isa<arith::ShLIOp>(op))
      return exactly(hull({mulSat(x.lo, i128(1) << s.lo), mulSat(x.lo, i128(1) << s.hi),
                           mulSat(x.hi, i128(1) << s.lo), mulSat(x.hi, i128(1) << s.hi)}));
    if (isa<arith::ShRUIOp>(op) && !x.nonNegative())
      return whole;
    int lo = static_cast<int>(s.lo), hi = static_cast<int>(s.hi);
    return exactly(hull({x.lo >> lo, x.lo >> hi, x.hi >> lo, x.hi >> hi}));
  }
  if (isa<arith::SelectOp>(op)) {
    IntRange a = in(1), b = in(2);
    return exactly({std::min(a.lo, b.lo), std::max(a.hi, b.hi)});
  }
  return whole;
}

void ModifierRanges::checkDefined(Operation *op) {
  if (undefinedOp_)
    return;
  if (isDivision(op)) {
    IntRange n = range(op->getOperand(0)), d = range(op->getOperand(1));
    unsigned bits = integerWidth(op->getResult(0).getType());
    if (d.contains(0)) {
      undefinedOp_ = op;
      undefinedReason_ = "divides by a value that may be zero; make the divisor provably non-zero (e.g. "
                         "arith.maxsi with 1)";
    } else if (isSignedDivision(op) && bits >= 2 && n.contains(IntRange::ofWidth(bits).lo) && d.contains(-1)) {
      undefinedOp_ = op;
      undefinedReason_ = "may divide the smallest " + std::to_string(bits) +
                         "-bit value by -1, which overflows; bound the dividend or the divisor";
    }
  } else if (isShift(op)) {
    IntRange s = range(op->getOperand(1));
    unsigned bits = integerWidth(op->getResult(0).getType());
    if (s.lo < 0 || s.hi >= bits) {
      undefinedOp_ = op;
      undefinedReason_ = "shifts by an amount that may be negative or at least the width (" +
                         std::to_string(bits) + "); mask it (e.g. arith.andi with " + std::to_string(bits - 1) +
                         ")";
    }
  }
}

std::optional<bool> ModifierRanges::decided(arith::CmpIOp cmp) const {
  unsigned bits = integerWidth(cmp.getLhs().getType());
  if (bits < 2)
    return std::nullopt;
  IntRange a = range(cmp.getLhs()), b = range(cmp.getRhs());
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  if (pred == P::eq || pred == P::ne) {
    bool disjoint = a.hi < b.lo || b.hi < a.lo;
    bool same = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
    if (!disjoint && !same)
      return std::nullopt;
    return (pred == P::eq) == same;
  }
  bool isUnsigned = pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge;
  if (isUnsigned) {
    // Read unsigned, a range that stays on one side of 0 is still an interval.
    auto asUnsigned = [&](IntRange r) -> std::optional<IntRange> {
      if (r.nonNegative())
        return r;
      if (r.hi < 0)
        return IntRange{r.lo + (i128(1) << bits), r.hi + (i128(1) << bits)};
      return std::nullopt;
    };
    std::optional<IntRange> ua = asUnsigned(a), ub = asUnsigned(b);
    if (!ua || !ub)
      return std::nullopt;
    a = *ua;
    b = *ub;
  }
  // a < b for sure, a >= b for sure, and the same with <=.
  switch (pred) {
  case P::slt:
  case P::ult:
    if (a.hi < b.lo)
      return true;
    if (a.lo >= b.hi)
      return false;
    return std::nullopt;
  case P::sle:
  case P::ule:
    if (a.hi <= b.lo)
      return true;
    if (a.lo > b.hi)
      return false;
    return std::nullopt;
  case P::sgt:
  case P::ugt:
    if (a.lo > b.hi)
      return true;
    if (a.hi <= b.lo)
      return false;
    return std::nullopt;
  case P::sge:
  case P::uge:
    if (a.lo >= b.hi)
      return true;
    if (a.hi < b.lo)
      return false;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

void ModifierRanges::checkNarrow(Region &region) {
  // The ops the yielded value needs, not looking through comparisons the ranges decide.
  Block &block = region.front();
  llvm::SetVector<Operation *> live;
  SmallVector<Value> work{block.getTerminator()->getOperand(0)};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &block || !live.insert(def))
      continue;
    if (auto cmp = dyn_cast<arith::CmpIOp>(def); cmp && decided(cmp))
      continue;
    work.append(def->operand_begin(), def->operand_end());
  }
  for (Operation *op : live) {
    if (op->getNumResults() != 1)
      continue;
    Value r = op->getResult(0);
    bool indexResult = r.getType().isIndex();
    if (indexResult && !range(r).fitsSigned(32))
      indexFitsI32_ = false;
    if (indexResult && isShift(op)) {
      IntRange s = range(op->getOperand(1));
      if (s.lo < 0 || s.hi > 31)
        indexFitsI32_ = false;
    }
    // A zero-extension of a negative index value differs between 32 and 64 bits.
    if (isa<arith::IndexCastUIOp>(op) && op->getOperand(0).getType().isIndex() &&
        !range(op->getOperand(0)).nonNegative())
      indexFitsI32_ = false;
  }
}

} // namespace flare::attn
