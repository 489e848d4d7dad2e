//===- TGPUDialect.cpp - The tgpu dialect: layouts and ops ----------------===//
#include "flare/Dialect/TGPU/TGPUDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

#include "TGPU/TGPUDialect.cpp.inc"
#include "TGPU/TGPUEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "TGPU/TGPUAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "TGPU/TGPUTypes.cpp.inc"

#define GET_OP_CLASSES
#include "TGPU/TGPUOps.cpp.inc"

void TGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "TGPU/TGPUAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "TGPU/TGPUTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "TGPU/TGPUOps.cpp.inc"
      >();
}

LogicalResult TGPUDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  // The discardable attributes: the op each belongs on, and what its value must be.
  struct Rule {
    StringRef name, opName, what;
    bool (*valueOk)(Attribute);
  };
  static const Rule rules[] = {
      {kMmaAttrName, "tile.dot", "#tgpu.mma<mma_sync> or #tgpu.mma<wgmma> of a tile.dot",
       [](Attribute v) { return isa<MmaEngineAttr>(v); }},
      {kDescriptorsAtDotAttrName, "tile.dot", "a unit attribute of a tile.dot",
       [](Attribute v) { return isa<UnitAttr>(v); }},
      {kPipelineAttrName, "scf.for", "a #tgpu.pipeline<...> of an scf.for",
       [](Attribute v) { return isa<PipelineKindAttr>(v); }},
      {kProducerIssuedAttrName, "scf.for", "a unit attribute of an scf.for",
       [](Attribute v) { return isa<UnitAttr>(v); }},
      {kStreamedAttrName, "tile.load", "a unit attribute of a tile.load",
       [](Attribute v) { return isa<UnitAttr>(v); }},
      {kWarpRolesAttrName, "func.func", "a #tgpu.warp_roles<...> of a tile kernel",
       [](Attribute v) { return isa<WarpRolesAttr>(v); }},
  };
  for (const Rule &rule : rules)
    if (attr.getName() == rule.name && (op->getName().getStringRef() != rule.opName || !rule.valueOk(attr.getValue())))
      return op->emitOpError() << "'" << rule.name << "' is " << rule.what;
  return success();
}

LogicalResult WarpRolesAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t consumerRegisters,
                                    int64_t producerRegisters) {
  for (auto [role, n] : {std::pair<StringRef, int64_t>{"consumer", consumerRegisters}, {"producer", producerRegisters}})
    if (n < 24 || n > 256 || n % 8 != 0)
      return emitError() << role << " register count " << n << " must be a multiple of 8 from 24 to 256";
  return success();
}

LogicalResult flare::tgpu::verifyWgmmaMark(Operation *dot, int64_t m, int64_t n, int numWarps, bool targetHasWgmma,
                                           StringRef arch) {
  if (!runsOnWgmma(dot) || (targetHasWgmma && wgmmaFits(m, n, numWarps)))
    return success();
  return dot->emitOpError() << "is marked #tgpu.mma<wgmma> but "
                            << (targetHasWgmma ? "its warps do not stack along M as wgmma needs (M = 16 x the "
                                                 "kernel's warps, a multiple of 4; N a multiple of 8 up to 256)"
                                               : "the target has no wgmma")
                            << ": " << m << "x" << n << " result, " << numWarps << " warps, " << arch;
}

LinearLayoutAttr flare::tgpu::getLayoutAttr(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<LinearLayoutAttr>(tensor.getEncoding()) : LinearLayoutAttr();
}

//===----------------------------------------------------------------------===//
// #tgpu.linear
//===----------------------------------------------------------------------===//

// Bases are stored flattened (rank entries per basis vector) because attribute parameters are flat arrays.
static LinearLayout::Bases unflatten(ArrayRef<int64_t> flat, size_t rank) {
  LinearLayout::Bases out;
  if (rank == 0)
    return out;
  for (size_t i = 0; i + rank <= flat.size(); i += rank)
    out.emplace_back(flat.begin() + i, flat.begin() + i + rank);
  return out;
}

static SmallVector<int64_t> flatten(const LinearLayout::Bases &bases) {
  SmallVector<int64_t> out;
  for (const auto &c : bases)
    out.append(c.begin(), c.end());
  return out;
}

LinearLayout LinearLayoutAttr::getLayout() const {
  size_t rank = getShape().size();
  return LinearLayout(LinearLayout::Coord(getShape().begin(), getShape().end()), unflatten(getReg(), rank),
                      unflatten(getLane(), rank), unflatten(getWarp(), rank));
}

LinearLayoutAttr LinearLayoutAttr::get(MLIRContext *ctx, const LinearLayout &layout) {
  return get(ctx, layout.shape(), flatten(layout.bases(LayoutInput::Reg)), flatten(layout.bases(LayoutInput::Lane)),
             flatten(layout.bases(LayoutInput::Warp)));
}

LogicalResult LinearLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> reg, ArrayRef<int64_t> lane, ArrayRef<int64_t> warp) {
  size_t rank = shape.size();
  for (ArrayRef<int64_t> flat : {reg, lane, warp})
    if (rank == 0 ? !flat.empty() : flat.size() % rank != 0)
      return emitError() << "basis vectors must have " << rank << " entries";
  LinearLayout layout(LinearLayout::Coord(shape.begin(), shape.end()), unflatten(reg, rank), unflatten(lane, rank),
                      unflatten(warp, rank));
  if (rank == 0 && lane.empty())
    return success(); // a scalar: every thread holds it
  std::string problem = layout.verify();
  if (!problem.empty())
    return emitError() << "invalid linear layout: " << problem;
  return success();
}

static ParseResult parseBases(AsmParser &parser, StringRef keyword, size_t rank, SmallVectorImpl<int64_t> &flat) {
  if (parser.parseKeyword(keyword) || parser.parseEqual())
    return failure();
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
    size_t before = flat.size();
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
          int64_t v;
          if (parser.parseInteger(v))
            return failure();
          flat.push_back(v);
          return success();
        }))
      return failure();
    if (rank == 0)
      return parser.emitError(at) << "a rank-0 (scalar) layout takes no " << keyword << " basis vectors";
    if (flat.size() - before != rank)
      return parser.emitError(at) << "each " << keyword << " basis vector needs " << rank << " entries, one per dimension";
    return success();
  });
}

LogicalResult LinearLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                               function_ref<InFlightDiagnostic()> emitError) const {
  if (getShape() != shape)
    return emitError() << "#tgpu.linear layout of shape [" << getShape() << "] on a tensor of shape [" << shape << "]";
  return success();
}

Attribute LinearLayoutAttr::parse(AsmParser &parser, Type) {
  SmallVector<int64_t> shape, reg, lane, warp;
  if (parser.parseLess() || parser.parseKeyword("shape") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        shape.push_back(v);
        return success();
      }) ||
      parser.parseComma() || parseBases(parser, "reg", shape.size(), reg) || parser.parseComma() ||
      parseBases(parser, "lane", shape.size(), lane) || parser.parseComma() ||
      parseBases(parser, "warp", shape.size(), warp) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<LinearLayoutAttr>(parser.getContext(), shape, reg, lane, warp);
}

void LinearLayoutAttr::print(AsmPrinter &printer) const {
  size_t rank = getShape().size();
  auto printBases = [&](StringRef name, ArrayRef<int64_t> flat) {
    printer << name << " = [";
    for (size_t i = 0; rank && i < flat.size(); i += rank) {
      printer << (i ? ", [" : "[");
      llvm::interleaveComma(flat.slice(i, rank), printer);
      printer << "]";
    }
    printer << "]";
  };
  printer << "<shape = [";
  llvm::interleaveComma(getShape(), printer);
  printer << "], ";
  printBases("reg", getReg());
  printer << ", ";
  printBases("lane", getLane());
  printer << ", ";
  printBases("warp", getWarp());
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult ConvertLayoutOp::verify() {
  auto src = getSrc().getType(), res = getResult().getType();
  if (src.getShape() != res.getShape() || src.getElementType() != res.getElementType())
    return emitOpError("source and result must have the same shape and element type");
  for (auto [what, type] : {std::pair<const char *, RankedTensorType>{"source", src}, {"result", res}}) {
    auto layout = getLayoutAttr(type);
    if (!layout)
      return emitOpError() << what << " has no #tgpu.linear layout";
    if (layout.getShape() != type.getShape())
      return emitOpError() << what << " layout shape differs from the tile shape";
  }
  return success();
}

// --- machine ops --------------------------------------------------------------------------------

/// Checks a named barrier's id and thread count where they are constants.
static LogicalResult verifyNamedBarrier(Operation *op, Value id, Value threads) {
  APInt value;
  if (matchPattern(id, m_ConstantInt(&value)) && (value.getSExtValue() < 0 || value.getSExtValue() > 15))
    return op->emitOpError() << "named barrier id " << value.getSExtValue() << " is outside 0-15";
  if (matchPattern(threads, m_ConstantInt(&value))) {
    const int64_t n = value.getSExtValue();
    if (n < 32 || n > 1024 || n % 32 != 0)
      return op->emitOpError() << "named barrier thread count " << n << " must be a multiple of 32 from 32 to 1024";
  }
  return success();
}

LogicalResult NamedBarrierSyncOp::verify() { return verifyNamedBarrier(*this, getId(), getThreads()); }
LogicalResult NamedBarrierArriveOp::verify() { return verifyNamedBarrier(*this, getId(), getThreads()); }


/// setmaxnreg's per-thread budgets: multiples of 8 from 24 to 256.
static LogicalResult verifyRegisterBudget(Operation *op, int64_t n, StringRef role = "") {
  if (n < 24 || n > 256 || n % 8 != 0)
    return op->emitOpError() << role << (role.empty() ? "" : " ") << "register count " << n
                             << " must be a multiple of 8 from 24 to 256";
  return success();
}

LogicalResult SetMaxRegistersOp::verify() { return verifyRegisterBudget(*this, getCount()); }

LogicalResult WarpSpecializeOp::verify() {
  if (getProducer().front().empty() || !isa<WarpExitOp>(getProducer().front().back()))
    return emitOpError() << "producer region must end in tgpu.warp_exit (the producer warps leave the kernel)";
  const int64_t consumers = static_cast<int64_t>(getConsumerWarps());
  const int64_t producers = static_cast<int64_t>(getProducerWarps());
  if (consumers <= 0 || consumers % 4 != 0)
    return emitOpError() << "consumer warps " << consumers << " must be whole warpgroups (a positive multiple of 4)";
  if (producers != 4)
    return emitOpError() << "producer warps " << producers << " must be one warpgroup (4): register budgets move "
                         << "per warpgroup";
  if (failed(verifyRegisterBudget(*this, getConsumerRegisters(), "consumer")) ||
      failed(verifyRegisterBudget(*this, getProducerRegisters(), "producer")))
    return failure();
  const int64_t used = registersOfRoles(consumers, getConsumerRegisters(), producers, getProducerRegisters());
  if (used > kRegistersPerCTA)
    return emitOpError() << "register budgets need " << used << " registers, more than the " << kRegistersPerCTA
                         << " an SM gives one CTA";
  // The kernel's block is both roles' warps.
  for (Operation *parent = (*this)->getParentOp(); parent; parent = parent->getParentOp())
    if (auto size = parent->getAttrOfType<DenseI32ArrayAttr>("known_block_size")) {
      if (size.size() >= 1 && size[0] != 32 * (consumers + producers))
        return emitOpError() << "needs " << 32 * (consumers + producers) << " threads, but the kernel's block has "
                             << size[0];
      break;
    }
  return success();
}

LogicalResult SharedAreaOp::verify() {
  const int64_t bytes = getBytesAttr().getInt(), alignment = getAlignmentAttr().getInt();
  if (bytes < 0)
    return emitOpError() << "size " << bytes << " is negative";
  if (alignment <= 0 || !llvm::isPowerOf2_64(static_cast<uint64_t>(alignment)) || alignment > 1024)
    return emitOpError() << "alignment " << alignment << " must be a power of two up to 1024 (the buffer's own)";
  return success();
}

LogicalResult WgmmaWaitOp::verify() {
  const int64_t pending = static_cast<int64_t>(getPending());
  if (pending < 0 || pending > 7)
    return emitOpError() << "pending groups " << pending << " must be from 0 to 7";
  return success();
}

/// A tensor map has 1 to 5 dimensions: one coordinate each.
static LogicalResult verifyTmaCoords(Operation *op, ValueRange coords) {
  if (coords.empty() || coords.size() > 5)
    return op->emitOpError() << "takes 1 to 5 coordinates (one per tensor map dimension), got " << coords.size();
  return success();
}

LogicalResult RingType::verify(llvm::function_ref<InFlightDiagnostic()> emitError, int64_t stages) {
  if (stages < 1)
    return emitError() << "a ring has at least one stage, not " << stages;
  return success();
}

// `!tgpu.tile_schedule` or `!tgpu.tile_schedule<split>`.
Type TileScheduleType::parse(AsmParser &parser) {
  bool split = false;
  if (succeeded(parser.parseOptionalLess())) {
    if (parser.parseKeyword("split") || parser.parseGreater())
      return {};
    split = true;
  }
  return TileScheduleType::get(parser.getContext(), split);
}

void TileScheduleType::print(AsmPrinter &printer) const {
  if (getSplit())
    printer << "<split>";
}

LogicalResult TileInstanceOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location>, ValueRange operands,
                                               DictionaryAttr, OpaqueProperties, RegionRange,
                                               SmallVectorImpl<Type> &types) {
  auto schedule = operands.empty() ? TileScheduleType() : dyn_cast<TileScheduleType>(operands[0].getType());
  if (!schedule)
    return failure();
  // The program ids, then with a split schedule the piece's lo, hi and slot.
  types.assign(schedule.getSplit() ? 6 : 3, IntegerType::get(ctx, 32));
  return success();
}

LogicalResult TmaLoadOp::verify() { return verifyTmaCoords(*this, getCoords()); }
LogicalResult TmaStoreOp::verify() { return verifyTmaCoords(*this, getCoords()); }
LogicalResult TmaReduceAddOp::verify() { return verifyTmaCoords(*this, getCoords()); }

LogicalResult WgmmaOp::verify() {
  if (static_cast<bool>(getDescA()) == !getRegsA().empty())
    return emitOpError() << "takes A either from shared memory (a_desc) or from registers (a_regs), not both or neither";
  if (!getRegsA().empty() && getRegsA().size() != 4)
    return emitOpError() << "takes A in 4 registers (packed 16-bit pairs), got " << getRegsA().size();
  if (getAMMajor() && !getDescA())
    return emitOpError() << "reads an M-major A (a_m_major) only from shared memory (a_desc)";
  const int64_t n = static_cast<int64_t>(getN());
  if (n < 8 || n > 256 || n % 8 != 0)
    return emitOpError() << "n = " << n << " must be a multiple of 8 from 8 to 256";
  Type elem = getElementType();
  if (!elem.isBF16() && !elem.isF16())
    return emitOpError() << "element type must be bf16 or f16, got " << elem;
  auto acc = dyn_cast<LLVM::LLVMStructType>(getAcc().getType());
  if (!acc || static_cast<int64_t>(acc.getBody().size()) != n / 2 ||
      !llvm::all_of(acc.getBody(), [](Type t) { return t.isF32(); }))
    return emitOpError() << "accumulator must be an LLVM struct of n / 2 = " << n / 2 << " f32 values, got "
                         << getAcc().getType();
  return success();
}
