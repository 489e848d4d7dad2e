//===- KvStep.cpp - one KV block of the generated loop ---------------------===//
//
// S = Q K^T, the modifiers, the mask, one online-softmax step and acc = alpha * acc + P V, or its
// overlapped form (P of the previous block carried into this step).
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

namespace flare::attn::generator {

/// One KV block: S = Q K^T, modifiers, mask, online softmax, acc = alpha * acc + P V. Overlapped:
/// S = Q K_j^T, acc += P_{j-1} V_{j-1}, softmax, acc = alpha * acc; P_j is carried to the next step.
FailureOr<SmallVector<Value>> Generator::kvStep(Value block, bool masked, ValueRange state, Value valid,
                                                Value prevKv0) {
  const int64_t bm = config.getBlockM(), bn = config.getBlockN();
  StepScope scope(*this);
  DenseMap<Value, Value> &local = scope.local;
  Value kv0 = mul(block, c32(bn));
  SmallVector<Value> rows = keyBlockRows(kv0);
  SmallVector<Value> kRows;
  for (Value row : rows)
    kRows.push_back(valid ? select(valid, row, c32(kFarAway)) : row);
  Value kt = loadKeyBlock(kView, headDim, kRows);
  Value ktt = tile::TransOp::create(b, loc, tileType({headDim, bn}, elemType), kt);
  Value qk = dotQK(tileType({bm, bn}, f32), qTile, ktt, splatF32(0.0, {bm, bn}));
  Value acc = state[2];
  // (The lazy rescale, which skips a factor of exactly 1 thread by thread, is attn-lazy-rescale's.)
  auto rescale = [&](Value acc, Value alpha) -> Value {
    return arith::MulFOp::create(b, loc, acc, broadcastRows(alpha, headDimV));
  };
  if (config.has(ConfigSwitch::Overlap)) {
    // The previous block's P V, issued right behind Q K^T: it runs while this block's softmax does.
    // (attn-defer-rescale moves this step's rescale below into the next step, before this product.)
    Value vPrev = loadKeyBlock(vView, headDimV, keyBlockRows(prevKv0));
    acc = dotPV(state[3], vPrev, acc);
  }
  const double scale = softmaxScale();
  Value kvCols = indexRange(kv0, bn);
  Value kvIndex; // kvCols as a region index value, made once per step
  auto bindIndices = [&](Region &region, unsigned first) {
    Block &blk = region.front();
    if (!kvIndex)
      kvIndex = asIndex(kvCols);
    local[blk.getArgument(first + 3)] = kvIndex;
  };
  // pre: the score before the conversion to log2 units; masked scores become -inf first, so that the
  // last step is one multiply by a positive constant, which the softmax folds into its FMA.
  Value pre;
  double toLog2;
  Region &scoreMod = op.getScoreMod();
  if (scoreMod.empty()) {
    pre = qk;
    toLog2 = scale * kLog2E;
  } else {
    Value scaled = arith::MulFOp::create(b, loc, qk, splatF32(scale, {bm, bn}));
    local[scoreMod.front().getArgument(0)] = scaled;
    bindIndices(scoreMod, 1);
    if (failed(emitRegion(scoreMod, /*hoistedPart=*/false, local)))
      return failure();
    pre = at(cast<YieldOp>(scoreMod.front().getTerminator()).getValue(), Shape::Full);
    toLog2 = kLog2E;
  }
  if (masked) {
    Value keep;
    if (keptBound) {
      Value keys = broadcastCols(kvCols, bm);
      Value lastKept = broadcastRows(keptBound, bn);
      keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, keys, lastKept);
    } else {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kvCols, splat(seqKV, {bn}));
      keep = broadcastCols(inRange, bm);
      if (Region &maskMod = op.getMaskMod(); !maskMod.empty()) {
        bindIndices(maskMod, 0);
        if (failed(emitRegion(maskMod, /*hoistedPart=*/false, local)))
          return failure();
        Value user = at(cast<YieldOp>(maskMod.front().getTerminator()).getValue(), Shape::Full);
        keep = arith::AndIOp::create(b, loc, keep, user);
      }
    }
    pre = arith::SelectOp::create(b, loc, keep, pre, splatF32(-std::numeric_limits<double>::infinity(), {bm, bn}));
  }
  Value s = arith::MulFOp::create(b, loc, pre, splatF32(toLog2, {bm, bn}));
  auto softmax = tile::OnlineSoftmaxOp::create(b, loc, s, state[0], state[1], /*lazy=*/false);
  if (config.has(ConfigSwitch::Overlap)) {
    Value alpha = softmax.getAlpha(), newMax = softmax.getNewMax(), newSum = softmax.getNewSum();
    if (valid) { // the extra last step keeps m and l and does not rescale
      Value keep = splat(valid, {bm});
      alpha = arith::SelectOp::create(b, loc, keep, alpha, splatF32(1.0, {bm}));
      newMax = arith::SelectOp::create(b, loc, keep, newMax, state[0]);
      newSum = arith::SelectOp::create(
          b, loc, splat(valid, cast<RankedTensorType>(newSum.getType()).getShape()), newSum, state[1]);
    }
    acc = rescale(acc, alpha);
    Value p = arith::TruncFOp::create(b, loc, tileType({bm, bn}, elemType), softmax.getP());
    return SmallVector<Value>{newMax, newSum, acc, p};
  }
  acc = rescale(acc, softmax.getAlpha());
  // V is loaded after the softmax so that its registers are not live across it.
  Value vt = loadKeyBlock(vView, headDimV, rows);
  Value p = arith::TruncFOp::create(b, loc, tileType({bm, bn}, elemType), softmax.getP());
  acc = dotPV(p, vt, acc);
  return SmallVector<Value>{softmax.getNewMax(), softmax.getNewSum(), acc};
}

} // namespace flare::attn::generator
