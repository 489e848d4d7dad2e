//===- DecomposeOnlineSoftmax.cpp - tile.online_softmax as plain tile ops -===//
//
// For scores s [M, N] (log2 units), running max m [M] and sum l [M]:
//   1. rowmax = reduce max s (axis 1);        m' = maximumf(m, rowmax)
//   2. m_0 = select(m' == -inf, 0, m')         (rows that saw no key keep exp2 finite)
//   3. p = exp2(s - broadcast(m_0));          alpha = exp2(m - m_0)
//   4. l' = alpha * l + reduce sum p (axis 1)
//      or, with G partial sums l [M, G]: p as [M, N / 2G, G, 2] summed over axes 3 and 1, alpha
//      broadcast to [M, G]
// and the op's results (p, m', l', alpha) are replaced by these values. A `lazy` op keeps m' = m while
// m' - m <= 8 (alpha then is exp2(0) = 1 exactly).
// Scores of the form s = y * c with a positive splat constant c (the softmax scale folded with
// log2(e)) use y directly: rowmax s = c * rowmax y (exact: rounding is monotone) and
// p = exp2(y * c - m_0), a multiply with one use that the backend fuses with the subtraction into
// one FMA per score.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace flare::tile {
#define GEN_PASS_DEF_TILEDECOMPOSEONLINESOFTMAX
#include "Tile/Passes.h.inc"
} // namespace flare::tile

using namespace mlir;
using namespace flare::tile;

namespace {

/// How far (log2 units) a lazy online softmax lets a block's max rise above the reference before it
/// moves it: p stays below 2^8, far from overflow in f32 sums and exact in bf16's exponent range.
constexpr double kLazyRise = 8.0;

void decompose(OnlineSoftmaxOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto scoresType = op.getScores().getType();
  auto rowType = op.getMax().getType();
  auto splat = [&](RankedTensorType type, double v) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(static_cast<float>(v))));
  };
  auto broadcastRows = [&](Value row) -> Value {
    auto col = RankedTensorType::get({scoresType.getDimSize(0), 1}, scoresType.getElementType());
    Value expanded = ExpandDimsOp::create(b, loc, col, row, 1);
    return BroadcastOp::create(b, loc, scoresType, expanded);
  };
  // s = y * c, c > 0?
  Value y, scale;
  if (auto mul = op.getScores().getDefiningOp<arith::MulFOp>())
    for (auto [value, other] : {std::pair{mul.getLhs(), mul.getRhs()}, {mul.getRhs(), mul.getLhs()}}) {
      SplatElementsAttr c;
      if (y || !matchPattern(other, m_Constant(&c)))
        continue;
      APFloat v = c.getSplatValue<APFloat>();
      if (v.isFinite() && !v.isNegative() && !v.isZero()) {
        y = value;
        scale = other;
      }
    }
  Value rowMax;
  if (y) {
    Value rowMaxY = ReduceOp::create(b, loc, rowType, ReduceKind::max, y, 1);
    auto c = cast<SplatElementsAttr>(cast<arith::ConstantOp>(scale.getDefiningOp()).getValue());
    rowMax = arith::MulFOp::create(
        b, loc, rowMaxY,
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(rowType, c.getSplatValue<Attribute>())));
  } else {
    rowMax = ReduceOp::create(b, loc, rowType, ReduceKind::max, op.getScores(), 1);
  }
  Value newMax = arith::MaximumFOp::create(b, loc, op.getMax(), rowMax);
  if (op.getLazy()) {
    // Keep the reference while the block raises it by at most kLazyRise: (-inf) - (-inf) is NaN and
    // x - (-inf) is +inf, so a row's first visible key always takes the new max.
    Value rise = arith::SubFOp::create(b, loc, newMax, op.getMax());
    Value keep = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, rise, splat(rowType, kLazyRise));
    newMax = arith::SelectOp::create(b, loc, keep, op.getMax(), newMax);
  }
  Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                                      splat(rowType, -std::numeric_limits<double>::infinity()));
  Value safeMax = arith::SelectOp::create(b, loc, noKey, splat(rowType, 0.0), newMax);
  Value scores = y ? arith::MulFOp::create(b, loc, y, scale).getResult() : op.getScores();
  Value p = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, scores, broadcastRows(safeMax)));
  Value alpha = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, op.getMax(), safeMax));
  auto sumType = op.getSum().getType();
  Value rowSum, sumAlpha = alpha;
  if (sumType == rowType) {
    rowSum = ReduceOp::create(b, loc, rowType, ReduceKind::sum, p, 1);
  } else {
    const int64_t m = scoresType.getDimSize(0), n = scoresType.getDimSize(1), g = sumType.getDimSize(1);
    Type f32 = scoresType.getElementType();
    const int64_t pairs = n / (2 * g); // column j is element j % 2 of pair j / 2, which goes to (j / 2) % g
    Value grouped = ReshapeOp::create(b, loc, RankedTensorType::get({m, pairs, g, 2}, f32), p);
    Value pairSums = ReduceOp::create(b, loc, RankedTensorType::get({m, pairs, g}, f32), ReduceKind::sum, grouped, 3);
    rowSum = ReduceOp::create(b, loc, sumType, ReduceKind::sum, pairSums, 1);
    Value expanded = ExpandDimsOp::create(b, loc, RankedTensorType::get({m, 1}, f32), alpha, 1);
    sumAlpha = BroadcastOp::create(b, loc, sumType, expanded);
  }
  Value newSum = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, sumAlpha, op.getSum()), rowSum);
  op.replaceAllUsesWith(ValueRange{p, newMax, newSum, alpha});
  op.erase();
}

struct DecomposeOnlineSoftmaxPass : public flare::tile::impl::TileDecomposeOnlineSoftmaxBase<DecomposeOnlineSoftmaxPass> {
  void runOnOperation() override {
    SmallVector<OnlineSoftmaxOp> ops;
    getOperation().walk([&](OnlineSoftmaxOp op) { ops.push_back(op); });
    for (OnlineSoftmaxOp op : ops)
      decompose(op);
  }
};

} // namespace
