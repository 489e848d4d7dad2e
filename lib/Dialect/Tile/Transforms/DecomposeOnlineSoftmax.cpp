//===- DecomposeOnlineSoftmax.cpp - tile.online_softmax as plain tile ops -===//
//
// For scores s [M, N] (log2 units), running max m [M] and sum l [M]:
//   1. rowmax = reduce max s (axis 1);        m' = maximumf(m, rowmax)
//   2. m_0 = select(m' == -inf, 0, m')         (rows that saw no key keep exp2 finite)
//   3. p = exp2(s - broadcast(m_0));          alpha = exp2(m - m_0)
//   4. l' = alpha * l + reduce sum p (axis 1)
// and the op's results (p, m', l', alpha) are replaced by these values.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace flare::tile {
#define GEN_PASS_DEF_TILEDECOMPOSEONLINESOFTMAX
#include "Tile/Passes.h.inc"
} // namespace flare::tile

using namespace mlir;
using namespace flare::tile;

namespace {

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
  Value rowMax = ReduceOp::create(b, loc, rowType, ReduceKind::max, op.getScores(), 1);
  Value newMax = arith::MaximumFOp::create(b, loc, op.getMax(), rowMax);
  Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                                      splat(rowType, -std::numeric_limits<double>::infinity()));
  Value safeMax = arith::SelectOp::create(b, loc, noKey, splat(rowType, 0.0), newMax);
  Value p = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, op.getScores(), broadcastRows(safeMax)));
  Value alpha = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, op.getMax(), safeMax));
  Value rowSum = ReduceOp::create(b, loc, rowType, ReduceKind::sum, p, 1);
  Value newSum = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, alpha, op.getSum()), rowSum);
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
