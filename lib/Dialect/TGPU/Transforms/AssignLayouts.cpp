//===- AssignLayouts.cpp - Give every tile a register layout --------------===//
//
// Outline (one forward walk per tile kernel, definitions before uses):
//   1. Loads get LinearLayout::blocked of their shape: `vec` contiguous elements per thread where
//      vec = vector-bytes / element bytes. Ranges, splats and constants are weak (step 3).
//   2. Derived layouts: tile.expand_dims inserts a size-1 dimension; tile.reduce slices the reduced
//      axis away (a scalar result has no layout); tile.broadcast gives its result the blocked layout
//      and asks its operand for result.broadcastSource(dims), the layout under which every thread
//      already holds the values it repeats.
//   3. Elementwise arith/math ops take the layout of their first "strong" tile operand. Weak tiles
//      (splats, constants, broadcasts and what is computed from them alone, e.g. a mask built from
//      ranges) can be created in any layout, so they do not decide: when an op has only weak operands,
//      or for a broadcast, splat or constant, the layout is taken from a strong operand of a user
//      (looking a few users ahead), and only then defaults to blocked.
//   4. tile.dot asks for the mma.sync operand layouts and gives its result the accumulator layout;
//      tile.trans swaps the dimensions of its operand's layout (no data moves).
//   5. Wherever an operand's layout differs from what its user needs, a tgpu.convert_layout is
//      inserted; scf.for iteration arguments keep their init's layout and scf.if results the layout
//      of the then-branch, and yields are converted to match.
//   6. Fixpoint for loop-carried tiles: when an scf.for init is a constant or splat (free to create
//      in any layout) but the loop yields another layout (an accumulator coming out of tile.dot, say),
//      the init is pinned to the yielded layout and steps 1-5 run again, so the loop carries the
//      accumulator in registers without converting it every iteration. The yielded layout is read
//      through nested loops: an outer loop that yields what an inner loop accumulates (the dK and
//      dV sums of the backward, over heads and then query blocks) is pinned to the inner loop's dot
//      layout, and both loops carry it.
//   7. In the same fixpoint, a conversion moves back to its root: a 1-D tile.load or a tile.gather
//      whose every use reaches a conversion to one layout (through tile.expand_dims, elementwise
//      ops with splat partners and scf.if yields) is read in that layout, where it is read less
//      often than it would be converted, or where a gather is read at one address per thread
//      (pinConversionRoots). At most kMaxRounds rounds; what a round leaves dead is dropped
//      before the next.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/AffineTile.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/RegionUtils.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUASSIGNLAYOUTS
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

namespace {

bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

constexpr int kMaxRounds = 6;

/// Sets a value's type; a tensor constant's value attribute follows (arith.constant requires equal types).
void retype(Value v, Type type) {
  v.setType(type);
  if (auto cst = v.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
      cst.setValueAttr(dense.reshape(cast<ShapedType>(type)));
}

/// Ops that create a tile from scalars only: they can be created in any layout at no cost.
bool isRematerializable(Operation *op) {
  return op && (isa<tile::SplatOp>(op) || (isa<arith::ConstantOp>(op) && isa<RankedTensorType>(op->getResultTypes()[0])));
}

class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp func, int vectorBytes, const DenseMap<Operation *, Attribute> &pinned)
      : func(func), numWarps(tile::getNumWarps(func)), vectorBytes(vectorBytes), pinned(pinned) {}

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
  const DenseMap<Operation *, Attribute> &pinned;
  DenseSet<Value> weak; // tiles whose layout is free to choose (see step 3)
  DenseSet<Operation *> created; // ops this pass cloned: already laid out, not to be visited
  DenseMap<std::pair<Value, Type>, Value> materialized;
  static constexpr int kHintDepth = 3;

  /// The layout of a strong, already laid-out tile operand of some (transitive) elementwise user of
  /// `v` with v's shape, if any.
  Attribute hintFromUsers(Value v, int depth = kHintDepth) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || depth == 0)
      return {};
    for (Operation *user : v.getUsers()) {
      if (!isa<arith::ArithDialect, math::MathDialect>(user->getDialect()))
        continue;
      for (Value other : user->getOperands()) {
        auto ot = dyn_cast<RankedTensorType>(other.getType());
        if (other == v || !ot || ot.getShape() != type.getShape() || weak.contains(other))
          continue;
        if (Attribute layout = getLayoutAttr(ot))
          return layout;
      }
      for (Value r : user->getResults())
        if (Attribute layout = hintFromUsers(r, depth - 1))
          return layout;
    }
    return {};
  }

  /// Lays out a weak tile: the users' hint, else blocked.
  LogicalResult setWeak(Operation *op, Value v) {
    weak.insert(v);
    if (Attribute hint = hintFromUsers(v)) {
      auto t = cast<RankedTensorType>(v.getType());
      retype(v, RankedTensorType::get(t.getShape(), t.getElementType(), hint));
      return success();
    }
    return setBlocked(op, v);
  }

  static bool isTile(Type t) { return isa<RankedTensorType>(t); }

  RankedTensorType withLayout(RankedTensorType t, const LinearLayout &layout) {
    return RankedTensorType::get(t.getShape(), t.getElementType(), LinearLayoutAttr::get(t.getContext(), layout));
  }

  FailureOr<LinearLayout> blockedFor(Operation *op, RankedTensorType t) {
    if (!t.getElementType().isIntOrFloat())
      return op->emitOpError() << "tiles of " << t.getElementType() << " are not supported; use i32 or i64",
             failure();
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
    retype(v, withLayout(t, *layout));
    return success();
  }

  /// Makes `operand` of its owner carry `type`, converting when it does not.
  void requireType(OpOperand &operand, Type type) {
    if (operand.get().getType() == type)
      return;
    operand.set(materialize(operand.get(), cast<RankedTensorType>(type), operand.getOwner()));
  }

  /// `v` in the layout of `want`, for `user`. A weak tile is recomputed in that layout (its producers
  /// cloned, each asking for its own operands in the matching layout); a strong one is converted:
  /// right before the user when both are in one block, else right after the definition, so that a
  /// loop-invariant tile is converted once, not on every iteration.
  Value materialize(Value v, RankedTensorType want, Operation *user = nullptr) {
    if (v.getType() == want)
      return v;
    // A conversion of a conversion is one conversion of the original (a rematerialized broadcast
    // takes its operand as the original broadcast's conversion left it).
    if (auto conv = v.getDefiningOp<ConvertLayoutOp>())
      return materialize(conv.getSrc(), want, user);
    auto key = std::make_pair(v, Type(want));
    if (auto it = materialized.find(key); it != materialized.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    OpBuilder b(v.getContext());
    b.setInsertionPointAfterValue(v);
    LinearLayout layout = getLayoutAttr(want).getLayout();
    Value result;
    if (def && weak.contains(v) && (isRematerializable(def) || isa<tile::RangeOp, tile::BroadcastOp, tile::ExpandDimsOp>(def) ||
                                    isa<arith::ArithDialect, math::MathDialect>(def->getDialect())) &&
        def->getNumResults() == 1 && def->getNumRegions() == 0) {
      Operation *clone = b.clone(*def);
      created.insert(clone);
      retype(clone->getResult(0), want);
      if (auto bcast = dyn_cast<tile::BroadcastOp>(clone)) {
        std::vector<int> dims;
        for (int64_t d = 0; d < want.getRank(); ++d)
          if (bcast.getSrc().getType().getDimSize(d) != want.getDimSize(d))
            dims.push_back(static_cast<int>(d));
        bcast->setOperand(0, materialize(bcast.getSrc(), withLayout(bcast.getSrc().getType(), layout.broadcastSource(dims))));
      } else if (auto expand = dyn_cast<tile::ExpandDimsOp>(clone)) {
        expand->setOperand(0, materialize(expand.getSrc(), withLayout(expand.getSrc().getType(), layout.removeUnitDim(expand.getAxis()))));
      } else {
        for (OpOperand &operand : clone->getOpOperands())
          if (auto t = dyn_cast<RankedTensorType>(operand.get().getType()))
            operand.set(materialize(operand.get(), RankedTensorType::get(t.getShape(), t.getElementType(), want.getEncoding())));
      }
      weak.insert(clone->getResult(0));
      result = clone->getResult(0);
    } else {
      if (user && user->getBlock() == b.getInsertionBlock()) {
        b.setInsertionPoint(user);
        result = ConvertLayoutOp::create(b, v.getLoc(), want, v);
        return result; // placed for this user only
      }
      result = ConvertLayoutOp::create(b, v.getLoc(), want, v);
    }
    materialized[key] = result;
    return result;
  }

  LogicalResult visit(Operation *op) {
    if (created.contains(op))
      return success();
    if (auto it = pinned.find(op); it != pinned.end() && !isa<tile::GatherOp>(op)) {
      Value v = op->getResult(0);
      retype(v, RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(),
                                      cast<RankedTensorType>(v.getType()).getElementType(), it->second));
      return success();
    }
    if (isa<tile::LoadOp>(op))
      return setBlocked(op, op->getResult(0));
    if (isa<tile::SplatOp, tile::RangeOp>(op))
      return setWeak(op, op->getResult(0));
    if (auto gather = dyn_cast<tile::GatherOp>(op)) {
      // One load per element, in the layout of the laid-out tile its values meet (the scores a
      // bias is added to or a mask selects from), the offsets computed or converted there; else
      // where its offsets live. A gather is never rematerialized: its values, not its offsets,
      // would otherwise go through shared memory, and every tile computed from them with them.
      auto offsets = gather.getOffsets().getType();
      Attribute layout = pinned.lookup(op);
      if (!layout)
        layout = hintFromUsers(gather.getResult());
      if (!layout)
        layout = getLayoutAttr(offsets);
      requireType(gather->getOpOperand(1), RankedTensorType::get(offsets.getShape(), offsets.getElementType(), layout));
      gather.getResult().setType(RankedTensorType::get(gather.getResult().getType().getShape(),
                                                       gather.getResult().getType().getElementType(), layout));
      return success();
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op))
      return isTile(cst.getType()) ? setWeak(op, cst.getResult()) : success();
    if (auto dot = dyn_cast<tile::DotOp>(op)) {
      int64_t m = dot.getA().getType().getDimSize(0), k = dot.getA().getType().getDimSize(1);
      int64_t n = dot.getB().getType().getDimSize(1);
      for (int64_t d : {m, k, n})
        if (!isPow2(d))
          return op->emitOpError("dot sizes must be powers of two");
      requireType(dot->getOpOperand(0), withLayout(dot.getA().getType(), LinearLayout::mmaOperandA(m, k, n, numWarps)));
      requireType(dot->getOpOperand(1), withLayout(dot.getB().getType(), LinearLayout::mmaOperandB(k, n, m, numWarps)));
      auto acc = withLayout(dot.getC().getType(), LinearLayout::mmaAccumulator(m, n, numWarps));
      requireType(dot->getOpOperand(2), acc);
      dot.getResult().setType(acc);
      return success();
    }
    if (auto reshape = dyn_cast<tile::ReshapeOp>(op)) {
      LinearLayout src = getLayoutAttr(reshape.getSrc().getType()).getLayout();
      auto shape = reshape.getResult().getType().getShape();
      reshape.getResult().setType(
          withLayout(reshape.getResult().getType(), src.reshaped(LinearLayout::Coord(shape.begin(), shape.end()))));
      return success();
    }
    if (auto trans = dyn_cast<tile::TransOp>(op)) {
      LinearLayout src = getLayoutAttr(trans.getSrc().getType()).getLayout();
      trans.getResult().setType(withLayout(trans.getResult().getType(), src.permuted({1, 0})));
      return success();
    }
    if (auto expand = dyn_cast<tile::ExpandDimsOp>(op)) {
      LinearLayout src = getLayoutAttr(expand.getSrc().getType()).getLayout();
      expand.getResult().setType(withLayout(expand.getResult().getType(), src.expandDims(expand.getAxis())));
      if (weak.contains(expand.getSrc()))
        weak.insert(expand.getResult());
      return success();
    }
    if (auto bcast = dyn_cast<tile::BroadcastOp>(op)) {
      if (failed(setWeak(op, bcast.getResult())))
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
        // An iteration argument starting from a weak tile does not decide layouts inside the loop:
        // the loop's body does, and the fixpoint then pins the init to what the body yields.
        if (weak.contains(init))
          weak.insert(arg);
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
    if (auto load = dyn_cast<tile::SplitLoadOp>(op)) {
      // The tiles in the layouts the other piece's tile.split_store hands them over in (each
      // thread takes back the registers it stored).
      tile::SplitStoreOp store;
      func.walk([&](tile::SplitStoreOp s) { store = s; });
      for (auto [i, r] : llvm::enumerate(load.getResults())) {
        Attribute layout = store ? getLayoutAttr(store.getValues()[i].getType()) : Attribute();
        if (!layout)
          return op->emitOpError("needs a tile.split_store whose tiles are laid out before it");
        auto t = cast<RankedTensorType>(r.getType());
        r.setType(RankedTensorType::get(t.getShape(), t.getElementType(), layout));
      }
      return success();
    }
    if (isa<tile::StoreOp, tile::AtomicAddOp, tile::AddPtrOp, tile::MakeViewOp, tile::ProgramIdOp, tile::NumProgramsOp, tile::SplitRangeOp, tile::SplitStoreOp, scf::IfOp, func::ReturnOp,
            func::FuncOp, ConvertLayoutOp>(op))
      return success();
    if (!llvm::any_of(op->getResultTypes(), isTile))
      return success();
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
      return op->emitOpError("is not supported on tiles in a tile kernel");
    // Elementwise: follow the first strong tile operand; with none, the result is weak too.
    Attribute layout, firstLayout;
    for (Value v : op->getOperands())
      if (isTile(v.getType())) {
        if (!firstLayout)
          firstLayout = getLayoutAttr(v.getType());
        if (!weak.contains(v)) {
          layout = getLayoutAttr(v.getType());
          break;
        }
      }
    if (!firstLayout)
      return op->emitOpError("produces a tile from no tile operand");
    if (!layout) {
      for (Value r : op->getResults())
        weak.insert(r);
      layout = hintFromUsers(op->getResult(0));
      if (!layout)
        layout = firstLayout;
    }
    for (OpOperand &operand : op->getOpOperands())
      if (auto t = dyn_cast<RankedTensorType>(operand.get().getType()))
        requireType(operand, RankedTensorType::get(t.getShape(), t.getElementType(), layout));
    for (Value r : op->getResults())
      if (auto t = dyn_cast<RankedTensorType>(r.getType()))
        r.setType(RankedTensorType::get(t.getShape(), t.getElementType(), layout));
    return success();
  }
};

/// Undoes an assignment round: drops every convert_layout and every layout encoding.
void stripLayouts(func::FuncOp func) {
  func.walk([](ConvertLayoutOp conv) {
    conv.getResult().replaceAllUsesWith(conv.getSrc());
    conv.erase();
  });
  auto strip = [](Value v) {
    if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && t.getEncoding())
      retype(v, RankedTensorType::get(t.getShape(), t.getElementType()));
  };
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      strip(r);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          strip(arg);
  });
}

/// Gives every rematerializable tile op a single use, so that each use can pin its own layout.
void splitRematerializableUses(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isRematerializable(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    for (size_t i = 1; i < uses.size(); ++i) {
      OpBuilder b(op);
      uses[i]->set(b.clone(*op)->getResult(0));
    }
  }
}

/// Where a yielded tile is computed: through layout conversions and through the results of nested
/// loops that carry it (an accumulator that an inner loop updates on each step of an outer one).
Value yieldedSource(Value v) {
  for (;;) {
    if (auto conv = v.getDefiningOp<ConvertLayoutOp>()) {
      v = conv.getSrc();
    } else if (auto inner = v.getDefiningOp<scf::ForOp>()) {
      v = inner.getBody()->getTerminator()->getOperand(cast<OpResult>(v).getResultNumber());
    } else {
      return v;
    }
  }
}

/// The operand through which a conversion's source chain continues upwards: the source of a
/// tile.expand_dims, or the one strong tile operand of an elementwise op whose other tile operands
/// are splats or constants (created in any layout). Null where the chain stops.
Value chainOperand(Operation *op) {
  if (auto expand = dyn_cast<tile::ExpandDimsOp>(op))
    return expand.getSrc();
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) || op->getNumResults() != 1 ||
      op->getNumRegions() != 0)
    return {};
  Value strong;
  for (Value v : op->getOperands()) {
    if (!isa<RankedTensorType>(v.getType()) || isRematerializable(v.getDefiningOp()))
      continue;
    if (strong)
      return {};
    strong = v;
  }
  return strong;
}

/// The layout `v` would need for none of its uses to convert it: every use a conversion (to one
/// layout), a chain op (chainOperand) or the yield of an scf.if whose result needs such a layout in
/// turn. None where a use takes `v` as it is, or the uses disagree, or (unless `inLoop`) a conversion
/// sits in the loop body that defines `root` (see pinConversionRoots).
std::optional<LinearLayout> layoutWithoutConversions(Value v, Operation *root, bool inLoop) {
  std::optional<LinearLayout> want;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    std::optional<LinearLayout> here;
    if (auto conv = dyn_cast<ConvertLayoutOp>(user)) {
      auto loop = conv->getParentOfType<scf::ForOp>();
      if (!inLoop && loop && loop == root->getParentOfType<scf::ForOp>())
        return std::nullopt;
      here = getLayoutAttr(conv.getResult().getType()).getLayout();
    } else if (chainOperand(user) == v) {
      here = layoutWithoutConversions(user->getResult(0), root, inLoop);
      if (here)
        if (auto expand = dyn_cast<tile::ExpandDimsOp>(user))
          here = here->removeUnitDim(static_cast<int>(expand.getAxis()));
    } else if (isa<scf::YieldOp>(user) && isa<scf::IfOp>(user->getParentOp())) {
      here = layoutWithoutConversions(user->getParentOp()->getResult(use.getOperandNumber()), root, inLoop);
    }
    if (!here || (want && !(*want == *here)))
      return std::nullopt;
    want = here;
  }
  return want;
}

/// Pins the roots of conversion chains to the layout that makes the conversions unnecessary; true
/// when something changed. A root is a tile.gather (document ids) or a tile.load of one dimension
/// (a row statistic such as the backward's LSE or D), read once per element, and it is moved only
/// where it is read less often than it would be converted: outside the loop whose every step
/// converts it (a loop-invariant row statistic, the rows' document ids), or where neither is in a
/// loop. Read in the replicated layout of its use (each thread the columns it holds), a tile costs
/// more loads, each with its own latency: read so on every step, the backward's LSE and D made its
/// dK/dV kernel 1.8-2.1x slower than their conversion through shared memory did (NOTES b9).
/// A gather read at one address per thread (tile::oneAddressForm: a versioned document mask's key ids)
/// moves inside a loop too, where the layout it moves to keeps that form: its loads at immediate
/// offsets cost less than a conversion, whose barriers join the warpgroups on every step.
/// Between the root and its conversions: elementwise ops with splat or constant partners,
/// tile.expand_dims and the yields of an scf.if (layoutWithoutConversions). A root pinned in an
/// earlier round is pinned again when the layouts around it have changed since.
bool pinConversionRoots(func::FuncOp func, DenseMap<Operation *, Attribute> &pinned) {
  bool changed = false;
  func.walk([&](Operation *op) {
    auto gather = dyn_cast<tile::GatherOp>(op);
    if (!gather && !(isa<tile::LoadOp>(op) && cast<RankedTensorType>(op->getResult(0).getType()).getRank() == 1))
      return;
    std::optional<LinearLayout> want;
    if (gather && tile::oneAddressForm(gather)) {
      want = layoutWithoutConversions(op->getResult(0), op, /*inLoop=*/true);
      if (want && !want->registersAddToThread())
        want.reset();
    }
    if (!want)
      want = layoutWithoutConversions(op->getResult(0), op, /*inLoop=*/false);
    if (!want)
      return;
    Attribute attr = LinearLayoutAttr::get(func.getContext(), *want);
    if (attr == getLayoutAttr(op->getResult(0).getType()) || pinned.lookup(op) == attr)
      return;
    pinned[op] = attr;
    changed = true;
  });
  return changed;
}

/// Pins loop inits to the layouts their loops yield; true when something changed.
bool pinLoopInits(func::FuncOp func, DenseMap<Operation *, Attribute> &pinned) {
  bool changed = false;
  func.walk([&](scf::ForOp loop) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [init, yielded] : llvm::zip(loop.getInitArgs(), yield.getOperands())) {
      Operation *def = init.getDefiningOp();
      if (!isRematerializable(def))
        continue;
      Attribute want = getLayoutAttr(yieldedSource(yielded).getType());
      if (want && want != getLayoutAttr(init.getType()) && pinned.lookup(def) != want) {
        pinned[def] = want;
        changed = true;
      }
    }
  });
  return changed;
}

/// Drops what a round left unused (the original of a rematerialized tile, say): a dead layout
/// conversion would still cost shared-memory traffic and barriers once lowered, and a dead use
/// would keep pinConversionRoots from moving a root. Each pass removes the last op of every dead
/// chain, until none is left.
void eraseDeadOps(func::FuncOp func, DenseMap<Operation *, Attribute> &pinned) {
  for (;;) {
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op != func.getOperation() && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    if (dead.empty())
      return;
    for (Operation *op : dead) {
      pinned.erase(op);
      op->erase();
    }
  }
}

struct AssignLayoutsPass : public flare::tgpu::impl::TGPUAssignLayoutsBase<AssignLayoutsPass> {
  using TGPUAssignLayoutsBase::TGPUAssignLayoutsBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tile::isKernel(func))
        continue;
      splitRematerializableUses(func);
      DenseMap<Operation *, Attribute> pinned;
      for (int round = 0; round < kMaxRounds; ++round) {
        if (round > 0)
          stripLayouts(func);
        if (failed(LayoutAssigner(func, vectorBytes, pinned).run()))
          return signalPassFailure();
        // Dropped here, the last round's dead ops too: the pins below change no IR.
        eraseDeadOps(func, pinned);
        bool loops = pinLoopInits(func, pinned);
        bool roots = pinConversionRoots(func, pinned);
        if (!loops && !roots)
          break;
      }
    }
  }
};

} // namespace
