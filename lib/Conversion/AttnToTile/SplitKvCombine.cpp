//===- SplitKvCombine.cpp - the kernel that merges split-KV parts -----------===//
//
// With `split_kv` the forward kernel's program instances along grid z are (batch, part): each runs
// one part of the key blocks its query rows keep and writes that part's normalised output O_s and
// its LSE_s (f32, dense [B, Hq, splits, Sq, D] and [B, Hq, splits, Sq]). `<name>_combine` (grid
// (Sq, Hq, B), the forward's ABI: one query row per program instance) merges them:
//
//   LSE = log sum_s exp(LSE_s)            O = sum_s exp(LSE_s - LSE) O_s
//
// as one pass over the parts, kCombineParts a step (one step for up to that many parts), with a
// running maximum M (log2 units): w_s = 2^(LSE_s - M), the sums rescaled by 2^(M_old - M) when M
// grows. A step's parts are one [kCombineParts, D] load and one [kCombineParts] load, all in flight
// together, then a reduction over the parts; the row's weights broadcast along D once a step (an
// earlier form merged one part at a time, each a dependent load and two layout conversions: at
// batch-1 decoding it took 8 us against cuDNN's 3). A part that kept no key has LSE_s = -inf and weight 0; a
// row no part kept gives O = 0 and LSE = -inf, as the unsplit kernel does. It starts with
// tile.wait_prior_grids and the split kernel with tile.allow_dependent_launch: on Hopper, launched as a
// dependent launch (FLARE_DEPENDENT_LAUNCH=1), the combine's CTAs start while the last parts end.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace flare::attn::generator {

void Generator::buildCombineKernel(FunctionType abi) {
  MLIRContext *ctx = op.getContext();
  const int64_t parts = kCombineParts;
  b.setInsertionPoint(func);
  auto combine = func::FuncOp::create(b, func.getLoc(), func.getName().str() + "_combine", abi);
  combine->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
  combine->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(4));
  // One query row per program instance (the launch's grid x is ceil(Sq / block_m)).
  combine->setAttr("flare.attention.block_m", b.getI32IntegerAttr(1));
  Block *entry = combine.addEntryBlock();
  b.setInsertionPointToStart(entry);
  // It reads the parts' outputs after the wait (a no-op unless launched as a dependent launch).
  tile::WaitPriorGridsOp::create(b, loc);

  // The forward's arguments: q, k, v, o, [lse], aux pointers, heads_q, heads_kv, seq_q, seq_kv, aux
  // lengths, 12 strides, the caches' arguments, then the parts' outputs, their LSEs and the number of splits.
  const bool withLse = static_cast<bool>(op.getLse());
  const unsigned numAux = op.getAux().size();
  Value oPtr = entry->getArgument(3);
  Value lsePtr = withLse ? entry->getArgument(4) : Value();
  unsigned a = 4 + (withLse ? 1 : 0) + numAux;
  Value headsQ = entry->getArgument(a), headsKV = entry->getArgument(a + 1);
  Value seqLen = entry->getArgument(a + 2);
  a += 4 + numAux;
  Value oBatchStride = entry->getArgument(a + 9), oHeadStride = entry->getArgument(a + 10),
        oRowStride = entry->getArgument(a + 11);
  a += 12 + (op.getKvLens() ? 1 : 0) + (op.isPaged() ? 4 : 0) + (op.isVarlen() ? 2 : 0); // caches, sequences
  Value partOPtr = entry->getArgument(a), partLsePtr = entry->getArgument(a + 1), splits = entry->getArgument(a + 2);

  Value r = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
  Value head = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
  Value batch = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
  Value c0 = c32(0), c1 = c32(1), d = c32(realHeadDimV);
  // Operands that emit ops are built one statement each, so that the IR's order does not depend on
  // the C++ compiler's order of evaluating arguments.
  Value head64 = ext64(head);
  Value headsQ64 = ext64(headsQ);
  Value rowOfHead0 = mul(ext64(batch), headsQ64);
  Value row = add(rowOfHead0, head64); // (batch, head) of the dense buffers
  // The parts' rows: blocks of Sq rows per (batch, head, part), or with packed GQA rows (the forward's
  // layout) blocks of G x Sq rows per (batch, KV head, part), this head's Sq rows at (head % G) x Sq.
  Value unit = row, unitRows = seqLen, inUnit = c0;
  if (config.has(ConfigSwitch::PackGqa)) {
    Value group = arith::DivUIOp::create(b, loc, headsQ, headsKV);
    Value kvHead64 = ext64(arith::DivUIOp::create(b, loc, head, group));
    Value headsKV64 = ext64(headsKV);
    Value unitOfKvHead0 = mul(ext64(batch), headsKV64);
    unit = add(unitOfKvHead0, kvHead64);
    unitRows = mul(group, seqLen);
    Value inGroup = arith::RemUIOp::create(b, loc, head, group);
    inUnit = mul(inGroup, seqLen);
  }
  // This row of part 0, and the parts' rows one unit (unitRows rows) apart: the parts' outputs as a
  // [splits, D] view and their LSEs as a [splits] one.
  Value firstPart = mul(unit, ext64(splits));
  Value unitRow = ext64(add(inUnit, r));
  Value rowBase = add(mul(firstPart, ext64(unitRows)), unitRow);
  Value oBase = tile::AddPtrOp::create(b, loc, partOPtr.getType(), partOPtr, mul(rowBase, ext64(d)));
  Value lseBase = tile::AddPtrOp::create(b, loc, partLsePtr.getType(), partLsePtr, rowBase);
  Value oView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 2), oBase, ValueRange{splits, d},
                                         ValueRange{mul(unitRows, d), c1});
  Value lseView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), lseBase, ValueRange{splits},
                                           ValueRange{unitRows});

  // kCombineParts parts a step: their outputs and LSEs loaded at once (independent loads, all in
  // flight together), merged into a running maximum M, sum L and output as scalars and a [D] row.
  const float inf = std::numeric_limits<float>::infinity();
  Value ninf = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-inf));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  SmallVector<Value> init = {ninf, zero, splatF32(0.0, {headDimV})};
  auto loop = scf::ForOp::create(b, loc, c0, splits, c32(parts), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s0 = loop.getInductionVar();
    Value m = loop.getRegionIterArgs()[0], l = loop.getRegionIterArgs()[1], acc = loop.getRegionIterArgs()[2];
    Value o = tile::LoadOp::create(b, loc, tileType({parts, headDimV}, f32), oView, ValueRange{s0, c0},
                                   b.getF32FloatAttr(0.0));
    Value lse = tile::LoadOp::create(b, loc, tileType({parts}, f32), lseView, ValueRange{s0}, b.getF32FloatAttr(-inf));
    Value lse2 = arith::MulFOp::create(b, loc, lse, splatF32(kLog2E, {parts}));
    Value stepMax = tile::ReduceOp::create(b, loc, f32, tile::ReduceKind::max, lse2, 0);
    Value mNew = arith::MaximumFOp::create(b, loc, m, stepMax);
    // While every part so far kept no key, the reference is 0 (not -inf: no -inf - -inf).
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, ninf);
    Value ref = arith::SelectOp::create(b, loc, none, zero, mNew);
    Value alpha = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, m, ref));
    Value w = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, lse2, splat(ref, {parts})));
    Value wSum = tile::ReduceOp::create(b, loc, f32, tile::ReduceKind::sum, w, 0);
    Value lNew = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, l, alpha), wSum);
    Value weighted = arith::MulFOp::create(b, loc, o, broadcastRows(w, headDimV));
    Value stepSum = tile::ReduceOp::create(b, loc, tileType({headDimV}, f32), tile::ReduceKind::sum, weighted, 0);
    Value accScaled = arith::MulFOp::create(b, loc, acc, splat(alpha, {headDimV}));
    Value accNew = arith::AddFOp::create(b, loc, accScaled, stepSum);
    scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
  }
  Value m = loop.getResult(0), l = loop.getResult(1), acc = loop.getResult(2);
  Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f));
  Value lSafe = arith::SelectOp::create(b, loc, noKey, one, l);
  Value invL = arith::DivFOp::create(b, loc, one, lSafe);
  Value out = arith::MulFOp::create(b, loc, acc, splat(invL, {headDimV}));
  out = arith::TruncFOp::create(b, loc, tileType({headDimV}, elemType), out);
  Value oHeadOff = mul(ext64(head), oHeadStride);
  Value oRowOff = mul(ext64(r), oRowStride);
  Value oOff = add(add(mul(ext64(batch), oBatchStride), oHeadOff), oRowOff);
  Value outBase = tile::AddPtrOp::create(b, loc, oPtr.getType(), oPtr, oOff);
  Value outView =
      tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 1), outBase, ValueRange{d}, ValueRange{c1});
  tile::StoreOp::create(b, loc, out, outView, ValueRange{c0});
  if (withLse) {
    // LSE = (M + log2 L) ln 2, -inf where no part kept a key; the caller's LSE is dense [B, Hq, Sq].
    Value ln2 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(kLn2));
    Value log2l = math::Log2Op::create(b, loc, lSafe);
    Value lse = arith::MulFOp::create(b, loc, arith::AddFOp::create(b, loc, m, log2l), ln2);
    lse = arith::SelectOp::create(b, loc, noKey, ninf, lse);
    Value rowOfLse = mul(row, ext64(seqLen));
    tile::ScalarStoreOp::create(b, loc, lse, lsePtr, add(rowOfLse, ext64(r)));
  }
  func::ReturnOp::create(b, loc);
}

} // namespace flare::attn::generator
