//===- AttnToTile.cpp - Generate a FlashAttention tile kernel from attn.attention ===//
//
// For a function whose body is one attn.attention on its arguments, emits a tile kernel of the same
// name. One program instance owns BLOCK_M query rows of one (batch, head):
//
//   Q block in registers/shared memory; m = -inf, l = 0, acc = 0 per row
//   [lo, hi)   = KV blocks the mask may keep for these rows (the rest are never visited)
//   [flo, fhi) = the sub-range it keeps entirely (MaskAnalysis.h derives both, at run time)
//   for j in [flo, fhi):            s = score(j)                      no mask code
//   for j in [lo, flo) u [fhi, hi): s = keep(j) ? score(j) : -inf     mask_mod and kv < Skv
//     with score(j) = score_mod(scale * Q K_j^T) * log2(e) (scale * log2(e) folded into one multiply
//     when there is no score_mod), then one online-softmax step and acc = alpha * acc + P V_j
//   O = acc / l, LSE = (m + log2 l) * ln 2; a row with l = 0 gives O = 0 and LSE = -inf.
//
// Modifier regions are scalar code; they are inlined as tile code by giving every region value a
// shape class: Uniform (a scalar: batch, head, lengths, constants), Row (one value per query row,
// [BLOCK_M]), Col (per key, [BLOCK_N]) or Full ([BLOCK_M, BLOCK_N]). An op takes the join of its
// operands' classes, broadcasting the narrower ones. Uniform and Row values do not depend on the
// KV block and are computed once before the loops (ALiBi slopes, document ids of the query rows).
//
//===----------------------------------------------------------------------===//
#include "../../Dialect/Attn/Transforms/MaskAnalysis.h"
#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/Config.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

namespace flare::attn {
#define GEN_PASS_DEF_CONVERTATTNTOTILE
#include "Attn/Passes.h.inc"

} // namespace flare::attn

using namespace mlir;
using namespace flare;
using namespace flare::attn;

namespace {

constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

enum class Shape { Uniform, Row, Col, Full };

Shape join(Shape a, Shape b) {
  if (a == b || b == Shape::Uniform)
    return a;
  if (a == Shape::Uniform)
    return b;
  return Shape::Full;
}

/// An interval [lo, hi) of KV block indices (i32 values).
struct Interval {
  Value lo, hi;
};

class Generator {
public:
  Generator(AttentionOp op, func::FuncOp func, MaskInfo mask, ConfigAttr config)
      : op(op), func(func), mask(std::move(mask)), config(config), ranges(op), b(op.getContext()),
        loc(op.getLoc()) {}

  LogicalResult run();

private:
  AttentionOp op;
  func::FuncOp func;
  MaskInfo mask;
  ConfigAttr config;
  ModifierRanges ranges;
  OpBuilder b;
  Location loc;
  int64_t headDim = 0;
  Type elemType, f32, i32Type;
  /// What the regions' index values compute in: i32 where ModifierRanges proves that exact (every
  /// shipped modifier), else i64, the op's own index semantics.
  Type indexType;
  func::FuncOp kernel;

  // Kernel scalars (i32 unless noted).
  Value batchIdx, headIdx, seqQ, seqKV, q0, q1, numBlocks;
  Value qView, kView, vView, oView, lseView, qTile;
  SmallVector<Value> auxPtrs, auxLens;
  Value qRows; // [BLOCK_M] i32: q0 + 0..BLOCK_M-1
  /// [BLOCK_M] i32: the last key each query row keeps (keptKeyBound), Skv - 1 at most; null where
  /// the mask is not of that form.
  Value keptBound;

  // Region values: shape class, and the emitted value (hoisted ones shared, per-body ones local).
  DenseMap<Value, Shape> shapes;
  DenseMap<Value, Value> hoisted;
  DenseMap<Value, Value> *body = nullptr;
  DenseMap<std::pair<Value, int>, Value> *broadcasts = nullptr;

  // --- scalar helpers ---------------------------------------------------------------------------
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value smin(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value smax(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value ext64(Value x) { return arith::ExtSIOp::create(b, loc, b.getI64Type(), x); }
  /// floor(x / BLOCK_N) and ceil(x / BLOCK_N) for a power-of-two BLOCK_N (an arithmetic shift
  /// rounds toward -inf, also for negative x).
  Value floorBlocks(Value x) { return arith::ShRSIOp::create(b, loc, x, c32(llvm::Log2_64(config.getBlockN()))); }
  Value ceilBlocks(Value x) { return floorBlocks(add(x, c32(config.getBlockN() - 1))); }

  RankedTensorType tileType(ArrayRef<int64_t> shape, Type elem) { return RankedTensorType::get(shape, elem); }
  Value splat(Value scalar, ArrayRef<int64_t> shape) {
    return tile::SplatOp::create(b, loc, tileType(shape, scalar.getType()), scalar);
  }
  Value splatF32(double v, ArrayRef<int64_t> shape) {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(tileType(shape, f32), b.getF32FloatAttr(v)));
  }
  Value broadcastRows(Value row, int64_t cols) { // [M] -> [M, cols]
    auto t = cast<RankedTensorType>(row.getType());
    int64_t m = t.getDimSize(0);
    Value e = tile::ExpandDimsOp::create(b, loc, tileType({m, 1}, t.getElementType()), row, 1);
    return tile::BroadcastOp::create(b, loc, tileType({m, cols}, t.getElementType()), e);
  }
  Value broadcastCols(Value col, int64_t rows) { // [N] -> [rows, N]
    auto t = cast<RankedTensorType>(col.getType());
    int64_t n = t.getDimSize(0);
    Value e = tile::ExpandDimsOp::create(b, loc, tileType({1, n}, t.getElementType()), col, 0);
    return tile::BroadcastOp::create(b, loc, tileType({rows, n}, t.getElementType()), e);
  }
  Value indexRange(Value start, int64_t n) {
    Value r = tile::RangeOp::create(b, loc, tileType({n}, i32Type), 0, static_cast<int32_t>(n));
    return arith::AddIOp::create(b, loc, r, splat(start, {n}));
  }

  SmallVector<int64_t> dims(Shape s) {
    switch (s) {
    case Shape::Uniform:
      return {};
    case Shape::Row:
      return {config.getBlockM()};
    case Shape::Col:
      return {config.getBlockN()};
    case Shape::Full:
      return {config.getBlockM(), config.getBlockN()};
    }
    return {};
  }
  Type convertScalar(Type t) { return t.isIndex() ? indexType : t; }
  /// An i32 kernel index (scalar or tile) as a region index value.
  Value asIndex(Value x) {
    if (indexType == i32Type)
      return x;
    Type t = isa<RankedTensorType>(x.getType()) ? Type(tileType(cast<RankedTensorType>(x.getType()).getShape(), indexType))
                                                 : indexType;
    return arith::ExtSIOp::create(b, loc, t, x);
  }
  Type shaped(Type scalar, Shape s) {
    Type t = convertScalar(scalar);
    return s == Shape::Uniform ? t : Type(tileType(dims(s), t));
  }

  // --- modifier regions ----------------------------------------------------------------------------
  void classify(Region &region, bool isScore);
  Value lookup(Value v);
  Value at(Value v, Shape s);
  LogicalResult emitOp(Operation *inner, DenseMap<Value, Value> &into);
  LogicalResult emitRegion(Region &region, bool hoistedPart, DenseMap<Value, Value> &into);

  // --- kernel pieces -------------------------------------------------------------------------------
  LogicalResult buildKernel();
  Value evalLeaves(const LinearExpr &e);
  std::pair<Interval, Interval> blocksOf(const MaskNode &node);
  Value keptKeyBound(const MaskNode &node);
  /// With `overlap`, `state` also carries P of the previous block, whose rows of V start at
  /// key `prevKv0` (kFarAway: none); `valid` (null: always) is false on the extra last iteration
  /// that only finishes the previous block.
  FailureOr<SmallVector<Value>> kvStep(Value block, bool masked, ValueRange state, Value valid = Value(),
                                       Value prevKv0 = Value());
};

void Generator::classify(Region &region, bool isScore) {
  if (region.empty())
    return;
  Block &block = region.front();
  unsigned first = isScore ? 1 : 0; // score_mod starts with the score
  if (isScore)
    shapes[block.getArgument(0)] = Shape::Full;
  shapes[block.getArgument(first + 0)] = Shape::Uniform;
  shapes[block.getArgument(first + 1)] = Shape::Uniform;
  shapes[block.getArgument(first + 2)] = Shape::Row;
  shapes[block.getArgument(first + 3)] = Shape::Col;
  for (Operation &inner : block.without_terminator()) {
    Shape s = Shape::Uniform;
    for (Value operand : inner.getOperands())
      if (!isa<RankedTensorType>(operand.getType()))
        s = join(s, shapes.lookup(operand));
    // A table read happens per query row at least: there is no scalar load in tile kernels, and
    // BLOCK_M identical loads hit the same cache line once, before the KV loop.
    if (isa<AuxLoadOp>(inner) && s == Shape::Uniform)
      s = Shape::Row;
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
    r = broadcastRows(x, config.getBlockN());
  else
    r = broadcastCols(x, config.getBlockM());
  if (broadcasts)
    (*broadcasts)[key] = r;
  return r;
}

/// Math ops the tile backend implements on tiles (approximate NVVM instructions where they exist).
bool isSupportedMath(Operation *op) {
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

LogicalResult Generator::emitRegion(Region &region, bool hoistedPart, DenseMap<Value, Value> &into) {
  if (region.empty())
    return success();
  for (Operation &inner : region.front().without_terminator()) {
    Shape s = inner.getNumResults() ? shapes.lookup(inner.getResult(0)) : Shape::Uniform;
    bool isHoisted = s == Shape::Uniform || s == Shape::Row;
    if (isHoisted != hoistedPart)
      continue;
    if (failed(emitOp(&inner, into)))
      return failure();
  }
  return success();
}

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

/// (non-empty, full) KV block intervals of `node` for query rows [q0, q1] (MaskAnalysis.h).
std::pair<Interval, Interval> Generator::blocksOf(const MaskNode &node) {
  Value zero = c32(0);
  Interval all{zero, numBlocks}, none{zero, zero};
  switch (node.kind) {
  case MaskNode::Kind::True:
    return {all, all};
  case MaskNode::Kind::Generic:
    return {all, none};
  case MaskNode::Kind::Constraint: {
    const LinearExpr &e = node.expr;
    Value c = evalLeaves(e);
    Value aq0 = mul(c32(e.q), q0), aq1 = mul(c32(e.q), q1);
    Value aqMax = e.q >= 0 ? aq1 : aq0, aqMin = e.q >= 0 ? aq0 : aq1;
    if (e.kv == -1) { // kv <= a*qi + c
      Value hiAny = add(floorBlocks(add(aqMax, c)), c32(1));
      Value hiAll = floorBlocks(add(add(aqMin, c), c32(1)));
      return {{zero, hiAny}, {zero, hiAll}};
    }
    if (e.kv == 1) { // kv >= -(a*qi + c)
      Value loAny = floorBlocks(sub(sub(zero, aqMax), c));
      Value loAll = ceilBlocks(sub(sub(zero, aqMin), c));
      return {{loAny, numBlocks}, {loAll, numBlocks}};
    }
    // a*qi + c >= 0: the same for every key of a row.
    Value any = cmp(arith::CmpIPredicate::sge, add(aqMax, c), zero);
    Value every = cmp(arith::CmpIPredicate::sge, add(aqMin, c), zero);
    return {{zero, select(any, numBlocks, zero)}, {zero, select(every, numBlocks, zero)}};
  }
  case MaskNode::Kind::And: {
    auto [ne, full] = blocksOf(node.children.front());
    for (const MaskNode &child : ArrayRef<MaskNode>(node.children).drop_front()) {
      auto [cne, cfull] = blocksOf(child);
      ne = {smax(ne.lo, cne.lo), smin(ne.hi, cne.hi)};
      full = {smax(full.lo, cfull.lo), smin(full.hi, cfull.hi)};
    }
    return {ne, full};
  }
  case MaskNode::Kind::Or: {
    auto [ne, full] = blocksOf(node.children.front());
    for (const MaskNode &child : ArrayRef<MaskNode>(node.children).drop_front()) {
      auto [cne, cfull] = blocksOf(child);
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

/// A block offset far below every view: its rows fail the bounds checks, so loads at it read zeros.
constexpr int64_t kFarAway = -(int64_t(1) << 30);

/// One KV block: S = Q K^T, modifiers, mask, online softmax, acc = alpha * acc + P V. Overlapped:
/// S = Q K_j^T, acc += P_{j-1} V_{j-1}, softmax, acc = alpha * acc; P_j is carried to the next step.
FailureOr<SmallVector<Value>> Generator::kvStep(Value block, bool masked, ValueRange state, Value valid,
                                                Value prevKv0) {
  const int64_t bm = config.getBlockM(), bn = config.getBlockN();
  DenseMap<Value, Value> local;
  DenseMap<std::pair<Value, int>, Value> localBroadcasts;
  body = &local;
  broadcasts = &localBroadcasts;
  struct Reset {
    Generator &g;
    ~Reset() {
      g.body = nullptr;
      g.broadcasts = nullptr;
    }
  } reset{*this};
  Value c0 = c32(0);
  Value kv0 = mul(block, c32(bn));
  Value kLoad0 = valid ? select(valid, kv0, c32(kFarAway)) : kv0;
  Value kt = tile::LoadOp::create(b, loc, tileType({bn, headDim}, elemType), kView, ValueRange{kLoad0, c0}, nullptr);
  Value ktt = tile::TransOp::create(b, loc, tileType({headDim, bn}, elemType), kt);
  Value qk = tile::DotOp::create(b, loc, tileType({bm, bn}, f32), qTile, ktt, splatF32(0.0, {bm, bn}));
  Value acc = state[2];
  // Lazy (`lazy_rescale`): a row's reference max moves only when a block raises it by more than 8
  // (log2 units), so alpha is exactly 1 on almost every step and the rescale is skipped thread by
  // thread.
  auto rescale = [&](Value acc, Value alpha) -> Value {
    auto mul = arith::MulFOp::create(b, loc, acc, broadcastRows(alpha, headDim));
    if (config.has(ConfigSwitch::LazyRescale))
      mul->setAttr(tile::TileDialect::kSkipUnitFactorAttrName, b.getUnitAttr());
    return mul;
  };
  if (config.has(ConfigSwitch::Overlap)) {
    // The previous block's P V, issued right behind Q K^T: it runs while this block's softmax does.
    // Deferred: the previous block's rescale first, while Q K^T runs.
    Value vPrev =
        tile::LoadOp::create(b, loc, tileType({bn, headDim}, elemType), vView, ValueRange{prevKv0, c0}, nullptr);
    if (config.has(ConfigSwitch::DeferRescale))
      acc = rescale(acc, state[4]);
    acc = tile::DotOp::create(b, loc, acc.getType(), state[3], vPrev, acc);
  }
  double scale = op.getScaleAttr() ? op.getScaleAttr().getValueAsDouble() : 1.0 / std::sqrt(double(headDim));
  Value kvCols = indexRange(kv0, bn);
  Value kvIndex; // kvCols as a region index value, made once per step
  auto bindIndices = [&](Region &region, unsigned first) {
    Block &blk = region.front();
    if (!kvIndex)
      kvIndex = asIndex(kvCols);
    local[blk.getArgument(first + 3)] = kvIndex;
  };
  // pre: the score before the conversion to log2 units; masked scores become -inf first, so that the
  // last step is one multiply by a positive constant, which the softmax folds into its FMA.
  Value pre;
  double toLog2;
  Region &scoreMod = op.getScoreMod();
  if (scoreMod.empty()) {
    pre = qk;
    toLog2 = scale * kLog2E;
  } else {
    Value scaled = arith::MulFOp::create(b, loc, qk, splatF32(scale, {bm, bn}));
    local[scoreMod.front().getArgument(0)] = scaled;
    bindIndices(scoreMod, 1);
    if (failed(emitRegion(scoreMod, /*hoistedPart=*/false, local)))
      return failure();
    pre = at(cast<YieldOp>(scoreMod.front().getTerminator()).getValue(), Shape::Full);
    toLog2 = kLog2E;
  }
  if (masked) {
    Value keep;
    if (keptBound) {
      Value keys = broadcastCols(kvCols, bm);
      Value lastKept = broadcastRows(keptBound, bn);
      keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, keys, lastKept);
    } else {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kvCols, splat(seqKV, {bn}));
      keep = broadcastCols(inRange, bm);
      if (Region &maskMod = op.getMaskMod(); !maskMod.empty()) {
        bindIndices(maskMod, 0);
        if (failed(emitRegion(maskMod, /*hoistedPart=*/false, local)))
          return failure();
        Value user = at(cast<YieldOp>(maskMod.front().getTerminator()).getValue(), Shape::Full);
        keep = arith::AndIOp::create(b, loc, keep, user);
      }
    }
    pre = arith::SelectOp::create(b, loc, keep, pre, splatF32(-std::numeric_limits<double>::infinity(), {bm, bn}));
  }
  Value s = arith::MulFOp::create(b, loc, pre, splatF32(toLog2, {bm, bn}));
  auto softmax = tile::OnlineSoftmaxOp::create(b, loc, s, state[0], state[1], config.has(ConfigSwitch::LazyRescale));
  if (config.has(ConfigSwitch::Overlap)) {
    Value alpha = softmax.getAlpha(), newMax = softmax.getNewMax(), newSum = softmax.getNewSum();
    if (valid) { // the extra last step keeps m and l and does not rescale
      Value keep = splat(valid, {bm});
      alpha = arith::SelectOp::create(b, loc, keep, alpha, splatF32(1.0, {bm}));
      newMax = arith::SelectOp::create(b, loc, keep, newMax, state[0]);
      newSum = arith::SelectOp::create(
          b, loc, splat(valid, cast<RankedTensorType>(newSum.getType()).getShape()), newSum, state[1]);
    }
    if (config.has(ConfigSwitch::DeferRescale)) { // applied by the next step (the extra last step carries 1)
      Value p = arith::TruncFOp::create(b, loc, tileType({bm, bn}, elemType), softmax.getP());
      return SmallVector<Value>{newMax, newSum, acc, p, alpha};
    }
    acc = rescale(acc, alpha);
    Value p = arith::TruncFOp::create(b, loc, tileType({bm, bn}, elemType), softmax.getP());
    return SmallVector<Value>{newMax, newSum, acc, p};
  }
  acc = rescale(acc, softmax.getAlpha());
  // V is loaded after the softmax so that its registers are not live across it.
  Value vt = tile::LoadOp::create(b, loc, tileType({bn, headDim}, elemType), vView, ValueRange{kv0, c0}, nullptr);
  Value p = arith::TruncFOp::create(b, loc, tileType({bm, bn}, elemType), softmax.getP());
  acc = tile::DotOp::create(b, loc, acc.getType(), p, vt, acc);
  return SmallVector<Value>{softmax.getNewMax(), softmax.getNewSum(), acc};
}

LogicalResult Generator::run() {
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  headDim = qType.getDimSize(3);
  elemType = qType.getElementType();
  f32 = b.getF32Type();
  i32Type = b.getI32Type();
  indexType = ranges.indexFitsI32() ? i32Type : Type(b.getI64Type());
  if (!llvm::isPowerOf2_64(config.getBlockM()) || !llvm::isPowerOf2_64(config.getBlockN()))
    return op.emitOpError("convert-attn-to-tile: block sizes must be powers of two");

  // The function must be exactly `return attn.attention(arguments)`.
  Block &entry = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret || &entry.front() != op.getOperation() || op->getNextNode() != ret ||
      ret.getOperands() != ValueRange(op->getResults()) ||
      llvm::any_of(op->getOperands(), [&](Value v) {
        auto arg = dyn_cast<BlockArgument>(v);
        return !arg || arg.getOwner() != &entry;
      }))
    return op.emitOpError("convert-attn-to-tile: the function '")
           << func.getName() << "' must consist of one attn.attention on its arguments and return its results";

  classify(op.getScoreMod(), /*isScore=*/true);
  classify(op.getMaskMod(), /*isScore=*/false);
  return buildKernel();
}

LogicalResult Generator::buildKernel() {
  MLIRContext *ctx = op.getContext();
  const int64_t bm = config.getBlockM(), bn = config.getBlockN();
  auto ptrOf = [&](Type elem) { return tile::PtrType::get(ctx, elem); };
  Type i64Type = b.getI64Type();
  SmallVector<Type> args = {ptrOf(elemType), ptrOf(elemType), ptrOf(elemType), ptrOf(elemType)};
  bool withLse = static_cast<bool>(op.getLse());
  if (withLse)
    args.push_back(ptrOf(f32));
  for (Value aux : op.getAux())
    args.push_back(ptrOf(cast<RankedTensorType>(aux.getType()).getElementType()));
  args.append(4, i32Type); // heads_q, heads_kv, seq_q, seq_kv
  args.append(op.getAux().size(), i32Type);
  args.append(12, i64Type); // (batch, head, row) strides of q, k, v, o

  b.setInsertionPoint(func);
  kernel = func::FuncOp::create(b, func.getLoc(), func.getName(), b.getFunctionType(args, {}));
  kernel->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
  kernel->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(config.getNumWarps()));
  kernel->setAttr("flare.attention.block_m", b.getI32IntegerAttr(static_cast<int32_t>(bm)));
  kernel->setAttr("flare.attention.block_n", b.getI32IntegerAttr(static_cast<int32_t>(bn)));
  kernel->setAttr(kKernelConfigAttrName, b.getStringAttr(config.text()));
  if (!config.has(ConfigSwitch::PingPong))
    kernel->setAttr(tile::TileDialect::kPingPongAttrName, b.getBoolAttr(false));
  if (config.getMinBlocksPerSM() > 0)
    kernel->setAttr(tile::TileDialect::kMinBlocksPerSMAttrName, b.getI32IntegerAttr(config.getMinBlocksPerSM()));
  if (config.has(ConfigSwitch::Producer))
    kernel->setAttr(tile::TileDialect::kProducerWarpgroupAttrName, b.getBoolAttr(true));
  if (config.has(ConfigSwitch::Persistent))
    kernel->setAttr(tile::TileDialect::kPersistentAttrName, b.getBoolAttr(true));
  if (config.has(ConfigSwitch::Persistent) && !config.has(ConfigSwitch::PairInstances))
    kernel->setAttr(tile::TileDialect::kPairInstancesAttrName, b.getBoolAttr(false));
  if (config.has(ConfigSwitch::OperandsAfterFirstStage))
    kernel->setAttr(tile::TileDialect::kOperandsAfterFirstStageAttrName, b.getBoolAttr(true));
  if (config.has(ConfigSwitch::PrefetchNextInstance))
    kernel->setAttr(tile::TileDialect::kPrefetchNextInstanceAttrName, b.getBoolAttr(true));
  if (config.has(ConfigSwitch::InvariantAInRegisters))
    kernel->setAttr(tile::TileDialect::kInvariantAInRegistersAttrName, b.getBoolAttr(true));
  if (!config.has(ConfigSwitch::UniformWarpgroup))
    kernel->setAttr(tile::TileDialect::kUniformWarpgroupAttrName, b.getBoolAttr(false));
  if (config.has(ConfigSwitch::PeelFirstStep) && config.has(ConfigSwitch::Overlap))
    kernel->setAttr(tile::TileDialect::kPeelZeroFirstAttrName, b.getBoolAttr(true));
  Block *entry = kernel.addEntryBlock();
  b.setInsertionPointToStart(entry);

  unsigned a = 0;
  Value qPtr = entry->getArgument(a++), kPtr = entry->getArgument(a++), vPtr = entry->getArgument(a++),
        oPtr = entry->getArgument(a++);
  Value lsePtr = withLse ? entry->getArgument(a++) : Value();
  for (size_t i = 0; i < op.getAux().size(); ++i)
    auxPtrs.push_back(entry->getArgument(a++));
  Value headsQ = entry->getArgument(a++), headsKV = entry->getArgument(a++);
  seqQ = entry->getArgument(a++);
  seqKV = entry->getArgument(a++);
  for (size_t i = 0; i < op.getAux().size(); ++i)
    auxLens.push_back(entry->getArgument(a++));
  SmallVector<Value> strides;
  for (int i = 0; i < 12; ++i)
    strides.push_back(entry->getArgument(a++));

  // Grid (ceil(Sq / BLOCK_M), Hq, B); query head h reads key/value head h / (Hq / Hkv).
  Value mBlock = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
  Value lastBlock = sub(tile::NumProgramsOp::create(b, loc, tile::Axis::x), c32(1));
  if (config.has(ConfigSwitch::RowsGrow) && config.has(ConfigSwitch::Persistent)) {
    // A persistent kernel's CTA runs two consecutive programs in turn (convert-tgpu-to-nvvm): the
    // pair takes one heavy and one light query block of a head (x even: block n - 1 - x / 2, x odd:
    // block x / 2), the same work for every pair, so that the fixed assignment ends evenly.
    Value half = arith::ShRUIOp::create(b, loc, mBlock, c32(1));
    Value light = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        arith::AndIOp::create(b, loc, mBlock, c32(1)), c32(0));
    mBlock = arith::SelectOp::create(b, loc, light, half, sub(lastBlock, half));
  } else if (config.has(ConfigSwitch::RowsGrow)) {
    // Heaviest first: the GPU starts programs in index order, so the last ones to start are the
    // lightest and the last wave ends evenly.
    mBlock = sub(lastBlock, mBlock);
  }
  headIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
  batchIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
  Value kvHead = arith::DivUIOp::create(b, loc, headIdx, arith::DivUIOp::create(b, loc, headsQ, headsKV));
  q0 = mul(mBlock, c32(bm));
  // The last row that exists: rows past Sq are computed but never stored, and must not widen the
  // range of visited blocks.
  q1 = sub(smin(add(q0, c32(bm)), seqQ), c32(1));
  numBlocks = ceilBlocks(seqKV);

  Value b64 = ext64(batchIdx);
  auto sliceOf = [&](Value ptr, int tensor, Value head) {
    Value off = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, b64, strides[3 * tensor]),
                                      arith::MulIOp::create(b, loc, ext64(head), strides[3 * tensor + 1]));
    return tile::AddPtrOp::create(b, loc, ptr.getType(), ptr, off).getResult();
  };
  Value c0 = c32(0), c1 = c32(1), d = c32(headDim);
  auto view2d = [&](Value base, Value rows, int tensor) {
    Value rowStride = arith::TruncIOp::create(b, loc, i32Type, strides[3 * tensor + 2]);
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 2), base, ValueRange{rows, d},
                                    ValueRange{rowStride, c1})
        .getResult();
  };
  qView = view2d(sliceOf(qPtr, 0, headIdx), seqQ, 0);
  kView = view2d(sliceOf(kPtr, 1, kvHead), seqKV, 1);
  vView = view2d(sliceOf(vPtr, 2, kvHead), seqKV, 2);
  oView = view2d(sliceOf(oPtr, 3, headIdx), seqQ, 3);
  if (withLse) {
    // LSE is a dense [B, Hq, Sq] tensor.
    Value row = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, b64, ext64(headsQ)), ext64(headIdx));
    Value base = tile::AddPtrOp::create(b, loc, lsePtr.getType(), lsePtr,
                                        arith::MulIOp::create(b, loc, row, ext64(seqQ)));
    lseView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), base, ValueRange{seqQ}, ValueRange{c1});
  }
  qTile = tile::LoadOp::create(b, loc, tileType({bm, headDim}, elemType), qView, ValueRange{q0, c0}, nullptr);

  // Region values that do not depend on the KV block.
  qRows = indexRange(q0, bm);
  for (auto [region, first] : {std::pair<Region *, unsigned>{&op.getScoreMod(), 1}, {&op.getMaskMod(), 0}}) {
    if (region->empty())
      continue;
    Block &blk = region->front();
    hoisted[blk.getArgument(first + 0)] = asIndex(batchIdx);
    hoisted[blk.getArgument(first + 1)] = asIndex(headIdx);
    hoisted[blk.getArgument(first + 2)] = asIndex(qRows);
    if (failed(emitRegion(*region, /*hoistedPart=*/true, hoisted)))
      return failure();
  }

  // Which KV blocks to visit, and which of them need no mask.
  auto [nonEmpty, full] = blocksOf(mask.root);
  Value lo = smax(nonEmpty.lo, c0);
  Value hi = smax(smin(nonEmpty.hi, numBlocks), lo);
  // Stream-K (`split_tail`, no mask: every instance visits blocks [0, numBlocks)): this
  // instance may run only blocks [lo + splitLo, lo + splitHi) of them.
  Value splitLo, splitHi;
  if (config.has(ConfigSwitch::SplitTail)) {
    auto range = tile::SplitRangeOp::create(b, loc, numBlocks);
    splitLo = range.getLo();
    splitHi = range.getHi();
    hi = smin(add(lo, splitHi), hi);
    lo = smin(add(lo, splitLo), hi);
  }
  Value flo = hi, fhi = hi;
  bool fullLoop = mask.root.mayHaveFullBlocks();
  if (fullLoop) {
    // Keys past Skv are masked: only blocks wholly below Skv can be full.
    Value fullHi = smin(full.hi, floorBlocks(seqKV));
    flo = smin(smax(full.lo, lo), hi);
    fhi = smin(smax(fullHi, flo), hi);
  }

  // Masked steps compare each key with its row's last kept key (keptKeyBound), when the mask allows.
  // (bench/NOTES.md a36: +2-4% at 512 causal, +1-2% at 1k-2k.)
  if (mask.hasMask && mask.root.kind != MaskNode::Kind::True)
    if (Value bound = keptKeyBound(mask.root))
      keptBound = arith::MinSIOp::create(b, loc, bound, splat(sub(seqKV, c32(1)), {bm}));
  Value ninf = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tileType({bm}, f32), b.getF32FloatAttr(-std::numeric_limits<float>::infinity())));
  // The normalizer as `partial_row_sums` partial sums per row (one per lane of a quad of the MMA
  // layouts: no cross-lane adds in the loop), summed after it.
  const int64_t sumGroups = config.getPartialRowSums();
  Value sum0 = sumGroups ? splatF32(0.0, {bm, sumGroups}) : splatF32(0.0, {bm});
  SmallVector<Value> state = {ninf, sum0, splatF32(0.0, {bm, headDim})};
  // Overlapped: P of the previous block (zeros before the first) and where its V rows start.
  Value pendingKv0 = c32(kFarAway);
  if (config.has(ConfigSwitch::Overlap))
    state.push_back(arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(tileType({bm, bn}, elemType), b.getZeroAttr(elemType))));
  // Deferred rescale: the factor the next step applies to the accumulator (1 before the first).
  if (config.has(ConfigSwitch::DeferRescale))
    state.push_back(splatF32(1.0, {bm}));
  // Every bound is computed before the first loop: the lowering may then issue the second loop's
  // first copies from the first loop's last iteration (one ring of stages for both). The last loop
  // of an overlapped kernel takes one more step, to finish its last block's P V.
  Value left = sub(flo, lo);
  Value partialCount = add(left, sub(hi, fhi));
  // Overlapped, the last block's P V is still due after the loops: either one more step of the last
  // loop (an S product and softmax thrown away, `valid` false) or, with lastPvAfterLoops, one P V
  // after them on that block's V, loaded before the loops (its rows are known then): the lowering
  // copies it into shared memory while the loops run.
  const bool pvAfterLoops = config.has(ConfigSwitch::Overlap) && config.has(ConfigSwitch::LastPvAfterLoops);
  Value partialEnd = config.has(ConfigSwitch::Overlap) && !pvAfterLoops ? add(partialCount, c1) : partialCount;
  // Iteration t of the partial loop visits lo + t below the full range, then fhi + (t - left) above it.
  auto partialBlock = [&](Value t) {
    return select(cmp(arith::CmpIPredicate::slt, t, left), add(lo, t), add(fhi, sub(t, left)));
  };
  // The full-block loop's last block is still pending after it (none when the loop is empty).
  Value pendingAfterFull = pendingKv0;
  if (fullLoop && config.has(ConfigSwitch::Overlap))
    pendingAfterFull = select(cmp(arith::CmpIPredicate::slt, flo, fhi), mul(sub(fhi, c1), c32(bn)), pendingKv0);
  Value vLast; // the last block's V (the partial loop's last block, else the full loop's)
  if (pvAfterLoops) {
    Value lastKv0 = select(cmp(arith::CmpIPredicate::sgt, partialCount, c0),
                           mul(partialBlock(sub(partialCount, c1)), c32(bn)), pendingAfterFull);
    vLast = tile::LoadOp::create(b, loc, tileType({bn, headDim}, elemType), vView, ValueRange{lastKv0, c0}, nullptr);
  }
  // Iterations [lower, end) over blocks [lower, upper) (end = upper + 1: the extra step of the last
  // loop); P of block `pending` (a key offset) is the first iteration's previous block.
  auto loop = [&](Value lower, Value upper, Value end, bool partial, Value pending) -> LogicalResult {
    auto forOp = scf::ForOp::create(b, loc, lower, end, c1, state);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    auto blockAt = [&](Value t) { return partial ? partialBlock(t) : t; };
    Value iv = forOp.getInductionVar();
    Value valid, prevKv0;
    if (config.has(ConfigSwitch::Overlap)) {
      if (end != upper)
        valid = cmp(arith::CmpIPredicate::slt, iv, upper);
      Value first = cmp(arith::CmpIPredicate::eq, iv, lower);
      prevKv0 = select(first, pending, mul(blockAt(sub(iv, c1)), c32(bn)));
    }
    FailureOr<SmallVector<Value>> next = kvStep(blockAt(iv), /*masked=*/partial, forOp.getRegionIterArgs(), valid, prevKv0);
    if (failed(next))
      return failure();
    scf::YieldOp::create(b, loc, *next);
    state.assign(forOp.getResults().begin(), forOp.getResults().end());
    return success();
  };
  if (fullLoop && failed(loop(flo, fhi, fhi, /*partial=*/false, pendingKv0)))
    return failure();
  if (failed(loop(c0, partialCount, partialEnd, /*partial=*/true, pendingAfterFull)))
    return failure();
  if (pvAfterLoops) {
    // The last block's P V (P = 0 and V read far away when no block was visited).
    Value acc = state[2];
    if (config.has(ConfigSwitch::DeferRescale)) {
      acc = arith::MulFOp::create(b, loc, acc, broadcastRows(state[4], headDim));
      if (config.has(ConfigSwitch::LazyRescale))
        acc.getDefiningOp()->setAttr(tile::TileDialect::kSkipUnitFactorAttrName, b.getUnitAttr());
    }
    state[2] = tile::DotOp::create(b, loc, acc.getType(), state[3], vLast, acc);
  }

  // O = acc / l, LSE = (m + log2 l) * ln 2; a row that kept no key (l = 0) gives 0 and -inf.
  if (sumGroups)
    state[1] = tile::ReduceOp::create(b, loc, tileType({bm}, f32), tile::ReduceKind::sum, state[1], 1);
  auto epilogue = [&](Value m, Value l, Value acc) {
    Value zero = splatF32(0.0, {bm}), one = splatF32(1.0, {bm});
    Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value lSafe = arith::SelectOp::create(b, loc, noKey, one, l);
    Value invL = arith::DivFOp::create(b, loc, one, lSafe);
    Value out = arith::MulFOp::create(b, loc, acc, broadcastRows(invL, headDim));
    Value out16 = arith::TruncFOp::create(b, loc, tileType({bm, headDim}, elemType), out);
    tile::StoreOp::create(b, loc, out16, oView, ValueRange{q0, c0});
    if (withLse) {
      Value log2l = math::Log2Op::create(b, loc, lSafe);
      Value lse = arith::MulFOp::create(b, loc, arith::AddFOp::create(b, loc, m, log2l), splatF32(kLn2, {bm}));
      lse = arith::SelectOp::create(b, loc, noKey, ninf, lse);
      tile::StoreOp::create(b, loc, lse, lseView, ValueRange{q0});
    }
  };
  if (!config.has(ConfigSwitch::SplitTail)) {
    epilogue(state[0], state[1], state[2]);
    func::ReturnOp::create(b, loc);
    return success();
  }
  // A split instance: the piece that ends it (lo > 0) hands its state over and stores nothing; the
  // piece that began it (lo == 0, hi < steps) merges that in first. Each path has its own epilogue
  // (the branches are the same for the whole CTA): the unsplit one carries no merged values.
  Value writer = cmp(arith::CmpIPredicate::ne, splitLo, c0);
  Value owner = cmp(arith::CmpIPredicate::ne, splitHi, numBlocks);
  auto hand = scf::IfOp::create(b, loc, TypeRange{}, writer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(hand.thenBlock());
    tile::SplitStoreOp::create(b, loc, ValueRange{state[0], state[1], state[2]});
    b.setInsertionPointToStart(hand.elseBlock());
    auto merge = scf::IfOp::create(b, loc, TypeRange{}, owner, /*withElseRegion=*/true);
    b.setInsertionPointToStart(merge.thenBlock());
    SmallVector<Type> types = {state[0].getType(), state[1].getType(), state[2].getType()};
    auto theirs = tile::SplitLoadOp::create(b, loc, types);
    Value m1 = state[0], m2 = theirs.getResult(0);
    Value m = arith::MaximumFOp::create(b, loc, m1, m2);
    // Rows that kept no key in either piece: both maxima -inf, both factors 0.
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, ninf);
    Value ref = arith::SelectOp::create(b, loc, none, splatF32(0.0, {bm}), m);
    Value a1 = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, m1, ref));
    Value a2 = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, m2, ref));
    Value l = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, state[1], a1),
                                    arith::MulFOp::create(b, loc, theirs.getResult(1), a2));
    Value acc = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, state[2], broadcastRows(a1, headDim)),
                                      arith::MulFOp::create(b, loc, theirs.getResult(2), broadcastRows(a2, headDim)));
    epilogue(m, l, acc);
    b.setInsertionPointToStart(merge.elseBlock());
    epilogue(state[0], state[1], state[2]);
  }
  func::ReturnOp::create(b, loc);
  return success();
}

struct ConvertAttnToTilePass : public flare::attn::impl::ConvertAttnToTileBase<ConvertAttnToTilePass> {
  using ConvertAttnToTileBase::ConvertAttnToTileBase;
  void runOnOperation() override {
    SmallVector<std::pair<AttentionOp, func::FuncOp>> work;
    WalkResult walk = getOperation().walk([&](AttentionOp op) {
      auto func = op->getParentOfType<func::FuncOp>();
      if (!func || op->getParentOp() != func) {
        op.emitOpError("convert-attn-to-tile: attn.attention must sit directly in a func.func");
        return WalkResult::interrupt();
      }
      work.push_back({op, func});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (auto [op, func] : work) {
      ConfigAttr config = op.getConfigAttr();
      if (!config) {
        op.emitOpError("convert-attn-to-tile: the op has no config (#attn.config); run attn-choose-config first");
        return signalPassFailure();
      }
      MaskInfo mask = analyzeMask(op);
      Generator gen(op, func, std::move(mask), config);
      if (failed(gen.run()))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
