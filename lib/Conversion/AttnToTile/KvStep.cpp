//===- KvStep.cpp - one KV block of the generated loop ---------------------===//
//
// S = Q K^T, the modifiers, the mask, one online-softmax step and acc = alpha * acc + P V (the
// canonical step; attn-overlap pipelines the P V one step behind).
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

namespace flare::attn::generator {

/// One KV block: S = Q K^T, modifiers, mask, online softmax, acc = alpha * acc + P V.
FailureOr<SmallVector<Value>> Generator::kvStep(Value block, bool masked, ValueRange state) {
  const int64_t bm = config.getBlockM(), bn = config.getBlockN();
  StepScope scope(*this);
  DenseMap<Value, Value> &local = scope.local;
  Value kv0 = mul(block, c32(bn));
  SmallVector<Value> rows = keyBlockRows(kv0);
  Value kt = loadKeyBlock(kView, headDim, rows);
  Value ktt = tile::TransOp::create(b, loc, tileType({headDim, bn}, elemType), kt);
  Value qk = dotQK(tileType({bm, bn}, f32), qTile, ktt, splatF32(0.0, {bm, bn}));
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
  // The accumulator rescaled in this step (attn-lazy-rescale skips the factors of exactly 1 thread
  // by thread; attn-defer-rescale moves the rescale into the next step of an overlapped loop).
  Value acc = arith::MulFOp::create(b, loc, state[2], broadcastRows(softmax.getAlpha(), headDimV));
  // V is loaded after the softmax so that its registers are not live across it.
  Value vt = loadKeyBlock(vView, headDimV, rows);
  Value p = arith::TruncFOp::create(b, loc, tileType({bm, bn}, elemType), softmax.getP());
  acc = dotPV(p, vt, acc);
  return SmallVector<Value>{softmax.getNewMax(), softmax.getNewSum(), acc};
}

} // namespace flare::attn::generator
