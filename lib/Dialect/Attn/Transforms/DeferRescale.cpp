//===- DeferRescale.cpp - The accumulator's rescale one step later --------===//
//
// attn-defer-rescale (see Passes.td): in an overlapped loop (step j computes P_{j-1} V_{j-1} into the
// accumulator, then the softmax of block j, then acc *= alpha_j), the rescale by alpha_j moves to
// step j + 1, right before its P V product: the loop carries alpha_j, and where the accumulator
// leaves the loops the last carried alpha is applied.
//
//===----------------------------------------------------------------------===//
#include "KernelVariants.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace flare::attn {
#define GEN_PASS_DEF_ATTNDEFERRESCALE
#include "Attn/Passes.h.inc"
} // namespace flare::attn

using namespace mlir;
namespace tile = flare::tile;

namespace {

/// One overlapped loop's step: acc' = dot(P_prev, V_prev, acc) and the rescale acc' * rows(alpha)
/// that the loop yields as its next accumulator.
struct OverlappedStep {
  scf::ForOp loop;
  unsigned accIndex = 0; ///< the accumulator's iteration argument
  tile::DotOp dot;
  arith::MulFOp rescale;
  Value alpha; ///< the factor, [M]
};

/// `loop` as an overlapped step: its yielded accumulator is the rescale of a dot on the accumulator
/// it carried in, scaled by a factor computed in the body after a softmax step.
std::optional<OverlappedStep> matchStep(scf::ForOp loop) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (OpOperand &out : yield->getOpOperands()) {
    auto mul = out.get().getDefiningOp<arith::MulFOp>();
    if (!mul || mul->getBlock() != loop.getBody() || !mul->hasOneUse())
      continue;
    auto dot = mul.getLhs().getDefiningOp<tile::DotOp>();
    Value alpha = flare::attn::rowFactor(mul);
    if (!dot || !alpha || dot.getC() != loop.getRegionIterArgs()[out.getOperandNumber()])
      continue;
    Operation *def = alpha.getDefiningOp();
    if (!def || def->getBlock() != loop.getBody() || !dot->isBeforeInBlock(def))
      continue;
    return OverlappedStep{loop, out.getOperandNumber(), dot, mul, alpha};
  }
  return std::nullopt;
}

/// acc * rows(factor), built at `b`.
Value scaleRows(OpBuilder &b, Location loc, Value acc, Value factor) {
  auto accType = cast<RankedTensorType>(acc.getType());
  auto rowType = cast<RankedTensorType>(factor.getType());
  auto column = RankedTensorType::get({rowType.getDimSize(0), 1}, rowType.getElementType());
  Value e = tile::ExpandDimsOp::create(b, loc, column, factor, 1);
  Value full = tile::BroadcastOp::create(b, loc, accType, e);
  return arith::MulFOp::create(b, loc, acc, full);
}

void deferIn(func::FuncOp func) {
  SmallVector<OverlappedStep> steps;
  func.walk([&](scf::ForOp loop) {
    bool hasSoftmax = llvm::any_of(loop.getBody()->getOperations(),
                                   [](Operation &op) { return isa<tile::OnlineSoftmaxOp>(op); });
    if (hasSoftmax)
      if (std::optional<OverlappedStep> step = matchStep(loop))
        steps.push_back(*step);
  });
  IRRewriter rewriter(func.getContext());
  // Per transformed loop: its accumulator's and its carried factor's result numbers.
  SmallVector<std::tuple<scf::ForOp, unsigned, unsigned>> done;
  for (OverlappedStep &step : steps) {
    scf::ForOp loop = step.loop;
    // The factor before the first step: the previous loop's last one where this loop continues its
    // accumulator, else 1.
    Value init;
    Value accInit = loop.getInitArgs()[step.accIndex];
    for (auto &[prev, accAt, carryAt] : done)
      if (accInit == prev.getResult(accAt))
        init = prev.getResult(carryAt);
    if (!init) {
      OpBuilder b(loop);
      auto type = cast<RankedTensorType>(step.alpha.getType());
      init = arith::ConstantOp::create(b, loop.getLoc(), DenseElementsAttr::get(type, b.getF32FloatAttr(1.0)));
    }
    Value alpha = step.alpha;
    rewriter.setInsertionPoint(loop);
    FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
        rewriter, init, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return SmallVector<Value>{alpha}; });
    auto newLoop = cast<scf::ForOp>(grown->getOperation());
    const unsigned carryAt = newLoop.getNumResults() - 1;
    Value carried = newLoop.getRegionIterArgs()[carryAt];
    // The carried factor applied right before this step's P V; the step's own one leaves the loop.
    OpBuilder b(step.dot);
    step.dot.getCMutable().assign(scaleRows(b, step.dot.getLoc(), step.dot.getC(), carried));
    Operation *broadcast = step.rescale.getRhs().getDefiningOp();
    step.rescale.getResult().replaceAllUsesWith(step.rescale.getLhs());
    step.rescale->erase();
    if (broadcast->use_empty()) {
      Operation *expand = broadcast->getOperand(0).getDefiningOp();
      broadcast->erase();
      if (expand->use_empty())
        expand->erase();
    }
    done.push_back({newLoop, step.accIndex, carryAt});
  }
  // Where an accumulator leaves the loops (not into the next one), its last factor is applied, once,
  // before the first op that reads it.
  for (auto &[loop, accAt, carryAt] : done) {
    Value acc = loop.getResult(accAt), factor = loop.getResult(carryAt);
    SmallVector<OpOperand *> reads;
    for (OpOperand &use : acc.getUses()) {
      auto next = dyn_cast<scf::ForOp>(use.getOwner());
      bool continued = next && llvm::any_of(done, [&](auto &d) { return std::get<0>(d) == next; });
      if (!continued)
        reads.push_back(&use);
    }
    if (reads.empty())
      continue;
    Operation *first = nullptr;
    for (OpOperand *use : reads) {
      Operation *at = use->getOwner();
      while (at->getBlock() != loop->getBlock())
        at = at->getParentOp();
      if (!first || at->isBeforeInBlock(first))
        first = at;
    }
    OpBuilder b(first);
    Value scaled = scaleRows(b, loop.getLoc(), acc, factor);
    for (OpOperand *use : reads)
      use->set(scaled);
  }
}

struct AttnDeferRescalePass : public flare::attn::impl::AttnDeferRescaleBase<AttnDeferRescalePass> {
  using AttnDeferRescaleBase::AttnDeferRescaleBase;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      flare::attn::ConfigAttr config = flare::attn::kernelConfig(func);
      if (all || (config && config.has(flare::attn::ConfigSwitch::DeferRescale)))
        deferIn(func);
    });
  }
};

} // namespace
