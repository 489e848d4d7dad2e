//===- LazyRescale.cpp - The lazy rescale of the online softmax -----------===//
//
// attn-lazy-rescale (see Passes.td): in kernels whose configuration has lazy_rescale, each
// tile.online_softmax becomes lazy and each multiply of a tile by a row-broadcast of its alpha skips
// the factors of exactly 1 (tile.skip_unit_factor), following alpha through selects and loops.
//
//===----------------------------------------------------------------------===//
#include "KernelVariants.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

namespace flare::attn {
#define GEN_PASS_DEF_ATTNLAZYRESCALE
#include "Attn/Passes.h.inc"
} // namespace flare::attn

using namespace mlir;

namespace {

/// The values that carry a factor `alpha` on: the selects that pass it (or another value) along,
/// and the loop-carried values it is yielded into or starts.
llvm::SetVector<Value> factorsFrom(Value alpha) {
  llvm::SetVector<Value> factors;
  SmallVector<Value> work = {alpha};
  auto push = [&](Value v) {
    if (factors.insert(v))
      work.push_back(v);
  };
  factors.insert(alpha);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto select = dyn_cast<arith::SelectOp>(user)) {
        if (use.getOperandNumber() != 0)
          push(select.getResult());
      } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        if (auto loop = dyn_cast<scf::ForOp>(yield->getParentOp())) {
          push(loop.getRegionIterArgs()[use.getOperandNumber()]);
          push(loop.getResult(use.getOperandNumber()));
        }
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (BlockArgument arg = loop.getTiedLoopRegionIterArg(&use)) {
          push(arg);
          push(loop.getTiedLoopResult(&use));
        }
      }
    }
  }
  return factors;
}

/// Marks the multiplies of a tile by a row-broadcast (expand_dims then broadcast) of one of
/// `factors`.
void markRescales(const llvm::SetVector<Value> &factors) {
  for (Value f : factors)
    for (Operation *expand : f.getUsers()) {
      if (!isa<flare::tile::ExpandDimsOp>(expand))
        continue;
      for (Operation *broadcast : expand->getUsers()) {
        if (!isa<flare::tile::BroadcastOp>(broadcast))
          continue;
        for (Operation *user : broadcast->getUsers())
          if (auto mul = dyn_cast<arith::MulFOp>(user); mul && isa<RankedTensorType>(mul.getType()))
            mul->setAttr(flare::tile::TileDialect::kSkipUnitFactorAttrName, UnitAttr::get(mul.getContext()));
      }
    }
}

struct AttnLazyRescalePass : public flare::attn::impl::AttnLazyRescaleBase<AttnLazyRescalePass> {
  using AttnLazyRescaleBase::AttnLazyRescaleBase;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      flare::attn::ConfigAttr config = flare::attn::kernelConfig(func);
      if (!all && !(config && config.has(flare::attn::ConfigSwitch::LazyRescale)))
        return;
      func.walk([](flare::tile::OnlineSoftmaxOp step) {
        step.setLazy(true);
        markRescales(factorsFrom(step.getAlpha()));
      });
    });
  }
};

} // namespace
