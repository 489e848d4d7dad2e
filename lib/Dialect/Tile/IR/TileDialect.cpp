//===- TileDialect.cpp - The tile dialect: types, ops, verifiers ----------===//
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace flare::tile;

#include "Tile/TileDialect.cpp.inc"
#include "Tile/TileEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Tile/TileTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Tile/TileAttrs.cpp.inc"

/// `, type` after the running max's type when the running sum is kept as partial sums (another type).
static ParseResult parsePartialSums(OpAsmParser &parser, Type &sum, Type max) {
  sum = max;
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(sum);
  return success();
}

static void printPartialSums(OpAsmPrinter &printer, Operation *, Type sum, Type max) {
  if (sum != max)
    printer << ", " << sum;
}

#define GET_OP_CLASSES
#include "Tile/TileOps.cpp.inc"

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "Tile/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Tile/TileAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "Tile/TileOps.cpp.inc"
      >();
}

bool flare::tile::isKernel(func::FuncOp func) {
  return func->hasAttr(TileDialect::kKernelAttrName);
}

int flare::tile::getNumWarps(func::FuncOp func) {
  if (auto attr = func->getAttrOfType<IntegerAttr>(TileDialect::kNumWarpsAttrName))
    return static_cast<int>(attr.getInt());
  return TileDialect::kDefaultNumWarps;
}

ScheduleAttr flare::tile::getSchedule(func::FuncOp func) {
  if (auto schedule = func->getAttrOfType<ScheduleAttr>(TileDialect::kScheduleAttrName))
    return schedule;
  return ScheduleAttr::get(func.getContext());
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError, bool /*pingPong*/,
                                   int64_t minBlocksPerSM, bool producerWarpgroup, bool persistent, bool pairInstances,
                                   bool operandsAfterFirstStage, bool prefetchNextInstance, bool invariantAInRegisters,
                                   bool /*uniformWarpgroup*/, bool /*peelZeroFirst*/, bool dynamicInstances) {
  if (minBlocksPerSM < 0 || minBlocksPerSM > 8)
    return emitError() << "min_blocks_per_sm must be from 0 (ptxas decides) to 8, got " << minBlocksPerSM;
  // What a field needs: the lowering would not honour it otherwise.
  struct Need {
    bool on;
    const char *field;
    bool met;
    const char *what;
  };
  const Need needs[] = {
      {producerWarpgroup, "producer_warpgroup", minBlocksPerSM <= 1, "one CTA per SM (min_blocks_per_sm 0 or 1)"},
      {!pairInstances, "pair_instances = false", persistent, "persistent"},
      {operandsAfterFirstStage, "operands_after_first_stage", persistent && producerWarpgroup,
       "persistent and producer_warpgroup"},
      {prefetchNextInstance, "prefetch_next_instance", persistent && !producerWarpgroup,
       "persistent without producer_warpgroup"},
      {invariantAInRegisters, "invariant_a_in_registers", persistent, "persistent"},
      {dynamicInstances, "dynamic_instances", persistent && producerWarpgroup && !pairInstances,
       "persistent, producer_warpgroup and pair_instances = false"},
  };
  for (const Need &n : needs)
    if (n.on && !n.met)
      return emitError() << n.field << " needs " << n.what;
  return success();
}

bool flare::tile::isPartialSumGrouping(int64_t groups, int64_t columns) {
  return groups >= 2 && llvm::isPowerOf2_64(groups) && columns % (2 * groups) == 0;
}

static bool isKernelArgType(Type t) {
  return isa<PtrType>(t) || t.isInteger(32) || t.isInteger(64) || t.isF32();
}

/// Scalar and tile element types the lowering to NVVM computes in.
static bool isComputeType(Type t) {
  if (t.isIndex())
    return true;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth() <= 64;
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
}

/// Checks what every value of a kernel's body may be: a type the lowering computes in, and a tile
/// small enough to be held by the CTA's threads. Tiles live in registers, kMaxTileRegistersPerThread
/// at most per thread; the lowering unrolls per register, so a larger tile would take time and memory
/// without bound long before the hardware's 255 registers per thread reject it.
static LogicalResult verifyKernelValues(func::FuncOp func) {
  const int64_t threads = std::clamp<int64_t>(getNumWarps(func), 1, 16) * 32; // num_warps is verified apart
  auto check = [&](Value v, Operation *where) -> LogicalResult {
    Type t = v.getType();
    auto tile = dyn_cast<RankedTensorType>(t);
    Type scalar = tile ? tile.getElementType() : t;
    if (!isa<PtrType, ViewType>(scalar) && scalar.isIntOrIndexOrFloat() && !isComputeType(scalar))
      return where->emitOpError() << "computes in " << scalar
                                  << ", which tile kernels do not support (integers of up to 64 bits, index, f16, "
                                     "bf16, f32, f64)";
    if (!tile || !tile.hasStaticShape() || !scalar.isIntOrIndexOrFloat())
      return success();
    int64_t elements = 1;
    for (int64_t d : tile.getShape())
      if (llvm::MulOverflow(elements, d, elements))
        elements = std::numeric_limits<int64_t>::max();
    const int64_t bytes = std::max<int64_t>(1, scalar.isIndex() ? 8 : scalar.getIntOrFloatBitWidth() / 8);
    const int64_t words = elements > std::numeric_limits<int64_t>::max() / bytes ? elements : elements * bytes / 4;
    const int64_t perThread = (words + threads - 1) / threads;
    if (perThread > TileDialect::kMaxTileRegistersPerThread)
      return where->emitOpError() << "has a tile " << t << " of " << elements << " elements: " << perThread
                                  << " registers per thread across the kernel's " << threads
                                  << " threads, more than the " << TileDialect::kMaxTileRegistersPerThread
                                  << " a tile may hold; use smaller tiles or more warps";
    return success();
  };
  WalkResult result = func.walk([&](Operation *op) {
    // A constant step of zero or less never ends the loop (a run-time one is guarded,
    // tile-guard-loop-steps).
    if (auto loop = dyn_cast<scf::ForOp>(op))
      if (std::optional<int64_t> step = getConstantIntValue(loop.getStep()); step && *step <= 0) {
        loop.emitOpError() << "has step " << *step << ": a loop of a tile kernel needs a positive step";
        return WalkResult::interrupt();
      }
    for (Value r : op->getResults())
      if (failed(check(r, op)))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(arg, op)))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == kKernelAttrName) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op->emitError() << "'" << kKernelAttrName << "' is only valid on a func.func";
    if (func.getFunctionType().getNumResults() != 0)
      return op->emitError() << "a tile kernel returns nothing; write results through views";
    for (auto [i, t] : llvm::enumerate(func.getArgumentTypes()))
      if (!isKernelArgType(t))
        return op->emitError() << "tile kernel parameter #" << i << " has type " << t
                               << "; expected !tile.ptr<...>, i32, i64 or f32";
    return verifyKernelValues(func);
  }
  if (attr.getName() == kNumWarpsAttrName) {
    auto n = dyn_cast<IntegerAttr>(attr.getValue());
    if (!n || n.getInt() < 1 || n.getInt() > 16 || (n.getInt() & (n.getInt() - 1)))
      return op->emitError() << "'" << kNumWarpsAttrName << "' must be a power of two from 1 to 16";
    return success();
  }
  if (attr.getName() == kScheduleAttrName) {
    auto schedule = dyn_cast<ScheduleAttr>(attr.getValue());
    auto func = dyn_cast<func::FuncOp>(op);
    if (!schedule || !func)
      return op->emitError() << "'" << kScheduleAttrName << "' is a #tile.schedule on a tile kernel's func.func";
    const int warps = getNumWarps(func);
    if (schedule.getProducerWarpgroup() && warps != 4 && warps != 8)
      return op->emitError() << "a producer warpgroup (#tile.schedule's producer_warpgroup) needs a kernel of 4 or 8 "
                                "warps, not "
                             << warps;
    return success();
  }
  if (attr.getName() == kSkipUnitFactorAttrName) {
    auto mul = dyn_cast<arith::MulFOp>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !mul || !isa<RankedTensorType>(mul.getType()))
      return op->emitError() << "'" << kSkipUnitFactorAttrName << "' is a unit attribute of an arith.mulf on tiles";
    return success();
  }
  // The schedule's fields were attributes of their own before #tile.schedule held them.
  for (StringRef field : {"ping_pong", "min_blocks_per_sm", "producer_warpgroup", "persistent", "pair_instances",
                          "operands_after_first_stage", "prefetch_next_instance", "invariant_a_in_registers",
                          "uniform_warpgroup", "peel_zero_first", "dynamic_instances"})
    if (attr.getName().getValue() == ("tile." + field).str())
      return op->emitError() << "'" << attr.getName().getValue() << "' is a field of the kernel's #tile.schedule ("
                             << kScheduleAttrName << " = #tile.schedule<" << field << " = ...>)";
  return op->emitError() << "unknown tile attribute '" << attr.getName().getValue() << "'";
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

LogicalResult RangeOp::verify() {
  auto type = getResult().getType();
  if (type.getRank() != 1 || !type.getElementType().isInteger(32))
    return emitOpError("result must be a 1-D tile of i32");
  int64_t start = getStartAttr().getValue().getSExtValue(), end = getEndAttr().getValue().getSExtValue();
  int64_t n = end - start;
  if (n != type.getDimSize(0))
    return emitOpError() << "range [" << start << ", " << end << ") has " << n
                         << " elements but the result tile has " << type.getDimSize(0);
  return success();
}

LogicalResult SplatOp::verify() {
  if (getResult().getType().getElementType() != getValue().getType())
    return emitOpError() << "element type " << getResult().getType().getElementType()
                         << " differs from the scalar's type " << getValue().getType();
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto src = getSrc().getType();
  auto res = getResult().getType();
  int64_t axis = getAxisAttr().getValue().getSExtValue();
  if (axis < 0 || axis > src.getRank())
    return emitOpError() << "axis " << axis << " is out of range for a rank-" << src.getRank() << " tile";
  SmallVector<int64_t> expect(src.getShape());
  expect.insert(expect.begin() + axis, 1);
  if (res.getShape() != ArrayRef<int64_t>(expect) || res.getElementType() != src.getElementType())
    return emitOpError() << "result shape " << shapeStr(res.getShape()) << " should be " << shapeStr(expect);
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto src = getSrc().getType();
  auto res = getResult().getType();
  if (src.getRank() != res.getRank() || src.getElementType() != res.getElementType())
    return emitOpError("source and result must have the same rank and element type");
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (src.getDimSize(d) != res.getDimSize(d) && src.getDimSize(d) != 1)
      return emitOpError() << "dimension " << d << " cannot broadcast from " << src.getDimSize(d) << " to "
                           << res.getDimSize(d) << " (only size-1 dimensions broadcast)";
  return success();
}

LogicalResult ReduceOp::verify() {
  auto src = getSrc().getType();
  int64_t axis = getAxisAttr().getValue().getSExtValue();
  if (axis < 0 || axis >= src.getRank())
    return emitOpError() << "axis " << axis << " is out of range for a rank-" << src.getRank() << " tile";
  Type elem = src.getElementType();
  if (!isa<FloatType>(elem) && !elem.isSignlessInteger())
    return emitOpError() << "cannot reduce elements of type " << elem;
  if (src.getRank() == 1) {
    if (getResult().getType() != elem)
      return emitOpError() << "reducing a 1-D tile gives a scalar of type " << elem;
    return success();
  }
  auto res = dyn_cast<RankedTensorType>(getResult().getType());
  SmallVector<int64_t> expect(src.getShape());
  expect.erase(expect.begin() + axis);
  if (!res || res.getShape() != ArrayRef<int64_t>(expect) || res.getElementType() != elem)
    return emitOpError() << "result must be a tile of shape " << shapeStr(expect) << " and type " << elem;
  return success();
}

LogicalResult MakeViewOp::verify() {
  ViewType view = getResult().getType();
  if (getSizes().size() != view.getRank() || getStrides().size() != view.getRank())
    return emitOpError() << "a rank-" << view.getRank() << " view needs " << view.getRank()
                         << " sizes and strides, got " << getSizes().size() << " and " << getStrides().size();
  if (getBase().getType().getElementType() != view.getElementType())
    return emitOpError("pointer and view element types differ");
  return success();
}

static LogicalResult verifyBlockAccess(Operation *op, ViewType view, size_t numOffsets, RankedTensorType tile) {
  if (numOffsets != view.getRank())
    return op->emitOpError() << "a rank-" << view.getRank() << " view needs " << view.getRank()
                             << " offsets, got " << numOffsets;
  if (tile.getRank() != static_cast<int64_t>(view.getRank()))
    return op->emitOpError() << "tile rank " << tile.getRank() << " differs from view rank " << view.getRank();
  if (tile.getElementType() != view.getElementType())
    return op->emitOpError() << "tile element type " << tile.getElementType() << " differs from view element type "
                             << view.getElementType();
  return success();
}

LogicalResult GatherOp::verify() {
  auto offsets = getOffsets().getType(), result = getResult().getType();
  if (!offsets.getElementType().isInteger(32))
    return emitOpError() << "offsets must be i32, got " << offsets.getElementType();
  if (offsets.getShape() != result.getShape())
    return emitOpError("result must have the offsets' shape");
  if (result.getElementType() != getBase().getType().getElementType())
    return emitOpError("result elements must be the pointer's element type");
  return success();
}

/// The tile.kernel function `op` sits at the top level of, or null (with the error emitted).
static func::FuncOp kernelAtTopLevel(Operation *op) {
  auto func = dyn_cast_or_null<func::FuncOp>(op->getParentOp());
  if (func && isKernel(func))
    return func;
  op->emitOpError("must sit at the top level of a tile.kernel function");
  return nullptr;
}

LogicalResult ExitIfOp::verify() { return success(static_cast<bool>(kernelAtTopLevel(*this))); }

LogicalResult WaitPriorGridsOp::verify() {
  func::FuncOp func = kernelAtTopLevel(*this);
  if (!func)
    return failure();
  for (Operation &before : func.getBody().front()) {
    if (&before == getOperation())
      break;
    if (isa<WaitPriorGridsOp>(before))
      return emitOpError("may appear only once in a kernel");
    if (!isMemoryEffectFree(&before))
      return (emitOpError("must come before every op that touches memory: what the kernel reads or writes "
                          "must follow the wait")
                  .attachNote(before.getLoc())
              << "this op comes before it");
  }
  return success();
}

LogicalResult AllowDependentLaunchOp::verify() { return success(static_cast<bool>(kernelAtTopLevel(*this))); }

LogicalResult ScalarLoadOp::verify() {
  if (getResult().getType() != getBase().getType().getElementType())
    return emitOpError() << "result type " << getResult().getType() << " must be the pointer's element type "
                         << getBase().getType().getElementType();
  return success();
}

LogicalResult ScalarStoreOp::verify() {
  if (getValue().getType() != getBase().getType().getElementType())
    return emitOpError() << "value type " << getValue().getType() << " must be the pointer's element type "
                         << getBase().getType().getElementType();
  return success();
}

LogicalResult LoadOp::verify() {
  const int64_t pieces = getNumRowPieces();
  auto type = getResult().getType();
  if (pieces > 1) {
    if (type.getRank() != 2)
      return emitOpError() << "row_pieces needs a rank-2 block, got rank " << type.getRank();
    if (type.getDimSize(0) % pieces != 0)
      return emitOpError() << "row_pieces = " << pieces << " must divide the block's " << type.getDimSize(0)
                           << " rows";
    if (getOffsets().size() != static_cast<size_t>(pieces + 1))
      return emitOpError() << "row_pieces = " << pieces << " needs " << pieces + 1
                           << " offsets (each piece's first row, then the column), got " << getOffsets().size();
  } else if (failed(verifyBlockAccess(*this, getView().getType(), getOffsets().size(), type))) {
    return failure();
  }
  if (pieces > 1 && failed(verifyBlockAccess(*this, getView().getType(), 2, type)))
    return failure();
  if (auto pad = getPaddingAttr())
    if (pad.getType() != getView().getType().getElementType())
      return emitOpError() << "padding of type " << pad.getType() << " for elements of type "
                           << getView().getType().getElementType();
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyBlockAccess(*this, getView().getType(), getOffsets().size(), getValue().getType());
}

LogicalResult AtomicAddOp::verify() {
  if (failed(verifyBlockAccess(*this, getView().getType(), getOffsets().size(), getValue().getType())))
    return failure();
  Type e = getValue().getType().getElementType();
  if (!e.isF32() && !e.isInteger(32))
    return emitOpError() << "atomic adds of " << e << " are not supported (f32 or i32)";
  return success();
}

/// `v` is a kernel argument or pure scalar arithmetic on them, computed in `entry`.
static bool computedFromArguments(Value v, Block *entry) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == entry;
  Operation *def = v.getDefiningOp();
  return def->getBlock() == entry && isa<arith::ArithDialect>(def->getDialect()) && def->getNumRegions() == 0 &&
         isMemoryEffectFree(def) && llvm::all_of(def->getOperands(), [&](Value operand) {
           return operand.getType().isIntOrIndexOrFloat() && computedFromArguments(operand, entry);
         });
}

/// The persistent kernel around a split op, or null after reporting why not.
static func::FuncOp splitKernel(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func || !isKernel(func) || !getSchedule(func).getPersistent()) {
    op->emitOpError() << "is only valid in a persistent tile kernel (#tile.schedule<persistent = true>): only its "
                         "schedule splits program instances";
    return {};
  }
  return func;
}

LogicalResult SplitRangeOp::verify() {
  func::FuncOp func = splitKernel(*this);
  if (!func)
    return failure();
  Block *entry = &func.getBody().front();
  if ((*this)->getBlock() != entry)
    return emitOpError() << "must sit at the top level of the kernel's body";
  if (!computedFromArguments(getSteps(), entry))
    return emitOpError() << "steps must be computed from the kernel's arguments alone (the same for every "
                            "program instance): arith ops on them, no program ids or loads";
  int count = 0;
  func.walk([&](SplitRangeOp) { ++count; });
  if (count > 1)
    return emitOpError() << "appears " << count << " times in kernel '" << func.getName() << "'; at most once";
  return success();
}

/// Split stores and loads carry f32 tiles, the same types in every one of the kernel.
static LogicalResult verifySplitState(Operation *op, TypeRange types) {
  func::FuncOp func = splitKernel(op);
  if (!func)
    return failure();
  if (types.empty())
    return op->emitOpError() << "needs at least one tile";
  for (Type t : types)
    if (!cast<RankedTensorType>(t).getElementType().isF32())
      return op->emitOpError() << "carries f32 tiles only, not " << t;
  bool hasRange = false;
  func.walk([&](SplitRangeOp) { hasRange = true; });
  if (!hasRange)
    return op->emitOpError() << "needs the kernel's tile.split_range (which instances are split)";
  Operation *other = nullptr;
  func.walk([&](Operation *o) {
    if (o == op || other)
      return;
    if (auto store = dyn_cast<SplitStoreOp>(o); store && TypeRange(store.getValues()) != types)
      other = o;
    if (auto load = dyn_cast<SplitLoadOp>(o); load && load.getResultTypes() != types)
      other = o;
  });
  if (other)
    return op->emitOpError() << "carries other tiles than the " << other->getName() << " at " << other->getLoc()
                             << ": the pieces of an instance must hand over the same state";
  return success();
}

LogicalResult SplitStoreOp::verify() { return verifySplitState(*this, getValues().getTypes()); }

LogicalResult SplitLoadOp::verify() { return verifySplitState(*this, getResultTypes()); }

LogicalResult TransOp::verify() {
  auto src = getSrc().getType(), res = getResult().getType();
  if (src.getRank() != 2 || res.getRank() != 2)
    return emitOpError("transposes 2-D tiles");
  if (res.getDimSize(0) != src.getDimSize(1) || res.getDimSize(1) != src.getDimSize(0) ||
      res.getElementType() != src.getElementType())
    return emitOpError() << "result must be " << shapeStr({src.getDimSize(1), src.getDimSize(0)}) << " of "
                         << src.getElementType();
  return success();
}

LogicalResult DotOp::verify() {
  auto a = getA().getType(), b = getB().getType(), c = getC().getType(), d = getResult().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  Type ea = a.getElementType();
  if ((!ea.isBF16() && !ea.isF16()) || b.getElementType() != ea)
    return emitOpError() << "operands must both be bf16 or both f16, got " << ea << " and " << b.getElementType();
  if (!c.getElementType().isF32() || d.getElementType() != c.getElementType())
    return emitOpError("the accumulator and result must be f32");
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (b.getDimSize(0) != k)
    return emitOpError() << "inner dimensions differ: a is " << shapeStr(a.getShape()) << ", b is "
                         << shapeStr(b.getShape());
  if (c.getShape() != ArrayRef<int64_t>{m, n} || d.getShape() != c.getShape())
    return emitOpError() << "accumulator and result must be " << shapeStr({m, n});
  if (m < 16 || k < 16 || n < 8)
    return emitOpError() << "tensor-core tiles need M >= 16, K >= 16 and N >= 8, got M = " << m << ", K = " << k
                         << ", N = " << n;
  if (std::optional<int64_t> e = getKExtent(); e && (*e < 16 || *e > k || *e % 16 != 0))
    return emitOpError() << "k_extent = " << *e << " must be a multiple of 16 from 16 to K = " << k;
  if (std::optional<int64_t> e = getNExtent(); e && (*e < 8 || *e > n || *e % 8 != 0))
    return emitOpError() << "n_extent = " << *e << " must be a multiple of 8 from 8 to N = " << n;
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto src = getSrc().getType(), res = getResult().getType();
  if (src.getNumElements() != res.getNumElements() || src.getElementType() != res.getElementType())
    return emitOpError() << "cannot reshape " << shapeStr(src.getShape()) << " into " << shapeStr(res.getShape())
                         << ": element count or type differs";
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  auto s = getScores().getType(), m = getMax().getType(), l = getSum().getType();
  if (s.getRank() != 2 || !s.getElementType().isF32())
    return emitOpError("scores must be a 2-D f32 tile");
  auto rowType = RankedTensorType::get({s.getDimSize(0)}, s.getElementType());
  if (m != rowType)
    return emitOpError() << "running max must be " << rowType << ", one value per score row";
  if (l == rowType)
    return success();
  if (l.getRank() != 2 || l.getDimSize(0) != s.getDimSize(0) || !l.getElementType().isF32() ||
      !isPartialSumGrouping(l.getDimSize(1), s.getDimSize(1)))
    return emitOpError() << "running sum must be " << rowType << ", or " << s.getDimSize(0)
                         << " x G partial sums (G a power of two from 2, the " << s.getDimSize(1)
                         << " columns a multiple of 2 G), got " << l;
  return success();
}
