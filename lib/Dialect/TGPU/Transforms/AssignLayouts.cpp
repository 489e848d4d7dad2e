//===- AssignLayouts.cpp - Give every tile a register layout --------------===//
//
// Outline (one forward walk per tile kernel, definitions before uses):
//   1. Anchors, the ops that create tiles from nothing or from memory (tile.load, tile.range,
//      tile.splat, tensor arith.constant), get LinearLayout::blocked of their shape: `vec` contiguous
//      elements per thread where vec = vector-bytes / element bytes.
//   2. Derived layouts: tile.expand_dims inserts a size-1 dimension; tile.reduce slices the reduced
//      axis away (a scalar result has no layout); tile.broadcast gives its result the blocked layout
//      and asks its operand for result.broadcastSource(dims), the layout under which every thread
//      already holds the values it repeats.
//   3. Elementwise arith/math ops take the layout of their first tile operand.
//   4. Wherever an operand's layout differs from what its user needs, a tgpu.convert_layout is
//      inserted; scf.for iteration arguments keep their init's layout and scf.if results the layout
//      of the then-branch, and yields are converted to match.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUASSIGNLAYOUTS
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

namespace {

bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp func, int vectorBytes)
      : func(func), numWarps(tile::getNumWarps(func)), vectorBytes(vectorBytes) {}

  LogicalResult run() {
    WalkResult result = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      return succeeded(visit(op)) ? WalkResult::advance() : WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

private:
  func::FuncOp func;
  int numWarps;
  int vectorBytes;

  static bool isTile(Type t) { return isa<RankedTensorType>(t); }

  RankedTensorType withLayout(RankedTensorType t, const LinearLayout &layout) {
    return RankedTensorType::get(t.getShape(), t.getElementType(), LinearLayoutAttr::get(t.getContext(), layout));
  }

  FailureOr<LinearLayout> blockedFor(Operation *op, RankedTensorType t) {
    for (int64_t d : t.getShape())
      if (!isPow2(d))
        return op->emitOpError() << "tile shape " << t << " must have power-of-two sizes", failure();
    unsigned bits = t.getElementType().getIntOrFloatBitWidth();
    int elemBytes = std::max<unsigned>(1, bits / 8);
    int vec = std::max(1, vectorBytes / elemBytes);
    while (vec & (vec - 1))
      vec &= vec - 1;
    return LinearLayout::blocked(LinearLayout::Coord(t.getShape().begin(), t.getShape().end()), numWarps, vec);
  }

  LogicalResult setBlocked(Operation *op, Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    FailureOr<LinearLayout> layout = blockedFor(op, t);
    if (failed(layout))
      return failure();
    v.setType(withLayout(t, *layout));
    return success();
  }

  /// Makes `operand` of its owner carry `type`, converting when it does not.
  void requireType(OpOperand &operand, Type type) {
    if (operand.get().getType() == type)
      return;
    OpBuilder b(operand.getOwner());
    Value converted = ConvertLayoutOp::create(b, operand.getOwner()->getLoc(), type, operand.get());
    operand.set(converted);
  }

  LogicalResult visit(Operation *op) {
    if (isa<tile::LoadOp, tile::RangeOp, tile::SplatOp>(op))
      return setBlocked(op, op->getResult(0));
    if (auto cst = dyn_cast<arith::ConstantOp>(op))
      return isTile(cst.getType()) ? setBlocked(op, cst.getResult()) : success();
    if (auto expand = dyn_cast<tile::ExpandDimsOp>(op)) {
      LinearLayout src = getLayoutAttr(expand.getSrc().getType()).getLayout();
      expand.getResult().setType(withLayout(expand.getResult().getType(), src.expandDims(expand.getAxis())));
      return success();
    }
    if (auto bcast = dyn_cast<tile::BroadcastOp>(op)) {
      if (failed(setBlocked(op, bcast.getResult())))
        return failure();
      LinearLayout res = getLayoutAttr(bcast.getResult().getType()).getLayout();
      std::vector<int> dims;
      auto srcType = bcast.getSrc().getType();
      for (int64_t d = 0; d < srcType.getRank(); ++d)
        if (srcType.getDimSize(d) != bcast.getResult().getType().getDimSize(d))
          dims.push_back(static_cast<int>(d));
      requireType(bcast->getOpOperand(0), withLayout(srcType, res.broadcastSource(dims)));
      return success();
    }
    if (auto reduce = dyn_cast<tile::ReduceOp>(op)) {
      auto srcType = reduce.getSrc().getType();
      LinearLayout src = getLayoutAttr(srcType).getLayout();
      std::optional<LinearLayout> sliced = src.sliceReduced(reduce.getAxis());
      if (!sliced) {
        FailureOr<LinearLayout> blocked = blockedFor(op, srcType);
        if (failed(blocked))
          return failure();
        requireType(reduce->getOpOperand(0), withLayout(srcType, *blocked));
        sliced = blocked->sliceReduced(reduce.getAxis());
      }
      if (auto res = dyn_cast<RankedTensorType>(reduce.getResult().getType()))
        reduce.getResult().setType(withLayout(res, *sliced));
      return success();
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      for (auto [init, arg, res] : llvm::zip(forOp.getInitArgs(), forOp.getRegionIterArgs(), forOp.getResults())) {
        arg.setType(init.getType());
        res.setType(init.getType());
      }
      return success();
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      Operation *parent = yield->getParentOp();
      if (auto forOp = dyn_cast<scf::ForOp>(parent)) {
        for (OpOperand &operand : yield->getOpOperands())
          requireType(operand, forOp.getRegionIterArgs()[operand.getOperandNumber()].getType());
        return success();
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(parent)) {
        bool isThen = yield->getParentRegion() == &ifOp.getThenRegion();
        for (OpOperand &operand : yield->getOpOperands()) {
          Value res = ifOp.getResult(operand.getOperandNumber());
          if (isThen)
            res.setType(operand.get().getType());
          else
            requireType(operand, res.getType());
        }
        return success();
      }
      return op->emitOpError("unexpected parent in a tile kernel");
    }
    if (isa<tile::StoreOp, tile::MakeViewOp, tile::ProgramIdOp, tile::NumProgramsOp, scf::IfOp, func::ReturnOp,
            func::FuncOp, ConvertLayoutOp>(op))
      return success();
    if (!llvm::any_of(op->getResultTypes(), isTile))
      return success();
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
      return op->emitOpError("is not supported on tiles in a tile kernel");
    // Elementwise: follow the first tile operand.
    Type anchor;
    for (Value v : op->getOperands())
      if (isTile(v.getType())) {
        anchor = v.getType();
        break;
      }
    if (!anchor)
      return op->emitOpError("produces a tile from no tile operand");
    auto layout = getLayoutAttr(anchor);
    for (OpOperand &operand : op->getOpOperands())
      if (auto t = dyn_cast<RankedTensorType>(operand.get().getType()))
        requireType(operand, RankedTensorType::get(t.getShape(), t.getElementType(), layout));
    for (Value r : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(r.getType()))
        r.setType(RankedTensorType::get(t.getShape(), t.getElementType(), layout));
    return success();
  }
};

struct AssignLayoutsPass : public flare::tgpu::impl::TGPUAssignLayoutsBase<AssignLayoutsPass> {
  using TGPUAssignLayoutsBase::TGPUAssignLayoutsBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tile::isKernel(func))
        continue;
      if (failed(LayoutAssigner(func, vectorBytes).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
