//===- PartialRowSums.cpp - The softmax normalizer as partial sums per row ===//
//
// attn-partial-row-sums (see Passes.td): the normalizer of each tile.online_softmax, [M], becomes G
// partial sums per row, [M, G], along everything that carries it from its zero start to the uses
// that read the whole sum, where one tile.reduce adds the partials up.
//
//===----------------------------------------------------------------------===//
#include "KernelVariants.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace flare::attn {
#define GEN_PASS_DEF_ATTNPARTIALROWSUMS
#include "Attn/Passes.h.inc"
} // namespace flare::attn

using namespace mlir;
namespace tile = flare::tile;

namespace {

/// Everything one normalizer passes through: the values that become [M, G], the operands fed by a
/// zero constant (given a zero of the new type), and the uses that read the whole sum.
struct Normalizer {
  llvm::SetVector<Value> values;
  SmallVector<OpOperand *> zeroStarts;
  llvm::MapVector<Value, SmallVector<OpOperand *>> reads;
  SmallVector<tile::OnlineSoftmaxOp> steps;
};

/// Whether `select` chooses between two whole values by one condition (a scalar, or a tile.splat of
/// one): it can choose between partial sums as well. A select per row reads the sum.
bool choosesWhole(arith::SelectOp select) {
  Value c = select.getCondition();
  return !isa<RankedTensorType>(c.getType()) || c.getDefiningOp<tile::SplatOp>();
}

/// The operands whose values flow into `v` unchanged: a loop-carried value's start and what each
/// iteration yields, a select's two values, a softmax step's previous sum.
SmallVector<OpOperand *> feeding(Value v) {
  SmallVector<OpOperand *> in;
  auto fromLoop = [&](scf::ForOp loop, unsigned i) {
    in.push_back(&loop.getInitArgsMutable()[i]);
    in.push_back(&cast<scf::YieldOp>(loop.getBody()->getTerminator())->getOpOperand(i));
  };
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()); loop && arg.getArgNumber() > 0)
      fromLoop(loop, arg.getArgNumber() - 1);
    return in;
  }
  Operation *def = v.getDefiningOp();
  if (auto loop = dyn_cast<scf::ForOp>(def))
    fromLoop(loop, cast<OpResult>(v).getResultNumber());
  else if (auto select = dyn_cast<arith::SelectOp>(def); select && choosesWhole(select)) {
    in.push_back(&select.getTrueValueMutable());
    in.push_back(&select.getFalseValueMutable());
  } else if (auto step = dyn_cast<tile::OnlineSoftmaxOp>(def); step && v == step.getNewSum())
    in.push_back(&step.getSumMutable());
  return in;
}

/// The values a use of a normalizer passes it on to unchanged; empty where the use reads it.
SmallVector<Value> passedTo(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto yield = dyn_cast<scf::YieldOp>(user)) {
    if (auto loop = dyn_cast<scf::ForOp>(yield->getParentOp()))
      return {loop.getRegionIterArgs()[use.getOperandNumber()], loop.getResult(use.getOperandNumber())};
  } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
    if (BlockArgument arg = loop.getTiedLoopRegionIterArg(&use))
      return {arg, loop.getTiedLoopResult(&use)};
  } else if (auto select = dyn_cast<arith::SelectOp>(user)) {
    if (use.getOperandNumber() != 0 && choosesWhole(select))
      return {select.getResult()};
  } else if (auto step = dyn_cast<tile::OnlineSoftmaxOp>(user)) {
    if (&use == &step.getSumMutable())
      return {step.getNewSum()};
  }
  return {};
}

/// The normalizer of `step`, or a diagnostic at the op where it cannot be followed.
FailureOr<Normalizer> follow(tile::OnlineSoftmaxOp step) {
  Normalizer n;
  SmallVector<Value> work;
  auto push = [&](Value v) {
    if (n.values.insert(v))
      work.push_back(v);
  };
  push(step.getNewSum());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto s = dyn_cast_or_null<tile::OnlineSoftmaxOp>(v.getDefiningOp()); s && !llvm::is_contained(n.steps, s))
      n.steps.push_back(s);
    SmallVector<OpOperand *> in = feeding(v);
    if (in.empty()) {
      Operation *def = v.getDefiningOp();
      InFlightDiagnostic diag = def ? def->emitError() : emitError(v.getLoc());
      diag << "the normalizer of this online softmax step starts at a value attn-partial-row-sums cannot split "
              "(a zero constant, a loop that carries it, a select by one condition or a softmax step)";
      diag.attachNote(step.getLoc()) << "the step";
      return failure();
    }
    for (OpOperand *operand : in) {
      Value u = operand->get();
      if (auto constant = u.getDefiningOp<arith::ConstantOp>()) {
        if (!matchPattern(u, m_AnyZeroFloat())) {
          constant.emitError() << "the normalizer of an online softmax step starts at a value other than zero; "
                                  "attn-partial-row-sums cannot split it";
          return failure();
        }
        n.zeroStarts.push_back(operand);
        continue;
      }
      push(u);
    }
    for (OpOperand &use : v.getUses()) {
      SmallVector<Value> next = passedTo(use);
      if (next.empty())
        n.reads[v].push_back(&use);
      for (Value w : next)
        push(w);
    }
  }
  return n;
}

/// The op of `block` that holds `op` (itself or an ancestor).
Operation *inBlock(Operation *op, Block *block) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

LogicalResult split(tile::OnlineSoftmaxOp first, int64_t groups) {
  FailureOr<Normalizer> found = follow(first);
  if (failed(found))
    return failure();
  Normalizer &n = *found;
  auto sumType = cast<RankedTensorType>(first.getSum().getType());
  const int64_t rows = sumType.getDimSize(0);
  auto partialType = RankedTensorType::get({rows, groups}, sumType.getElementType());
  for (tile::OnlineSoftmaxOp step : n.steps) {
    const int64_t cols = cast<RankedTensorType>(step.getScores().getType()).getDimSize(1);
    if (cols % (2 * groups) != 0)
      return step.emitError() << "cannot keep " << groups << " partial sums per row: the block's " << cols
                              << " columns are not a multiple of " << 2 * groups;
  }
  // The selects that pass the normalizer on choose by one condition; a splat one becomes [M, G].
  SmallVector<std::pair<arith::SelectOp, tile::SplatOp>> conditions;
  for (Value v : n.values)
    if (auto select = v.getDefiningOp<arith::SelectOp>())
      if (auto splat = select.getCondition().getDefiningOp<tile::SplatOp>())
        conditions.push_back({select, splat});

  for (auto [select, splat] : conditions) {
    OpBuilder b(splat);
    auto type = RankedTensorType::get(partialType.getShape(), splat.getValue().getType());
    select.getConditionMutable().assign(tile::SplatOp::create(b, splat.getLoc(), type, splat.getValue()));
    if (splat->use_empty())
      splat->erase();
  }
  for (OpOperand *operand : n.zeroStarts) {
    Operation *constant = operand->get().getDefiningOp();
    OpBuilder b(constant);
    auto zero = DenseElementsAttr::get(partialType, b.getF32FloatAttr(0.0));
    operand->set(arith::ConstantOp::create(b, constant->getLoc(), zero));
    if (constant->use_empty())
      constant->erase();
  }
  for (Value v : n.values)
    v.setType(partialType);
  // One sum of the partials per value read, right before the first op that reads it.
  for (auto &[v, uses] : n.reads) {
    Block *block = isa<BlockArgument>(v) ? cast<BlockArgument>(v).getOwner() : v.getDefiningOp()->getBlock();
    Operation *firstReader = nullptr;
    for (OpOperand *use : uses)
      if (Operation *at = inBlock(use->getOwner(), block); !firstReader || at->isBeforeInBlock(firstReader))
        firstReader = at;
    OpBuilder b(firstReader);
    Value whole = tile::ReduceOp::create(b, v.getLoc(), sumType, tile::ReduceKind::sum, v, 1);
    for (OpOperand *use : uses)
      use->set(whole);
  }
  return success();
}

struct AttnPartialRowSumsPass : public flare::attn::impl::AttnPartialRowSumsBase<AttnPartialRowSumsPass> {
  using AttnPartialRowSumsBase::AttnPartialRowSumsBase;
  void runOnOperation() override {
    if (groups >= 0 && (groups == 0 || !llvm::isPowerOf2_64(groups))) {
      emitError(getOperation().getLoc()) << "attn-partial-row-sums: groups=" << static_cast<int>(groups)
                                         << " is not a power of two (or -1, each kernel's configuration)";
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](func::FuncOp func) {
      int64_t g = groups;
      if (g < 0)
        if (flare::attn::ConfigAttr config = flare::attn::kernelConfig(func))
          g = config.getPartialRowSums();
      if (g <= 1)
        return WalkResult::advance();
      SmallVector<tile::OnlineSoftmaxOp> steps;
      func.walk([&](tile::OnlineSoftmaxOp step) { steps.push_back(step); });
      for (tile::OnlineSoftmaxOp step : steps)
        // (A step already split, on its own or with an earlier one of its loops, is left as it is.)
        if (cast<RankedTensorType>(step.getSum().getType()).getRank() == 1 && failed(split(step, g)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
