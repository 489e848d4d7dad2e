//===- TileSchedule.cpp - Which program instances a persistent CTA runs ----===//
//
// The schedule of a persistent kernel's tile loop as scalar IR (TileSchedule.h).
//
//===----------------------------------------------------------------------===//
#include "TileSchedule.h"

#include "flare/Compiler/Compiler.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace flare::tgpu::lowering {

Value TileSchedule::begin(OpBuilder &b, Location loc, Value ctasValue, Value ctaValue) {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) { return arith::CmpIOp::create(b, loc, pred, x, y); };
  ctas = ctasValue;
  cta = ctaValue;
  total = totalOf(b, loc, grid);
  // Chunks of two when there are at least two per CTA (a generator can make each pair's work equal,
  // e.g. a causal kernel's heavy and light query blocks of one head), single instances otherwise or
  // when the kernel asks for them.
  Value pairsHere = pairs ? cmp(arith::CmpIPredicate::uge, total, arith::AddIOp::create(b, loc, ctas, ctas))
                          : arith::ConstantIntOp::create(b, loc, 0, 1).getResult();
  shift = arith::ExtUIOp::create(b, loc, b.getI32Type(), pairsHere); // log2 of the chunk size
  Value chunks = arith::ShRUIOp::create(b, loc, arith::AddIOp::create(b, loc, total, shift), shift);
  Value has = cmp(arith::CmpIPredicate::ult, cta, chunks);
  Value lastOfAll = arith::SubIOp::create(b, loc, chunks, i32(1));
  Value later = arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, lastOfAll, cta), ctas);
  // The chunks of this CTA.
  Value mine = arith::SelectOp::create(b, loc, has, arith::AddIOp::create(b, loc, later, i32(1)), i32(0));
  // An odd total leaves the last chunk one instance short.
  Value lastChunk = arith::AddIOp::create(b, loc, cta, arith::MulIOp::create(b, loc, later, ctas));
  Value odd = cmp(arith::CmpIPredicate::ne, arith::AndIOp::create(b, loc, total, shift), i32(0));
  Value isShort = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, has, odd),
      cmp(arith::CmpIPredicate::eq, lastChunk, lastOfAll));
  turns = arith::SubIOp::create(b, loc, arith::ShLIOp::create(b, loc, mine, shift),
                                arith::ExtUIOp::create(b, loc, b.getI32Type(), isShort));
  return turns;
}

Value TileSchedule::beginSplit(OpBuilder &b, Location loc, Value steps) {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  auto cmp = [&](arith::CmpIPredicate pred, Value x, Value y) { return arith::CmpIOp::create(b, loc, pred, x, y); };
  // Stream-K: instances in x-fastest order, single ones; without splits the chunks of begin.
  auto sel = [&](Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y).getResult(); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  auto sub = [&](Value x, Value y) { return arith::SubIOp::create(b, loc, x, y).getResult(); };
  auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, loc, x, y).getResult(); };
  auto div = [&](Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y).getResult(); };
  Value safeSteps = arith::MaxUIOp::create(b, loc, steps, i32(1));
  Value rounds = div(total, ctas), rest = sub(total, mul(rounds, ctas));
  // flare::splitsLaunch, on the device: a remainder, at least one whole round, enough steps, and
  // the tail's steps (fewer than 2 G S) within 32 bits.
  auto i64 = [&](Value x) { return arith::ExtUIOp::create(b, loc, b.getI64Type(), x).getResult(); };
  Value fits = cmp(arith::CmpIPredicate::ult, arith::MulIOp::create(b, loc, i64(steps), i64(ctas)),
                   arith::ConstantIntOp::create(b, loc, kSplitMaxStepsTimesCtas, 64));
  Value on = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::ne, rest, i32(0)),
                            cmp(arith::CmpIPredicate::uge, rounds, i32(1))),
      arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::uge, steps, i32(kSplitMinSteps)), fits));
  Value whole = sel(on, sub(rounds, i32(1)), rounds);
  // The cut points c * T * S / G (T tail instances of S steps on G CTAs) in 32 bits: with T S =
  // q G + r, that is c q + c r / G, and c r < G^2. A 64-bit division would be a call, and a call
  // makes ptxas serialize every wgmma of the kernel (C7509).
  Value tailSteps = mul(sub(total, mul(whole, ctas)), safeSteps);
  Value perCta = div(tailSteps, ctas), spare = sub(tailSteps, mul(perCta, ctas));
  auto cut = [&](Value c) { return add(mul(c, perCta), div(mul(c, spare), ctas)); };
  Value next = add(cta, i32(1));
  Value hasTail = cmp(arith::CmpIPredicate::ult, cta, rest);
  Value s0 = sel(on, cut(cta), mul(cta, steps));
  Value s1 = sel(on, cut(next), mul(next, steps));
  Value first = sel(on, div(s0, safeSteps), cta);
  Value last = div(sub(s1, i32(1)), safeSteps);
  Value count = sel(on, add(sub(last, first), i32(1)), arith::ExtUIOp::create(b, loc, b.getI32Type(), hasTail));
  split = {on, whole, first, s0, s1, steps};
  turns = sel(on, add(whole, count), turns); // the chunks' turns where the launch does not split
  return turns;
}

TileSchedule::Instance TileSchedule::instance(OpBuilder &b, Location loc, Value turn) const {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  Instance item;
  Value chunk = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, arith::ShRUIOp::create(b, loc, turn, shift), ctas), cta);
  Value instance = arith::AddIOp::create(b, loc, arith::ShLIOp::create(b, loc, chunk, shift),
                                         arith::AndIOp::create(b, loc, turn, shift));
  if (split.on) {
    // D whole rounds (or all of them when the launch does not split), then this CTA's tail pieces.
    auto [on, rounds, first, s0, s1, steps] = split;
    auto sel = [&](Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y).getResult(); };
    auto sub = [&](Value x, Value y) { return arith::SubIOp::create(b, loc, x, y).getResult(); };
    auto mul = [&](Value x, Value y) { return arith::MulIOp::create(b, loc, x, y).getResult(); };
    Value whole = arith::OrIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, turn, rounds),
                                       arith::XOrIOp::create(b, loc, on, arith::ConstantIntOp::create(b, loc, 1, 1)));
    Value tailIndex = arith::AddIOp::create(b, loc, first, sub(turn, rounds)); // of the tail instances
    instance = sel(on, sel(whole, arith::AddIOp::create(b, loc, mul(turn, ctas), cta),
                           arith::AddIOp::create(b, loc, mul(rounds, ctas), tailIndex)),
                   instance);
    Value at = mul(tailIndex, steps); // the instance's first step in the tail's numbering
    Value lo = sel(whole, i32(0), arith::MaxSIOp::create(b, loc, sub(s0, at), i32(0)));
    Value hi = sel(whole, steps, arith::MinSIOp::create(b, loc, sub(s1, at), steps));
    // A piece that ends an instance uses this CTA's slot; one that begins it, the next CTA's.
    Value ends = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, lo, i32(0));
    item.lo = lo;
    item.hi = hi;
    item.slot = sel(ends, cta, arith::AddIOp::create(b, loc, cta, i32(1)));
  }
  item.pids = pidsOf(b, loc, grid, instance);
  return item;
}

Value TileSchedule::totalOf(OpBuilder &b, Location loc, const std::array<Value, 3> &grid) {
  return arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
}

std::array<Value, 3> TileSchedule::pidsOf(OpBuilder &b, Location loc, const std::array<Value, 3> &grid, Value index) {
  Value yz = arith::DivUIOp::create(b, loc, index, grid[0]);
  Value x = arith::RemUIOp::create(b, loc, index, grid[0]);
  Value y = arith::RemUIOp::create(b, loc, yz, grid[1]);
  Value z = arith::DivUIOp::create(b, loc, yz, grid[1]);
  return {x, y, z};
}

Value TileSchedule::take(OpBuilder &b, Location loc, Value counters, const std::array<Value, 3> &grid, Value turn) {
  auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32).getResult(); };
  auto ifThen = [&](Value cond, llvm::function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  auto asm0 = [&](Type result, Value address, std::string text, StringRef constraints) {
    return LLVM::InlineAsmOp::create(b, loc, result ? TypeRange{result} : TypeRange{}, ValueRange{address}, text,
                                     constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
                                     LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  };
  auto counter = [&](int64_t i) {
    Value at = LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), b.getI32Type(), counters,
                                   ValueRange{i32(i)});
    return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), at).getResult();
  };
  auto fetchAdd = [&](Value address, StringRef order) {
    return asm0(b.getI32Type(), address, ("atom." + order + ".gpu.global.add.u32 $0, [$1], 1;").str(), "=r,l,~{memory}")
        .getResult(0);
  };
  Value ctas = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  Value cta = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, turn, i32(0));
  auto taken = scf::IfOp::create(b, loc, b.getI32Type(), first, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(taken.thenBlock());
    scf::YieldOp::create(b, loc, cta);
    b.setInsertionPointToStart(taken.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{arith::AddIOp::create(b, loc, ctas, fetchAdd(counter(0), "relaxed"))});
  }
  Value index = taken.getResult(0);
  Value total = totalOf(b, loc, grid);
  // Past the last instance: this CTA takes no more. The last CTA to get here sets the counters back;
  // its count acquires what the others' counts released, every CTA's takes among it, so that its
  // zero comes after the last of them.
  ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, index, total), [&] {
    Value done = fetchAdd(counter(1), "acq_rel");
    ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, done, arith::SubIOp::create(b, loc, ctas, i32(1))),
           [&] {
             for (int64_t i : {0, 1})
               asm0(Type(), counter(i), "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{memory}");
           });
  });
  return index;
}

LogicalResult expandTileSchedules(Operation *root) {
  DenseMap<Value, TileSchedule> schedules;
  SmallVector<Operation *> made; // the schedule and split ops, erased once their instances are
  WalkResult walk = root->walk([&](Operation *any) {
    if (auto split = dyn_cast<TileSplitOp>(any)) {
      auto it = schedules.find(split.getInput());
      if (it == schedules.end()) {
        split.emitOpError("splits a schedule that no tgpu.tile_schedule made");
        return WalkResult::interrupt();
      }
      OpBuilder b(split);
      TileSchedule schedule = it->second;
      split.getTurns().replaceAllUsesWith(schedule.beginSplit(b, split.getLoc(), split.getSteps()));
      schedules[split.getSchedule()] = schedule;
      made.push_back(split);
      return WalkResult::advance();
    }
    auto op = dyn_cast<TileScheduleOp>(any);
    if (!op)
      return WalkResult::advance();
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto asI32 = [&](Value index) { return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index).getResult(); };
    Value ctas = asI32(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
    Value cta = asI32(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
    TileSchedule schedule;
    schedule.grid = {op.getGridX(), op.getGridY(), op.getGridZ()};
    schedule.pairs = op.getPairs();
    op.getTurns().replaceAllUsesWith(schedule.begin(b, loc, ctas, cta));
    schedules[op.getSchedule()] = schedule;
    made.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  WalkResult result = root->walk([&](TileInstanceOp op) {
    auto it = schedules.find(op.getSchedule());
    if (it == schedules.end()) {
      op.emitOpError("reads a schedule that no tgpu.tile_schedule made");
      return WalkResult::interrupt();
    }
    OpBuilder b(op);
    TileSchedule::Instance item = it->second.instance(b, op.getLoc(), op.getTurn());
    SmallVector<Value> values(item.pids.begin(), item.pids.end());
    if (item.lo)
      values.append({item.lo, item.hi, item.slot});
    op->replaceAllUsesWith(values);
    op->erase();
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  root->walk([&](TileTakeOp op) {
    OpBuilder b(op);
    op.getIndex().replaceAllUsesWith(
        TileSchedule::take(b, op.getLoc(), op.getCounters(), {op.getX(), op.getY(), op.getZ()}, op.getTurn()));
    op->erase();
  });
  // A split reads its schedule: the later op first.
  for (Operation *op : llvm::reverse(made))
    op->erase();
  return success();
}

} // namespace flare::tgpu::lowering
