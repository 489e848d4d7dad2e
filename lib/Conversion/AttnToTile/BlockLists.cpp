//===- BlockLists.cpp - the key blocks a mask keeps, classified at run time ---===//
//
// For a mask the compiler cannot classify by itself (`block_lists`, mask class generic: document
// ids, block tables, ...), the kernel `<name>_block_mask` evaluates mask_mod once on every element of
// the blocks the mask's linear part may keep and writes, per block of query rows, which key blocks
// are kept in part and which entirely (FlexAttention's BlockMask, derived from the same region). The
// attention kernel then iterates over those lists: full blocks without mask code, the others never.
//
// One record per (batch, head, block of query rows), or one shared by every batch entry / head when
// mask_mod does not read that argument: [partial count, full count, slots], numBlocks slots, the
// partial blocks' indices ascending from the front, the full blocks' from the back (a block is in
// one list at most, so the two never meet). dialects/Attn/Rationale.md, "Block lists".
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flare::attn::generator {

Value Generator::listRecord(Value lists, Value queryBlock, Value headsQ) {
  // ((batch x heads + head) x queryBlocks + queryBlock) x (2 + numBlocks) elements, in 64 bits.
  // (Operands that emit ops are built one statement each: the IR's order must not depend on the C++
  // compiler's order of evaluating arguments.)
  Value heads = listsPerHead() ? headsQ : c32(1);
  Value head = listsPerHead() ? headIdx : c32(0);
  Value batch = listsPerBatch() ? batchIdx : c32(0);
  const int64_t bm = config.getBlockM();
  Value roundUp = add(seqQ, c32(bm - 1));
  Value queryBlocks = arith::ShRSIOp::create(b, loc, roundUp, c32(llvm::Log2_64(bm)));
  Value batch64 = ext64(batch);
  Value heads64 = ext64(heads);
  Value head64 = ext64(head);
  Value unit = add(mul(batch64, heads64), head64);
  Value blocks64 = ext64(queryBlocks);
  Value block64 = ext64(queryBlock);
  Value row = add(mul(unit, blocks64), block64);
  Value recordSize = ext64(add(numBlocks, c32(2)));
  Value offset = mul(row, recordSize);
  return tile::AddPtrOp::create(b, loc, lists.getType(), lists, offset);
}

Generator::BlockList Generator::listOf(Value lists, Value queryBlock, Value headsQ) {
  BlockList list;
  list.record = listRecord(lists, queryBlock, headsQ);
  list.partialCount = tile::ScalarLoadOp::create(b, loc, i32Type, list.record, c32(0));
  list.fullCount = tile::ScalarLoadOp::create(b, loc, i32Type, list.record, c32(1));
  list.lastIndex = sub(numBlocks, c32(1));
  list.lastSlot = add(numBlocks, c32(1));
  return list;
}

// The loops also read one index past a list's end (the overlapped loop's extra last step, the full
// loop's last block when it has none), whose value is never used: clamped into the record.
Value Generator::BlockList::partialAt(Generator &g, Value t) {
  Value index = g.smin(t, lastIndex);
  Value slot = g.add(index, g.c32(2));
  return tile::ScalarLoadOp::create(g.b, g.loc, g.i32Type, record, slot);
}

Value Generator::BlockList::fullAt(Generator &g, Value t) {
  Value index = g.smax(t, g.c32(0));
  Value slot = g.sub(lastSlot, index);
  return tile::ScalarLoadOp::create(g.b, g.loc, g.i32Type, record, slot);
}

LogicalResult Generator::buildBlockMaskKernel(FunctionType abi) {
  const int64_t bm = config.getBlockM(), bn = config.getBlockN();
  if (op.getMaskMod().empty())
    return op.emitOpError("convert-attn-to-tile: block_lists need a mask_mod");
  b.setInsertionPoint(func);
  auto classifier = func::FuncOp::create(b, func.getLoc(), func.getName().str() + "_block_mask", abi);
  classifier->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
  classifier->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(4));
  // The launch: grid (ceil(Sq / block_m), Hq or 1, B or 1).
  classifier->setAttr("flare.attention.block_m", b.getI32IntegerAttr(static_cast<int32_t>(bm)));
  classifier->setAttr("flare.attention.block_n", b.getI32IntegerAttr(static_cast<int32_t>(bn)));
  classifier->setAttr("flare.attention.lists_per_batch", b.getI32IntegerAttr(listsPerBatch() ? 1 : 0));
  classifier->setAttr("flare.attention.lists_per_head", b.getI32IntegerAttr(listsPerHead() ? 1 : 0));
  Block *entry = classifier.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // The forward's arguments: q, k, v, o, [lse], aux pointers, heads_q, heads_kv, seq_q, seq_kv, aux
  // lengths, 12 strides, ..., and last the lists.
  const unsigned numAux = op.getAux().size();
  unsigned a = 4 + (op.getLse() ? 1 : 0);
  hoisted.clear();
  auxPtrs.clear();
  auxLens.clear();
  for (unsigned i = 0; i < numAux; ++i)
    auxPtrs.push_back(entry->getArgument(a++));
  Value headsQ = entry->getArgument(a);
  seqQ = entry->getArgument(a + 2);
  seqKV = entry->getArgument(a + 3);
  a += 4;
  for (unsigned i = 0; i < numAux; ++i)
    auxLens.push_back(entry->getArgument(a++));
  Value lists = entry->getArguments().back();

  Value mBlock = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
  headIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
  batchIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
  Value c0 = c32(0), c1 = c32(1);
  q0 = mul(mBlock, c32(bm));
  Value rowEnd = smin(add(q0, c32(bm)), seqQ);
  q1 = sub(rowEnd, c1);
  numBlocks = ceilBlocks(seqKV);
  qRows = indexRange(q0, bm);
  if (failed(emitHoistedRegions(2, [&] { return asIndex(qRows); })))
    return failure();
  // Only the blocks the mask's linear part may keep are looked at.
  auto [nonEmpty, full] = blocksOf(mask.root, BlockAxis{false, q0, q1, numBlocks, bn});
  (void)full; // every block is evaluated: a full one is found full
  Value lo = smax(nonEmpty.lo, c0);
  Value hi = smax(smin(nonEmpty.hi, numBlocks), lo);
  Value record = listRecord(lists, mBlock, headsQ);
  Value rowInside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, qRows, splat(seqQ, {bm}));
  Value rowsInside = broadcastRows(rowInside, bn);
  // A block is full when it keeps all its rows' (those below Sq) bn keys.
  Value validRows = sub(rowEnd, q0);
  Value fullCount = mul(validRows, c32(bn));
  Value lastSlot = add(numBlocks, c1);
  auto splatI32 = [&](int32_t v) {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(tileType({bm, bn}, i32Type), b.getI32IntegerAttr(v)));
  };
  Value zeros = splatI32(0), ones = splatI32(1);

  auto loop = scf::ForOp::create(b, loc, lo, hi, c1, ValueRange{c0, c0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    StepScope scope(*this);
    Value t = loop.getInductionVar();
    Value partials = loop.getRegionIterArgs()[0], fulls = loop.getRegionIterArgs()[1];
    Value kvCols = indexRange(mul(t, c32(bn)), bn);
    Region &maskMod = op.getMaskMod();
    scope.local[maskMod.front().getArgument(3)] = asIndex(kvCols);
    if (failed(emitRegion(maskMod, /*hoistedPart=*/false, scope.local)))
      return failure();
    Value user = at(cast<YieldOp>(maskMod.front().getTerminator()).getValue(), Shape::Full);
    Value colInside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, kvCols, splat(seqKV, {bn}));
    Value colsInside = broadcastCols(colInside, bm);
    Value kept = arith::AndIOp::create(b, loc, user, colsInside);
    kept = arith::AndIOp::create(b, loc, kept, rowsInside);
    // The kept elements, counted: none (empty), all (full) or some (partial).
    Value counts = arith::SelectOp::create(b, loc, kept, ones, zeros);
    Value perRow = tile::ReduceOp::create(b, loc, tileType({bm}, i32Type), tile::ReduceKind::sum, counts, 1);
    Value count = tile::ReduceOp::create(b, loc, i32Type, tile::ReduceKind::sum, perRow, 0);
    Value isFull = cmp(arith::CmpIPredicate::eq, count, fullCount);
    Value any = cmp(arith::CmpIPredicate::sgt, count, c0);
    Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
    Value notFull = arith::XOrIOp::create(b, loc, isFull, yes);
    Value isPartial = arith::AndIOp::create(b, loc, any, notFull);
    // Both slots take the block unconditionally: a slot past its list's count is free (the two lists
    // together hold at most the blocks looked at so far), and is overwritten by the next block of
    // that list or never read.
    Value partialSlot = add(partials, c32(2));
    tile::ScalarStoreOp::create(b, loc, t, record, partialSlot);
    Value fullSlot = sub(lastSlot, fulls);
    tile::ScalarStoreOp::create(b, loc, t, record, fullSlot);
    Value partialStep = arith::ExtUIOp::create(b, loc, i32Type, isPartial);
    Value nextPartials = add(partials, partialStep);
    Value fullStep = arith::ExtUIOp::create(b, loc, i32Type, isFull);
    Value nextFulls = add(fulls, fullStep);
    scf::YieldOp::create(b, loc, ValueRange{nextPartials, nextFulls});
  }
  tile::ScalarStoreOp::create(b, loc, loop.getResult(0), record, c0);
  tile::ScalarStoreOp::create(b, loc, loop.getResult(1), record, c1);
  func::ReturnOp::create(b, loc);
  return success();
}

} // namespace flare::attn::generator
