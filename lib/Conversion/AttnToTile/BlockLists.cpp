//===- BlockLists.cpp - the key blocks a mask keeps, classified at run time ---===//
//
// For a mask the compiler cannot classify by itself (`block_lists`, mask class generic: document
// ids, block tables, ...), the kernel `<name>_block_mask` evaluates mask_mod once on every element of
// the blocks the mask's linear part may keep and writes, per block of query rows, which key blocks
// are kept in part and which entirely (FlexAttention's BlockMask, derived from the same region). The
// attention kernel then iterates over those lists: full blocks without mask code, the others never.
//
// One record per (batch, head, block of query rows), or one shared by every batch entry / head when
// mask_mod does not read that argument: [partial count, full count, slots], one slot per key block,
// the partial blocks' indices ascending from the front, the full blocks' from the back (a block is in
// one list at most, so the two never meet). The backward's dK/dV kernels read the same form per
// block of keys, listing query blocks (buildListKernel's overQueries), its dQ kernel the forward's
// form for its own tiles. dialects/Attn/Rationale.md, "Block lists".
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flare::attn::generator {

Value Generator::listRecord(Value lists, Value block, Value fixedLen, int64_t fixedBlock, Value listed,
                            Value headsQ) {
  // ((batch x heads + head) x fixed blocks + block) x (2 + listed) elements, in 64 bits.
  // (Operands that emit ops are built one statement each: the IR's order must not depend on the C++
  // compiler's order of evaluating arguments.)
  Value heads = listsPerHead() ? headsQ : c32(1);
  Value head = listsPerHead() ? headIdx : c32(0);
  Value batch = listsPerBatch() ? batchIdx : c32(0);
  Value roundUp = add(fixedLen, c32(fixedBlock - 1));
  Value fixedBlocks = arith::ShRSIOp::create(b, loc, roundUp, c32(llvm::Log2_64(fixedBlock)));
  Value batch64 = ext64(batch);
  Value heads64 = ext64(heads);
  Value head64 = ext64(head);
  Value unit = add(mul(batch64, heads64), head64);
  Value blocks64 = ext64(fixedBlocks);
  Value block64 = ext64(block);
  Value row = add(mul(unit, blocks64), block64);
  Value recordSize = ext64(add(listed, c32(2)));
  Value offset = mul(row, recordSize);
  return tile::AddPtrOp::create(b, loc, lists.getType(), lists, offset);
}

Generator::BlockList Generator::listOf(Value lists, Value block, Value fixedLen, int64_t fixedBlock, Value listed,
                                       Value headsQ) {
  BlockList list;
  list.record = listRecord(lists, block, fixedLen, fixedBlock, listed, headsQ);
  list.partialCount = tile::ScalarLoadOp::create(b, loc, i32Type, list.record, c32(0));
  list.fullCount = tile::ScalarLoadOp::create(b, loc, i32Type, list.record, c32(1));
  list.lastIndex = sub(listed, c32(1));
  list.lastSlot = add(listed, c32(1));
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

Value Generator::BlockList::anyAt(Generator &g, Value t) {
  // Slot t + 2 for t below the partial count, else the (t - partial count)-th full block's.
  Value isPartial = g.cmp(arith::CmpIPredicate::slt, t, partialCount);
  Value partialIndex = g.smin(t, lastIndex);
  Value partialSlot = g.add(partialIndex, g.c32(2));
  Value pastPartials = g.sub(t, partialCount);
  Value fullIndex = g.smax(pastPartials, g.c32(0));
  Value fullSlot = g.sub(lastSlot, fullIndex);
  Value slot = g.select(isPartial, partialSlot, fullSlot);
  return tile::ScalarLoadOp::create(g.b, g.loc, g.i32Type, record, slot);
}

LogicalResult Generator::buildBlockMaskKernel(FunctionType abi) {
  // The forward's arguments: q, k, v, o, [lse], aux pointers, heads_q, heads_kv, seq_q, seq_kv, aux
  // lengths, 12 strides, ..., and last the lists.
  const unsigned firstAux = 4 + (op.getLse() ? 1 : 0);
  return buildListKernel({func.getName().str() + "_block_mask", abi, firstAux,
                          {ListWalk{abi.getNumInputs() - 1, /*overQueries=*/false, config.getBlockM(), config.getBlockN()}}});
}

LogicalResult Generator::buildListKernel(const ListKernel &spec) {
  if (op.getMaskMod().empty())
    return op.emitOpError("convert-attn-to-tile: block_lists need a mask_mod");
  b.setInsertionPoint(func);
  auto classifier = func::FuncOp::create(b, func.getLoc(), spec.name, spec.abi);
  classifier->setAttr(tile::TileDialect::kKernelAttrName, b.getUnitAttr());
  classifier->setAttr(tile::TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(4));
  // The launch: grid (ceil(Sq / block_m), Hq or 1, B or 1), or over keys (ceil(Skv / block_n), ...);
  // with a second walk (`lists2_*`), its blocks follow the first's along x.
  for (auto [i, walk] : llvm::enumerate(spec.walks)) {
    const std::string prefix = i == 0 ? "flare.attention." : "flare.attention.lists2_";
    classifier->setAttr(prefix + "block_m", b.getI32IntegerAttr(static_cast<int32_t>(walk.queryBlock)));
    classifier->setAttr(prefix + "block_n", b.getI32IntegerAttr(static_cast<int32_t>(walk.keyBlock)));
    if (walk.overQueries)
      classifier->setAttr(prefix + (i == 0 ? "lists_over_queries" : "over_queries"), b.getI32IntegerAttr(1));
  }
  classifier->setAttr("flare.attention.lists_per_batch", b.getI32IntegerAttr(listsPerBatch() ? 1 : 0));
  classifier->setAttr("flare.attention.lists_per_head", b.getI32IntegerAttr(listsPerHead() ? 1 : 0));
  Block *entry = classifier.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // Aux pointers, then heads_q, heads_kv, seq_q, seq_kv and the aux lengths.
  const unsigned numAux = op.getAux().size();
  unsigned a = spec.firstAux;
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

  Value programIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::x);
  headIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::y);
  batchIdx = tile::ProgramIdOp::create(b, loc, tile::Axis::z);
  if (spec.walks.size() == 1) {
    if (failed(emitListWalk(spec.walks.front(), entry->getArgument(spec.walks.front().listsArg), programIdx, headsQ)))
      return failure();
  } else {
    // The first walk's blocks, then the second's: both walks run side by side in one launch.
    const ListWalk &first = spec.walks[0];
    const int64_t fixedBlock = first.overQueries ? first.keyBlock : first.queryBlock;
    Value roundUp = add(first.overQueries ? seqKV : seqQ, c32(fixedBlock - 1));
    Value firstBlocks = arith::ShRSIOp::create(b, loc, roundUp, c32(llvm::Log2_64(fixedBlock)));
    Value isFirst = cmp(arith::CmpIPredicate::slt, programIdx, firstBlocks);
    auto branch = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    for (int i = 0; i < 2; ++i) {
      b.setInsertionPointToStart(i == 0 ? branch.thenBlock() : branch.elseBlock());
      Value fixedIdx = i == 0 ? programIdx : sub(programIdx, firstBlocks);
      if (failed(emitListWalk(spec.walks[i], entry->getArgument(spec.walks[i].listsArg), fixedIdx, headsQ)))
        return failure();
    }
  }
  func::ReturnOp::create(b, loc);
  return success();
}

LogicalResult Generator::emitListWalk(const ListWalk &walk, Value lists, Value fixedIdx, Value headsQ) {
  const bool overQueries = walk.overQueries;
  const int64_t qb = walk.queryBlock, kb = walk.keyBlock;
  // Blocks of `fixed` indices per program instance, `listed` ones per step.
  const int64_t fixedBlock = overQueries ? kb : qb, listedBlock = overQueries ? qb : kb;
  // The score tile's rows are queries and its columns keys in either orientation; the values that do
  // not change from step to step are the fixed axis's.
  keysAreRows = false;
  tileM = qb;
  tileN = kb;
  invariant = overQueries ? Shape::Col : Shape::Row;
  shapes.clear();
  hoisted.clear();
  classify(op.getScoreMod(), /*isScore=*/true);
  classify(op.getMaskMod(), /*isScore=*/false);

  Value c0 = c32(0), c1 = c32(1);
  Value fixedLen = overQueries ? seqKV : seqQ, listedLen = overQueries ? seqQ : seqKV;
  Value f0 = mul(fixedIdx, c32(fixedBlock));
  Value fixedEnd = smin(add(f0, c32(fixedBlock)), fixedLen);
  Value f1 = sub(fixedEnd, c1);
  Value listedRoundUp = add(listedLen, c32(listedBlock - 1));
  Value listedBlocks = arith::ShRSIOp::create(b, loc, listedRoundUp, c32(llvm::Log2_64(listedBlock)));
  Value fixedRange = indexRange(f0, fixedBlock);
  if (failed(emitHoistedRegions(overQueries ? 3 : 2, [&] { return asIndex(fixedRange); })))
    return failure();
  // Only the blocks the mask's linear part may keep are looked at.
  auto [nonEmpty, full] = blocksOf(mask.root, BlockAxis{overQueries, f0, f1, listedBlocks, listedBlock});
  (void)full; // every block is evaluated: a full one is found full
  Value lo = smax(nonEmpty.lo, c0);
  Value hi = smax(smin(nonEmpty.hi, listedBlocks), lo);
  Value record = listRecord(lists, fixedIdx, fixedLen, fixedBlock, listedBlocks, headsQ);
  Value fixedInside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, fixedRange, splat(fixedLen, {fixedBlock}));
  Value fixedAll = overQueries ? broadcastCols(fixedInside, qb) : broadcastRows(fixedInside, kb);
  // A block is full when it keeps all its elements: over query blocks (the backward's keys fixed)
  // every query and key of the tile, so a block of keys past Skv has none; over key blocks (the
  // forward's query rows fixed) the rows below Sq only, whose outputs are the only ones written.
  Value validFixed = overQueries ? Value() : sub(fixedEnd, f0);
  Value fullCount = overQueries ? c32(qb * kb) : mul(validFixed, c32(kb));
  Value lastSlot = add(listedBlocks, c1);
  auto splatI32 = [&](int32_t v) {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(tileType({qb, kb}, i32Type), b.getI32IntegerAttr(v)));
  };
  Value zeros = splatI32(0), ones = splatI32(1);

  auto loop = scf::ForOp::create(b, loc, lo, hi, c1, ValueRange{c0, c0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    StepScope scope(*this);
    Value t = loop.getInductionVar();
    Value partials = loop.getRegionIterArgs()[0], fulls = loop.getRegionIterArgs()[1];
    Value listedRange = indexRange(mul(t, c32(listedBlock)), listedBlock);
    Region &maskMod = op.getMaskMod();
    scope.local[maskMod.front().getArgument(overQueries ? 2 : 3)] = asIndex(listedRange);
    if (failed(emitRegion(maskMod, /*hoistedPart=*/false, scope.local)))
      return failure();
    Value user = at(cast<YieldOp>(maskMod.front().getTerminator()).getValue(), Shape::Full);
    Value listedInside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, listedRange, splat(listedLen, {listedBlock}));
    Value listedAll = overQueries ? broadcastRows(listedInside, kb) : broadcastCols(listedInside, qb);
    Value kept = arith::AndIOp::create(b, loc, user, listedAll);
    kept = arith::AndIOp::create(b, loc, kept, fixedAll);
    // The kept elements, counted: none (empty), all (full) or some (partial).
    Value counts = arith::SelectOp::create(b, loc, kept, ones, zeros);
    Value perRow = tile::ReduceOp::create(b, loc, tileType({qb}, i32Type), tile::ReduceKind::sum, counts, 1);
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
  return success();
}

} // namespace flare::attn::generator
