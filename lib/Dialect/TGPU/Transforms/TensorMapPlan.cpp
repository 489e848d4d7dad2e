//===- TensorMapPlan.cpp - Which blocks a host-encoded tensor map can copy ===//
//
// The analysis half of TMA (flare/Dialect/TGPU/TensorMapPlan.h): from the IR alone, whether the blocks
// a kernel reads or writes through a view can be copied by a tensor map the host encodes at launch,
// and that map's description (pointer argument, sizes and strides as constants or kernel arguments,
// outer dimensions for the view's per-instance offset terms). convert-tgpu-to-nvvm builds the copies
// (TensorMaps.cpp); nothing here emits IR.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/TensorMapPlan.h"
#include "flare/Dialect/TGPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

std::optional<std::array<int64_t, 2>> flare::tgpu::hostScalar(Value v, func::FuncOp func) {
  bool trunc32 = false;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &func.getBody().front() || !arg.getType().isIntOrIndex())
        return std::nullopt;
      return std::array<int64_t, 2>{trunc32 ? 2 : 1, arg.getArgNumber()};
    }
    IntegerAttr c;
    if (matchPattern(v, m_Constant(&c)))
      return std::array<int64_t, 2>{0, trunc32 ? static_cast<int32_t>(c.getInt()) : c.getInt()};
    if (auto ext = v.getDefiningOp<arith::ExtSIOp>()) {
      v = ext.getIn();
      continue;
    }
    if (auto trunc = v.getDefiningOp<arith::TruncIOp>(); trunc && trunc.getType().isInteger(32)) {
      trunc32 = true;
      v = trunc.getIn();
      continue;
    }
    return std::nullopt;
  }
}

bool flare::tgpu::knownMultipleOf(Value v, int64_t m) {
  IntegerAttr c;
  if (matchPattern(v, m_Constant(&c)))
    return c.getInt() % m == 0;
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return knownMultipleOf(mul.getLhs(), m) || knownMultipleOf(mul.getRhs(), m);
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return knownMultipleOf(add.getLhs(), m) && knownMultipleOf(add.getRhs(), m);
  return false;
}

namespace {

/// The (value, stride) terms of a view base's offset: a sum of products with one host-known factor.
bool offsetTerms(Value offset, func::FuncOp func, SmallVectorImpl<std::pair<Value, std::array<int64_t, 2>>> &terms) {
  if (auto add = offset.getDefiningOp<arith::AddIOp>())
    return offsetTerms(add.getLhs(), func, terms) && offsetTerms(add.getRhs(), func, terms);
  if (auto mul = offset.getDefiningOp<arith::MulIOp>()) {
    for (auto [x, s] : {std::pair{mul.getLhs(), mul.getRhs()}, std::pair{mul.getRhs(), mul.getLhs()}})
      if (auto stride = hostScalar(s, func)) {
        terms.push_back({x, *stride});
        return true;
      }
  }
  return false;
}

/// The view's base pointer argument and its offset terms, or nothing.
std::optional<BlockArgument> viewBase(tile::MakeViewOp view, func::FuncOp func,
                                      SmallVectorImpl<std::pair<Value, std::array<int64_t, 2>>> &terms) {
  Value base = view.getBase();
  while (auto add = base.getDefiningOp<tile::AddPtrOp>()) {
    if (!offsetTerms(add.getOffset(), func, terms))
      return std::nullopt;
    base = add.getBase();
  }
  auto arg = dyn_cast<BlockArgument>(base);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return std::nullopt;
  return arg;
}

} // namespace

std::optional<TensorMapPlan> flare::tgpu::planTensorMap(Value viewValue, RankedTensorType type, func::FuncOp func,
                                                       bool sums) {
  auto view = viewValue.getDefiningOp<tile::MakeViewOp>();
  // Copies move 16-bit blocks, reduces add f32 sums; either in panels of 128-byte rows.
  const unsigned bits = sums ? 32 : 16;
  if (!view || view.getSizes().size() != 2 || type.getRank() != 2 ||
      type.getElementTypeBitWidth() != bits || (sums && !type.getElementType().isF32()) ||
      type.getDimSize(1) % tmaPanelCols(type) != 0 || type.getDimSize(0) > kTmaMaxBoxDim || type.getDimSize(0) % 8 != 0)
    return std::nullopt;
  SmallVector<std::pair<Value, std::array<int64_t, 2>>> terms;
  std::optional<BlockArgument> pointer = viewBase(view, func, terms);
  if (!pointer || 2 + terms.size() > static_cast<size_t>(kTmaMaxRank))
    return std::nullopt;
  auto cols = hostScalar(view.getSizes()[1], func), rows = hostScalar(view.getSizes()[0], func);
  auto rowStride = hostScalar(view.getStrides()[0], func), innerStride = hostScalar(view.getStrides()[1], func);
  if (!cols || !rows || !rowStride || !innerStride || *innerStride != std::array<int64_t, 2>{0, 1})
    return std::nullopt;
  TensorMapPlan plan;
  plan.view = viewValue;
  plan.block = type;
  plan.pointerArg = pointer->getArgNumber();
  plan.sizes = {*cols, *rows};
  plan.strides = {*innerStride, *rowStride};
  for (auto &[value, stride] : terms) {
    plan.sizes.push_back({0, kTmaUnboundedDim});
    plan.strides.push_back(stride);
    plan.outerValues.push_back(value);
  }
  return plan;
}

std::optional<TensorMapPlan> flare::tgpu::planTensorMap(tile::LoadOp load, func::FuncOp func) {
  std::optional<TensorMapPlan> plan = planTensorMap(load.getView(), load.getResult().getType(), func);
  // A piece's box starts a swizzle atom (8 rows of 128 bytes) where the whole block's would.
  const int64_t pieces = load.getNumRowPieces();
  if (!plan || (pieces > 1 && load.getResult().getType().getDimSize(0) / pieces % 8 != 0))
    return std::nullopt;
  plan->pieces = pieces;
  return plan;
}

//===- tgpu-test-tensor-map-plans -----------------------------------------===//

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUTESTTENSORMAPPLANS
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

namespace {

Attribute pairsAttr(Builder &b, ArrayRef<std::array<int64_t, 2>> pairs) {
  SmallVector<Attribute> out;
  for (const auto &p : pairs)
    out.push_back(b.getDenseI64ArrayAttr({p[0], p[1]}));
  return b.getArrayAttr(out);
}

struct TGPUTestTensorMapPlansPass
    : public flare::tgpu::impl::TGPUTestTensorMapPlansBase<TGPUTestTensorMapPlansPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tile::isKernel(func))
        continue;
      func.walk([&](Operation *op) {
        std::optional<TensorMapPlan> plan;
        if (auto load = dyn_cast<tile::LoadOp>(op))
          plan = planTensorMap(load, func);
        else if (auto store = dyn_cast<tile::StoreOp>(op))
          plan = planTensorMap(store.getView(), cast<RankedTensorType>(store.getValue().getType()), func);
        else if (auto add = dyn_cast<tile::AtomicAddOp>(op))
          plan = planTensorMap(add.getView(), cast<RankedTensorType>(add.getValue().getType()), func, /*sums=*/true);
        if (!plan)
          return;
        op->setAttr("tgpu.test.tensor_map",
                    b.getDictionaryAttr({b.getNamedAttr("pointer", b.getI64IntegerAttr(plan->pointerArg)),
                                         b.getNamedAttr("sizes", pairsAttr(b, plan->sizes)),
                                         b.getNamedAttr("strides", pairsAttr(b, plan->strides)),
                                         b.getNamedAttr("outer", b.getI64IntegerAttr(plan->outerValues.size())),
                                         b.getNamedAttr("pieces", b.getI64IntegerAttr(plan->pieces))}));
      });
    }
  }
};

} // namespace
