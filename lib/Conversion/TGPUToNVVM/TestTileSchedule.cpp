//===- TestTileSchedule.cpp - tgpu-test-tile-schedule ----------------------===//
//
// Folds the tile schedule convert-tgpu-to-nvvm emits (TileSchedule.h) for constant grids and checks
// that it runs every instance, and every step of a split one, exactly once.
//
//===----------------------------------------------------------------------===//
#include "TileSchedule.h"

#include "flare/Compiler/Compiler.h"
#include "flare/Dialect/TGPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flare::tgpu {
#define GEN_PASS_DEF_TGPUTESTTILESCHEDULE
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

namespace flare::tgpu::lowering {
namespace {

/// One turn of one CTA, folded.
struct Piece {
  int64_t instance = 0, lo = 0, hi = 0, slot = 0;
};

/// Builds IR into a scratch function and folds it op by op (every input is a constant, so every
/// value the schedule computes folds to one).
class Folder {
public:
  explicit Folder(MLIRContext *ctx) : b(ctx), loc(UnknownLoc::get(ctx)) {
    module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(b, loc, "schedule", b.getFunctionType({}, {}));
    b.setInsertionPointToEnd(func.addEntryBlock());
  }
  Value constant(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  /// The value `v` folds to, folding every op built since the last call.
  std::optional<int64_t> valueOf(Value v) {
    Block *block = b.getInsertionBlock();
    for (Operation &op : llvm::make_range(folded ? std::next(folded->getIterator()) : block->begin(), block->end())) {
      SmallVector<Attribute> operands;
      for (Value operand : op.getOperands())
        operands.push_back(known.lookup(operand));
      SmallVector<OpFoldResult> results;
      if (succeeded(op.fold(operands, results)) && results.size() == op.getNumResults())
        for (auto [result, r] : llvm::zip(op.getResults(), results))
          known[result] = isa<Attribute>(r) ? cast<Attribute>(r) : known.lookup(cast<Value>(r));
      folded = &op;
    }
    if (auto attr = dyn_cast_if_present<IntegerAttr>(known.lookup(v)))
      return v.getType().isInteger(1) ? attr.getValue().getZExtValue() : attr.getValue().getSExtValue();
    return std::nullopt;
  }
  OpBuilder b;
  Location loc;

private:
  OwningOpRef<ModuleOp> module;
  DenseMap<Value, Attribute> known;
  Operation *folded = nullptr;
};

/// What each CTA runs, or an error message.
struct Schedule {
  std::vector<std::vector<Piece>> ctas;
  bool splits = false;
  std::string error;
};

Schedule foldSchedule(MLIRContext *ctx, int64_t instances, int64_t ctas, bool pairs, int64_t steps) {
  Schedule out;
  for (int64_t c = 0; c < ctas; ++c) {
    Folder f(ctx);
    TileSchedule schedule;
    // The grid as x = instances, y = z = 1: the order is over the flattened instance index.
    schedule.grid = {f.constant(instances), f.constant(1), f.constant(1)};
    schedule.pairs = pairs;
    Value turns = schedule.begin(f.b, f.loc, f.constant(ctas), f.constant(c));
    if (steps > 0)
      turns = schedule.beginSplit(f.b, f.loc, f.constant(steps));
    std::optional<int64_t> n = f.valueOf(turns);
    if (!n || *n < 0 || *n > instances * 2) {
      out.error = "CTA " + std::to_string(c) + ": the number of turns does not fold to a count";
      return out;
    }
    if (schedule.split.on)
      out.splits = f.valueOf(schedule.split.on).value_or(0) != 0;
    std::vector<Piece> mine;
    for (int64_t turn = 0; turn < *n; ++turn) {
      TileSchedule::Instance item = schedule.instance(f.b, f.loc, f.constant(turn));
      std::optional<int64_t> x = f.valueOf(item.pids[0]), y = f.valueOf(item.pids[1]), z = f.valueOf(item.pids[2]);
      if (!x || !y || !z || *y != 0 || *z != 0) {
        out.error = "CTA " + std::to_string(c) + " turn " + std::to_string(turn) + ": program ids do not fold";
        return out;
      }
      Piece p{*x, 0, steps, 0};
      if (item.lo) {
        std::optional<int64_t> lo = f.valueOf(item.lo), hi = f.valueOf(item.hi), slot = f.valueOf(item.slot);
        if (!lo || !hi || !slot) {
          out.error = "CTA " + std::to_string(c) + " turn " + std::to_string(turn) + ": the piece does not fold";
          return out;
        }
        p = {*x, *lo, *hi, *slot};
      }
      mine.push_back(p);
    }
    out.ctas.push_back(std::move(mine));
  }
  return out;
}

/// What the kernels rely on, or the first violation.
std::string check(const Schedule &s, int64_t instances, int64_t ctas, int64_t steps) {
  if (!s.error.empty())
    return s.error;
  if (steps > 0 && s.splits != splitsLaunch(instances, ctas, steps))
    return std::string("the device ") + (s.splits ? "splits" : "does not split") + " where flare::splitsLaunch says " +
           (s.splits ? "not" : "so");
  // Per instance, its pieces in the order of the CTAs that run them.
  std::map<int64_t, std::vector<std::pair<int64_t, Piece>>> pieces;
  for (int64_t c = 0; c < ctas; ++c)
    for (const Piece &p : s.ctas[c]) {
      if (p.instance < 0 || p.instance >= instances)
        return "CTA " + std::to_string(c) + " runs instance " + std::to_string(p.instance) + ", outside the grid";
      pieces[p.instance].push_back({c, p});
    }
  for (int64_t i = 0; i < instances; ++i) {
    auto it = pieces.find(i);
    if (it == pieces.end())
      return "instance " + std::to_string(i) + " is never run";
    const auto &list = it->second;
    if (steps == 0) {
      if (list.size() != 1)
        return "instance " + std::to_string(i) + " is run " + std::to_string(list.size()) + " times";
      continue;
    }
    // Split: [0, S) covered in order, by at most two pieces on consecutive CTAs sharing one slot.
    int64_t at = 0;
    for (const auto &[c, p] : list) {
      if (p.lo != at || p.hi <= p.lo)
        return "instance " + std::to_string(i) + ": piece [" + std::to_string(p.lo) + "," + std::to_string(p.hi) +
               ") on CTA " + std::to_string(c) + " does not continue at step " + std::to_string(at);
      at = p.hi;
    }
    if (at != steps)
      return "instance " + std::to_string(i) + ": its pieces end at step " + std::to_string(at);
    if (list.size() > 2)
      return "instance " + std::to_string(i) + " is cut into " + std::to_string(list.size()) + " pieces";
    // The beginning piece on CTA c, the ending one on c + 1, both with slot c + 1.
    const auto &[first, begins] = list.front();
    const auto &[second, ends] = list.back();
    if (list.size() == 2 && (second != first + 1 || begins.slot != second || ends.slot != second))
      return "instance " + std::to_string(i) + ": its two pieces do not hand over through one slot";
  }
  return "";
}

struct TGPUTestTileSchedulePass : public impl::TGPUTestTileScheduleBase<TGPUTestTileSchedulePass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (instances < 1 || ctas < 1 || steps < 0) {
      getOperation().emitError("tgpu-test-tile-schedule: instances and ctas must be positive, steps not negative");
      return signalPassFailure();
    }
    if (sweep) {
      int64_t checked = 0;
      for (int64_t n = 1; n <= 64; ++n)
        for (int64_t g = 1; g <= 12; ++g)
          for (bool p : {true, false})
            for (int64_t s : {0, 15, 16, 40}) {
              std::string error = check(foldSchedule(ctx, n, g, p, s), n, g, s);
              if (!error.empty()) {
                getOperation().emitError() << "tile schedule of " << n << " instances on " << g << " CTAs"
                                           << (p ? ", pairs" : "") << (s ? ", " + std::to_string(s) + " steps" : "")
                                           << ": " << error;
                return signalPassFailure();
              }
              ++checked;
            }
      llvm::outs() << "tile schedules checked: " << checked << "\n";
      return;
    }
    Schedule s = foldSchedule(ctx, instances, ctas, pairs, steps);
    if (std::string error = check(s, instances, ctas, steps); !error.empty()) {
      getOperation().emitError() << "tile schedule: " << error;
      return signalPassFailure();
    }
    if (steps > 0)
      llvm::outs() << (s.splits ? "split\n" : "no split\n");
    for (size_t c = 0; c < s.ctas.size(); ++c) {
      llvm::outs() << "cta " << c << ":";
      for (const Piece &p : s.ctas[c]) {
        llvm::outs() << " " << p.instance;
        if (steps > 0)
          llvm::outs() << "[" << p.lo << "," << p.hi << ")@" << p.slot;
      }
      llvm::outs() << "\n";
    }
  }
};

} // namespace
} // namespace flare::tgpu::lowering
