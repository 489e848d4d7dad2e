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
// Where dQ has a kernel of its own (sm_90a, or deterministic: backwardSumsDqByAtomics), the main
// kernel adds no dQ and <name>_bwd_dq recomputes S and dP per key block for one block of query rows,
// summing dS K in registers in key order; where dK and dV do not fit one warpgroup together (head dim
// 256 on sm_90a: backwardSplitsDkDv), <name>_bwd computes dK and <name>_bwd_dv dV, each on its own.
//
// The query blocks a key block visits come from the mask's formula read transposed (blocksOf over
// queries), or for a mask of class generic from block lists that `<name>_bwd_block_mask` writes
// (BlockLists.cpp): blocks the mask keeps entirely run without mask code where the loop form allows,
// empty ones are never visited.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

namespace flare::attn::generator {

BackwardTiles chooseBackwardTiles(int64_t headDim, const Target &target, bool dqByAtomics, bool auxPerElement) {
  // A modifier gathering from an aux table per score element (a block table indexed by query and key
  // block, a relative-position bias): the transposed step's tiles needed 245792 bytes of shared memory
  // at head dim 128 and 253984 at 256 (more than a CTA's 232448), and on one warpgroup of 64 keys or
  // 32 query rows they spilled 116-360 bytes; the mma.sync tiles spill nothing up to head dim 128
  // (at 256 the dQ kernel spills 156 bytes, as the document example's backward kernels do there).
  if (auxPerElement && target.hasWgmma && headDim > 64 && !dqByAtomics)
    return headDim <= 128 ? BackwardTiles{16, 64, 8} : BackwardTiles{16, 32, 8};
  // The fastest tiles measured on the H200 (bench/NOTES.md, "Backward pass", b4, b5, b7, b8). With
  // wgmma: the transposed step (S^T = K Q^T), 64 queries per step, at head dim 64, and at 128 where dQ
  // has a kernel of its own (its dS^T staging would not fit beside dK and dV): 128 keys on two
  // warpgroups (64 on one where the main kernel also sums dQ); at 256, dK and dV in a kernel each, 32
  // queries per step and 128 keys on two warpgroups. Otherwise eight warps on mma.sync, 16 query rows
  // per step, as many keys as leave registers for dK and dV.
  if (target.hasWgmma && (headDim <= 64 || (headDim <= 128 && !dqByAtomics)))
    return dqByAtomics ? BackwardTiles{64, 64, 4, true} : BackwardTiles{64, 128, 8, true};
  if (backwardSplitsDkDv(target, headDim, dqByAtomics, auxPerElement))
    return BackwardTiles{32, 128, 8, true, 0, true};
  if (headDim <= 64)
    return {16, 128, 8};
  if (headDim <= 128)
    return {16, 64, 8};
  return {16, 32, 8};
}

BackwardDqTiles chooseBackwardDqTiles(int64_t headDim, const Target &target) {
  // Query rows per program instance and keys per step that leave registers for dQ's f32 sums
  // (headDim / 2 per thread on a warpgroup of 64 rows): wgmma on one warpgroup; mma.sync holds Q and
  // dO in registers as well, so eight warps of 16 rows and 16 keys per step beyond head dim 64.
  // Above head dim 64, two warpgroups of 64 rows share each K and V stage (measured 1.15-1.21x at 128
  // on the H200; no gain at 64, bench/NOTES.md b11), and a producer warpgroup issues the K and V
  // copies (1.01-1.02x at 128, 1.20-1.32x with the two warpgroups at 256, b12; at 64 the consumers'
  // share of the registers would spill).
  if (target.hasWgmma)
    return headDim <= 64    ? BackwardDqTiles{64, 64, 4}
           : headDim <= 128 ? BackwardDqTiles{128, 64, 8, /*producer=*/true}
                            : BackwardDqTiles{128, 32, 8, /*producer=*/true};
  return headDim <= 64 ? BackwardDqTiles{64, 64, 4} : BackwardDqTiles{128, 16, 8};
}

FailureOr<Generator::Recomputed> Generator::recomputeP(Value qk, llvm::function_ref<Value()> lse, bool masked,
                                                       Value queries, Value keys, unsigned stepIndexArg,
                                                       Value stepIndex, DenseMap<Value, Value> &local) {
  const SmallVector<int64_t> scoreShape = dims(Shape::Full);
  const double scale = softmaxScale();
  Recomputed r;
  Value sLog2; // the score in log2 units
  Value slope;  // score_mod's derivative
  Region &scoreMod = op.getScoreMod();
  if (scoreMod.empty()) {
    sLog2 = arith::MulFOp::create(b, loc, qk, splatF32(scale * kLog2E, scoreShape));
  } else {
    Block &blk = scoreMod.front();
    local[blk.getArgument(0)] = arith::MulFOp::create(b, loc, qk, splatF32(scale, scoreShape));
    local[blk.getArgument(1 + stepIndexArg)] = stepIndex;
    if (failed(emitRegion(scoreMod, /*hoistedPart=*/false, local)))
      return failure();
    Value s = at(cast<YieldOp>(blk.getTerminator()).getValue(), Shape::Full);
    sLog2 = arith::MulFOp::create(b, loc, s, splatF32(kLog2E, scoreShape));
    FailureOr<Value> derivative = scoreModDerivative();
    if (failed(derivative))
      return failure();
    slope = *derivative;
  }
  auto queryCount = cast<RankedTensorType>(queries.getType()).getShape();
  Value lseLog2 = arith::MulFOp::create(b, loc, lse(), splatF32(kLog2E, queryCount));
  r.p = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, sLog2, byQuery(lseLog2)));
  if (masked) {
    auto count = [](Value v) { return cast<RankedTensorType>(v.getType()).getDimSize(0); };
    Value keyIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, keys, splat(seqKV, {count(keys)}));
    Value rowIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, queries, splat(seqQ, {count(queries)}));
    r.keep = arith::AndIOp::create(b, loc, byKey(keyIn), byQuery(rowIn));
    if (Region &maskMod = op.getMaskMod(); !maskMod.empty()) {
      local[maskMod.front().getArgument(stepIndexArg)] = stepIndex;
      if (failed(emitRegion(maskMod, /*hoistedPart=*/false, local)))
        return failure();
      Value user = at(cast<YieldOp>(maskMod.front().getTerminator()).getValue(), Shape::Full);
      r.keep = arith::AndIOp::create(b, loc, r.keep, user);
    }
    r.p = arith::SelectOp::create(b, loc, r.keep, r.p, splatF32(0.0, scoreShape));
  }
  if (slope) {
    Value scaled = arith::MulFOp::create(b, loc, slope, splatF32(scale, scoreShape));
    r.factor = arith::MulFOp::create(b, loc, r.p, scaled);
  }
  return r;
}

Value Generator::scoreGradient(const Recomputed &r, Value dp, Value delta, bool masked) {
  const SmallVector<int64_t> scoreShape = dims(Shape::Full);
  const double scale = softmaxScale();
  // dS carries the softmax scale of S = scale * Q K^T (dQ and dK need it, and nothing else).
  Value diff = arith::SubFOp::create(b, loc, dp, byQuery(delta));
  if (!r.factor) {
    Value ds = arith::MulFOp::create(b, loc, r.p, diff);
    return arith::MulFOp::create(b, loc, ds, splatF32(scale, scoreShape));
  }
  Value ds = arith::MulFOp::create(b, loc, r.factor, diff);
  if (masked) // a derivative that is not finite where the mask drops the element
    ds = arith::SelectOp::create(b, loc, r.keep, ds, splatF32(0.0, scoreShape));
  return ds;
}

namespace {
/// Pointer arguments of the backward ABI, in order.
enum BwdPtr { Q, K, V, O, DO, LSE, Delta, DQAcc, DQ, DK, DV, NumPtrs };
/// Tensors with (batch, head, row) strides, in order.
enum BwdStrided { SQ, SK, SV, SO, SDO, SDQ, SDK, SDV, NumStrided };
} // namespace

LogicalResult Generator::runBackward(const BackwardTiles &tiles, std::optional<BackwardDqTiles> dqTiles,
                                     bool blockLists) {
  if (failed(prepare()))
    return failure();
  if (op.getKvLens() || op.isPaged())
    return op.emitOpError("convert-attn-to-tile: the backward pass of an attention over kv_lens or a paged "
                          "cache is not generated (caches are for inference)");
  if (op.isVarlen())
    return op.emitOpError("convert-attn-to-tile: the backward pass of packed variable-length sequences "
                          "(cu_seqlens) is not generated yet");
  // Every tile is as wide as the wider head dim's (tileHeadDim); the views of Q, K, dQ and dK are D
  // wide, those of V, O, dO and dV Dv wide (multi-head latent attention: 192 and 128), so loads fill
  // the other columns with zeros and stores skip them: dO V^T and D = rowsum(dO * O) sum zeros past
  // Dv, P^T dO leaves zero columns there, Q K^T, dS^T Q and dS K past D.
  headDim = headDimV = tileHeadDim(realHeadDim, realHeadDimV);
  // The score tile: S (queries x keys), or S^T with `transposed`; the keys' values are computed
  // once per instance (the key block is fixed), the queries' per step.
  keysAreRows = tiles.transposed;
  tileM = keysAreRows ? tiles.blockN : tiles.blockM;
  tileN = keysAreRows ? tiles.blockM : tiles.blockN;
  invariant = keysAreRows ? Shape::Row : Shape::Col;
  classify(op.getScoreMod(), /*isScore=*/true);
  classify(op.getMaskMod(), /*isScore=*/false);

  MLIRContext *ctx = op.getContext();
  // A kernel's schedule: the defaults but for its turns and its producer warpgroup.
  auto schedule = [&](bool pingPong, bool producer) {
    return tile::ScheduleAttr::get(ctx, pingPong, /*min_blocks_per_sm=*/0, producer, /*persistent=*/false,
                                   /*pair_instances=*/true, false, false, false, /*uniform_warpgroup=*/true, false,
                                   /*dynamic_instances=*/false);
  };
  auto ptrOf = [&](Type elem) { return tile::PtrType::get(ctx, elem); };
  SmallVector<Type> args;
  for (int p = 0; p < NumPtrs; ++p)
    args.push_back(ptrOf(p == LSE || p == Delta || p == DQAcc ? f32 : elemType));
  for (Value aux : op.getAux())
    args.push_back(ptrOf(cast<RankedTensorType>(aux.getType()).getElementType()));
  args.append(4, i32Type); // heads_q, heads_kv, seq_q, seq_kv
  args.append(op.getAux().size(), i32Type);
  args.append(3 * NumStrided, b.getI64Type());
  // Block lists (a mask of class generic): the query blocks of each key block (the main kernels'),
  // then the key blocks of each block of query rows (the dQ kernel's; unused without one).
  const bool lists = blockLists && mask.maskClass == MaskClass::Generic;
  if (lists)
    args.append(2, ptrOf(i32Type));
  const std::string name = func.getName().str();
  // Rows per program instance of the preprocess and dQ kernels: 4096 elements, 32 per thread.
  const int64_t kRowBlock = std::max<int64_t>(1, 4096 / headDim);

  // The prologue every kernel shares: arguments, the batch index, constants. The grid's x runs over
  // query rows (preprocess, dQ) or keys (the main kernel), y over query or KV heads.
  Value ptr[NumPtrs], headsQ, headsKV, c0, c1, d, dv, keyLists, queryLists;
  SmallVector<Value> strides;
  auto begin = [&](StringRef suffix, int64_t warps, StringRef hint, int64_t block) {
    b.setInsertionPoint(func);
    kernel = func::FuncOp::create(b, func.getLoc(), name + suffix.str(), b.getFunctionType(args, {}));
    kernel->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
    kernel->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(static_cast<int32_t>(warps)));
    kernel->setAttr(hint, b.getI32IntegerAttr(static_cast<int32_t>(block)));
    // No turns between warpgroups: each holds the sums of its own keys and runs the whole step, from
    // S's product to dK's; a turn around those products would serialise the two (0.55-0.80x on the
    // H200, NOTES b9).
    kernel->setAttr(tile::TileDialect::kScheduleAttrName, schedule(/*pingPong=*/false, /*producer=*/false));
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
    if (lists) {
      keyLists = entry->getArgument(a++);
      queryLists = entry->getArgument(a++);
    }
    batchIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
    c0 = c32(0);
    c1 = c32(1);
    d = c32(realHeadDim);
    dv = realHeadDimV == realHeadDim ? d : c32(realHeadDimV);
  };
  auto view2d = [&](Value p, int tensor, Value head, Value rows) {
    Value off = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, ext64(batchIdx), strides[3 * tensor]),
                                      arith::MulIOp::create(b, loc, ext64(head), strides[3 * tensor + 1]));
    Value base = tile::AddPtrOp::create(b, loc, p.getType(), p, off);
    Value rowStride = arith::TruncIOp::create(b, loc, i32Type, strides[3 * tensor + 2]);
    const bool valueWide = tensor == SV || tensor == SO || tensor == SDO || tensor == SDV;
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 2), base,
                                    ValueRange{rows, valueWide ? dv : d},
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
    Value base = denseRowBase(ptr[DQAcc], head, realHeadDim);
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 2), base, ValueRange{seqQ, d},
                                    ValueRange{d, c1})
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
    if (!dqTiles)
      tile::StoreOp::create(b, loc, splatF32(0.0, {kRowBlock, headDim}), accView(head), ValueRange{r0, c0});
    finish();
  }

  // --- dQ: the f32 sums in the input dtype, at the caller's strides ---------------------------------
  if (!dqTiles) {
    begin("_bwd_dq", 4, "flare.attention.block_m", kRowBlock);
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
  auto trans = [&](Value x) {
    auto t = cast<RankedTensorType>(x.getType());
    return tile::TransOp::create(b, loc, tileType({t.getDimSize(1), t.getDimSize(0)}, t.getElementType()), x)
        .getResult();
  };
  // The main kernel `<name><suffix>`: dK and/or dV of one block of keys.
  auto emitMain = [&](StringRef suffix, bool wantDK, bool wantDV) -> LogicalResult {
    hoisted.clear(); // the regions' hoisted values are this kernel's
    begin(suffix, tiles.numWarps, "flare.attention.block_n", bn);
    Value kvHead = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
    Value kvBlock = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
    Value kv0 = mul(kvBlock, c32(bn));
    Value kv1 = sub(smin(add(kv0, c32(bn)), seqKV), c1); // the last key that exists
    Value kView = view2d(ptr[K], SK, kvHead, seqKV), vView = view2d(ptr[V], SV, kvHead, seqKV);
    // K and V, once per dot operand (K is an operand of S and of dQ): the lowering keeps a loop's
    // invariant dot operands in shared memory, each in the layout its dot reads.
    Value kt, vt, ktt, vtt;
    SmallVector<Value> kForDq; // K for dQ = dS K, in column chunks of dqChunk
    const int64_t dqChunk = tiles.dqChunk > 0 ? std::min(tiles.dqChunk, headDim) : headDim;
    // dQ^T = K^T dS^T where the head dim fills the warps' rows (head dim 128 on eight warps): a wgmma
    // product with K^T as its resident A and dS^T, the step's own tile, as its B; dS K itself has only
    // BLOCK_M = 64 rows, which eight warps cannot stack for wgmma. K^T is S^T's K read transposed: the
    // lowering reads the one copy of K M-major there.
    const bool dqTransposed = tr && !dqTiles && wantDK && dqChunk == headDim && headDim == 16 * tiles.numWarps &&
                              tiles.numWarps > 4;
    {
      // Columns [col, col + cols) of the key block; dQ's copies of K are copies of their own.
      auto loadKV = [&](Value view, int64_t col, int64_t cols, bool forDq) {
        return loadBlock(view, bn, cols, kv0, c32(col), forDq);
      };
      kt = loadKV(kView, 0, headDim, false);
      vt = loadKV(vView, 0, headDim, false);
      for (int64_t c = 0; !dqTiles && wantDK && !dqTransposed && c < headDim; c += dqChunk)
        kForDq.push_back(loadKV(kView, c, dqChunk, true));
      ktt = tr ? Value() : trans(kt);
      vtt = tr ? Value() : trans(vt);
    }
    Value kTransForDq = dqTransposed ? trans(kt) : Value();
    Value kvCols = indexRange(kv0, bn);
    Value logBm = c32(llvm::Log2_64(bm));
    Value numQBlocks = arith::ShRSIOp::create(b, loc, add(seqQ, c32(bm - 1)), logBm);
    Value group = arith::DivUIOp::create(b, loc, headsQ, headsKV);
    // A key block that runs past Skv has no full query block: its missing keys are masked.
    Value wholeKeys = cmp(arith::CmpIPredicate::sle, add(kv0, c32(bn)), seqKV);
    Value zerosKD = splatF32(0.0, {bn, headDim});
    // The sums the group loop carries: dK, then dV (those this kernel computes).
    SmallVector<Value> inits(static_cast<size_t>(wantDK) + static_cast<size_t>(wantDV), zerosKD);
    auto groupLoop = scf::ForOp::create(b, loc, c0, group, c1, inits);
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
      // The transposed (wgmma) form runs every block in one masked loop: a second loop would keep K's
      // and V's registers live across the first (their shared-memory copies are made per loop).
      const bool oneLoop = tr;
      // The query blocks: the mask's ranges, or this head's record of the block lists (the partial
      // blocks, then the full ones: in one loop, all with mask code, where the form has one loop).
      Value lo, hi, flo, fhi, left, partialCount;
      BlockList list;
      if (lists) {
        list = listOf(keyLists, kvBlock, seqKV, bn, numQBlocks, headsQ);
        flo = c0;
        fhi = oneLoop ? c0 : list.fullCount;
        partialCount = oneLoop ? add(list.partialCount, list.fullCount) : list.partialCount;
      } else {
        auto [nonEmpty, full] = blocksOf(mask.root, BlockAxis{true, kv0, kv1, numQBlocks, bm});
        lo = smax(nonEmpty.lo, c0);
        hi = smax(smin(nonEmpty.hi, numQBlocks), lo);
        // Rows past Sq are masked: only blocks wholly below Sq can be full.
        Value fullHi = smin(full.hi, arith::ShRSIOp::create(b, loc, seqQ, logBm));
        flo = oneLoop ? lo : smin(smax(full.lo, lo), hi);
        fhi = oneLoop ? lo : select(wholeKeys, smin(smax(fullHi, flo), hi), flo);
        left = sub(flo, lo);
        partialCount = add(left, sub(hi, fhi));
      }
      auto partialAt = [&](Value t) {
        if (!lists)
          return partialBlock(t, lo, left, fhi);
        return oneLoop ? list.anyAt(*this, t) : list.partialAt(*this, t);
      };
      auto fullAt = [&](Value t) { return lists ? list.fullAt(*this, t) : t; };

      // One query block: recompute P, then dV, dP, dS, dK and dQ.
      auto step = [&](Value block, bool masked, ValueRange acc) -> FailureOr<SmallVector<Value>> {
        StepScope scope(*this);
        DenseMap<Value, Value> &local = scope.local;
        Value q0s = mul(block, c32(bm));
        // Q and dO each feed two dots. In the transposed (wgmma) step both are B operands, read along K
        // by one dot and along N by the other: where rows are whole 128-byte panels one copy in swizzled
        // panels serves both, each dot with its own descriptor; otherwise one load per dot lets the
        // lowering stream each into the layout its dot reads, not through registers. At head dim 64 the
        // one copy is not taken: it measured 0.96-0.99x on the H200 there (one round; the cause was not
        // found, the kernel stays at one CTA per SM by its registers; bench/NOTES.md b14).
        const bool sharedCopies = tr && headDim % 64 == 0 && headDim >= 128;
        auto load = [&](Value view, bool second = false) { return loadBlock(view, bm, headDim, q0s, c0, second); };
        Value qt = load(qView), dOt = load(doView);
        auto again = [&](Value view, Value first) { return sharedCopies ? first : load(view, true); };
        // LSE (and D outside the transposed step) read before the step's products, so that their
        // latency passes under them.
        auto loadRow = [&](Value view) {
          return tile::LoadOp::create(b, loc, tileType({bm}, f32), view, ValueRange{q0s}, nullptr).getResult();
        };
        Value lseEarly = loadRow(lseView), deltaEarly = tr ? Value() : loadRow(deltaView);
        // In the transposed step D (16 registers a thread where it is used) is read at its use: read
        // with LSE, or once S has arrived, the softcap and prefix-LM kernels at head dim 128 spilled
        // (4-32 bytes, at 254-255 registers).
        // S = Q K^T, or S^T = K Q^T.
        Value qk = tr ? tile::DotOp::create(b, loc, tileType(scoreShape, f32), kt, trans(qt), splatF32(0.0, scoreShape))
                      : tile::DotOp::create(b, loc, tileType(scoreShape, f32), qt, ktt, splatF32(0.0, scoreShape));
        // dP^T = V dO^T issued right behind S^T: the tensor cores compute it while P is recomputed.
        auto dpDot = [&] {
          return tr ? tile::DotOp::create(b, loc, tileType(scoreShape, f32), vt, trans(again(doView, dOt)),
                                          splatF32(0.0, scoreShape))
                    : tile::DotOp::create(b, loc, tileType(scoreShape, f32), dOt, vtt, splatF32(0.0, scoreShape));
        };
        Value dpEarly = tr && wantDK ? dpDot() : Value();
        Value rows = indexRange(q0s, bm);
        FailureOr<Recomputed> r = recomputeP(qk, [&] { return lseEarly; }, masked, rows, kvCols,
                                             /*stepIndexArg=*/2, asIndex(rows), local);
        if (failed(r))
          return failure();
        // dV += P^T dO; dP = dO V^T; dS = P * (dP - D) (* score_mod'); dK += dS^T Q; dQ += dS K. The
        // transposed form holds P^T, dP^T and dS^T.
        SmallVector<Value> next;
        if (wantDV) {
          Value pb = arith::TruncFOp::create(b, loc, tileType(scoreShape, elemType), r->p);
          Value dvAcc = acc.back();
          next.push_back(tile::DotOp::create(b, loc, dvAcc.getType(), tr ? pb : trans(pb), dOt, dvAcc));
        }
        if (!wantDK)
          return next;
        Value dp = dpEarly ? dpEarly : dpDot();
        Value ds = scoreGradient(*r, dp, deltaEarly ? deltaEarly : loadRow(deltaView), masked);
        Value dsb = arith::TruncFOp::create(b, loc, tileType(scoreShape, elemType), ds);
        next.insert(next.begin(), tile::DotOp::create(b, loc, acc[0].getType(), tr ? dsb : trans(dsb),
                                                      tr ? again(qView, qt) : qt, acc[0]));
        // dQ in column chunks: each chunk's f32 sums are added and dropped before the next is computed.
        if (dqTransposed) {
          Value dqT = tile::DotOp::create(b, loc, tileType({headDim, bm}, f32), kTransForDq, dsb,
                                          splatF32(0.0, {headDim, bm}));
          tile::AtomicAddOp::create(b, loc, trans(dqT), dqView, ValueRange{q0s, c0});
          return next;
        }
        Value dsA = kForDq.empty() || !tr ? dsb : trans(dsb);
        for (auto [c, kc] : llvm::enumerate(kForDq)) {
          Value dq = tile::DotOp::create(b, loc, tileType({bm, dqChunk}, f32), dsA, kc, splatF32(0.0, {bm, dqChunk}));
          tile::AtomicAddOp::create(b, loc, dq, dqView, ValueRange{q0s, c32(static_cast<int64_t>(c) * dqChunk)});
        }
        return next;
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
        Value block = masked ? partialAt(t) : fullAt(t);
        FailureOr<SmallVector<Value>> next = step(block, masked, loop.getRegionIterArgs());
        if (failed(next))
          return failure();
        scf::YieldOp::create(b, loc, *next);
        acc.assign(loop.getResults().begin(), loop.getResults().end());
      }
      scf::YieldOp::create(b, loc, acc);
    }
    unsigned result = 0;
    for (auto [want, p, strided] : {std::tuple{wantDK, DK, SDK}, std::tuple{wantDV, DV, SDV}})
      if (want)
        tile::StoreOp::create(
            b, loc,
            arith::TruncFOp::create(b, loc, tileType({bn, headDim}, elemType), groupLoop.getResult(result++)).getResult(),
            view2d(ptr[p], strided, kvHead, seqKV), ValueRange{kv0, c0});
    finish();
    return success();
  };
  // dK and dV in one kernel, or (tiles.splitDkDv) dK in `_bwd` and dV in `_bwd_dv`, each on its own.
  if (failed(emitMain("_bwd", true, !tiles.splitDkDv)))
    return failure();
  if (tiles.splitDkDv && failed(emitMain("_bwd_dv", false, true)))
    return failure();
  // The classifier of the block lists, with the backward's signature: `<name>_bwd_block_mask` lists
  // the query blocks of each block of keys (its first ceil(Skv / BLOCK_N) program instances along x)
  // and, where dQ has a kernel of its own, the key blocks of each of that kernel's blocks of query
  // rows (the next ceil(Sq / DQ_BLOCK_M)), in one launch; grid y and z: Hq or 1, B or 1.
  if (lists) {
    FunctionType abi = kernel.getFunctionType();
    const unsigned keyListsArg = abi.getNumInputs() - 2;
    ListKernel spec{name + "_bwd_block_mask", abi, NumPtrs, {ListWalk{keyListsArg, true, bm, bn}}};
    if (dqTiles)
      spec.walks.push_back(ListWalk{keyListsArg + 1, false, dqTiles->blockM, dqTiles->blockN});
    if (failed(buildListKernel(spec)))
      return failure();
  }
  if (!dqTiles)
    return success();

  // --- deterministic dQ: one block of query rows, every key block the mask keeps for it -----------
  // The forward's loop shape: S = Q K^T and dP = dO V^T recomputed, dQ = scale * dS K summed in
  // registers in key order and stored once (no atomics, so two runs agree bit for bit).
  const int64_t qm = dqTiles->blockM, kn = dqTiles->blockN;
  keysAreRows = false;
  tileM = qm;
  tileN = kn;
  invariant = Shape::Row;
  shapes.clear();
  hoisted.clear();
  classify(op.getScoreMod(), /*isScore=*/true);
  classify(op.getMaskMod(), /*isScore=*/false);
  const SmallVector<int64_t> sShape = dims(Shape::Full);
  begin("_bwd_dq", dqTiles->numWarps, "flare.attention.block_m", qm);
  kernel->setAttr(tile::TileDialect::kScheduleAttrName, schedule(dqTiles->pingPong, dqTiles->producer));
  headIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
  Value qBlockIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
  Value qb0 = mul(qBlockIdx, c32(qm));
  Value qb1 = sub(smin(add(qb0, c32(qm)), seqQ), c1); // the last query row that exists
  Value kvOfQ = arith::DivUIOp::create(b, loc, headIdx, arith::DivUIOp::create(b, loc, headsQ, headsKV));
  Value kRows = view2d(ptr[K], SK, kvOfQ, seqKV), vRows = view2d(ptr[V], SV, kvOfQ, seqKV);
  Value qBlock = loadBlock(view2d(ptr[Q], SQ, headIdx, seqQ), qm, headDim, qb0, c0);
  Value dOBlock = loadBlock(view2d(ptr[DO], SDO, headIdx, seqQ), qm, headDim, qb0, c0);
  auto loadQRow = [&](Value p) {
    return tile::LoadOp::create(b, loc, tileType({qm}, f32), rowView(p, headIdx), ValueRange{qb0}, nullptr).getResult();
  };
  Value lseRows = loadQRow(ptr[LSE]), deltaRows = loadQRow(ptr[Delta]);
  Value qIdx = indexRange(qb0, qm);
  Value qIndex = asIndex(qIdx);
  if (failed(emitHoistedRegions(2, [&] { return qIndex; })))
    return failure();
  Value logKn = c32(llvm::Log2_64(kn));
  Value numKvBlocks = arith::ShRSIOp::create(b, loc, add(seqKV, c32(kn - 1)), logKn);
  // The key blocks: the mask's ranges, or this head's record of the block lists.
  Value lo, hi, flo, fhi, left, partialCount;
  BlockList list;
  if (lists) {
    list = listOf(queryLists, qBlockIdx, seqQ, qm, numKvBlocks, headsQ);
    flo = c0;
    fhi = list.fullCount;
    partialCount = list.partialCount;
  } else {
    auto [nonEmpty, full] = blocksOf(mask.root, BlockAxis{false, qb0, qb1, numKvBlocks, kn});
    lo = smax(nonEmpty.lo, c0);
    hi = smax(smin(nonEmpty.hi, numKvBlocks), lo);
    // Keys past Skv are masked: only key blocks wholly below Skv can be full. Query rows past Sq are
    // never stored, and a row of dQ depends on its own row of dS alone.
    flo = smin(smax(full.lo, lo), hi);
    fhi = smin(smax(smin(full.hi, arith::ShRSIOp::create(b, loc, seqKV, logKn)), flo), hi);
    left = sub(flo, lo);
    partialCount = add(left, sub(hi, fhi));
  }
  auto dqStep = [&](Value block, bool masked, Value acc) -> FailureOr<Value> {
    StepScope scope(*this);
    Value k0 = mul(block, c32(kn));
    // K feeds two dots (S and dQ): a copy each.
    auto loadKeys = [&](Value view, bool second = false) { return loadBlock(view, kn, headDim, k0, c0, second); };
    Value zeroS = splatF32(0.0, sShape);
    Value qk = tile::DotOp::create(b, loc, tileType(sShape, f32), qBlock, trans(loadKeys(kRows)), zeroS);
    Value keys = indexRange(k0, kn);
    FailureOr<Recomputed> r = recomputeP(qk, [&] { return lseRows; }, masked, qIdx, keys, /*stepIndexArg=*/3,
                                         asIndex(keys), scope.local);
    if (failed(r))
      return failure();
    Value dp = tile::DotOp::create(b, loc, tileType(sShape, f32), dOBlock, trans(loadKeys(vRows)), zeroS);
    Value ds = arith::TruncFOp::create(b, loc, tileType(sShape, elemType), scoreGradient(*r, dp, deltaRows, masked));
    return tile::DotOp::create(b, loc, acc.getType(), ds, loadKeys(kRows, true), acc).getResult();
  };
  Value acc = splatF32(0.0, {qm, headDim});
  // Key blocks [flo, fhi) without mask code, then [lo, flo) u [fhi, hi) with it.
  for (bool masked : {false, true}) {
    auto loop = scf::ForOp::create(b, loc, masked ? c0 : flo, masked ? partialCount : fhi, c1, ValueRange{acc});
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value block;
    if (lists)
      block = masked ? list.partialAt(*this, t) : list.fullAt(*this, t);
    else
      block = masked ? partialBlock(t, lo, left, fhi) : t;
    FailureOr<Value> next = dqStep(block, masked, loop.getRegionIterArgs()[0]);
    if (failed(next))
      return failure();
    scf::YieldOp::create(b, loc, *next);
    acc = loop.getResult(0);
  }
  tile::StoreOp::create(b, loc, arith::TruncFOp::create(b, loc, tileType({qm, headDim}, elemType), acc).getResult(),
                        view2d(ptr[DQ], SDQ, headIdx, seqQ), ValueRange{qb0, c0});
  finish();
  return success();
}

} // namespace flare::attn::generator
