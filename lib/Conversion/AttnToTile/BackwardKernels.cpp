//===- BackwardKernels.cpp - dQ, dK, dV of attn.attention by recomputation ===//
//
// The backward pass of one attn.attention as three tile kernels with one ABI (dialects/Attn/
// Rationale.md, "The backward kernels"):
//
//   <name>_bwd_preprocess  grid (ceil(Sq / R), Hq, B):  D_i = rowsum(dO_i * O_i); dQacc = 0
//   <name>_bwd             grid (ceil(Skv / BLOCK_N), Hkv, B): one program instance owns BLOCK_N keys
//                          of one KV head and streams the query blocks of every query head of its
//                          group that the mask keeps for them:
//       S = score_mod(scale * Q K^T),  P = exp(S - LSE)      (masked elements: P = 0)
//       dV += P^T dO,  dP = dO V^T,  dS = P * (dP - D) * score_mod'(scale * Q K^T)
//       dK += scale * dS^T Q,  dQacc += scale * dS K         (f32 atomics; scale folded into dS)
//     then dK and dV are stored: GQA's group sums need no extra pass.
//   <name>_bwd_dq          grid (ceil(Sq / R), Hq, B):  dQ = dQacc in the input dtype (R = 4096 / D)
//
// The query blocks a key block visits come from the mask's formula read transposed (blocksOf over
// queries): blocks the mask keeps entirely run without mask code, empty ones are never visited.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

namespace flare::attn::generator {

BackwardTiles chooseBackwardTiles(int64_t headDim, const Target &target) {
  // The fastest tiles measured on the H200 (bench/NOTES.md, "Backward pass", b4). Head dim 64 with
  // wgmma: the transposed step (S^T = K Q^T) on one warpgroup, 64 keys x 64 queries. Otherwise eight
  // warps on mma.sync, 16 query rows per step, as many keys as leave registers for dK and dV.
  if (headDim <= 64)
    return target.hasWgmma ? BackwardTiles{64, 64, 4, true} : BackwardTiles{16, 128, 8};
  if (headDim <= 128)
    return {16, 64, 8};
  return {16, 32, 8};
}

namespace {
/// Pointer arguments of the backward ABI, in order.
enum BwdPtr { Q, K, V, O, DO, LSE, Delta, DQAcc, DQ, DK, DV, NumPtrs };
/// Tensors with (batch, head, row) strides, in order.
enum BwdStrided { SQ, SK, SV, SO, SDO, SDQ, SDK, SDV, NumStrided };
} // namespace

LogicalResult Generator::runBackward(const BackwardTiles &tiles) {
  if (failed(prepare()))
    return failure();
  // The score tile: S (queries x keys), or S^T with `transposed`; the keys' values are computed
  // once per instance (the key block is fixed), the queries' per step.
  keysAreRows = tiles.transposed;
  tileM = keysAreRows ? tiles.blockN : tiles.blockM;
  tileN = keysAreRows ? tiles.blockM : tiles.blockN;
  invariant = keysAreRows ? Shape::Row : Shape::Col;
  classify(op.getScoreMod(), /*isScore=*/true);
  classify(op.getMaskMod(), /*isScore=*/false);

  MLIRContext *ctx = op.getContext();
  auto ptrOf = [&](Type elem) { return tile::PtrType::get(ctx, elem); };
  SmallVector<Type> args;
  for (int p = 0; p < NumPtrs; ++p)
    args.push_back(ptrOf(p == LSE || p == Delta || p == DQAcc ? f32 : elemType));
  for (Value aux : op.getAux())
    args.push_back(ptrOf(cast<RankedTensorType>(aux.getType()).getElementType()));
  args.append(4, i32Type); // heads_q, heads_kv, seq_q, seq_kv
  args.append(op.getAux().size(), i32Type);
  args.append(3 * NumStrided, b.getI64Type());
  const double scale = softmaxScale();
  const std::string name = func.getName().str();
  // Rows per program instance of the preprocess and dQ kernels: 4096 elements, 32 per thread.
  const int64_t kRowBlock = std::max<int64_t>(1, 4096 / headDim);

  // The prologue every kernel shares: arguments, the batch index, constants. The grid's x runs over
  // query rows (preprocess, dQ) or keys (the main kernel), y over query or KV heads.
  Value ptr[NumPtrs], headsQ, headsKV, c0, c1, d;
  SmallVector<Value> strides;
  auto begin = [&](StringRef suffix, int64_t warps, StringRef hint, int64_t block) {
    b.setInsertionPoint(func);
    kernel = func::FuncOp::create(b, func.getLoc(), name + suffix.str(), b.getFunctionType(args, {}));
    kernel->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
    kernel->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(static_cast<int32_t>(warps)));
    kernel->setAttr(hint, b.getI32IntegerAttr(static_cast<int32_t>(block)));
    Block *entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    unsigned a = 0;
    for (Value &p : ptr)
      p = entry->getArgument(a++);
    auxPtrs.clear();
    auxLens.clear();
    for (size_t i = 0; i < op.getAux().size(); ++i)
      auxPtrs.push_back(entry->getArgument(a++));
    headsQ = entry->getArgument(a++);
    headsKV = entry->getArgument(a++);
    seqQ = entry->getArgument(a++);
    seqKV = entry->getArgument(a++);
    for (size_t i = 0; i < op.getAux().size(); ++i)
      auxLens.push_back(entry->getArgument(a++));
    strides.clear();
    for (int i = 0; i < 3 * NumStrided; ++i)
      strides.push_back(entry->getArgument(a++));
    batchIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
    c0 = c32(0);
    c1 = c32(1);
    d = c32(headDim);
  };
  auto view2d = [&](Value p, int tensor, Value head, Value rows) {
    Value off = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, ext64(batchIdx), strides[3 * tensor]),
                                      arith::MulIOp::create(b, loc, ext64(head), strides[3 * tensor + 1]));
    Value base = tile::AddPtrOp::create(b, loc, p.getType(), p, off);
    Value rowStride = arith::TruncIOp::create(b, loc, i32Type, strides[3 * tensor + 2]);
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 2), base, ValueRange{rows, d},
                                    ValueRange{rowStride, c1})
        .getResult();
  };
  // The runtime's dense f32 buffers: LSE and D [B, Hq, Sq], dQacc [B, Hq, Sq, D].
  auto denseRowBase = [&](Value p, Value head, int64_t width) {
    Value row = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, ext64(batchIdx), ext64(headsQ)), ext64(head));
    Value off = arith::MulIOp::create(b, loc, row, ext64(seqQ));
    if (width != 1)
      off = arith::MulIOp::create(b, loc, off, arith::ConstantIntOp::create(b, loc, width, 64));
    return tile::AddPtrOp::create(b, loc, p.getType(), p, off).getResult();
  };
  auto rowView = [&](Value p, Value head) {
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), denseRowBase(p, head, 1),
                                    ValueRange{seqQ}, ValueRange{c1})
        .getResult();
  };
  auto accView = [&](Value head) {
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 2), denseRowBase(ptr[DQAcc], head, headDim),
                                    ValueRange{seqQ, d}, ValueRange{d, c1})
        .getResult();
  };
  auto finish = [&] { func::ReturnOp::create(b, loc); };

  // --- preprocess: D = rowsum(dO * O) in f32, and dQacc zeroed ---------------------------------------
  begin("_bwd_preprocess", 4, "flare.attention.block_m", kRowBlock);
  {
    Value head = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
    Value r0 = mul(tile::ProgramIdOp::create(b, loc, tile::Axis::x), c32(kRowBlock));
    auto tileF32 = tileType({kRowBlock, headDim}, f32);
    auto load = [&](Value view) {
      Value t = tile::LoadOp::create(b, loc, tileType({kRowBlock, headDim}, elemType), view, ValueRange{r0, c0}, nullptr);
      return arith::ExtFOp::create(b, loc, tileF32, t).getResult();
    };
    Value o = load(view2d(ptr[O], SO, head, seqQ)), dO = load(view2d(ptr[DO], SDO, head, seqQ));
    Value delta = tile::ReduceOp::create(b, loc, tileType({kRowBlock}, f32), tile::ReduceKind::sum,
                                         arith::MulFOp::create(b, loc, o, dO), 1);
    tile::StoreOp::create(b, loc, delta, rowView(ptr[Delta], head), ValueRange{r0});
    tile::StoreOp::create(b, loc, splatF32(0.0, {kRowBlock, headDim}), accView(head), ValueRange{r0, c0});
    finish();
  }

  // --- dQ: the f32 sums in the input dtype, at the caller's strides ---------------------------------
  begin("_bwd_dq", 4, "flare.attention.block_m", kRowBlock);
  {
    Value head = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
    Value r0 = mul(tile::ProgramIdOp::create(b, loc, tile::Axis::x), c32(kRowBlock));
    Value acc = tile::LoadOp::create(b, loc, tileType({kRowBlock, headDim}, f32), accView(head), ValueRange{r0, c0},
                                     nullptr);
    Value dq = arith::TruncFOp::create(b, loc, tileType({kRowBlock, headDim}, elemType), acc);
    tile::StoreOp::create(b, loc, dq, view2d(ptr[DQ], SDQ, head, seqQ), ValueRange{r0, c0});
    finish();
  }

  // --- the main kernel: one block of keys, every query block that sees it --------------------------
  const int64_t bm = tiles.blockM, bn = tiles.blockN;
  const bool tr = keysAreRows;
  const SmallVector<int64_t> scoreShape = dims(Shape::Full);
  // A per-query ([BLOCK_M]) or per-key ([BLOCK_N]) vector across the score tile.
  auto byQuery = [&](Value x) { return tr ? broadcastCols(x, bn) : broadcastRows(x, bn); };
  auto byKey = [&](Value x) { return tr ? broadcastRows(x, bm) : broadcastCols(x, bm); };
  auto trans = [&](Value x) {
    auto t = cast<RankedTensorType>(x.getType());
    return tile::TransOp::create(b, loc, tileType({t.getDimSize(1), t.getDimSize(0)}, t.getElementType()), x)
        .getResult();
  };
  begin("_bwd", tiles.numWarps, "flare.attention.block_n", bn);
  Value kvHead = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
  Value kv0 = mul(tile::ProgramIdOp::create(b, loc, tile::Axis::x), c32(bn));
  Value kv1 = sub(smin(add(kv0, c32(bn)), seqKV), c1); // the last key that exists
  Value kView = view2d(ptr[K], SK, kvHead, seqKV), vView = view2d(ptr[V], SV, kvHead, seqKV);
  // K and V, once per dot operand (K is an operand of S and of dQ): the lowering keeps a loop's
  // invariant dot operands in shared memory, each in the layout its dot reads.
  Value kt, vt, ktt, vtt;
  SmallVector<Value> kForDq; // K for dQ = dS K, in column chunks of dqChunk
  const int64_t dqChunk = tiles.dqChunk > 0 ? std::min(tiles.dqChunk, headDim) : headDim;
  {
    // Columns [col, col + cols) of the key block. dQ's copies of K spell their padding out (the same
    // zero) so that CSE keeps them apart from S's.
    auto loadKV = [&](Value view, int64_t col, int64_t cols, bool forDq) {
      TypedAttr zero = forDq ? TypedAttr(b.getFloatAttr(elemType, 0.0)) : TypedAttr();
      return tile::LoadOp::create(b, loc, tileType({bn, cols}, elemType), view, ValueRange{kv0, c32(col)}, zero)
          .getResult();
    };
    kt = loadKV(kView, 0, headDim, false);
    vt = loadKV(vView, 0, headDim, false);
    for (int64_t c = 0; c < headDim; c += dqChunk)
      kForDq.push_back(loadKV(kView, c, dqChunk, true));
    ktt = tr ? Value() : trans(kt);
    vtt = tr ? Value() : trans(vt);
  }
  Value kvCols = indexRange(kv0, bn);
  Value logBm = c32(llvm::Log2_64(bm));
  Value numQBlocks = arith::ShRSIOp::create(b, loc, add(seqQ, c32(bm - 1)), logBm);
  Value group = arith::DivUIOp::create(b, loc, headsQ, headsKV);
  // A key block that runs past Skv has no full query block: its missing keys are masked.
  Value wholeKeys = cmp(arith::CmpIPredicate::sle, add(kv0, c32(bn)), seqKV);
  Value zerosKD = splatF32(0.0, {bn, headDim});
  auto groupLoop = scf::ForOp::create(b, loc, c0, group, c1, ValueRange{zerosKD, zerosKD});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(groupLoop.getBody());
    headIdx = add(mul(kvHead, group), groupLoop.getInductionVar());
    Value qView = view2d(ptr[Q], SQ, headIdx, seqQ), doView = view2d(ptr[DO], SDO, headIdx, seqQ);
    Value lseView = rowView(ptr[LSE], headIdx), deltaView = rowView(ptr[Delta], headIdx);
    Value dqView = accView(headIdx);
    // Region values that do not depend on the query block (this head's and these keys').
    Value kvIndex = asIndex(kvCols);
    if (failed(emitHoistedRegions(3, [&] { return kvIndex; })))
      return failure();
    auto [nonEmpty, full] = blocksOf(mask.root, BlockAxis{true, kv0, kv1, numQBlocks, bm});
    Value lo = smax(nonEmpty.lo, c0);
    Value hi = smax(smin(nonEmpty.hi, numQBlocks), lo);
    // Rows past Sq are masked: only blocks wholly below Sq can be full.
    Value fullHi = smin(full.hi, arith::ShRSIOp::create(b, loc, seqQ, logBm));
    // The transposed (wgmma) form runs every block in one masked loop: a second loop would keep K's
    // and V's registers live across the first (their shared-memory copies are made per loop).
    const bool oneLoop = tr;
    Value flo = oneLoop ? lo : smin(smax(full.lo, lo), hi);
    Value fhi = oneLoop ? lo : select(wholeKeys, smin(smax(fullHi, flo), hi), flo);
    Value left = sub(flo, lo);
    Value partialCount = add(left, sub(hi, fhi));

    // One query block: recompute P, then dV, dP, dS, dK and dQ.
    auto step = [&](Value block, bool masked, ValueRange acc) -> FailureOr<SmallVector<Value>> {
      StepScope scope(*this);
      DenseMap<Value, Value> &local = scope.local;
      Value q0s = mul(block, c32(bm));
      // Q and dO each feed two dots; one load per dot lets the lowering stream each into the layout
      // its dot reads (a ring of shared-memory stages on the wgmma path), not through registers.
      // The second load's padding is spelled out (the same zero) so that CSE keeps the two apart.
      auto load = [&](Value view, bool second = false) {
        TypedAttr zero = second ? TypedAttr(b.getFloatAttr(elemType, 0.0)) : TypedAttr();
        return tile::LoadOp::create(b, loc, tileType({bm, headDim}, elemType), view, ValueRange{q0s, c0}, zero)
            .getResult();
      };
      Value qt = load(qView), dOt = load(doView);
      // LSE and D: read first in S's orientation (two values per thread); where they are used in the
      // transposed one, in which each is a row of columns (16 registers per thread).
      auto loadRow = [&](Value view) {
        return tile::LoadOp::create(b, loc, tileType({bm}, f32), view, ValueRange{q0s}, nullptr).getResult();
      };
      Value lseEarly = tr ? Value() : loadRow(lseView), deltaEarly = tr ? Value() : loadRow(deltaView);
      // S = Q K^T, or S^T = K Q^T.
      Value qk = tr ? tile::DotOp::create(b, loc, tileType(scoreShape, f32), kt, trans(qt), splatF32(0.0, scoreShape))
                    : tile::DotOp::create(b, loc, tileType(scoreShape, f32), qt, ktt, splatF32(0.0, scoreShape));
      Value rows = indexRange(q0s, bm);
      Value sLog2, slope; // the score in log2 units; d score_mod / dx (null: 1)
      Region &scoreMod = op.getScoreMod();
      if (scoreMod.empty()) {
        sLog2 = arith::MulFOp::create(b, loc, qk, splatF32(scale * kLog2E, scoreShape));
      } else {
        Block &blk = scoreMod.front();
        local[blk.getArgument(0)] = arith::MulFOp::create(b, loc, qk, splatF32(scale, scoreShape));
        local[blk.getArgument(3)] = asIndex(rows);
        if (failed(emitRegion(scoreMod, /*hoistedPart=*/false, local)))
          return failure();
        Value s = at(cast<YieldOp>(blk.getTerminator()).getValue(), Shape::Full);
        sLog2 = arith::MulFOp::create(b, loc, s, splatF32(kLog2E, scoreShape));
        FailureOr<Value> derivative = scoreModDerivative();
        if (failed(derivative))
          return failure();
        slope = *derivative;
      }
      Value lseLog2 = arith::MulFOp::create(b, loc, tr ? loadRow(lseView) : lseEarly, splatF32(kLog2E, {bm}));
      Value p = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, sLog2, byQuery(lseLog2)));
      Value keepElem;
      if (masked) {
        Value keyIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kvCols, splat(seqKV, {bn}));
        Value rowIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rows, splat(seqQ, {bm}));
        keepElem = arith::AndIOp::create(b, loc, byKey(keyIn), byQuery(rowIn));
        if (Region &maskMod = op.getMaskMod(); !maskMod.empty()) {
          local[maskMod.front().getArgument(2)] = asIndex(rows);
          if (failed(emitRegion(maskMod, /*hoistedPart=*/false, local)))
            return failure();
          Value user = at(cast<YieldOp>(maskMod.front().getTerminator()).getValue(), Shape::Full);
          keepElem = arith::AndIOp::create(b, loc, keepElem, user);
        }
        p = arith::SelectOp::create(b, loc, keepElem, p, splatF32(0.0, scoreShape));
      }
      // dV += P^T dO; dP = dO V^T; dS = P * (dP - D) (* score_mod'); dK += dS^T Q; dQ += dS K. The
      // transposed form holds P^T, dP^T and dS^T.
      Value pb = arith::TruncFOp::create(b, loc, tileType(scoreShape, elemType), p);
      Value dv = tile::DotOp::create(b, loc, acc[1].getType(), tr ? pb : trans(pb), dOt, acc[1]);
      Value dp = tr ? tile::DotOp::create(b, loc, tileType(scoreShape, f32), vt, trans(load(doView, true)), splatF32(0.0, scoreShape))
                    : tile::DotOp::create(b, loc, tileType(scoreShape, f32), dOt, vtt, splatF32(0.0, scoreShape));
      // dS carries the softmax scale of S = scale * Q K^T (dQ and dK need it, and nothing else).
      Value ds = arith::MulFOp::create(b, loc, p, arith::SubFOp::create(b, loc, dp, byQuery(tr ? loadRow(deltaView) : deltaEarly)));
      ds = arith::MulFOp::create(b, loc, ds, slope ? arith::MulFOp::create(b, loc, slope, splatF32(scale, scoreShape)).getResult()
                                                   : splatF32(scale, scoreShape));
      if (masked && slope) // a derivative that is not finite where the mask drops the element
        ds = arith::SelectOp::create(b, loc, keepElem, ds, splatF32(0.0, scoreShape));
      Value dsb = arith::TruncFOp::create(b, loc, tileType(scoreShape, elemType), ds);
      Value dk = tile::DotOp::create(b, loc, acc[0].getType(), tr ? dsb : trans(dsb), tr ? load(qView, true) : qt, acc[0]);
      // dQ in column chunks: each chunk's f32 sums are added and dropped before the next is computed.
      Value dsA = tr ? trans(dsb) : dsb;
      for (auto [c, kc] : llvm::enumerate(kForDq)) {
        Value dq = tile::DotOp::create(b, loc, tileType({bm, dqChunk}, f32), dsA, kc, splatF32(0.0, {bm, dqChunk}));
        tile::AtomicAddOp::create(b, loc, dq, dqView, ValueRange{q0s, c32(static_cast<int64_t>(c) * dqChunk)});
      }
      return SmallVector<Value>{dk, dv};
    };
    SmallVector<Value> acc(groupLoop.getRegionIterArgs().begin(), groupLoop.getRegionIterArgs().end());
    // Blocks [flo, fhi) without mask code, then [lo, flo) u [fhi, hi) with it.
    for (bool masked : {false, true}) {
      if (oneLoop && !masked)
        continue;
      Value lower = masked ? c0 : flo, upper = masked ? partialCount : fhi;
      auto loop = scf::ForOp::create(b, loc, lower, upper, c1, acc);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value t = loop.getInductionVar();
      Value block = masked ? partialBlock(t, lo, left, fhi) : t;
      FailureOr<SmallVector<Value>> next = step(block, masked, loop.getRegionIterArgs());
      if (failed(next))
        return failure();
      scf::YieldOp::create(b, loc, *next);
      acc.assign(loop.getResults().begin(), loop.getResults().end());
    }
    scf::YieldOp::create(b, loc, acc);
  }
  tile::StoreOp::create(b, loc,
                        arith::TruncFOp::create(b, loc, tileType({bn, headDim}, elemType), groupLoop.getResult(0))
                            .getResult(),
                        view2d(ptr[DK], SDK, kvHead, seqKV), ValueRange{kv0, c0});
  tile::StoreOp::create(
      b, loc, arith::TruncFOp::create(b, loc, tileType({bn, headDim}, elemType), groupLoop.getResult(1)).getResult(),
      view2d(ptr[DV], SDV, kvHead, seqKV), ValueRange{kv0, c0});
  finish();
  return success();
}

} // namespace flare::attn::generator
