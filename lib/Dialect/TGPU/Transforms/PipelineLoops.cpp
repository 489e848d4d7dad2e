//===- PipelineLoops.cpp - Choose the loops that stream their dot operands ===//
//
// tgpu-pipeline-loops: the schedule half of software pipelining. Around wgmma dots (marked by
// tgpu-accelerate-dot) a loop's dot operands can travel through a ring of shared-memory stages,
// copied ahead of the iteration that reads them, instead of being loaded into registers and stored
// by the dot. Which loops do, and which of their loads, is decided here from the IR alone and written
// into it (`#tgpu.pipeline<...>` on the loop, `tgpu.streamed` on the loads), so that
// `flarec --emit=tgpu` shows the schedule and convert-tgpu-to-nvvm only expands it: the ring's
// stages, barriers, copies (TMA or cp.async) and who issues them (the consumers or a producer
// warpgroup) are the expansion's.
//
// Two forms:
//   dot_loop  the K loop of one dot, `acc = dot(load_a(iv), load_b(iv), acc)` and nothing else: both
//             operands stream through a ring of their own (a matmul's main loop);
//   streamed  any other loop whose body reads blocks that only feed its wgmma dots' operands (K and V
//             of an attention step; Q and dO of the backward's): those loads stream, the rest of the
//             body runs as written. A loop inside a streamed loop does not stream (one ring at a time).
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/Pipelining.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUPIPELINELOOPS
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

namespace {

/// A view made by tile.make_view outside `loop` whose innermost stride is the constant 1 (rows of
/// contiguous elements: what cp.async's 16-byte chunks and TMA boxes copy).
bool contiguousViewOutside(Value view, scf::ForOp loop) {
  auto make = view.getDefiningOp<tile::MakeViewOp>();
  APInt innerStride;
  return make && loop.isDefinedOutsideOfLoop(view) && !make.getStrides().empty() &&
         matchPattern(make.getStrides().back(), m_ConstantInt(&innerStride)) && innerStride == 1;
}

/// Zero padding (or none): what a copy's zero fill outside the view gives.
bool zeroPadded(tile::LoadOp load) {
  auto pad = load.getPaddingAttr();
  return !pad || (isa<FloatAttr>(pad) && cast<FloatAttr>(pad).getValue().isZero());
}

/// A dot operand that one use of a load reaches.
struct OperandUse {
  Value operand;
  bool transposed = false;
  tile::DotOp dot;
};

/// use -> [tile.trans] -> [tgpu.convert_layout] -> the A or B operand of a wgmma dot of `loop`'s body.
std::optional<OperandUse> followToDot(OpOperand &use, scf::ForOp loop) {
  OperandUse found;
  Value value = use.get();
  Operation *user = use.getOwner();
  if (auto trans = dyn_cast<tile::TransOp>(user)) {
    if (!trans->hasOneUse())
      return std::nullopt;
    found.transposed = true;
    value = trans.getResult();
    user = *value.getUsers().begin();
  }
  if (auto conv = dyn_cast<ConvertLayoutOp>(user)) {
    if (!conv->hasOneUse())
      return std::nullopt;
    value = conv.getResult();
    user = *value.getUsers().begin();
  }
  auto dot = dyn_cast<tile::DotOp>(user);
  if (!dot || dot->getBlock() != loop.getBody() || !runsOnWgmma(dot) || dot.getC() == value)
    return std::nullopt;
  found.operand = value;
  found.dot = dot;
  return found;
}

} // namespace

bool flare::tgpu::isRecomputableIn(Value v, scf::ForOp loop) {
  if (v == loop.getInductionVar() || loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  // An indirection table (tile.scalar_load: memory the kernel never writes) reads the same later.
  if (auto load = dyn_cast_or_null<tile::ScalarLoadOp>(def))
    return def->getBlock() == loop.getBody() && isRecomputableIn(load.getBase(), loop) &&
           isRecomputableIn(load.getOffset(), loop);
  if (!def || def->getBlock() != loop.getBody() || !isa<arith::ArithDialect>(def->getDialect()) ||
      def->getNumRegions() != 0 || def->getNumResults() != 1 || isa<ShapedType>(v.getType()))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) { return isRecomputableIn(operand, loop); });
}

std::optional<StreamedLoad> flare::tgpu::matchStreamedLoad(tile::LoadOp load, scf::ForOp loop) {
  if (load->getBlock() != loop.getBody() || load->use_empty() || !llvm::hasNItemsOrLess(load->getUses(), 2))
    return std::nullopt;
  SmallVector<OperandUse, 2> uses;
  for (OpOperand &use : load->getUses())
    if (std::optional<OperandUse> found = followToDot(use, loop))
      uses.push_back(*found);
  if (!llvm::hasNItems(load->getUses(), uses.size()))
    return std::nullopt;
  OperandUse first = uses.front();
  const bool isB = first.dot.getB() == first.operand;
  // A must be K-major (no transpose); B may run along K (after a transpose) or along N.
  if (!isB && first.transposed)
    return std::nullopt;
  auto type = load.getResult().getType();
  // cp.async copies 16-byte rows of 8 contiguous 16-bit elements and zero-fills what lies outside.
  if (!contiguousViewOutside(load.getView(), loop) || type.getElementTypeBitWidth() != 16 || type.getRank() != 2 ||
      type.getDimSize(0) % 8 != 0 || !zeroPadded(load))
    return std::nullopt;
  // The column offset is checked for alignment once, before the loop; the others may vary.
  if (!loop.isDefinedOutsideOfLoop(load.getOffsets().back()) ||
      !llvm::all_of(load.getOffsets(), [&](Value o) { return isRecomputableIn(o, loop); }))
    return std::nullopt;
  StreamedLoad s;
  s.load = load;
  s.operand = first.operand;
  s.innerIsK = !isB || first.transposed;
  s.k = first.dot.getA().getType().getDimSize(1);
  s.bytes = type.getNumElements() * 2;
  // B operands whose rows are whole 128-byte panels take the swizzled layout.
  s.swizzled = isB && type.getDimSize(1) % 64 == 0 && type.getDimSize(0) % 8 == 0;
  // A second use: another B operand, read from the same swizzled panels (the panels of a block are
  // the same bytes for B along K, after a transpose, and along N: only the descriptor differs).
  if (uses.size() == 2) {
    OperandUse twin = uses[1];
    if (!s.swizzled || twin.dot.getB() != twin.operand)
      return std::nullopt;
    s.twin = twin.operand;
    s.twinNMajor = !twin.transposed;
  }
  return s;
}

std::optional<std::array<tile::LoadOp, 2>> flare::tgpu::matchPipelinedDotLoop(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1)
    return std::nullopt;
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  tile::DotOp dot;
  for (Operation &inner : body->without_terminator())
    if (auto d = dyn_cast<tile::DotOp>(inner)) {
      if (dot)
        return std::nullopt;
      dot = d;
    }
  if (!dot || !runsOnWgmma(dot) || dot.getC() != loop.getRegionIterArgs()[0] ||
      yield.getOperand(0) != dot.getResult() || !dot->hasOneUse())
    return std::nullopt;
  std::array<tile::LoadOp, 2> loads;
  SmallPtrSet<Operation *, 8> expected = {dot, yield};
  for (int which = 0; which < 2; ++which) {
    Value operand = dot->getOperand(which);
    if (auto conv = operand.getDefiningOp<ConvertLayoutOp>()) {
      if (!conv->hasOneUse() || conv->getBlock() != body)
        return std::nullopt;
      expected.insert(conv);
      operand = conv.getSrc();
    }
    auto load = operand.getDefiningOp<tile::LoadOp>();
    if (!load || load->getBlock() != body || !load->hasOneUse())
      return std::nullopt;
    auto type = load.getResult().getType();
    LinearLayoutAttr layout = getLayoutAttr(type);
    // cp.async copies 16-byte rows of 8 contiguous 16-bit elements and zero-fills what lies outside.
    if (!layout || !contiguousViewOutside(load.getView(), loop) || type.getElementTypeBitWidth() != 16 ||
        contiguousRegs(layout.getLayout(), 8) != 8 || !zeroPadded(load))
      return std::nullopt;
    if (load.getRowPieces() || !llvm::all_of(load.getOffsets(), [&](Value v) {
          return v == loop.getInductionVar() || loop.isDefinedOutsideOfLoop(v);
        }))
      return std::nullopt;
    // B must run along N to be copied N-major.
    if (which == 1 && contiguousRegsAlong(layout.getLayout(), 1, 8) != 8)
      return std::nullopt;
    expected.insert(load);
    loads[which] = load;
  }
  for (Operation &inner : *body)
    if (!expected.contains(&inner))
      return std::nullopt;
  return loads;
}

namespace {

/// An scf.for around `op` marked `#tgpu.pipeline<streamed>`.
bool insideStreamedLoop(Operation *op) {
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop; loop = loop->getParentOfType<scf::ForOp>())
    if (pipelineOf(loop) == PipelineKind::Streamed)
      return true;
  return false;
}

/// `loop` can own a ring: one at a time (not inside a streamed loop), its stages indexed by an i32
/// induction variable.
bool canHoldRing(scf::ForOp loop) {
  return !insideStreamedLoop(loop) && loop.getInductionVar().getType().isInteger(32);
}

/// The loads of `loop`'s body that can stream, when the loop can own a ring.
SmallVector<tile::LoadOp> streamableLoads(scf::ForOp loop) {
  SmallVector<tile::LoadOp> loads;
  if (!canHoldRing(loop))
    return loads;
  for (auto load : loop.getBody()->getOps<tile::LoadOp>())
    if (matchStreamedLoad(load, loop))
      loads.push_back(load);
  return loads;
}

} // namespace

void flare::tgpu::outsideLeaves(Value v, scf::ForOp loop, SmallVectorImpl<Value> &leaves) {
  if (v == loop.getInductionVar())
    return;
  if (loop.isDefinedOutsideOfLoop(v)) {
    leaves.push_back(v);
    return;
  }
  for (Value operand : v.getDefiningOp()->getOperands())
    outsideLeaves(operand, loop, leaves);
}

bool flare::tgpu::computableFromProgramIds(Value v, func::FuncOp kernel, DenseMap<Value, bool> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  bool ok = false;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    ok = arg.getOwner() == &kernel.getBody().front();
  } else {
    Operation *def = v.getDefiningOp();
    const bool scalarArith = isa<arith::ArithDialect>(def->getDialect()) && def->getNumRegions() == 0 &&
                             isMemoryEffectFree(def) &&
                             llvm::none_of(def->getOperandTypes(), [](Type t) { return isa<ShapedType>(t); }) &&
                             llvm::none_of(def->getResultTypes(), [](Type t) { return isa<ShapedType>(t); });
    ok = def->getBlock() == &kernel.getBody().front() &&
         (scalarArith || isa<tile::ProgramIdOp, tile::NumProgramsOp, tile::SplitRangeOp, tile::AddPtrOp,
                           tile::MakeViewOp, tile::ScalarLoadOp>(def)) &&
         llvm::all_of(def->getOperands(),
                      [&](Value operand) { return computableFromProgramIds(operand, kernel, memo); });
  }
  memo[v] = ok;
  return ok;
}

SmallVector<Value> flare::tgpu::producerInputs(scf::ForOp loop, ArrayRef<tile::LoadOp> loads) {
  SmallVector<Value> inputs = {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  for (tile::LoadOp load : loads) {
    inputs.push_back(load.getView());
    for (Value o : load.getOffsets())
      outsideLeaves(o, loop, inputs);
  }
  return inputs;
}

LogicalResult flare::tgpu::verifyPipelineMarks(Operation *kernel) {
  bool anyError = false;
  kernel->walk([&](scf::ForOp loop) {
    PipelineKind kind = pipelineOf(loop);
    if (kind == PipelineKind::DotLoop && !matchPipelinedDotLoop(loop)) {
      loop.emitOpError("is marked #tgpu.pipeline<dot_loop> but its body is not `acc = dot(load(iv), load(iv), acc)` "
                       "on wgmma with contiguous 16-bit blocks");
      anyError = true;
    }
    if (kind == PipelineKind::Streamed &&
        (!canHoldRing(loop) || llvm::none_of(loop.getBody()->getOps<tile::LoadOp>(), isStreamed))) {
      loop.emitOpError("is marked #tgpu.pipeline<streamed> but no load of its body streams (blocks of 16-bit "
                       "elements from contiguous rows that only feed wgmma dot operands, marked tgpu.streamed; an "
                       "i32 induction variable; not inside another streamed loop)");
      anyError = true;
    }
  });
  kernel->walk([&](tile::LoadOp load) {
    if (!isStreamed(load))
      return;
    auto loop = dyn_cast<scf::ForOp>(load->getParentOp());
    if (!loop || pipelineOf(loop) != PipelineKind::Streamed || !matchStreamedLoad(load, loop)) {
      load.emitOpError("is marked tgpu.streamed but is not a load of a #tgpu.pipeline<streamed> loop whose blocks "
                       "only feed the loop's wgmma dot operands");
      anyError = true;
    }
  });
  return failure(anyError);
}

namespace {

struct TGPUPipelineLoopsPass : public flare::tgpu::impl::TGPUPipelineLoopsBase<TGPUPipelineLoopsPass> {
  using TGPUPipelineLoopsBase::TGPUPipelineLoopsBase;

  /// Marks one loop without a mark (a hand-written streamed mark gets its loads marked); outer loops
  /// first, so that a nested loop sees the decision around it.
  static void schedule(scf::ForOp loop) {
    MLIRContext *ctx = loop.getContext();
    auto mark = loop->getAttrOfType<PipelineKindAttr>(TGPUDialect::kPipelineAttrName);
    if (mark && mark.getValue() != PipelineKind::Streamed)
      return;
    if (!mark && matchPipelinedDotLoop(loop)) {
      loop->setAttr(TGPUDialect::kPipelineAttrName, PipelineKindAttr::get(ctx, PipelineKind::DotLoop));
      return;
    }
    SmallVector<tile::LoadOp> streamed = streamableLoads(loop);
    if (streamed.empty())
      return;
    loop->setAttr(TGPUDialect::kPipelineAttrName, PipelineKindAttr::get(ctx, PipelineKind::Streamed));
    for (tile::LoadOp load : streamed)
      load->setAttr(TGPUDialect::kStreamedAttrName, UnitAttr::get(ctx));
  }

  void runOnOperation() override {
    bool anyError = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tile::isKernel(func))
        continue;
      func.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) { schedule(loop); });
      // Hand-written marks must be ones this pass could have made.
      anyError |= failed(verifyPipelineMarks(func));
    }
    if (anyError)
      signalPassFailure();
  }
};

} // namespace
