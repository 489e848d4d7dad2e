//===- KernelConstruction.cpp - the generated kernel around the KV loops ---===//
//
// The kernel function and its ABI, the program instance's scalars and views, the Q block, the KV
// loops over the mask's block ranges (full blocks without mask code), the persistent and split
// schedules' attributes, and the epilogue (O = acc / l, LSE).
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

namespace flare::attn::generator {

LogicalResult Generator::prepare() {
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  // Tiles are powers of two: a head dim in between is padded inside the kernel (the views keep the
  // tensors' widths, so loads fill the padding with zeros and stores skip it).
  realHeadDim = qType.getDimSize(3);
  realHeadDimV = cast<RankedTensorType>(op.getValue().getType()).getDimSize(3);
  headDim = paddedHeadDim(realHeadDim);
  headDimV = paddedHeadDim(realHeadDimV);
  elemType = qType.getElementType();
  f32 = b.getF32Type();
  i32Type = b.getI32Type();
  indexType = ranges.indexFitsI32() ? i32Type : Type(b.getI64Type());

  // The function must be exactly `return attn.attention(arguments)`.
  Block &entry = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret || &entry.front() != op.getOperation() || op->getNextNode() != ret ||
      ret.getOperands() != ValueRange(op->getResults()) ||
      llvm::any_of(op->getOperands(), [&](Value v) {
        auto arg = dyn_cast<BlockArgument>(v);
        return !arg || arg.getOwner() != &entry;
      }))
    return op.emitOpError("convert-attn-to-tile: the function '")
           << func.getName() << "' must consist of one attn.attention on its arguments and return its results";
  return success();
}

LogicalResult Generator::run() {
  if (failed(prepare()))
    return failure();
  if (!llvm::isPowerOf2_64(config.getBlockM()) || !llvm::isPowerOf2_64(config.getBlockN()))
    return op.emitOpError("convert-attn-to-tile: block sizes must be powers of two");
  if (op.isVarlen() && (config.has(ConfigSwitch::SplitKv) || config.has(ConfigSwitch::PackGqa)))
    return op.emitOpError("convert-attn-to-tile: split_kv and pack_gqa are not generated for packed "
                          "variable-length sequences (cu_seqlens)");
  if (config.has(ConfigSwitch::BlockLists) && (op.isVarlen() || op.isPaged() || op.getKvLens()))
    return op.emitOpError("convert-attn-to-tile: block_lists are not generated with kv_lens, a paged cache "
                          "or cu_seqlens (one list per block of a head's query rows assumes the same keys "
                          "for every sequence)");
  // A paged cache: a block of keys lies in one page, or is gathered in row pieces of the largest
  // power of two dividing the page size (keyPieceRows); block sizes are powers of two from 16 and
  // page sizes multiples of 16, so one of the two always holds.
  tileM = config.getBlockM();
  tileN = config.getBlockN();
  headsPerRow = config.has(ConfigSwitch::PackGqa);
  classify(op.getScoreMod(), /*isScore=*/true);
  classify(op.getMaskMod(), /*isScore=*/false);
  if (failed(buildKernel()))
    return failure();
  if (config.has(ConfigSwitch::SplitKv))
    buildCombineKernel(kernel.getFunctionType());
  if (config.has(ConfigSwitch::BlockLists) && failed(buildBlockMaskKernel(kernel.getFunctionType())))
    return failure();
  return success();
}

Value Generator::cacheRow(Value kv0) {
  if (sequenceStartKV) { // packed sequences: keys outside the sequence land far away
    Value inSequence = cmp(arith::CmpIPredicate::ult, kv0, seqKV);
    Value row = add(sequenceStartKV, kv0);
    return select(inSequence, row, c32(kFarAway));
  }
  if (!pageTableRow)
    return kv0;
  const int64_t pageSize = op.getPageSize();
  // Keys outside [0, seqKV) (kFarAway, a block past the end) read no table entry past the
  // sequence's last page and land far away: their copies fetch nothing.
  Value inSequence = cmp(arith::CmpIPredicate::ult, kv0, seqKV);
  Value page = arith::DivUIOp::create(b, loc, kv0, c32(pageSize));
  Value usedPage = arith::MinUIOp::create(b, loc, page, lastPage);
  Value within = arith::RemUIOp::create(b, loc, kv0, c32(pageSize));
  Value pageId = tile::ScalarLoadOp::create(b, loc, i32Type, pageTableRow, usedPage);
  Value firstRow = mul(pageId, pageRows);
  Value row = add(firstRow, within);
  return select(inSequence, row, c32(kFarAway));
}

int64_t Generator::keyPieceRows() {
  if (!op.isPaged())
    return 0;
  const int64_t pieceRows = pagePieceKeys(op.getPageSize()), bn = config.getBlockN();
  return bn > pieceRows ? pieceRows : 0;
}

SmallVector<Value> Generator::keyBlockRows(Value kv0) {
  const int64_t pieceRows = keyPieceRows();
  if (!pieceRows)
    return {cacheRow(kv0)};
  SmallVector<Value> rows;
  for (int64_t first = 0; first < config.getBlockN(); first += pieceRows)
    rows.push_back(cacheRow(first ? add(kv0, c32(first)) : kv0));
  return rows;
}

Value Generator::loadKeyBlock(Value view, int64_t width, ArrayRef<Value> rows) {
  SmallVector<Value> offsets(rows);
  offsets.push_back(c32(0));
  auto load = tile::LoadOp::create(b, loc, tileType({config.getBlockN(), width}, elemType), view, offsets, nullptr);
  if (rows.size() > 1)
    load.setRowPiecesAttr(b.getI64IntegerAttr(static_cast<int64_t>(rows.size())));
  return load;
}

LogicalResult Generator::buildKernel() {
  MLIRContext *ctx = op.getContext();
  const int64_t bm = config.getBlockM(), bn = config.getBlockN();
  auto ptrOf = [&](Type elem) { return tile::PtrType::get(ctx, elem); };
  Type i64Type = b.getI64Type();
  SmallVector<Type> args = {ptrOf(elemType), ptrOf(elemType), ptrOf(elemType), ptrOf(elemType)};
  bool withLse = static_cast<bool>(op.getLse());
  if (withLse)
    args.push_back(ptrOf(f32));
  for (Value aux : op.getAux())
    args.push_back(ptrOf(cast<RankedTensorType>(aux.getType()).getElementType()));
  args.append(4, i32Type); // heads_q, heads_kv, seq_q, seq_kv
  args.append(op.getAux().size(), i32Type);
  args.append(12, i64Type); // (batch, head, row) strides of q, k, v, o
  // Split keys: the parts' outputs [B, Hq, splits, Sq, D] and LSEs [B, Hq, splits, Sq] (dense f32) and
  // the number of splits (grid z = B x splits).
  // Caches: per-sequence key counts (i32 [B]); a paged cache's table (i32 [B, max_pages]), its row
  // stride, the view rows one page advances (K's page stride / row stride, the same for V) and the
  // cache's rows (num_pages x that).
  const bool withLens = static_cast<bool>(op.getKvLens()), paged = op.isPaged();
  if (withLens)
    args.push_back(ptrOf(i32Type));
  if (paged)
    args.append({ptrOf(i32Type), i32Type, i32Type, i32Type});
  // Packed variable-length sequences: the offsets of queries and keys (i32 [B + 1] each).
  const bool varlen = op.isVarlen();
  if (varlen)
    args.append({ptrOf(i32Type), ptrOf(i32Type)});
  const bool splitKv = config.has(ConfigSwitch::SplitKv);
  if (splitKv)
    args.append({ptrOf(f32), ptrOf(f32), i32Type});
  // Block lists (i32, BlockLists.cpp): the key blocks each block of query rows visits.
  const bool blockLists = config.has(ConfigSwitch::BlockLists);
  if (blockLists)
    args.push_back(ptrOf(i32Type));

  b.setInsertionPoint(func);
  kernel = func::FuncOp::create(b, func.getLoc(), func.getName(), b.getFunctionType(args, {}));
  kernel->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
  kernel->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(config.getNumWarps()));
  kernel->setAttr("flare.attention.block_m", b.getI32IntegerAttr(static_cast<int32_t>(bm)));
  kernel->setAttr("flare.attention.block_n", b.getI32IntegerAttr(static_cast<int32_t>(bn)));
  kernel->setAttr(kKernelConfigAttrName, config);
  if (config.has(ConfigSwitch::PackGqa)) // the launcher's grid: y over KV heads, x over a group's rows
    kernel->setAttr("flare.attention.pack_gqa", b.getI32IntegerAttr(1));
  // The GPU layer's part of the configuration, as the kernel's schedule.
  const bool persistent = config.has(ConfigSwitch::Persistent);
  const bool peel = config.has(ConfigSwitch::PeelFirstStep) && config.has(ConfigSwitch::Overlap);
  kernel->setAttr(tile::TileDialect::kScheduleAttrName,
                  tile::ScheduleAttr::get(ctx, config.has(ConfigSwitch::PingPong), config.getMinBlocksPerSM(),
                                          config.has(ConfigSwitch::Producer), persistent,
                                          !persistent || config.has(ConfigSwitch::PairInstances),
                                          config.has(ConfigSwitch::OperandsAfterFirstStage),
                                          config.has(ConfigSwitch::PrefetchNextInstance),
                                          config.has(ConfigSwitch::InvariantAInRegisters),
                                          config.has(ConfigSwitch::UniformWarpgroup), peel,
                                          persistent && config.has(ConfigSwitch::DynamicInstances)));
  Block *entry = kernel.addEntryBlock();
  b.setInsertionPointToStart(entry);
  // The parts fill one wave of the device (the launcher's rule): let <name>_combine, which waits for
  // them, start its CTAs while the last parts end (when the runtime launches it so).
  if (splitKv)
    tile::AllowDependentLaunchOp::create(b, loc);

  unsigned a = 0;
  Value qPtr = entry->getArgument(a++), kPtr = entry->getArgument(a++), vPtr = entry->getArgument(a++),
        oPtr = entry->getArgument(a++);
  Value lsePtr = withLse ? entry->getArgument(a++) : Value();
  for (size_t i = 0; i < op.getAux().size(); ++i)
    auxPtrs.push_back(entry->getArgument(a++));
  Value headsQ = entry->getArgument(a++), headsKV = entry->getArgument(a++);
  seqQ = entry->getArgument(a++);
  seqKV = entry->getArgument(a++);
  for (size_t i = 0; i < op.getAux().size(); ++i)
    auxLens.push_back(entry->getArgument(a++));
  SmallVector<Value> strides;
  for (int i = 0; i < 12; ++i)
    strides.push_back(entry->getArgument(a++));
  Value lensPtr = withLens ? entry->getArgument(a++) : Value();
  Value tablePtr, tableStride, cacheRows;
  if (paged) {
    tablePtr = entry->getArgument(a++);
    tableStride = entry->getArgument(a++);
    pageRows = entry->getArgument(a++);
    cacheRows = entry->getArgument(a++);
  }
  Value cuQPtr, cuKPtr;
  if (varlen) {
    cuQPtr = entry->getArgument(a++);
    cuKPtr = entry->getArgument(a++);
  }
  Value partOPtr, partLsePtr, numSplits;
  if (splitKv) {
    partOPtr = entry->getArgument(a++);
    partLsePtr = entry->getArgument(a++);
    numSplits = entry->getArgument(a++);
  }
  Value listsPtr = blockLists ? entry->getArgument(a++) : Value();

  // Grid (ceil(Sq / BLOCK_M), Hq, B); query head h reads key/value head h / (Hq / Hkv).
  Value mBlock = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
  Value lastBlock = sub(tile::NumProgramsOp::create(b, loc, tile::Axis::x), c32(1));
  // Packed GQA rows are (head in group, query) pairs: later rows do not keep more keys.
  const bool packGqa = headsPerRow;
  const bool rowsGrow = config.has(ConfigSwitch::RowsGrow) && !packGqa;
  Value heavyFirstHead, heavyFirstBatch;
  if (rowsGrow && config.has(ConfigSwitch::Persistent) && config.has(ConfigSwitch::DynamicInstances)) {
    // CTAs that take their instances from a shared counter take them in the grid's order (x
    // fastest). Heaviest first (the longest-first rule of list scheduling) within groups of
    // kHeavyFirstUnits (head, batch) units: the group's row blocks n - 1 first for each of its units,
    // then n - 2, ..., so that no unit's heavy blocks start after lighter ones of its group and the
    // last instances to start are light. Over the whole grid at once (one group) the CTAs running
    // together read as many heads' K and V as there are CTAs, which L2 does not hold: causal, head
    // dim 128, 0.57x the persistent kernel at 2k tokens on an H100; groups of 1 / 4 / 16 units
    // 0.89-0.98x / 0.97-1.02x / 0.99-1.02x at 2k-16k (bench/NOTES.md vl3).
    constexpr int64_t kHeavyFirstUnits = 16;
    Value y = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
    Value z = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
    Value heads = tile::NumProgramsOp::create(b, loc, tile::Axis::y);
    Value batches = tile::NumProgramsOp::create(b, loc, tile::Axis::z);
    Value blocks = add(lastBlock, c32(1));
    Value units = mul(heads, batches);
    Value yz = add(y, mul(z, heads));
    Value handedOut = add(mBlock, mul(yz, blocks)); // the counter's order
    Value perGroup = mul(c32(kHeavyFirstUnits), blocks);
    Value group = arith::DivUIOp::create(b, loc, handedOut, perGroup);
    Value inGroup = arith::RemUIOp::create(b, loc, handedOut, perGroup);
    Value firstUnit = mul(group, c32(kHeavyFirstUnits));
    Value groupUnits = smin(c32(kHeavyFirstUnits), sub(units, firstUnit)); // the last group may be short
    Value rank = arith::DivUIOp::create(b, loc, inGroup, groupUnits);
    Value unit = add(firstUnit, arith::RemUIOp::create(b, loc, inGroup, groupUnits));
    heavyFirstHead = arith::RemUIOp::create(b, loc, unit, heads);
    heavyFirstBatch = arith::DivUIOp::create(b, loc, unit, heads);
    mBlock = sub(lastBlock, rank);
  } else if (rowsGrow && config.has(ConfigSwitch::Persistent)) {
    // A persistent kernel's CTA runs two consecutive programs in turn (convert-tgpu-to-nvvm): the
    // pair takes one heavy and one light query block of a head (x even: block n - 1 - x / 2, x odd:
    // block x / 2), the same work for every pair, so that the fixed assignment ends evenly.
    Value half = arith::ShRUIOp::create(b, loc, mBlock, c32(1));
    Value light = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        arith::AndIOp::create(b, loc, mBlock, c32(1)), c32(0));
    mBlock = arith::SelectOp::create(b, loc, light, half, sub(lastBlock, half));
  } else if (rowsGrow) {
    // Heaviest first: the GPU starts programs in index order, so the last ones to start are the
    // lightest and the last wave ends evenly.
    mBlock = sub(lastBlock, mBlock);
  }
  headIdx = heavyFirstHead ? heavyFirstHead : tile::ProgramIdOp::create(b, loc, tile::Axis::y).getResult();
  batchIdx = heavyFirstBatch ? heavyFirstBatch : tile::ProgramIdOp::create(b, loc, tile::Axis::z).getResult();
  Value splitIdx;
  if (splitKv) {
    // Grid z runs over (batch, split), the splits fastest.
    splitIdx = arith::RemUIOp::create(b, loc, batchIdx, numSplits);
    batchIdx = arith::DivUIOp::create(b, loc, batchIdx, numSplits);
  }
  // The allocation's key rows (the views' extent); the sequence's own keys (kv_lens: clamped into
  // [0, Skv]) bound the blocks visited, the masks and attn.kv_len.
  Value keyRows = paged ? cacheRows : seqKV;
  // Packed sequences: Sq and Skv are the packed totals (the views' extent); this sequence is rows
  // seqStartQ .. of Q and O and seqStartKV .. of K and V, with its own lengths.
  Value queryRows = seqQ, seqStartQ, seqStartKV;
  if (varlen) {
    Value next = add(batchIdx, c32(1));
    seqStartQ = tile::ScalarLoadOp::create(b, loc, i32Type, cuQPtr, batchIdx);
    Value endQ = tile::ScalarLoadOp::create(b, loc, i32Type, cuQPtr, next);
    seqStartKV = tile::ScalarLoadOp::create(b, loc, i32Type, cuKPtr, batchIdx);
    Value endKV = tile::ScalarLoadOp::create(b, loc, i32Type, cuKPtr, next);
    Value zero = c32(0);
    Value countQ = sub(endQ, seqStartQ);
    Value countKV = sub(endKV, seqStartKV);
    seqQ = smax(countQ, zero);
    seqKV = smax(countKV, zero);
    sequenceStartKV = seqStartKV;
  }
  if (withLens) {
    Value len = tile::ScalarLoadOp::create(b, loc, i32Type, lensPtr, batchIdx);
    Value nonNegative = smax(len, c32(0));
    seqKV = smin(nonNegative, seqKV);
  }
  if (paged) {
    // (Operands that emit ops are built one statement each: the IR's order must not depend on the
    // C++ compiler's order of evaluating arguments.)
    Value stride64 = ext64(tableStride);
    Value batch64 = ext64(batchIdx);
    Value rowOffset = arith::MulIOp::create(b, loc, batch64, stride64);
    pageTableRow = tile::AddPtrOp::create(b, loc, tablePtr.getType(), tablePtr, rowOffset);
    Value someKey = smax(seqKV, c32(1));
    Value pageSize = c32(op.getPageSize());
    Value one = c32(1);
    Value lastKey = sub(someKey, one);
    lastPage = arith::DivUIOp::create(b, loc, lastKey, pageSize);
  }
  Value groupSize = arith::DivUIOp::create(b, loc, headsQ, headsKV);
  // Packed GQA: grid y runs over KV heads, and the instance's rows are rows rowStart.. of the group's
  // (head in group, query) pairs, the query fastest; rows past the group's are computed, never stored.
  Value kvHead = packGqa ? headIdx : arith::DivUIOp::create(b, loc, headIdx, groupSize).getResult();
  Value firstHead = packGqa ? mul(kvHead, groupSize) : headIdx;
  Value unitRows = packGqa ? mul(groupSize, seqQ) : seqQ; // the rows of one (batch, grid y) unit
  Value rowStart = mul(mBlock, c32(bm));
  if (packGqa) {
    // Every query of the group may be in the block: the mask ranges cover queries 0 .. Sq - 1.
    q0 = c32(0);
    q1 = sub(seqQ, c32(1));
  } else {
    q0 = rowStart;
    // The last row that exists: rows past Sq are computed but never stored, and must not widen the
    // range of visited blocks.
    q1 = sub(smin(add(q0, c32(bm)), seqQ), c32(1));
  }
  numBlocks = ceilBlocks(seqKV);
  // Packed sequences: the launch covers the longest sequence's row blocks; the blocks past a shorter
  // one's end exit at once, or in a persistent kernel whose CTAs take their instances from a shared
  // counter are never taken (a persistent kernel of fixed turns runs them: they visit no key block,
  // below).
  if (varlen && (!config.has(ConfigSwitch::Persistent) || config.has(ConfigSwitch::DynamicInstances))) {
    Value noRows = cmp(arith::CmpIPredicate::sge, rowStart, seqQ);
    tile::ExitIfOp::create(b, loc, noRows);
  }

  Value b64 = ext64(batchIdx);
  auto sliceOf = [&](Value ptr, int tensor, Value head) {
    Value off = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, b64, strides[3 * tensor]),
                                      arith::MulIOp::create(b, loc, ext64(head), strides[3 * tensor + 1]));
    return tile::AddPtrOp::create(b, loc, ptr.getType(), ptr, off).getResult();
  };
  Value c0 = c32(0), c1 = c32(1), dQK = c32(realHeadDim), dV = c32(realHeadDimV);
  // Q and K are D_qk wide, V and O D_v (tensors 0, 1 and 2, 3).
  auto widthOf = [&](int tensor) { return tensor < 2 ? dQK : dV; };
  auto view2d = [&](Value base, Value rows, int tensor) {
    Value rowStride = arith::TruncIOp::create(b, loc, i32Type, strides[3 * tensor + 2]);
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 2), base,
                                    ValueRange{rows, widthOf(tensor)}, ValueRange{rowStride, c1})
        .getResult();
  };
  // A group's rows in q and o: one stride, the head stride for one query per head, else the row
  // stride (the launcher checks that the head stride is Sq rows then).
  auto packedView = [&](Value ptr, int tensor) {
    Value rowStride = arith::SelectOp::create(b, loc, cmp(arith::CmpIPredicate::eq, seqQ, c1),
                                              strides[3 * tensor + 1], strides[3 * tensor + 2]);
    Value rowStride32 = arith::TruncIOp::create(b, loc, i32Type, rowStride);
    Value base = sliceOf(ptr, tensor, firstHead);
    return tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, elemType, 2), base,
                                    ValueRange{unitRows, widthOf(tensor)}, ValueRange{rowStride32, c1})
        .getResult();
  };
  // A paged cache's K and V: one view of all pages' rows of this KV head (row r of page p at view
  // row p x pageRows + r), so that a block's copy is one strided box wherever its page lies. Packed
  // sequences: one view of all of them per head (B is 1 in the tensors).
  auto headSlice = [&](Value ptr, int tensor, Value head) {
    Value off = arith::MulIOp::create(b, loc, ext64(head), strides[3 * tensor + 1]);
    return tile::AddPtrOp::create(b, loc, ptr.getType(), ptr, off).getResult();
  };
  Value qRowStart = rowStart; // the Q block's first row in qView
  Value oPackedView;          // packed sequences: O's view of every packed row
  // Packed sequences: Q through the view of every sequence's rows (its extent is known to the host:
  // a TMA copy), O through one of this sequence's rows only, so that no row of the next sequence is
  // written.
  if (varlen) {
    qView = view2d(headSlice(qPtr, 0, headIdx), queryRows, 0);
    qRowStart = add(seqStartQ, rowStart);
  } else {
    qView = packGqa ? packedView(qPtr, 0) : view2d(sliceOf(qPtr, 0, headIdx), seqQ, 0);
  }
  const bool oneViewOfRows = paged || varlen;
  kView = view2d(oneViewOfRows ? headSlice(kPtr, 1, kvHead) : sliceOf(kPtr, 1, kvHead), keyRows, 1);
  vView = view2d(oneViewOfRows ? headSlice(vPtr, 2, kvHead) : sliceOf(vPtr, 2, kvHead), keyRows, 2);
  if (varlen) {
    Value firstRow = arith::MulIOp::create(b, loc, ext64(seqStartQ), strides[3 * 3 + 2]);
    Value oHead = headSlice(oPtr, 3, headIdx);
    Value oBase = tile::AddPtrOp::create(b, loc, oPtr.getType(), oHead, firstRow);
    oView = view2d(oBase, seqQ, 3);
    oPackedView = view2d(oHead, queryRows, 3);
  } else {
    oView = packGqa ? packedView(oPtr, 3) : view2d(sliceOf(oPtr, 3, headIdx), seqQ, 3);
  }
  if (withLse && varlen) {
    // [1, Hq, total_q]: this head's row of the packed LSE, from the sequence's first query.
    Value rows64 = ext64(queryRows);
    Value head64 = ext64(headIdx);
    Value headRow = arith::MulIOp::create(b, loc, head64, rows64);
    Value first = arith::AddIOp::create(b, loc, headRow, ext64(seqStartQ));
    Value base = tile::AddPtrOp::create(b, loc, lsePtr.getType(), lsePtr, first);
    lseView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), base, ValueRange{seqQ}, ValueRange{c1});
  } else if (withLse) {
    // LSE is a dense [B, Hq, Sq] tensor: a group's rows are consecutive.
    Value head = ext64(firstHead);
    Value firstRow = arith::MulIOp::create(b, loc, b64, ext64(headsQ));
    Value row = arith::AddIOp::create(b, loc, firstRow, head);
    Value base = tile::AddPtrOp::create(b, loc, lsePtr.getType(), lsePtr,
                                        arith::MulIOp::create(b, loc, row, ext64(seqQ)));
    lseView =
        tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), base, ValueRange{unitRows}, ValueRange{c1});
  }
  qTile = tile::LoadOp::create(b, loc, tileType({bm, headDim}, elemType), qView, ValueRange{qRowStart, c0}, nullptr);
  // The split parts' rows: (unit, part) blocks of unitRows rows, a unit being (batch, query head), or
  // (batch, KV head) when packed.
  Value unitHead = ext64(packGqa ? kvHead : headIdx);
  Value unitBase = mul(b64, ext64(packGqa ? headsKV : headsQ));
  Value unitIndex = add(unitBase, unitHead);

  // Region values that do not depend on the KV block.
  if (packGqa) {
    // Row p of the group is query p % Sq of head firstHead + p / Sq (rows past the group's clamped
    // to its last head).
    Value p = indexRange(rowStart, bm);
    Value sq = splat(seqQ, {bm});
    qRows = arith::RemUIOp::create(b, loc, p, sq);
    Value lastInGroup = splat(sub(groupSize, c1), {bm});
    Value inGroup = arith::MinUIOp::create(b, loc, arith::DivUIOp::create(b, loc, p, sq), lastInGroup);
    headIdx = arith::AddIOp::create(b, loc, splat(firstHead, {bm}), inGroup);
  } else {
    qRows = indexRange(q0, bm);
  }
  if (failed(emitHoistedRegions(2, [&] { return asIndex(qRows); })))
    return failure();

  // Which KV blocks to visit, and which of them need no mask: the mask's ranges, or the lists.
  Value lo, hi;
  Interval full;
  if (blockLists) {
    blockList = listOf(listsPtr, mBlock, seqQ, config.getBlockM(), numBlocks, headsQ);
    lo = c0;
    hi = c0;
  } else {
    auto [nonEmpty, fullRange] = blocksOf(mask.root, BlockAxis{false, q0, q1, numBlocks, bn});
    full = fullRange;
    lo = smax(nonEmpty.lo, c0);
    hi = smax(smin(nonEmpty.hi, numBlocks), lo);
  }
  if (varlen) { // an instance past its sequence's last query block visits nothing
    Value hasRows = cmp(arith::CmpIPredicate::slt, rowStart, seqQ);
    hi = select(hasRows, hi, lo);
  }
  // Stream-K (`split_tail`, no mask: every instance visits blocks [0, numBlocks)): this
  // instance may run only blocks [lo + splitLo, lo + splitHi) of them.
  Value splitLo, splitHi;
  if (config.has(ConfigSwitch::SplitTail)) {
    auto range = tile::SplitRangeOp::create(b, loc, numBlocks);
    splitLo = range.getLo();
    splitHi = range.getHi();
    hi = smin(add(lo, splitHi), hi);
    lo = smin(add(lo, splitLo), hi);
  }
  if (splitKv) {
    // Part `split` of `splits` takes the next ceil((hi - lo) / splits) of the blocks the mask keeps
    // for these rows (none where they run out).
    // (Operands that emit ops are built one statement each, so that the IR's order does not depend
    // on the C++ compiler's order of evaluating arguments.)
    Value roundUp = sub(numSplits, c32(1));
    Value kept = sub(hi, lo);
    Value chunk = arith::DivUIOp::create(b, loc, add(kept, roundUp), numSplits);
    lo = smin(add(lo, mul(splitIdx, chunk)), hi);
    hi = smin(add(lo, chunk), hi);
  }
  Value flo = hi, fhi = hi;
  bool fullLoop = mask.root.mayHaveFullBlocks() || blockLists;
  if (blockLists) { // iterations 0 .. count - 1 of each list
    flo = c0;
    fhi = blockList.fullCount;
  } else if (fullLoop) {
    // Keys past Skv are masked: only blocks wholly below Skv can be full.
    Value fullHi = smin(full.hi, floorBlocks(seqKV));
    flo = smin(smax(full.lo, lo), hi);
    fhi = smin(smax(fullHi, flo), hi);
  }

  // Masked steps compare each key with its row's last kept key (keptKeyBound), when the mask allows.
  // (bench/NOTES.md a36: +2-4% at 512 causal, +1-2% at 1k-2k.)
  if (mask.hasMask && mask.root.kind != MaskNode::Kind::True)
    if (Value bound = keptKeyBound(mask.root))
      keptBound = arith::MinSIOp::create(b, loc, bound, splat(sub(seqKV, c32(1)), {bm}));
  Value ninf = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tileType({bm}, f32), b.getF32FloatAttr(-std::numeric_limits<float>::infinity())));
  // One normalizer per row (attn-partial-row-sums splits it where the configuration asks).
  SmallVector<Value> state = {ninf, splatF32(0.0, {bm}), splatF32(0.0, {bm, headDimV})};
  // Every bound is computed before the first loop: the lowering may then issue the second loop's
  // first copies from the first loop's last iteration (one ring of stages for both), and
  // attn-overlap the first P V of a loop from the block the loop before visited last.
  Value left = blockLists ? Value() : sub(flo, lo);
  Value partialCount = blockLists ? blockList.partialCount : add(left, sub(hi, fhi));
  auto partialBlock = [&](Value t) {
    return blockLists ? blockList.partialAt(*this, t) : Generator::partialBlock(t, lo, left, fhi);
  };
  auto fullBlock = [&](Value t) { return blockLists ? blockList.fullAt(*this, t) : t; };
  // Iterations [lower, upper) over the blocks blockAt(t); the canonical step (attn-overlap
  // pipelines its P V one step behind where the configuration asks).
  auto loop = [&](Value lower, Value upper, bool partial) -> LogicalResult {
    auto forOp = scf::ForOp::create(b, loc, lower, upper, c1, state);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value block = partial ? partialBlock(forOp.getInductionVar()) : fullBlock(forOp.getInductionVar());
    FailureOr<SmallVector<Value>> next = kvStep(block, /*masked=*/partial, forOp.getRegionIterArgs());
    if (failed(next))
      return failure();
    scf::YieldOp::create(b, loc, *next);
    state.assign(forOp.getResults().begin(), forOp.getResults().end());
    return success();
  };
  if (fullLoop && failed(loop(flo, fhi, /*partial=*/false)))
    return failure();
  if (failed(loop(c0, partialCount, /*partial=*/true)))
    return failure();

  // O = acc / l, LSE = (m + log2 l) * ln 2; a row that kept no key (l = 0) gives 0 and -inf.
  auto epilogue = [&](Value m, Value l, Value acc) {
    Value zero = splatF32(0.0, {bm}), one = splatF32(1.0, {bm});
    Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value lSafe = arith::SelectOp::create(b, loc, noKey, one, l);
    Value invL = arith::DivFOp::create(b, loc, one, lSafe);
    Value out = arith::MulFOp::create(b, loc, acc, broadcastRows(invL, headDimV));
    if (!splitKv)
      out = arith::TruncFOp::create(b, loc, tileType({bm, headDimV}, elemType), out);
    if (oPackedView) {
      // Packed sequences: a block wholly inside its sequence goes through the view of every packed
      // row (an extent the host knows: a TMA store); the sequence's last, partial block through the
      // view of its own rows, which writes no row of the next sequence.
      Value end = add(rowStart, c32(bm));
      Value whole = cmp(arith::CmpIPredicate::sle, end, seqQ);
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, whole, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      tile::StoreOp::create(b, loc, out, oPackedView, ValueRange{qRowStart, c0}); // the Q block's rows
      b.setInsertionPointToStart(ifOp.elseBlock());
      tile::StoreOp::create(b, loc, out, oView, ValueRange{rowStart, c0});
    } else {
      tile::StoreOp::create(b, loc, out, oView, ValueRange{rowStart, c0});
    }
    if (withLse || splitKv) {
      Value log2l = math::Log2Op::create(b, loc, lSafe);
      Value lse = arith::MulFOp::create(b, loc, arith::AddFOp::create(b, loc, m, log2l), splatF32(kLn2, {bm}));
      lse = arith::SelectOp::create(b, loc, noKey, ninf, lse);
      tile::StoreOp::create(b, loc, lse, lseView, ValueRange{rowStart});
    }
  };
  if (splitKv) {
    // This part's output, normalised, and its LSE, in f32 for <name>_combine.
    Value part = ext64(splitIdx);
    Value rowOfPart0 = mul(unitIndex, ext64(numSplits));
    Value row = add(rowOfPart0, part);
    Value rowBase = arith::MulIOp::create(b, loc, row, ext64(unitRows));
    Value oBase = tile::AddPtrOp::create(b, loc, partOPtr.getType(), partOPtr,
                                         arith::MulIOp::create(b, loc, rowBase, ext64(dV)));
    oView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 2), oBase, ValueRange{unitRows, dV},
                                     ValueRange{dV, c1});
    Value lseBase = tile::AddPtrOp::create(b, loc, partLsePtr.getType(), partLsePtr, rowBase);
    lseView = tile::MakeViewOp::create(b, loc, tile::ViewType::get(ctx, f32, 1), lseBase, ValueRange{unitRows},
                                       ValueRange{c1});
  }
  if (!config.has(ConfigSwitch::SplitTail)) {
    epilogue(state[0], state[1], state[2]);
    func::ReturnOp::create(b, loc);
    return success();
  }
  // A split instance: the piece that ends it (lo > 0) hands its state over and stores nothing; the
  // piece that began it (lo == 0, hi < steps) merges that in first. Each path has its own epilogue
  // (the branches are the same for the whole CTA): the unsplit one carries no merged values.
  Value writer = cmp(arith::CmpIPredicate::ne, splitLo, c0);
  Value owner = cmp(arith::CmpIPredicate::ne, splitHi, numBlocks);
  auto hand = scf::IfOp::create(b, loc, TypeRange{}, writer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(hand.thenBlock());
    tile::SplitStoreOp::create(b, loc, ValueRange{state[0], state[1], state[2]});
    b.setInsertionPointToStart(hand.elseBlock());
    auto merge = scf::IfOp::create(b, loc, TypeRange{}, owner, /*withElseRegion=*/true);
    b.setInsertionPointToStart(merge.thenBlock());
    SmallVector<Type> types = {state[0].getType(), state[1].getType(), state[2].getType()};
    auto theirs = tile::SplitLoadOp::create(b, loc, types);
    Value m1 = state[0], m2 = theirs.getResult(0);
    Value m = arith::MaximumFOp::create(b, loc, m1, m2);
    // Rows that kept no key in either piece: both maxima -inf, both factors 0.
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, ninf);
    Value ref = arith::SelectOp::create(b, loc, none, splatF32(0.0, {bm}), m);
    Value a1 = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, m1, ref));
    Value a2 = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, m2, ref));
    Value l = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, state[1], a1),
                                    arith::MulFOp::create(b, loc, theirs.getResult(1), a2));
    Value acc = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, state[2], broadcastRows(a1, headDimV)),
                                      arith::MulFOp::create(b, loc, theirs.getResult(2), broadcastRows(a2, headDimV)));
    epilogue(m, l, acc);
    b.setInsertionPointToStart(merge.elseBlock());
    epilogue(state[0], state[1], state[2]);
  }
  func::ReturnOp::create(b, loc);
  return success();
}

} // namespace flare::attn::generator
