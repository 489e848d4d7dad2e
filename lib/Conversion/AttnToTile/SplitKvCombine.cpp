//===- SplitKvCombine.cpp - the kernel that merges split-KV parts -----------===//
//
// With `split_kv` the forward kernel's program instances along grid z are (batch, part): each runs
// one part of the key blocks its query rows keep and writes that part's normalised output O_s and
// its LSE_s (f32, dense [B, Hq, splits, Sq, D] and [B, Hq, splits, Sq]). `<name>_combine` (grid
// (ceil(Sq / kCombineRows), Hq, B), the forward's ABI) merges them per row:
//
//   LSE = log sum_s exp(LSE_s)            O = sum_s exp(LSE_s - LSE) O_s
//
// as one pass over the parts with a running maximum M (log2 units): w_s = 2^(LSE_s - M), the sums
// rescaled by 2^(M_old - M) when M grows. A part that kept no key has LSE_s = -inf and weight 0; a
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
  const int64_t rows = kCombineRows;
  b.setInsertionPoint(func);
  auto combine = func::FuncOp::create(b, func.getLoc(), func.getName().str() + "_combine", abi);
  combine->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
  combine->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(4));
  combine->setAttr("flare.attention.block_m", b.getI32IntegerAttr(static_cast<int32_t>(rows)));
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

  Value r0 = mul(tile::ProgramIdOp::create(b, loc, tile::Axis::x), c32(rows));
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
  Value unit = row, unitRows = ext64(seqLen), inUnit = arith::ConstantIntOp::create(b, loc, 0, 64);
  if (config.has(ConfigSwitch::PackGqa)) {
    Value group = arith::DivUIOp::create(b, loc, headsQ, headsKV);
    Value kvHead64 = ext64(arith::DivUIOp::create(b, loc, head, group));
    Value headsKV64 = ext64(headsKV);
    Value unitOfKvHead0 = mul(ext64(batch), headsKV64);
    unit = add(unitOfKvHead0, kvHead64);
    Value groupLen = ext64(seqLen);
    unitRows = mul(ext64(group), groupLen);
    Value headLen = ext64(seqLen);
    inUnit = mul(ext64(arith::RemUIOp::create(b, loc, head, group)), headLen);
  }
  auto partViews = [&](Value part) {
    Value part64 = ext64(part);
    Value firstPart = mul(unit, ext64(splits));
    Value rowBase = add(mul(add(firstPart, part64), unitRows), inUnit);
    Value oBase = tile::AddPtrOp::create(b, loc, partOPtr.getType(), partOPtr, mul(rowBase, ext64(d)));
    Value lseBase = tile::AddPtrOp::create(b, loc, partLsePtr.getType(), partLsePtr, rowBase);
    Value oView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 2), oBase, ValueRange{seqLen, d},
                                           ValueRange{d, c1});
    Value lseView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), lseBase, ValueRange{seqLen},
                                             ValueRange{c1});
    return std::pair{oView, lseView};
  };

  const float inf = std::numeric_limits<float>::infinity();
  Value ninf = splatF32(-inf, {rows});
  Value zero = splatF32(0.0, {rows});
  SmallVector<Value> init = {ninf, zero, splatF32(0.0, {rows, headDimV})};
  auto loop = scf::ForOp::create(b, loc, c0, splits, c1, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    auto [oView, lseView] = partViews(loop.getInductionVar());
    Value m = loop.getRegionIterArgs()[0], l = loop.getRegionIterArgs()[1], acc = loop.getRegionIterArgs()[2];
    Value lse = tile::LoadOp::create(b, loc, tileType({rows}, f32), lseView, ValueRange{r0}, b.getF32FloatAttr(-inf));
    Value o = tile::LoadOp::create(b, loc, tileType({rows, headDimV}, f32), oView, ValueRange{r0, c0},
                                   b.getF32FloatAttr(0.0));
    Value lse2 = arith::MulFOp::create(b, loc, lse, splatF32(kLog2E, {rows}));
    Value mNew = arith::MaximumFOp::create(b, loc, m, lse2);
    // While every part so far kept no key, the reference is 0 (not -inf: no -inf - -inf).
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, ninf);
    Value ref = arith::SelectOp::create(b, loc, none, zero, mNew);
    Value alpha = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, m, ref));
    Value w = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, lse2, ref));
    Value lNew = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, l, alpha), w);
    Value weighted = arith::MulFOp::create(b, loc, o, broadcastRows(w, headDimV));
    Value accScaled = arith::MulFOp::create(b, loc, acc, broadcastRows(alpha, headDimV));
    Value accNew = arith::AddFOp::create(b, loc, accScaled, weighted);
    scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
  }
  Value m = loop.getResult(0), l = loop.getResult(1), acc = loop.getResult(2);
  Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
  Value lSafe = arith::SelectOp::create(b, loc, noKey, splatF32(1.0, {rows}), l);
  Value invL = arith::DivFOp::create(b, loc, splatF32(1.0, {rows}), lSafe);
  Value out = arith::MulFOp::create(b, loc, acc, broadcastRows(invL, headDimV));
  out = arith::TruncFOp::create(b, loc, tileType({rows, headDimV}, elemType), out);
  Value oHeadOff = mul(ext64(head), oHeadStride);
  Value oOff = add(mul(ext64(batch), oBatchStride), oHeadOff);
  Value oBase = tile::AddPtrOp::create(b, loc, oPtr.getType(), oPtr, oOff);
  Value outView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 2), oBase,
                                           ValueRange{seqLen, d},
                                           ValueRange{arith::TruncIOp::create(b, loc, i32Type, oRowStride), c1});
  tile::StoreOp::create(b, loc, out, outView, ValueRange{r0, c0});
  if (withLse) {
    // LSE = (M + log2 L) ln 2, -inf where no part kept a key; the caller's LSE is dense [B, Hq, Sq].
    Value ln2 = splatF32(kLn2, {rows});
    Value log2l = math::Log2Op::create(b, loc, lSafe);
    Value lse = arith::MulFOp::create(b, loc, arith::AddFOp::create(b, loc, m, log2l), ln2);
    lse = arith::SelectOp::create(b, loc, noKey, ninf, lse);
    Value base = tile::AddPtrOp::create(b, loc, lsePtr.getType(), lsePtr, mul(row, ext64(seqLen)));
    Value view = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), base, ValueRange{seqLen},
                                          ValueRange{c1});
    tile::StoreOp::create(b, loc, lse, view, ValueRange{r0});
  }
  func::ReturnOp::create(b, loc);
}

} // namespace flare::attn::generator
