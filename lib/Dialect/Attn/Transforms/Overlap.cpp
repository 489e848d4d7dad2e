//===- Overlap.cpp - The P V product one step behind the softmax ----------===//
//
// attn-overlap (see Passes.td): the canonical loop of convert-attn-to-tile software-pipelined by one
// stage. Step j issues block j - 1's P V right behind block j's S = Q K^T, so that the tensor cores
// run it while block j's softmax does; the loop carries P, and the previous block's V rows are the
// step's own, computed from its key offset one iteration earlier (the first iteration: the block
// the loop before left pending, or none). The last block's P V is one more step of the last loop
// (its S product and softmax thrown away) or, with last_pv_after_loops, one product after the loops
// on a V block loaded before them.
//
//===----------------------------------------------------------------------===//
#include "KernelVariants.h"
#include "flare/Dialect/Attn/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace flare::attn {
#define GEN_PASS_DEF_ATTNOVERLAP
#include "Attn/Passes.h.inc"
} // namespace flare::attn

using namespace mlir;
namespace tile = flare::tile;

namespace {

/// One step of the canonical loop: S = Q K^T on the K block whose rows start at key offset `kv0`,
/// the online softmax, and acc' = P V + acc * rows(alpha) on the V block of the same rows; the loop
/// yields (m', l', acc').
struct Step {
  scf::ForOp loop;
  tile::LoadOp kLoad, vLoad;
  tile::DotOp qk, pv;
  tile::OnlineSoftmaxOp softmax;
  arith::TruncFOp p;     ///< P in the operand type
  arith::MulFOp rescale; ///< acc * rows(alpha)
  Value kv0;             ///< the step's first key: block index * block_n, or the induction variable
  /// The body's ops kv0 is computed from, and those the V load's operands are computed from past
  /// kv0, in the body's order: what the pass clones for another block.
  SmallVector<Operation *> keySlice, vSlice;
  unsigned maxAt = 0, sumAt = 0, accAt = 0;
};

/// The ops of `body` that `roots` are computed from, in the block's order, not looking through `stop`.
SmallVector<Operation *> sliceOf(Block *body, ValueRange roots, Value stop = {}) {
  llvm::SetVector<Operation *> seen;
  SmallVector<Value> work(roots.begin(), roots.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (v == stop || !def || def->getBlock() != body || !seen.insert(def))
      continue;
    llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ops = seen.takeVector();
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// The values from outside `slice` that its ops read.
SmallVector<Value> inputsOf(ArrayRef<Operation *> slice) {
  SmallVector<Value> inputs;
  for (Operation *op : slice)
    for (Value v : op->getOperands())
      if (!llvm::is_contained(slice, v.getDefiningOp()))
        inputs.push_back(v);
  return inputs;
}

/// `op` = x * block_n: a block index scaled to its first key.
bool scalesToKeys(Operation *op, int64_t blockN) {
  auto mul = dyn_cast_or_null<arith::MulIOp>(op);
  APInt factor;
  return mul && matchPattern(mul.getRhs(), m_ConstantInt(&factor)) && factor == blockN;
}

/// `loop` as a canonical step, or the reason it is not one (null `why`: no softmax in it, or the
/// loop is overlapped already).
std::optional<Step> matchStep(scf::ForOp loop, const char *&why) {
  why = nullptr;
  Block *body = loop.getBody();
  SmallVector<tile::OnlineSoftmaxOp> softmaxes(body->getOps<tile::OnlineSoftmaxOp>());
  if (softmaxes.empty())
    return std::nullopt;
  auto fail = [&](const char *reason) -> std::optional<Step> {
    why = reason;
    return std::nullopt;
  };
  if (softmaxes.size() != 1)
    return fail("more than one tile.online_softmax in the loop");
  APInt step;
  if (!matchPattern(loop.getStep(), m_ConstantInt(&step)))
    return fail("the loop's step is not a constant");
  Step s;
  s.loop = loop;
  s.softmax = softmaxes.front();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  // Already overlapped (the pass ran before, e.g. on tile IR that flarec --emit=tile printed): the
  // loop carries P into a P V product of its own. Nothing to do.
  for (OpOperand &out : yield->getOpOperands()) {
    auto p = out.get().getDefiningOp<arith::TruncFOp>();
    Value carried = loop.getRegionIterArgs()[out.getOperandNumber()];
    if (p && p.getIn() == s.softmax.getP() &&
        llvm::any_of(carried.getUsers(), [&](Operation *user) {
          auto dot = dyn_cast<tile::DotOp>(user);
          return dot && dot.getA() == carried;
        }))
      return std::nullopt;
  }
  auto iterArgIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != body || arg.getArgNumber() == 0)
      return std::nullopt;
    return arg.getArgNumber() - 1;
  };
  std::optional<unsigned> maxAt = iterArgIndex(s.softmax.getMax()), sumAt = iterArgIndex(s.softmax.getSum());
  if (!maxAt || !sumAt || yield.getOperand(*maxAt) != s.softmax.getNewMax() ||
      yield.getOperand(*sumAt) != s.softmax.getNewSum())
    return fail("the softmax's max and sum are not carried by the loop");
  s.maxAt = *maxAt;
  s.sumAt = *sumAt;
  for (OpOperand &out : yield->getOpOperands()) {
    auto pv = out.get().getDefiningOp<tile::DotOp>();
    if (!pv || pv->getBlock() != body)
      continue;
    auto p = pv.getA().getDefiningOp<arith::TruncFOp>();
    auto vLoad = pv.getB().getDefiningOp<tile::LoadOp>();
    auto rescale = pv.getC().getDefiningOp<arith::MulFOp>();
    if (!p || p.getIn() != s.softmax.getP() || !p->hasOneUse() || !vLoad || vLoad->getBlock() != body ||
        !rescale || !rescale->hasOneUse() || rescale.getLhs() != loop.getRegionIterArgs()[out.getOperandNumber()] ||
        flare::attn::rowFactor(rescale) != s.softmax.getAlpha() || !rescale.getRhs().hasOneUse() ||
        !rescale.getRhs().getDefiningOp()->getOperand(0).hasOneUse())
      continue;
    s.pv = pv;
    s.p = p;
    s.vLoad = vLoad;
    s.rescale = rescale;
    s.accAt = out.getOperandNumber();
  }
  if (!s.pv)
    return fail("no yielded accumulator of the form P V + acc * rows(alpha)");
  OperandRange vRows = s.vLoad.getOffsets().drop_back();
  for (tile::LoadOp load : body->getOps<tile::LoadOp>()) {
    if (load == s.vLoad || !load->hasOneUse() || load.getOffsets().size() != s.vLoad.getOffsets().size() ||
        !llvm::equal(load.getOffsets().drop_back(), vRows))
      continue;
    auto trans = dyn_cast<tile::TransOp>(*load->user_begin());
    auto qk = trans && trans->hasOneUse() ? dyn_cast<tile::DotOp>(*trans->user_begin()) : nullptr;
    if (qk && qk.getB() == trans.getResult() && qk->getBlock() == body && qk->isBeforeInBlock(s.softmax)) {
      s.kLoad = load;
      s.qk = qk;
    }
  }
  if (!s.kLoad)
    return fail("no S = Q K^T product on a K block of the V block's rows");
  const int64_t blockN = cast<RankedTensorType>(s.vLoad.getType()).getDimSize(0);
  for (Operation *op : sliceOf(body, vRows)) {
    if (!scalesToKeys(op, blockN) ||
        llvm::any_of(sliceOf(body, op->getOperands()), [&](Operation *x) { return scalesToKeys(x, blockN); }))
      continue;
    if (s.kv0)
      return fail("more than one key offset (block index * block_n) in the V block's rows");
    s.kv0 = op->getResult(0);
  }
  // Over block indices (step 1), the key offset is the product; over keys (step block_n, as tile
  // programs are often written), the induction variable itself.
  const bool rowsFromKeys = llvm::is_contained(vRows, loop.getInductionVar()) ||
                           llvm::is_contained(inputsOf(sliceOf(body, vRows)), loop.getInductionVar());
  if (!s.kv0 && step == blockN && rowsFromKeys)
    s.kv0 = loop.getInductionVar();
  else if (step != 1 && s.kv0 != loop.getInductionVar())
    return fail("the loop steps neither by 1 (over block indices) nor by block_n (over keys)");
  if (!s.kv0)
    return fail("no key offset (block index * block_n) in the V block's rows");
  s.keySlice = sliceOf(body, s.kv0);
  s.vSlice = sliceOf(body, s.vLoad->getOperands(), s.kv0);
  auto withRegions = [](Operation *op) { return op->getNumRegions() != 0; };
  if (llvm::any_of(s.keySlice, withRegions) || llvm::any_of(s.vSlice, withRegions))
    return fail("the key offset or the V rows are computed with regions");
  if (llvm::is_contained(inputsOf(s.vSlice), loop.getInductionVar()))
    return fail("the V rows read the induction variable other than through the key offset");
  return s;
}

/// Clones what step `s` computes its key offset from, with the induction variable `t`, at `b`.
Value keyOffsetAt(OpBuilder &b, Step &s, Value t) {
  IRMapping map;
  map.map(s.loop.getInductionVar(), t);
  for (Operation *op : s.keySlice)
    b.clone(*op, map);
  return map.lookup(s.kv0);
}

/// Clones step `s`'s V load at key offset `kv0`, at `b`.
Value vBlockAt(OpBuilder &b, Step &s, Value kv0) {
  IRMapping map;
  map.map(s.kv0, kv0);
  for (Operation *op : s.vSlice)
    b.clone(*op, map);
  return b.clone(*s.vLoad, map)->getResult(0);
}

/// Clones step `s`'s P V product as P `p` times V `v` plus `acc`, at `b`.
Value pvAt(OpBuilder &b, Step &s, Value p, Value v, Value acc) {
  IRMapping map;
  map.map(s.p.getResult(), p);
  map.map(s.vLoad.getResult(), v);
  map.map(s.rescale.getResult(), acc);
  return b.clone(*s.pv, map)->getResult(0);
}

/// Overlaps one chain of loops (each continuing the state of the one before). Every op below is made
/// in a statement of its own: the order of the IR must not depend on the order in which a C++
/// compiler evaluates arguments.
LogicalResult overlapChain(MutableArrayRef<Step> chain, bool pvAfterLoops) {
  scf::ForOp head = chain.front().loop;
  DominanceInfo dom(head->getParentOfType<func::FuncOp>());
  // What the loops after the first compute before the first (their last keys) must exist there.
  for (Step &s : chain.drop_front()) {
    SmallVector<Value> inputs = inputsOf(s.keySlice);
    llvm::append_range(inputs, inputsOf(s.vSlice));
    llvm::append_range(inputs, ValueRange{s.loop.getLowerBound(), s.loop.getUpperBound()});
    for (Value v : inputs)
      if (v != s.loop.getInductionVar() && v != s.kv0 && !dom.properlyDominates(v, head))
        return s.loop.emitOpError("attn-overlap: the loop's bounds or key offsets are not known before the "
                                  "first loop of its chain");
  }
  const Location loc = head.getLoc();
  Step &last = chain.back();
  const Value lastUpper = last.loop.getUpperBound();
  OpBuilder b(head);
  Value far = arith::ConstantOp::create(b, loc, b.getIntegerAttr(last.kv0.getType(), flare::attn::kFarAwayKey));
  // The loops carry P, zeros before the first step.
  Value pIn = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(last.p.getType())));
  Value end; // the last loop's one more step
  if (!pvAfterLoops)
    end = arith::AddIOp::create(b, loc, lastUpper, last.loop.getStep());
  // The key offset of the block loop `s` visits last, or `before` where it visits none.
  auto lastVisited = [&](Step &s, Value before) -> Value {
    Value lower = s.loop.getLowerBound(), upper = s.loop.getUpperBound(), step = s.loop.getStep(), t;
    if (matchPattern(step, m_One())) {
      t = arith::SubIOp::create(b, loc, upper, step);
    } else { // lower + (upper - lower - 1) / step * step
      Value one = arith::ConstantOp::create(b, loc, b.getIntegerAttr(step.getType(), 1));
      Value span = arith::SubIOp::create(b, loc, upper, lower);
      Value beforeEnd = arith::SubIOp::create(b, loc, span, one);
      Value steps = arith::DivSIOp::create(b, loc, beforeEnd, step);
      Value offset = arith::MulIOp::create(b, loc, steps, step);
      t = arith::AddIOp::create(b, loc, lower, offset);
    }
    Value kv = keyOffsetAt(b, s, t);
    Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lower, upper);
    return arith::SelectOp::create(b, loc, ran, kv, before);
  };
  // pending[k]: the block whose P V loop k's first iteration issues (far away: none).
  SmallVector<Value> pending = {far};
  for (Step &s : chain.drop_back())
    pending.push_back(lastVisited(s, pending.back()));
  Value vLast; // with pvAfterLoops: the last visited block's V, loaded before the loops
  if (pvAfterLoops) {
    Value lastKv0 = lastVisited(last, pending.back());
    vLast = vBlockAt(b, last, lastKv0);
  }
  IRRewriter rewriter(head.getContext());
  for (Step &s : chain) {
    rewriter.setInsertionPoint(s.loop);
    const bool overKeys = s.kv0 == s.loop.getInductionVar(); // the new loop has its own
    Value pOut = s.p;
    FailureOr<LoopLikeOpInterface> grown = s.loop.replaceWithAdditionalYields(
        rewriter, pIn, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return SmallVector<Value>{pOut}; });
    if (failed(grown))
      return failure();
    s.loop = cast<scf::ForOp>(grown->getOperation());
    if (overKeys)
      s.kv0 = s.loop.getInductionVar();
    pIn = s.loop.getResults().back();
  }
  if (pvAfterLoops) {
    b.setInsertionPointAfter(last.loop);
    Value acc = last.loop.getResult(last.accAt);
    Value after = pvAt(b, last, last.loop.getResults().back(), vLast, acc);
    acc.replaceAllUsesExcept(after, after.getDefiningOp());
  }
  for (auto [k, s] : llvm::enumerate(chain)) {
    Block *body = s.loop.getBody();
    Value iv = s.loop.getInductionVar();
    Block::BlockArgListType iter = s.loop.getRegionIterArgs();
    const bool extraStep = !pvAfterLoops && k + 1 == chain.size();
    b.setInsertionPointToStart(body);
    Value valid; // false on the extra step, which only finishes the last block's P V
    if (extraStep)
      valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, lastUpper);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iv, s.loop.getLowerBound());
    Value previous = arith::SubIOp::create(b, loc, iv, s.loop.getStep());
    Value previousKv0 = keyOffsetAt(b, s, previous);
    Value prevKv0 = arith::SelectOp::create(b, loc, first, pending[k], previousKv0);
    if (valid) { // the extra step's K block lies far away: its loads read nothing
      b.setInsertionPoint(s.kLoad);
      MutableOperandRange offsets = s.kLoad.getOffsetsMutable();
      for (unsigned i = 0; i + 1 < offsets.size(); ++i) {
        Value row = arith::SelectOp::create(b, loc, valid, offsets[i].get(), far);
        offsets[i].set(row);
      }
    }
    // The previous block's P V, right behind this block's S product.
    b.setInsertionPointAfter(s.qk);
    Value vPrev = vBlockAt(b, s, prevKv0);
    s.rescale.getLhsMutable().assign(pvAt(b, s, iter.back(), vPrev, iter[s.accAt]));
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    yield->setOperand(s.accAt, s.rescale.getResult());
    if (valid) { // the extra step keeps m and l and does not rescale
      auto expand = s.rescale.getRhs().getDefiningOp()->getOperand(0).getDefiningOp<tile::ExpandDimsOp>();
      b.setInsertionPoint(expand);
      Value alpha = s.softmax.getAlpha(), newMax = s.softmax.getNewMax(), newSum = s.softmax.getNewSum();
      auto rowType = cast<RankedTensorType>(alpha.getType());
      auto sumType = cast<RankedTensorType>(newSum.getType());
      Value keep = tile::SplatOp::create(b, loc, rowType.clone(b.getI1Type()), valid);
      Value one = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(rowType, b.getF32FloatAttr(1.0)));
      Value keptAlpha = arith::SelectOp::create(b, loc, keep, alpha, one);
      Value keptMax = arith::SelectOp::create(b, loc, keep, newMax, iter[s.maxAt]);
      Value keepSum = tile::SplatOp::create(b, loc, sumType.clone(b.getI1Type()), valid);
      Value keptSum = arith::SelectOp::create(b, loc, keepSum, newSum, iter[s.sumAt]);
      expand.getSrcMutable().assign(keptAlpha);
      yield->setOperand(s.maxAt, keptMax);
      yield->setOperand(s.sumAt, keptSum);
    }
    s.pv->erase();
    if (s.vLoad->use_empty())
      s.vLoad->erase();
    if (extraStep)
      s.loop.getUpperBoundMutable().assign(end);
  }
  return success();
}

/// Overlaps every chain of canonical loops of `func`; `strict`: a loop with a softmax that is not a
/// canonical step is an error (in a kernel configured to overlap).
LogicalResult overlapIn(func::FuncOp func, bool pvAfterLoops, bool strict) {
  std::vector<SmallVector<Step, 2>> chains; // few, and a Step holds its slices
  WalkResult walk = func.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    const char *why = nullptr;
    std::optional<Step> s = matchStep(loop, why);
    if (!s) {
      if (why && strict) {
        loop.emitOpError("attn-overlap: not a canonical attention step: ") << why;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    // A loop that starts from the state the last matched loop ends with continues its chain.
    if (!chains.empty()) {
      Step &before = chains.back().back();
      auto continues = [&](unsigned at, unsigned beforeAt) {
        return s->loop.getInitArgs()[at] == before.loop.getResult(beforeAt);
      };
      if (continues(s->accAt, before.accAt) && continues(s->maxAt, before.maxAt) &&
          continues(s->sumAt, before.sumAt)) {
        chains.back().push_back(*s);
        return WalkResult::advance();
      }
    }
    chains.push_back({*s});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (SmallVector<Step, 2> &chain : chains)
    if (failed(overlapChain(chain, pvAfterLoops)))
      return failure();
  return success();
}

struct AttnOverlapPass : public flare::attn::impl::AttnOverlapBase<AttnOverlapPass> {
  using AttnOverlapBase::AttnOverlapBase;
  void runOnOperation() override {
    using flare::attn::ConfigSwitch;
    getOperation().walk([&](func::FuncOp func) {
      flare::attn::ConfigAttr config = flare::attn::kernelConfig(func);
      const bool configured = config && config.has(ConfigSwitch::Overlap);
      if (!configured && !all)
        return;
      const bool after = configured ? config.has(ConfigSwitch::LastPvAfterLoops) : pvAfterLoops;
      if (failed(overlapIn(func, after, /*strict=*/configured)))
        signalPassFailure();
    });
  }
};

} // namespace
