//===- TGPUToNVVM.cpp - Lower laid-out tile kernels to per-thread code ----===//
//
// Outline (one KernelLowering per `tile.kernel` function, after tgpu-assign-layouts):
//   1. Create `gpu.func` in `gpu.module @flare_kernels` with Flare's kernel ABI: `!tile.ptr<T>` becomes
//      `!llvm.ptr<1>`, scalars stay; block size = num_warps * 32.
//   2. Walk the body in order. Scalars map 1:1. A tile with layout L becomes L.numRegs() scalars: the
//      value of register i is the element at coordinate
//          c(i) = R(i) ^ T,   T = XOR of the lane and warp bases selected by this thread's ids,
//      so T is computed once per layout and each register adds a constant.
//   3. Loads/stores: element address = base + sum_d (offset_d + c_d) * stride_d in 64 bits, guarded by
//      0 <= offset_d + c_d < size_d (one unsigned compare per dimension); loads pad outside.
//      Stores skip duplicated elements: registers whose index sets a zero register basis, and threads
//      whose lane/warp id sets a bit with a zero basis.
//   4. reduce(axis): (a) registers of a thread that differ only along the axis combine; (b) lanes
//      combine by butterfly shuffles over the lane bits that move along the axis (every lane ends with
//      the same value, since each step is commutative); (c) warps that move along the axis exchange
//      partials through shared memory, combined in increasing warp order so that all threads agree.
//   5. tile.dot: for every 16x8 block of the warp's accumulator and every 16-deep slice of K, one
//      mma.sync.m16n8k16 on the registers the mma layouts put in place (pairs of 16-bit values packed
//      into 32-bit registers); tile.trans is free (its layout already swapped the dimensions).
//   6. Layout conversions and broadcasts permute registers when the thread already holds the value,
//      else go through shared memory (write every register at its row-major index, barrier, read).
//   7. scf.for / scf.if carry and yield every register of a tile.
// Shared memory is one dynamic buffer; its size (the largest scratch any op needs) is recorded on the
// kernel as `tgpu.shared_bytes`.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_CONVERTTGPUTONVVM
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare;
using namespace flare::tgpu;

namespace {

constexpr double kLog2E = 1.4426950408889634;  // log2(e): exp(x) = exp2(x * log2(e))
constexpr double kLn2 = 0.6931471805599453;    // ln(2):   log(x) = log2(x) * ln(2)
constexpr int kWarpSize = 32;
constexpr StringLiteral kSharedMemorySymbol = "__flare_smem";
constexpr StringLiteral kKernelModuleName = "flare_kernels";

struct ViewInfo {
  Value base;                    // !llvm.ptr<1>
  SmallVector<Value> sizes;      // i32
  SmallVector<Value> strides;    // i64
  bool unitInnerStride = false;  // the innermost stride is the constant 1: rows are contiguous
};

constexpr int kMaxVectorBytes = 16; // widest global access: ld.global.v4.b32
constexpr int kCoreRowBytes = 16;   // one row of a wgmma core matrix (8 x 16 bytes)
constexpr int kCoreBytes = 128;     // one wgmma core matrix
constexpr int kPipelineStages = 3;  // shared-memory slots of a cp.async-pipelined K loop

class KernelLowering {
public:
  KernelLowering(func::FuncOp func, gpu::GPUModuleOp module, int64_t maxSharedBytes, bool wgmma)
      : func(func), module(module), b(func.getContext()), numWarps(tile::getNumWarps(func)),
        maxSharedBytes(maxSharedBytes), wgmma(wgmma) {}

  LogicalResult run();

private:
  func::FuncOp func;
  gpu::GPUModuleOp module;
  OpBuilder b;
  int numWarps;
  int64_t maxSharedBytes;
  bool wgmma; // sm_90a: dots that fit run as warpgroup MMAs on shared-memory operands
  Location loc = UnknownLoc::get(b.getContext());

  Value laneId, warpId;                                   // i32
  Operation *prologueAnchor = nullptr;                    // per-thread constants are computed before it
  Value smemBase;                                         // !llvm.ptr<3>
  int64_t sharedBytes = 0;
  IRMapping scalars;                                      // scalar values: source -> lowered
  DenseMap<Value, SmallVector<Value>> regs;               // tiles: source -> one value per register
  DenseMap<Value, ViewInfo> views;
  DenseMap<Attribute, SmallVector<Value>> threadCoords;   // per layout: T_d for each dimension

  // --- small builders -----------------------------------------------------------------------------
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value i64(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }

  LinearLayout layoutOf(Value tileValue) { return getLayoutAttr(tileValue.getType()).getLayout(); }

  /// T_d: the coordinate contribution of this thread's lane and warp ids, per dimension (i32).
  ArrayRef<Value> threadCoord(Attribute layoutAttr) {
    auto it = threadCoords.find(layoutAttr);
    if (it != threadCoords.end())
      return it->second;
    // Computed once, in the kernel's prologue, so that every region can use them.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueAnchor);
    Location savedLoc = loc;
    loc = func.getLoc();
    auto restoreLoc = llvm::make_scope_exit([&] { loc = savedLoc; });
    LinearLayout layout = cast<LinearLayoutAttr>(layoutAttr).getLayout();
    SmallVector<Value> coords;
    for (int d = 0; d < layout.rank(); ++d) {
      Value acc = i32(0);
      for (auto [in, id] : {std::pair<LayoutInput, Value>{LayoutInput::Lane, laneId}, {LayoutInput::Warp, warpId}}) {
        const auto &bases = layout.bases(in);
        for (size_t bit = 0; bit < bases.size(); ++bit) {
          if (bases[bit][d] == 0)
            continue;
          // ((id >> bit) & 1) * basis, XOR-ed in.
          Value sel = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, id, i32(bit)), i32(1));
          acc = arith::XOrIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, sel, i32(bases[bit][d])));
        }
      }
      coords.push_back(acc);
    }
    return threadCoords[layoutAttr] = coords;
  }

  /// Coordinate (i32 per dimension) of register `reg` of a tile with the given layout.
  SmallVector<Value> regCoord(Attribute layoutAttr, const LinearLayout &layout, int reg) {
    ArrayRef<Value> t = threadCoord(layoutAttr);
    LinearLayout::Coord r = layout.applyInput(LayoutInput::Reg, reg);
    SmallVector<Value> c;
    for (int d = 0; d < layout.rank(); ++d)
      c.push_back(r[d] ? arith::XOrIOp::create(b, loc, t[d], i32(r[d])).getResult() : t[d]);
    return c;
  }

  /// Row-major index of a coordinate (i32).
  Value linearIndex(ArrayRef<Value> coord, ArrayRef<int64_t> shape) {
    Value idx = i32(0);
    for (size_t d = 0; d < coord.size(); ++d)
      idx = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, idx, i32(shape[d])), coord[d]);
    return idx;
  }

  Value barrier() { return gpu::BarrierOp::create(b, loc), Value(); }

  Value smemAddress(Value index, Type elemType, Value byteOffset = Value()) {
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
    Value base = smemBase;
    if (byteOffset)
      base = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), smemBase, ValueRange{byteOffset});
    return LLVM::GEPOp::create(b, loc, ptrType, elemType, base, ValueRange{index});
  }

  // Dot operands that need shared memory stay there until the dot loads each fragment just before
  // its mma ("lazy" tiles), so that a whole B tile never sits in registers. They live above the
  // scratch area of the other ops: at lazyBase (patched to the final scratch size at the end) plus a
  // per-tile offset.
  struct LazyTile {
    Attribute layoutAttr;
    LinearLayout layout;
    Type elem;
    int64_t byteOffset;
    DenseMap<int, Value> loaded;
  };
  DenseMap<Value, LazyTile> lazyTiles;
  Operation *lazyBase = nullptr; // arith.constant i32, patched once the scratch size is known
  int64_t lazyCursor = 0, lazyBytes = 0;
  Location lazyUser = UnknownLoc::get(b.getContext()); // the dot whose operands needed the most
  void growLazy() {
    if (lazyCursor > lazyBytes) {
      lazyBytes = lazyCursor;
      lazyUser = loc;
    }
  }
  int pendingLazy = 0;

  bool isLazyDotOperand(ConvertLayoutOp conv) {
    if (!conv->hasOneUse())
      return false;
    auto dot = dyn_cast<tile::DotOp>(*conv->getUsers().begin());
    if (!dot || dot->getBlock() != conv->getBlock() || dot.getC() == conv.getResult())
      return false;
    return !layoutOf(conv.getResult()).registerPermutationFrom(layoutOf(conv.getSrc()));
  }
  void lowerLazyConvert(ConvertLayoutOp conv);
  /// Operands of wgmma dots that reach them through a conversion: the dot stores the conversion's
  /// source registers straight into its shared-memory layout (no register shuffle at all).
  DenseMap<Value, Value> wgmmaSources;
  bool canUseWgmma(tile::DotOp op);
  LogicalResult lowerDotWgmma(tile::DotOp op);
  Value coreMatrixOffset(Value row, Value col, int64_t cols, bool transposed = false);
  void emitWgmma(Value aBase, Value bBase, bool bNMajor, int64_t m, int64_t n, int64_t k, Type elem,
                 SmallVectorImpl<Value> &c);
  /// The MMAs of one wgmma dot on the accumulator struct, committed as a group but not waited for.
  Value emitWgmmaAsync(Value aBase, Value bBase, bool bNMajor, int64_t m, int64_t n, int64_t k, Type elem, Value acc);
  Value packAccumulator(ArrayRef<Value> c);
  void unpackAccumulator(Value acc, SmallVectorImpl<Value> &c);
  /// Stores every register of `tile` (a tile of the source IR) to shared memory at
  /// base + offsetOf(coordinate), skipping registers that duplicate another of the same thread.
  void storeTile(Value tile, Value byteBase, const std::function<Value(ArrayRef<Value>)> &offsetOf, int vectorDim);
  Value lazyRegister(Value v, int reg);
  Value dotRegister(Value v, int reg) { return lazyTiles.count(v) ? lazyRegister(v, reg) : regs[v][reg]; }

  void needShared(int64_t bytes) {
    if (bytes > sharedBytes) {
      sharedBytes = bytes;
      largestSharedUser = loc;
    }
  }
  Location largestSharedUser = UnknownLoc::get(b.getContext());

  /// Shared-memory scratch holds 32-bit words at least (i1 and 16-bit values are widened on the way).
  static Type scratchType(Type t) {
    return t.getIntOrFloatBitWidth() < 32 && isa<IntegerType>(t) ? IntegerType::get(t.getContext(), 32) : t;
  }
  Value toScratch(Value v) {
    Type st = scratchType(v.getType());
    return st == v.getType() ? v : arith::ExtUIOp::create(b, loc, st, v).getResult();
  }
  Value fromScratch(Value v, Type t) {
    return v.getType() == t ? v : arith::TruncIOp::create(b, loc, t, v).getResult();
  }

  // --- the walk -----------------------------------------------------------------------------------
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerLoad(tile::LoadOp op);
  /// `pred ? *addr : pad` as one predicated ld.global (no branch) for 16- and 32-bit elements.
  Value predicatedLoad(Value addr, Value pred, Value pad, Type elem);
  /// `vec` consecutive elements at `addr` (16-byte aligned when pred holds) as one predicated vector
  /// load, or `pad` in every lane when pred is false.
  SmallVector<Value> predicatedVectorLoad(Value addr, Value pred, Value pad, Type elem, int vec);
  LogicalResult lowerStore(Operation *op, Value value, Value view, ValueRange offsetValues, bool atomicAdd);
  LogicalResult lowerDot(tile::DotOp op);
  LogicalResult lowerReduce(tile::ReduceOp op);
  LogicalResult lowerConvert(Value src, Value dst, ArrayRef<Value> srcRegs, SmallVectorImpl<Value> &out);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerForGeneric(scf::ForOp op);
  /// A K loop whose body is only `acc = dot(load_a(iv), load_b(iv), acc)` (each load behind its
  /// layout conversion) and whose dot runs on wgmma: the operands stream through a ring of
  /// kPipelineStages shared-memory stages filled by cp.async, so copies of the next steps overlap
  /// the MMAs of this one. Returns the two loads, or nothing when the loop has another shape.
  std::optional<std::array<tile::LoadOp, 2>> matchPipelinedDotLoop(scf::ForOp op);
  LogicalResult lowerPipelinedDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerElementwise(Operation *op);
  FailureOr<Value> emitScalar(Operation *op, ValueRange operands, Type resultType);

  SmallVector<Value> flatten(ValueRange values) {
    SmallVector<Value> out;
    for (Value v : values) {
      if (isa<RankedTensorType>(v.getType()))
        llvm::append_range(out, regs[v]);
      else
        out.push_back(scalars.lookup(v));
    }
    return out;
  }
  SmallVector<Type> flattenTypes(TypeRange types) {
    SmallVector<Type> out;
    for (Type t : types) {
      if (auto tt = dyn_cast<RankedTensorType>(t))
        out.append(getLayoutAttr(tt).getLayout().numRegs(), tt.getElementType());
      else
        out.push_back(t);
    }
    return out;
  }
  /// Binds `values` (source) to consecutive entries of `lowered`.
  void unflatten(ValueRange values, ValueRange lowered) {
    size_t pos = 0;
    for (Value v : values) {
      if (auto tt = dyn_cast<RankedTensorType>(v.getType())) {
        int n = getLayoutAttr(tt).getLayout().numRegs();
        regs[v] = SmallVector<Value>(lowered.begin() + pos, lowered.begin() + pos + n);
        pos += n;
      } else {
        scalars.map(v, lowered[pos++]);
      }
    }
  }
};

LogicalResult KernelLowering::run() {
  // Every tile must carry a layout before we start.
  WalkResult missing = func.walk([&](Operation *op) {
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (isa<RankedTensorType>(t) && !getLayoutAttr(t)) {
        op->emitOpError("has a tile without a #tgpu.linear layout; run tgpu-assign-layouts first");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (missing.wasInterrupted())
    return failure();

  MLIRContext *ctx = b.getContext();
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> argTypes;
  for (Type t : func.getArgumentTypes())
    argTypes.push_back(isa<tile::PtrType>(t) ? Type(globalPtr) : t);

  b.setInsertionPointToEnd(module.getBody());
  loc = func.getLoc();
  auto gfunc = gpu::GPUFuncOp::create(b, loc, func.getName(), FunctionType::get(ctx, argTypes, {}));
  gfunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int numThreads = numWarps * kWarpSize;
  gfunc.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({numThreads, 1, 1}));

  Block &entry = gfunc.getBody().front();
  b.setInsertionPointToStart(&entry);
  for (auto [src, dst] : llvm::zip(func.getArguments(), entry.getArguments()))
    scalars.map(src, dst);
  Value tid = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  laneId = arith::AndIOp::create(b, loc, tid, i32(kWarpSize - 1));
  warpId = arith::ShRUIOp::create(b, loc, tid, i32(5));
  smemBase = LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 3), kSharedMemorySymbol);
  prologueAnchor = i32(0).getDefiningOp();
  lazyBase = i32(0).getDefiningOp();

  if (failed(lowerBlock(func.getBody().front())))
    return failure();
  // Lazy dot operands sit above the other ops' scratch area.
  constexpr int64_t kAlign = 16;
  int64_t scratch = (sharedBytes + kAlign - 1) / kAlign * kAlign;
  lazyBase->setAttr("value", b.getI32IntegerAttr(static_cast<int32_t>(scratch)));
  sharedBytes = scratch + lazyBytes;
  if (sharedBytes > maxSharedBytes) {
    bool dotOperands = lazyBytes >= scratch;
    return emitError(dotOperands ? lazyUser : largestSharedUser)
           << "kernel '" << func.getName() << "' needs " << sharedBytes << " bytes of shared memory ("
           << (dotOperands ? lazyBytes : scratch) << " for this op), more than the " << maxSharedBytes
           << " a CTA may use: use smaller tiles or fewer warps";
  }
  gfunc->setAttr(kSharedBytesAttrName, b.getI32IntegerAttr(static_cast<int32_t>(sharedBytes)));
  return success();
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block)
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  if (isa<func::ReturnOp>(op)) {
    gpu::ReturnOp::create(b, loc);
    return success();
  }
  if (auto pid = dyn_cast<tile::ProgramIdOp>(op)) {
    Value id = gpu::BlockIdOp::create(b, loc, static_cast<gpu::Dimension>(pid.getAxis()));
    scalars.map(pid.getResult(), arith::IndexCastUIOp::create(b, loc, b.getI32Type(), id));
    return success();
  }
  if (auto np = dyn_cast<tile::NumProgramsOp>(op)) {
    Value n = gpu::GridDimOp::create(b, loc, static_cast<gpu::Dimension>(np.getAxis()));
    scalars.map(np.getResult(), arith::IndexCastUIOp::create(b, loc, b.getI32Type(), n));
    return success();
  }
  if (auto add = dyn_cast<tile::AddPtrOp>(op)) {
    Value offset = scalars.lookup(add.getOffset());
    if (offset.getType().isInteger(32))
      offset = arith::ExtSIOp::create(b, loc, b.getI64Type(), offset);
    Type elem = add.getBase().getType().getElementType();
    scalars.map(add.getResult(), LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), elem,
                                                     scalars.lookup(add.getBase()), ValueRange{offset}));
    return success();
  }
  if (auto view = dyn_cast<tile::MakeViewOp>(op)) {
    ViewInfo info;
    info.base = scalars.lookup(view.getBase());
    for (Value s : view.getSizes())
      info.sizes.push_back(scalars.lookup(s));
    for (Value s : view.getStrides())
      info.strides.push_back(arith::ExtSIOp::create(b, loc, b.getI64Type(), scalars.lookup(s)));
    APInt innerStride;
    info.unitInnerStride = !view.getStrides().empty() &&
                           matchPattern(view.getStrides().back(), m_ConstantInt(&innerStride)) && innerStride == 1;
    views[view.getResult()] = std::move(info);
    return success();
  }
  if (auto load = dyn_cast<tile::LoadOp>(op))
    return lowerLoad(load);
  if (auto store = dyn_cast<tile::StoreOp>(op))
    return lowerStore(op, store.getValue(), store.getView(), store.getOffsets(), /*atomicAdd=*/false);
  if (auto add = dyn_cast<tile::AtomicAddOp>(op))
    return lowerStore(op, add.getValue(), add.getView(), add.getOffsets(), /*atomicAdd=*/true);
  if (auto dot = dyn_cast<tile::DotOp>(op))
    return lowerDot(dot);
  if (isa<tile::TransOp, tile::ReshapeOp>(op)) {
    // The layouts already re-express the coordinates: every register keeps its value.
    regs[op->getResult(0)] = regs[op->getOperand(0)];
    return success();
  }
  if (auto range = dyn_cast<tile::RangeOp>(op)) {
    LinearLayout layout = layoutOf(range.getResult());
    Attribute attr = getLayoutAttr(range.getResult().getType());
    SmallVector<Value> out;
    for (int r = 0; r < layout.numRegs(); ++r)
      out.push_back(arith::AddIOp::create(b, loc, regCoord(attr, layout, r)[0], i32(range.getStart())));
    regs[range.getResult()] = out;
    return success();
  }
  if (auto splat = dyn_cast<tile::SplatOp>(op)) {
    regs[splat.getResult()] =
        SmallVector<Value>(layoutOf(splat.getResult()).numRegs(), scalars.lookup(splat.getValue()));
    return success();
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(op); cst && isa<RankedTensorType>(cst.getType())) {
    auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
    if (!dense)
      return op->emitOpError("only splat constants are supported on tiles");
    Value v = arith::ConstantOp::create(b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    regs[cst.getResult()] = SmallVector<Value>(layoutOf(cst.getResult()).numRegs(), v);
    return success();
  }
  if (auto expand = dyn_cast<tile::ExpandDimsOp>(op)) {
    regs[expand.getResult()] = regs[expand.getSrc()];
    return success();
  }
  if (auto bcast = dyn_cast<tile::BroadcastOp>(op)) {
    SmallVector<Value> out;
    if (failed(lowerConvert(bcast.getSrc(), bcast.getResult(), regs[bcast.getSrc()], out)))
      return failure();
    regs[bcast.getResult()] = out;
    return success();
  }
  if (auto conv = dyn_cast<ConvertLayoutOp>(op); conv && isLazyDotOperand(conv)) {
    auto dot = cast<tile::DotOp>(*conv->getUsers().begin());
    if (canUseWgmma(dot))
      wgmmaSources[conv.getResult()] = conv.getSrc();
    else
      lowerLazyConvert(conv);
    return success();
  }
  if (auto conv = dyn_cast<ConvertLayoutOp>(op)) {
    SmallVector<Value> out;
    if (failed(lowerConvert(conv.getSrc(), conv.getResult(), regs[conv.getSrc()], out)))
      return failure();
    regs[conv.getResult()] = out;
    return success();
  }
  if (auto reduce = dyn_cast<tile::ReduceOp>(op))
    return lowerReduce(reduce);
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIf(ifOp);
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return lowerElementwise(op);
  return op->emitOpError("cannot be lowered to NVVM by convert-tgpu-to-nvvm");
}

/// How many consecutive registers of `layout` hold consecutive elements of the last dimension: the
/// low register bits whose bases are (0, ..., 1), (0, ..., 2), ... (at most `maxElems`).
static int contiguousRegsAlong(const LinearLayout &layout, int dim, int maxElems) {
  const auto &reg = layout.bases(LayoutInput::Reg);
  int n = 1;
  for (size_t bit = 0; bit < reg.size() && n * 2 <= maxElems; ++bit) {
    LinearLayout::Coord want(layout.rank(), 0);
    want[dim] = n;
    if (reg[bit] != want)
      break;
    n *= 2;
  }
  return n;
}
static int contiguousRegs(const LinearLayout &layout, int maxElems) {
  return contiguousRegsAlong(layout, layout.rank() - 1, maxElems);
}

// Predicated global loads are single PTX instructions that LLVM has no intrinsic for; a branch around a
// plain load would split the block and make every load wait where it is issued.
Value KernelLowering::predicatedLoad(Value addr, Value pred, Value pad, Type elem) {
  unsigned bits = elem.getIntOrFloatBitWidth();
  if (bits != 16 && bits != 32) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, pred, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, LLVM::LoadOp::create(b, loc, elem, addr).getResult());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, pad);
    return ifOp.getResult(0);
  }
  Type word = b.getIntegerType(bits);
  const char *reg = bits == 16 ? "h" : "r";
  std::string asmText = std::string("{\n.reg .pred p;\nsetp.ne.b32 p, $2, 0;\nmov.b") + std::to_string(bits) +
                        " $0, $3;\n@p ld.global.b" + std::to_string(bits) + " $0, [$1];\n}";
  std::string constraints = std::string("=") + reg + ",l,r," + reg;
  Value predWord = arith::ExtUIOp::create(b, loc, b.getI32Type(), pred);
  Value padWord = LLVM::BitcastOp::create(b, loc, word, pad);
  Value loaded = LLVM::InlineAsmOp::create(b, loc, word, ValueRange{addr, predWord, padWord}, asmText, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  return LLVM::BitcastOp::create(b, loc, elem, loaded);
}

SmallVector<Value> KernelLowering::predicatedVectorLoad(Value addr, Value pred, Value pad, Type elem, int vec) {
  unsigned bits = elem.getIntOrFloatBitWidth();
  int words = static_cast<int>(vec * bits / 32);
  int perWord = 32 / static_cast<int>(bits);
  Type i32Type = b.getI32Type();
  // The padding value repeated across one 32-bit word.
  Value padWord;
  if (bits == 32) {
    padWord = LLVM::BitcastOp::create(b, loc, i32Type, pad);
  } else {
    Value v = LLVM::UndefOp::create(b, loc, VectorType::get({perWord}, elem));
    for (int i = 0; i < perWord; ++i)
      v = LLVM::InsertElementOp::create(b, loc, v, pad, i32(i));
    padWord = LLVM::BitcastOp::create(b, loc, i32Type, v);
  }
  std::string outs, movs, constraints;
  for (int w = 0; w < words; ++w) {
    outs += (w ? ", $" : "$") + std::to_string(w);
    movs += "mov.b32 $" + std::to_string(w) + ", $" + std::to_string(words + 2) + ";\n";
    constraints += "=r,";
  }
  std::string asmText = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(words + 1) + ", 0;\n" + movs +
                        "@p ld.global.v" + std::to_string(words) + ".b32 {" + outs + "}, [$" + std::to_string(words) +
                        "];\n}";
  constraints += "l,r,r";
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(words, i32Type));
  Value predWord = arith::ExtUIOp::create(b, loc, i32Type, pred);
  Value loaded = LLVM::InlineAsmOp::create(b, loc, resultType, ValueRange{addr, predWord, padWord}, asmText, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  SmallVector<Value> parts;
  for (int w = 0; w < words; ++w) {
    Value word = LLVM::ExtractValueOp::create(b, loc, loaded, ArrayRef<int64_t>{w});
    if (bits == 32) {
      parts.push_back(LLVM::BitcastOp::create(b, loc, elem, word));
      continue;
    }
    Value pair = LLVM::BitcastOp::create(b, loc, VectorType::get({perWord}, elem), word);
    for (int i = 0; i < perWord; ++i)
      parts.push_back(LLVM::ExtractElementOp::create(b, loc, pair, i32(i)));
  }
  return parts;
}

LogicalResult KernelLowering::lowerLoad(tile::LoadOp op) {
  ViewInfo &view = views[op.getView()];
  auto type = op.getResult().getType();
  Type elem = type.getElementType();
  Attribute attr = getLayoutAttr(type);
  LinearLayout layout = getLayoutAttr(type).getLayout();
  TypedAttr padAttr = op.getPaddingAttr();
  if (!padAttr)
    padAttr = cast<TypedAttr>(b.getZeroAttr(elem));
  Value pad = arith::ConstantOp::create(b, loc, padAttr);
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(scalars.lookup(o));
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  const int rank = layout.rank();
  const int elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
  // Registers come in groups of `vec` consecutive elements of the last dimension; with a unit
  // innermost stride, a group that lies wholly inside the view at an aligned address is one
  // vector load of up to 16 bytes, else its elements load one by one under their own bounds.
  const int vec = view.unitInnerStride && elemBytes <= 4 ? contiguousRegs(layout, kMaxVectorBytes / elemBytes) : 1;
  SmallVector<Value> out;
  for (int first = 0; first < layout.numRegs(); first += vec) {
    SmallVector<Value> c = regCoord(attr, layout, first);
    SmallVector<Value> g;
    Value rowsOk, offset = i64(0);
    for (int d = 0; d < rank; ++d) {
      g.push_back(arith::AddIOp::create(b, loc, offsets[d], c[d]));
      Value term = arith::MulIOp::create(b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), g[d]), view.strides[d]);
      offset = arith::AddIOp::create(b, loc, offset, term);
      if (d + 1 < rank) {
        // 0 <= g < size as one unsigned compare.
        Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g[d], view.sizes[d]);
        rowsOk = rowsOk ? arith::AndIOp::create(b, loc, rowsOk, ok).getResult() : ok;
      }
    }
    Value base = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{offset});
    // Element i of the group: column g_last + i, address base + i; in bounds when its row and column are.
    auto elementAddress = [&](int i) -> Value {
      return i ? LLVM::GEPOp::create(b, loc, globalPtr, elem, base, ValueRange{i64(i)}).getResult() : base;
    };
    auto elementInBounds = [&](int i) -> Value {
      Value col = i ? arith::AddIOp::create(b, loc, g[rank - 1], i32(i)).getResult() : g[rank - 1];
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, view.sizes[rank - 1]);
      return rowsOk ? arith::AndIOp::create(b, loc, rowsOk, ok).getResult() : ok;
    };
    if (vec == 1) {
      out.push_back(predicatedLoad(elementAddress(0), elementInBounds(0), pad, elem));
      continue;
    }
    // Whole group inside: 0 <= g_last and g_last + vec <= size; aligned: address % (vec * bytes) == 0.
    Value last = g[rank - 1];
    Value whole = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, last, i32(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, arith::AddIOp::create(b, loc, last, i32(vec)),
                              view.sizes[rank - 1]));
    if (rowsOk)
      whole = arith::AndIOp::create(b, loc, whole, rowsOk);
    Value addrBits = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), base);
    Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          arith::AndIOp::create(b, loc, addrBits, i64(vec * elemBytes - 1)), i64(0));
    Value useVector = arith::AndIOp::create(b, loc, whole, aligned);
    // Both paths are predicated instructions, no branches: the vector load when the group is whole
    // and aligned, else each element under its own bounds.
    SmallVector<Value> vecParts = predicatedVectorLoad(base, useVector, pad, elem, vec);
    Value scalarPath = arith::XOrIOp::create(b, loc, useVector, arith::ConstantIntOp::create(b, loc, 1, 1));
    for (int i = 0; i < vec; ++i) {
      Value scalar = predicatedLoad(elementAddress(i), arith::AndIOp::create(b, loc, scalarPath, elementInBounds(i)),
                                    pad, elem);
      out.push_back(arith::SelectOp::create(b, loc, useVector, vecParts[i], scalar));
    }
  }
  regs[op.getResult()] = out;
  return success();
}

LogicalResult KernelLowering::lowerStore(Operation *op, Value value, Value viewValue, ValueRange offsetValues,
                                         bool atomicAdd) {
  ViewInfo &view = views[viewValue];
  auto type = cast<RankedTensorType>(value.getType());
  Type elem = type.getElementType();
  Attribute attr = getLayoutAttr(type);
  LinearLayout layout = getLayoutAttr(type).getLayout();
  SmallVector<Value> offsets;
  for (Value o : offsetValues)
    offsets.push_back(scalars.lookup(o));
  // Threads whose lane/warp ids set a bit with a zero basis duplicate another thread's elements.
  auto zeroMask = [&](LayoutInput in) {
    int mask = 0;
    const auto &bases = layout.bases(in);
    for (size_t bit = 0; bit < bases.size(); ++bit)
      if (llvm::all_of(bases[bit], [](int64_t v) { return v == 0; }))
        mask |= 1 << bit;
    return mask;
  };
  Value owner;
  for (auto [in, id] : {std::pair<LayoutInput, Value>{LayoutInput::Lane, laneId}, {LayoutInput::Warp, warpId}})
    if (int mask = zeroMask(in)) {
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, arith::AndIOp::create(b, loc, id, i32(mask)),
                                       i32(0));
      owner = owner ? arith::AndIOp::create(b, loc, owner, ok).getResult() : ok;
    }
  int dupRegs = zeroMask(LayoutInput::Reg);
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  ArrayRef<Value> values = regs[value];
  for (int r = 0; r < layout.numRegs(); ++r) {
    if (r & dupRegs)
      continue;
    SmallVector<Value> c = regCoord(attr, layout, r);
    Value pred = owner, offset = i64(0);
    for (int d = 0; d < layout.rank(); ++d) {
      Value g = arith::AddIOp::create(b, loc, offsets[d], c[d]);
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g, view.sizes[d]);
      pred = pred ? arith::AndIOp::create(b, loc, pred, ok).getResult() : ok;
      Value term = arith::MulIOp::create(b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), g), view.strides[d]);
      offset = arith::AddIOp::create(b, loc, offset, term);
    }
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, pred, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value addr = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{offset});
    if (atomicAdd)
      LLVM::AtomicRMWOp::create(b, loc, isa<FloatType>(elem) ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add, addr,
                                values[r], LLVM::AtomicOrdering::monotonic);
    else
      LLVM::StoreOp::create(b, loc, values[r], addr);
  }
  return success();
}

LogicalResult KernelLowering::lowerDot(tile::DotOp op) {
  if (canUseWgmma(op))
    return lowerDotWgmma(op);
  auto aType = op.getA().getType();
  Type elem = aType.getElementType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = op.getB().getType().getDimSize(1);
  // The register order of the mma layouts (LinearLayout::mmaOperandA/B, mmaAccumulator): fragment
  // registers first, then K repetitions, then M (for A and C) or N (for B) repetitions.
  auto [wm, wn] = LinearLayout::mmaWarps(m, n, numWarps);
  const int64_t mBlocks = m / wm / 16, nBlocks = n / wn / 8, kBlocks = k / 16;
  Value aValue = op.getA(), bValue = op.getB();
  SmallVector<Value> c(regs[op.getC()]);
  Type i32Type = b.getI32Type();
  auto halfPair = VectorType::get({2}, elem);
  // Two 16-bit values in one 32-bit register, the first in the low half.
  // (mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as i32.)
  auto pack = [&](Value lo, Value hi) -> Value {
    Value v = LLVM::UndefOp::create(b, loc, halfPair);
    v = LLVM::InsertElementOp::create(b, loc, v, lo, i32(0));
    v = LLVM::InsertElementOp::create(b, loc, v, hi, i32(1));
    return elem.isBF16() ? LLVM::BitcastOp::create(b, loc, i32Type, v).getResult() : v;
  };
  NVVM::MMATypes ptxType = elem.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  for (int64_t mi = 0; mi < mBlocks; ++mi)
    for (int64_t ki = 0; ki < kBlocks; ++ki) {
      int64_t aBase = 8 * (ki + kBlocks * mi);
      SmallVector<Value> aFrag;
      for (int r = 0; r < 8; r += 2)
        aFrag.push_back(pack(dotRegister(aValue, aBase + r), dotRegister(aValue, aBase + r + 1)));
      for (int64_t ni = 0; ni < nBlocks; ++ni) {
        int64_t bBase = 4 * (ki + kBlocks * ni), cBase = 4 * (ni + nBlocks * mi);
        SmallVector<Value> bFrag = {pack(dotRegister(bValue, bBase), dotRegister(bValue, bBase + 1)),
                                    pack(dotRegister(bValue, bBase + 2), dotRegister(bValue, bBase + 3))};
        SmallVector<Value> cFrag(c.begin() + cBase, c.begin() + cBase + 4);
        Value d = NVVM::MmaOp::create(b, loc, resultType, aFrag, bFrag, cFrag, ArrayRef<int64_t>{16, 8, 16},
                                      std::nullopt, std::nullopt,
                                      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                                      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int r = 0; r < 4; ++r)
          c[cBase + r] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r});
      }
    }
  regs[op.getResult()] = c;
  // The lazy operands' shared memory may be overwritten once every warp has read its fragments.
  int consumed = static_cast<int>(lazyTiles.erase(aValue)) + static_cast<int>(lazyTiles.erase(bValue));
  if (consumed) {
    barrier();
    pendingLazy -= consumed;
    if (pendingLazy == 0)
      lazyCursor = 0;
  }
  return success();
}

bool KernelLowering::canUseWgmma(tile::DotOp op) {
  if (!wgmma || numWarps % 4 != 0)
    return false;
  int64_t m = op.getA().getType().getDimSize(0), n = op.getB().getType().getDimSize(1);
  auto [wm, wn] = LinearLayout::mmaWarps(m, n, numWarps);
  // One m64nNk16 per warpgroup and K step: every warp owns 16 rows, warpgroups stack along M.
  return wm == numWarps && wn == 1 && m == 16 * numWarps && n % 8 == 0 && n <= 256;
}

void KernelLowering::storeTile(Value tile, Value byteBase, const std::function<Value(ArrayRef<Value>)> &offsetOf,
                               int vectorDim) {
  Attribute attr = getLayoutAttr(tile.getType());
  LinearLayout layout = layoutOf(tile);
  Type elem = cast<RankedTensorType>(tile.getType()).getElementType();
  int dupRegs = 0;
  const auto &regBases = layout.bases(LayoutInput::Reg);
  for (size_t bit = 0; bit < regBases.size(); ++bit)
    if (llvm::all_of(regBases[bit], [](int64_t v) { return v == 0; }))
      dupRegs |= 1 << bit;
  // Registers holding consecutive elements along `vectorDim` land in consecutive bytes of a core
  // matrix row (16 bytes): one vector store each, as wide as both allow.
  const int elemBytes = elem.getIntOrFloatBitWidth() / 8;
  const int vec = contiguousRegsAlong(layout, vectorDim, kCoreRowBytes / elemBytes);
  ArrayRef<Value> values = regs[tile];
  for (int first = 0; first < layout.numRegs(); first += vec) {
    if (first & dupRegs)
      continue;
    Value off = arith::AddIOp::create(b, loc, byteBase, offsetOf(regCoord(attr, layout, first)));
    Value addr = smemAddress(off, b.getI8Type());
    if (vec == 1) {
      LLVM::StoreOp::create(b, loc, values[first], addr);
      continue;
    }
    Value v = LLVM::UndefOp::create(b, loc, VectorType::get({vec}, elem));
    for (int i = 0; i < vec; ++i)
      v = LLVM::InsertElementOp::create(b, loc, v, values[first + i], i32(i));
    LLVM::StoreOp::create(b, loc, v, addr, /*alignment=*/vec * elemBytes);
  }
}

/// Byte offset of element (row, col) of a no-swizzle core-matrix layout: rows of 16 bytes hold 8
/// consecutive columns, 8 rows make a 128-byte core matrix, core matrices run along the columns
/// (LBO = 128) and then down the rows (SBO = cols * 16):
///     (row / 8) * SBO + (col / 8) * LBO + (row % 8) * 16 + (col % 8) * 2.
/// K-major operands use (row, col) = (m or n, k); N-major B uses (row, col) = (n, k) with the roles
/// inside the core matrix swapped (`transposed`): (k % 8) * 16 + (n % 8) * 2.
Value KernelLowering::coreMatrixOffset(Value row, Value col, int64_t cols, bool transposed) {
  Value r8 = arith::ShRUIOp::create(b, loc, row, i32(3)), c8 = arith::ShRUIOp::create(b, loc, col, i32(3));
  Value rIn = arith::AndIOp::create(b, loc, row, i32(7)), cIn = arith::AndIOp::create(b, loc, col, i32(7));
  if (transposed)
    std::swap(rIn, cIn);
  Value off = arith::MulIOp::create(b, loc, r8, i32(cols * kCoreRowBytes));
  off = arith::AddIOp::create(b, loc, off, arith::MulIOp::create(b, loc, c8, i32(kCoreBytes)));
  off = arith::AddIOp::create(b, loc, off, arith::MulIOp::create(b, loc, rIn, i32(kCoreRowBytes)));
  return arith::AddIOp::create(b, loc, off, arith::MulIOp::create(b, loc, cIn, i32(2)));
}

/// The MMAs of one wgmma dot whose A [m, k] (K-major) and B [k, n] (K- or N-major) already sit in
/// shared memory at byte offsets aBase and bBase: per warpgroup and 16-deep K step one
/// m64nNk16, fenced, committed and waited for. `c` holds the accumulator registers.
Value KernelLowering::emitWgmmaAsync(Value aBase, Value bBase, bool bNMajor, int64_t m, int64_t n, int64_t k,
                                     Type elem, Value acc) {
  const int64_t sbo = k * kCoreRowBytes, lbo = kCoreBytes;
  // Descriptors: start address >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, no swizzle.
  Value smemAddr = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), smemBase);
  auto descriptor = [&](Value byteOffset) -> Value {
    Value addr = arith::AddIOp::create(b, loc, smemAddr, byteOffset);
    Value start = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, addr, i32(4)), i32(0x3FFF));
    Value d = arith::ExtUIOp::create(b, loc, b.getI64Type(), start);
    d = arith::OrIOp::create(b, loc, d, i64((lbo >> 4) << 16));
    return arith::OrIOp::create(b, loc, d, i64((sbo >> 4) << 32));
  };
  // Warpgroup g computes rows 64g .. 64g + 63: its A slice starts 8g core-matrix rows down.
  Value group = arith::ShRUIOp::create(b, loc, warpId, i32(2));
  Value aGroup = arith::AddIOp::create(b, loc, aBase, arith::MulIOp::create(b, loc, group, i32(8 * sbo)));
  Type accType = acc.getType();
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  auto wgType = elem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  MLIRContext *ctx = b.getContext();
  for (int64_t kk = 0; kk < k / 16; ++kk) {
    // One K step of 16 elements is two core matrices along K: 2 * LBO bytes further.
    Value descA = descriptor(arith::AddIOp::create(b, loc, aGroup, i32(kk * 2 * lbo)));
    Value descB = descriptor(arith::AddIOp::create(b, loc, bBase, i32(kk * 2 * lbo)));
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, accType, acc, descA, descB, NVVM::MMAShapeAttr::get(ctx, 64, static_cast<int>(n), 16),
        NVVM::WGMMATypesAttr::get(ctx, wgType), NVVM::WGMMATypesAttr::get(ctx, wgType),
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32), NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one), NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(ctx, bNMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col),
        NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

Value KernelLowering::packAccumulator(ArrayRef<Value> c) {
  auto accType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(c.size(), b.getF32Type()));
  Value acc = LLVM::UndefOp::create(b, loc, accType);
  for (size_t i = 0; i < c.size(); ++i)
    acc = LLVM::InsertValueOp::create(b, loc, acc, c[i], ArrayRef<int64_t>{static_cast<int64_t>(i)});
  return acc;
}

void KernelLowering::unpackAccumulator(Value acc, SmallVectorImpl<Value> &c) {
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{static_cast<int64_t>(i)});
}

void KernelLowering::emitWgmma(Value aBase, Value bBase, bool bNMajor, int64_t m, int64_t n, int64_t k, Type elem,
                               SmallVectorImpl<Value> &c) {
  Value acc = emitWgmmaAsync(aBase, bBase, bNMajor, m, n, k, elem, packAccumulator(c));
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  unpackAccumulator(acc, c);
}

/// wgmma.mma_async with both operands stored to shared memory (see coreMatrixOffset) right before it.
LogicalResult KernelLowering::lowerDotWgmma(tile::DotOp op) {
  auto aType = op.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = op.getB().getType().getDimSize(1);
  Type elem = aType.getElementType();
  constexpr int64_t kAlign = 128;
  // Shared memory for A then B, above the other ops' scratch (see the lazy tiles).
  int64_t aOffset = (lazyCursor + kAlign - 1) / kAlign * kAlign;
  int64_t bOffset = aOffset + m * k * 2;
  lazyCursor = bOffset + n * k * 2;
  growLazy();
  Value aBase = arith::AddIOp::create(b, loc, lazyBase->getResult(0), i32(aOffset));
  Value bBase = arith::AddIOp::create(b, loc, lazyBase->getResult(0), i32(bOffset));
  Value aTile = wgmmaSources.lookup(op.getA()), bTile = wgmmaSources.lookup(op.getB());
  if (!aTile)
    aTile = op.getA();
  if (!bTile)
    bTile = op.getB();
  storeTile(aTile, aBase, [&](ArrayRef<Value> c) { return coreMatrixOffset(c[0], c[1], k); }, /*vectorDim=*/1);
  // B is stored N-major (n contiguous inside a core-matrix row, wgmma's transposed B) when its
  // registers run along N, as after a row-major load; K-major otherwise (after a transpose, say).
  const bool bNMajor = contiguousRegsAlong(layoutOf(bTile), 1, 8) > 1;
  if (bNMajor)
    storeTile(bTile, bBase, [&](ArrayRef<Value> c) { return coreMatrixOffset(c[1], c[0], k, /*transposed=*/true); }, 1);
  else
    storeTile(bTile, bBase, [&](ArrayRef<Value> c) { return coreMatrixOffset(c[1], c[0], k); }, 0);
  // Generic-proxy stores must be visible to the async proxy that wgmma reads through.
  NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
                             NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
  barrier();
  SmallVector<Value> c(regs[op.getC()]);
  emitWgmma(aBase, bBase, bNMajor, m, n, k, elem, c);
  regs[op.getResult()] = c;
  // Every warpgroup has read A and B once the barrier passes; the space may be reused.
  barrier();
  if (pendingLazy == 0)
    lazyCursor = 0;
  return success();
}

void KernelLowering::lowerLazyConvert(ConvertLayoutOp conv) {
  LinearLayout from = layoutOf(conv.getSrc());
  Type elem = conv.getSrc().getType().getElementType();
  Type st = scratchType(elem);
  int64_t bytes = from.numElements() * (st.getIntOrFloatBitWidth() / 8);
  constexpr int64_t kAlign = 16;
  int64_t offset = lazyCursor;
  lazyCursor = (lazyCursor + bytes + kAlign - 1) / kAlign * kAlign;
  {
    Location saved = loc;
    loc = (*conv->getUsers().begin())->getLoc(); // charge the dot that needs the operand
    growLazy();
    loc = saved;
  }
  Value base = arith::AddIOp::create(b, loc, lazyBase->getResult(0), i32(offset));
  Attribute fromAttr = getLayoutAttr(conv.getSrc().getType());
  ArrayRef<Value> srcRegs = regs[conv.getSrc()];
  for (int r = 0; r < from.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(fromAttr, from, r), from.shape());
    LLVM::StoreOp::create(b, loc, toScratch(srcRegs[r]), smemAddress(idx, st, base));
  }
  barrier();
  lazyTiles[conv.getResult()] = LazyTile{getLayoutAttr(conv.getResult().getType()), layoutOf(conv.getResult()), elem,
                                         offset, {}};
  ++pendingLazy;
}

Value KernelLowering::lazyRegister(Value v, int reg) {
  LazyTile &tile = lazyTiles.find(v)->second;
  if (Value cached = tile.loaded.lookup(reg))
    return cached;
  Type st = scratchType(tile.elem);
  Value base = arith::AddIOp::create(b, loc, lazyBase->getResult(0), i32(tile.byteOffset));
  Value idx = linearIndex(regCoord(tile.layoutAttr, tile.layout, reg), tile.layout.shape());
  Value value = fromScratch(LLVM::LoadOp::create(b, loc, st, smemAddress(idx, st, base)), tile.elem);
  tile.loaded[reg] = value;
  return value;
}

static Value combine(OpBuilder &b, Location loc, tile::ReduceKind kind, Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case tile::ReduceKind::sum:
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult() : arith::AddIOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::max:
    return isFloat ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                   : arith::MaxSIOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::min:
    return isFloat ? arith::MinimumFOp::create(b, loc, x, y).getResult()
                   : arith::MinSIOp::create(b, loc, x, y).getResult();
  }
  llvm_unreachable("unknown reduction");
}

LogicalResult KernelLowering::lowerReduce(tile::ReduceOp op) {
  auto srcType = op.getSrc().getType();
  Type elem = srcType.getElementType();
  if (elem.getIntOrFloatBitWidth() != 32)
    return op.emitOpError() << "reductions of " << elem << " are not supported yet; extend to 32 bits first";
  const int axis = op.getAxis();
  LinearLayout src = layoutOf(op.getSrc());
  std::optional<LinearLayout> sliced = src.sliceReduced(axis);
  if (!sliced)
    return op.emitOpError("source layout mixes the reduced axis with other dimensions");
  auto project = [&](LinearLayout::Coord c) {
    c.erase(c.begin() + axis);
    return c;
  };
  ArrayRef<Value> in = regs[op.getSrc()];

  // (a) Inside the thread: registers with the same projected coordinate combine, in register order.
  SmallVector<Value> partial;
  for (int j = 0; j < sliced->numRegs(); ++j) {
    LinearLayout::Coord want = sliced->applyInput(LayoutInput::Reg, j);
    Value acc;
    for (int r = 0; r < src.numRegs(); ++r)
      if (project(src.applyInput(LayoutInput::Reg, r)) == want)
        acc = acc ? combine(b, loc, op.getKind(), acc, in[r]) : in[r];
    if (!acc)
      return op.emitOpError("internal error: reduced register without a source");
    partial.push_back(acc);
  }

  // (b) Across lanes: butterfly shuffles over the lane bits that move along the axis.
  const auto &laneBases = src.bases(LayoutInput::Lane);
  Value fullMask = i32(-1), clamp = i32(kWarpSize - 1);
  for (size_t bit = 0; bit < laneBases.size(); ++bit) {
    if (laneBases[bit][axis] == 0)
      continue;
    for (Value &v : partial) {
      Value other = NVVM::ShflOp::create(b, loc, elem, fullMask, v, i32(1 << bit), clamp, NVVM::ShflKind::bfly,
                                         UnitAttr());
      v = combine(b, loc, op.getKind(), v, other);
    }
  }

  // (c) Across warps, through shared memory laid out as [warp][row-major output element].
  const auto &warpBases = src.bases(LayoutInput::Warp);
  int axisWarpMask = 0;
  for (size_t bit = 0; bit < warpBases.size(); ++bit)
    if (warpBases[bit][axis] != 0)
      axisWarpMask |= 1 << bit;
  if (axisWarpMask) {
    LinearLayout::Coord outShape = project(src.shape());
    int64_t outElems = 1;
    for (int64_t s : outShape)
      outElems *= s;
    needShared(static_cast<int64_t>(src.numWarps()) * outElems * 4);
    Attribute slicedAttr = LinearLayoutAttr::get(b.getContext(), *sliced);
    SmallVector<Value> outIndex;
    for (int j = 0; j < sliced->numRegs(); ++j)
      outIndex.push_back(sliced->rank() ? linearIndex(regCoord(slicedAttr, *sliced, j), sliced->shape()) : i32(0));
    Value warpRow = arith::MulIOp::create(b, loc, warpId, i32(outElems));
    for (int j = 0; j < sliced->numRegs(); ++j)
      LLVM::StoreOp::create(b, loc, partial[j], smemAddress(arith::AddIOp::create(b, loc, warpRow, outIndex[j]), elem));
    barrier();
    Value baseWarp = arith::AndIOp::create(b, loc, warpId, i32(~axisWarpMask));
    for (int j = 0; j < sliced->numRegs(); ++j) {
      Value acc;
      for (int combo = 0; combo < src.numWarps(); ++combo) {
        if ((combo & ~axisWarpMask) != 0)
          continue;
        Value w = arith::OrIOp::create(b, loc, baseWarp, i32(combo));
        Value idx = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, w, i32(outElems)), outIndex[j]);
        Value v = LLVM::LoadOp::create(b, loc, elem, smemAddress(idx, elem));
        acc = acc ? combine(b, loc, op.getKind(), acc, v) : v;
      }
      partial[j] = acc;
    }
    barrier();
  }

  if (isa<RankedTensorType>(op.getResult().getType()))
    regs[op.getResult()] = partial;
  else
    scalars.map(op.getResult(), partial.front());
  return success();
}

LogicalResult KernelLowering::lowerConvert(Value src, Value dst, ArrayRef<Value> srcRegs, SmallVectorImpl<Value> &out) {
  LinearLayout from = layoutOf(src), to = layoutOf(dst);
  if (std::optional<std::vector<int>> perm = to.registerPermutationFrom(from)) {
    for (int r : *perm)
      out.push_back(srcRegs[r]);
    return success();
  }
  if (from.shape() != to.shape())
    return emitError(loc) << "broadcast source layout " << from.str() << " cannot feed " << to.str();
  // Through shared memory: every thread writes what it holds at the row-major index, then reads.
  Type elem = cast<RankedTensorType>(src.getType()).getElementType();
  Type st = scratchType(elem);
  needShared(from.numElements() * std::max(4u, st.getIntOrFloatBitWidth() / 8));
  Attribute fromAttr = getLayoutAttr(src.getType()), toAttr = getLayoutAttr(dst.getType());
  barrier(); // earlier readers of the scratch buffer are done
  for (int r = 0; r < from.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(fromAttr, from, r), from.shape());
    LLVM::StoreOp::create(b, loc, toScratch(srcRegs[r]), smemAddress(idx, st));
  }
  barrier();
  for (int r = 0; r < to.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(toAttr, to, r), to.shape());
    out.push_back(fromScratch(LLVM::LoadOp::create(b, loc, st, smemAddress(idx, st)), elem));
  }
  barrier();
  return success();
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  if (auto loads = matchPipelinedDotLoop(op))
    return lowerPipelinedDotLoop(op, *loads);
  return lowerForGeneric(op);
}

std::optional<std::array<tile::LoadOp, 2>> KernelLowering::matchPipelinedDotLoop(scf::ForOp op) {
  if (!wgmma || op.getNumRegionIterArgs() != 1)
    return std::nullopt;
  Block *body = op.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  tile::DotOp dot;
  for (Operation &inner : body->without_terminator())
    if (auto d = dyn_cast<tile::DotOp>(inner)) {
      if (dot)
        return std::nullopt;
      dot = d;
    }
  if (!dot || !canUseWgmma(dot) || dot.getC() != op.getRegionIterArgs()[0] || yield.getOperand(0) != dot.getResult() ||
      !dot->hasOneUse())
    return std::nullopt;
  std::array<tile::LoadOp, 2> loads;
  SmallPtrSet<Operation *, 8> expected = {dot, yield};
  for (int which = 0; which < 2; ++which) {
    Value operand = dot->getOperand(which);
    if (auto conv = operand.getDefiningOp<ConvertLayoutOp>()) {
      if (!conv->hasOneUse() || conv->getBlock() != body)
        return std::nullopt;
      expected.insert(conv);
      operand = conv.getSrc();
    }
    auto load = operand.getDefiningOp<tile::LoadOp>();
    if (!load || load->getBlock() != body || !load->hasOneUse())
      return std::nullopt;
    auto type = load.getResult().getType();
    auto it = views.find(load.getView());
    // cp.async copies 16-byte rows of 8 contiguous 16-bit elements and zero-fills what lies outside.
    if (it == views.end() || !it->second.unitInnerStride || type.getElementTypeBitWidth() != 16 ||
        contiguousRegs(layoutOf(load.getResult()), 8) != 8)
      return std::nullopt;
    if (auto pad = load.getPaddingAttr())
      if (!isa<FloatAttr>(pad) || !cast<FloatAttr>(pad).getValue().isZero())
        return std::nullopt;
    if (!llvm::all_of(load.getOffsets(), [&](Value v) { return v == op.getInductionVar() || op.isDefinedOutsideOfLoop(v); }))
      return std::nullopt;
    // B must run along N to be copied N-major.
    if (which == 1 && contiguousRegsAlong(layoutOf(load.getResult()), 1, 8) != 8)
      return std::nullopt;
    expected.insert(load);
    loads[which] = load;
  }
  for (Operation &inner : *body)
    if (!expected.contains(&inner))
      return std::nullopt;
  return loads;
}

LogicalResult KernelLowering::lowerPipelinedDotLoop(scf::ForOp op, std::array<tile::LoadOp, 2> loads) {
  auto dot = cast<tile::DotOp>(*op.getRegionIterArgs()[0].getUsers().begin());
  auto aType = dot.getA().getType();
  const int64_t m = aType.getDimSize(0), k = aType.getDimSize(1), n = dot.getB().getType().getDimSize(1);
  Type elem = aType.getElementType();
  const int64_t aBytes = m * k * 2, stageBytes = (aBytes + k * n * 2 + 127) / 128 * 128;
  const int stages = kPipelineStages;
  Value lb = scalars.lookup(op.getLowerBound()), ub = scalars.lookup(op.getUpperBound()),
        step = scalars.lookup(op.getStep());
  if (!lb.getType().isInteger(32))
    return lowerForGeneric(op);

  // cp.async needs 16-byte aligned sources: bases and row strides of both views, and the columns of
  // every copy (loop-invariant offsets, or the induction variable: lower bound and step), multiples
  // of 8 elements. Otherwise the loop runs unpipelined.
  auto isAligned = [&](Value bytesOrElems, int64_t mask) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 arith::AndIOp::create(b, loc, bytesOrElems, arith::ConstantIntOp::create(
                                                                                 b, loc, bytesOrElems.getType(), mask)),
                                 arith::ConstantIntOp::create(b, loc, bytesOrElems.getType(), 0));
  };
  Value ok = arith::AndIOp::create(b, loc, isAligned(lb, 7), isAligned(step, 7));
  for (tile::LoadOp load : loads) {
    ViewInfo &view = views[load.getView()];
    ok = arith::AndIOp::create(b, loc, ok, isAligned(LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), view.base), 15));
    for (size_t d = 0; d + 1 < view.strides.size(); ++d)
      ok = arith::AndIOp::create(b, loc, ok, isAligned(view.strides[d], 7));
    Value lastOffset = load.getOffsets().back();
    if (lastOffset != op.getInductionVar())
      ok = arith::AndIOp::create(b, loc, ok, isAligned(scalars.lookup(lastOffset), 7));
  }
  auto ifOp = scf::IfOp::create(b, loc, flattenTypes(op.getResultTypes()), ok, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.elseBlock());
    if (failed(lowerForGeneric(op)))
      return failure();
    scf::YieldOp::create(b, loc, flatten(op.getResults()));
    b.setInsertionPointToStart(ifOp.thenBlock());

    // The ring: `stages` slots of A (K-major) then B (N-major), above the other ops' scratch.
    int64_t ringOffset = (lazyCursor + 127) / 128 * 128;
    lazyCursor = ringOffset + stages * stageBytes;
    {
      Location saved = loc;
      loc = dot.getLoc();
      growLazy();
      loc = saved;
    }
    Value ring = arith::AddIOp::create(b, loc, lazyBase->getResult(0), i32(ringOffset));
    auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    // Copies the tiles of iteration `iv` into slot `slot` (zero bytes when !valid or outside the view).
    auto issue = [&](Value iv, Value slot, Value valid) {
      Value slotBase = arith::AddIOp::create(b, loc, ring, arith::MulIOp::create(b, loc, slot, i32(stageBytes)));
      for (int which = 0; which < 2; ++which) {
        tile::LoadOp load = loads[which];
        ViewInfo &view = views[load.getView()];
        Attribute attr = getLayoutAttr(load.getResult().getType());
        LinearLayout layout = layoutOf(load.getResult());
        const int rank = layout.rank();
        SmallVector<Value> offsets;
        for (Value o : load.getOffsets())
          offsets.push_back(o == op.getInductionVar() ? iv : scalars.lookup(o));
        Value operandBase = which == 0 ? slotBase : arith::AddIOp::create(b, loc, slotBase, i32(aBytes)).getResult();
        for (int first = 0; first < layout.numRegs(); first += 8) {
          SmallVector<Value> c = regCoord(attr, layout, first);
          Value rowsOk = valid, offset = i64(0);
          SmallVector<Value> g;
          for (int d = 0; d < rank; ++d) {
            g.push_back(arith::AddIOp::create(b, loc, offsets[d], c[d]));
            offset = arith::AddIOp::create(
                b, loc, offset,
                arith::MulIOp::create(b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), g[d]), view.strides[d]));
            if (d + 1 < rank)
              rowsOk = arith::AndIOp::create(
                  b, loc, rowsOk, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g[d], view.sizes[d]));
          }
          // Bytes to read: 2 * (size - column), clamped to [0, 16]; the rest of the 16 is zero-filled.
          Value left = arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, view.sizes[rank - 1], g[rank - 1]),
                                             i32(2));
          Value bytes = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, left, i32(16)), i32(0));
          bytes = arith::SelectOp::create(b, loc, rowsOk, bytes, i32(0));
          Value src = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{offset});
          Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, bytes, i32(0));
          src = arith::SelectOp::create(b, loc, nonEmpty, src, view.base);
          Value within = which == 0 ? coreMatrixOffset(c[0], c[1], k)
                                    : coreMatrixOffset(c[1], c[0], k, /*transposed=*/true);
          Value dst = LLVM::GEPOp::create(b, loc, sharedPtr, b.getI8Type(), smemBase,
                                          ValueRange{arith::AddIOp::create(b, loc, operandBase, within)});
          NVVM::CpAsyncOp::create(b, loc, dst, src, b.getI32IntegerAttr(16),
                                  NVVM::LoadCacheModifierKindAttr::get(b.getContext(), NVVM::LoadCacheModifierKind::CG),
                                  bytes);
        }
      }
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    };
    // Prologue: iterations 0 .. stages - 2 in flight before the loop starts.
    for (int s = 0; s + 1 < stages; ++s) {
      Value iv = arith::AddIOp::create(b, loc, lb, arith::MulIOp::create(b, loc, step, i32(s)));
      issue(iv, i32(s), arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub));
    }
    // The accumulator is carried as wgmma's struct so that its registers are never read while an MMA
    // group is in flight: each iteration issues its MMAs and waits only for the previous iteration's.
    SmallVector<Value> c = flatten(op.getInitArgs());
    auto loop = scf::ForOp::create(b, loc, lb, ub, step, ValueRange{packAccumulator(c)});
    {
      OpBuilder::InsertionGuard inner(b);
      Block *body = loop.getBody();
      if (!body->empty() && isa<scf::YieldOp>(body->back()))
        body->back().erase();
      b.setInsertionPointToEnd(body);
      Value iv = loop.getInductionVar();
      Value i = arith::DivSIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
      // Iteration i's copies are the oldest of the stages - 1 groups pending: wait for it alone.
      NVVM::CpAsyncWaitGroupOp::create(b, loc, stages - 2);
      NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
                                 NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
      barrier();
      Value slotBase = arith::AddIOp::create(
          b, loc, ring, arith::MulIOp::create(b, loc, arith::RemSIOp::create(b, loc, i, i32(stages)), i32(stageBytes)));
      Value acc = emitWgmmaAsync(slotBase, arith::AddIOp::create(b, loc, slotBase, i32(aBytes)), /*bNMajor=*/true, m,
                                 n, k, elem, loop.getRegionIterArgs()[0]);
      // The previous iteration's MMAs are done in every warpgroup: its slot can be refilled, with
      // iteration i + stages - 1.
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
      barrier();
      Value ahead = arith::AddIOp::create(b, loc, iv, arith::MulIOp::create(b, loc, step, i32(stages - 1)));
      issue(ahead, arith::RemSIOp::create(b, loc, arith::AddIOp::create(b, loc, i, i32(stages - 1)), i32(stages)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ahead, ub));
      scf::YieldOp::create(b, loc, ValueRange{acc});
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    unpackAccumulator(loop.getResult(0), c);
    scf::YieldOp::create(b, loc, c);
  }
  lazyCursor = 0;
  unflatten(op.getResults(), ifOp.getResults());
  return success();
}

LogicalResult KernelLowering::lowerForGeneric(scf::ForOp op) {
  SmallVector<Value> inits = flatten(op.getInitArgs());
  auto newFor = scf::ForOp::create(b, loc, scalars.lookup(op.getLowerBound()), scalars.lookup(op.getUpperBound()),
                                   scalars.lookup(op.getStep()), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = newFor.getBody();
    if (!body->empty() && isa<scf::YieldOp>(body->back()))
      body->back().erase();
    b.setInsertionPointToEnd(body);
    scalars.map(op.getInductionVar(), newFor.getInductionVar());
    unflatten(op.getRegionIterArgs(), newFor.getRegionIterArgs());
    for (Operation &inner : op.getBody()->without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
    scf::YieldOp::create(b, yield.getLoc(), flatten(yield.getOperands()));
  }
  unflatten(op.getResults(), newFor.getResults());
  return success();
}

LogicalResult KernelLowering::lowerIf(scf::IfOp op) {
  SmallVector<Type> types = flattenTypes(op.getResultTypes());
  bool hasElse = !op.getElseRegion().empty();
  auto newIf = scf::IfOp::create(b, loc, types, scalars.lookup(op.getCondition()), hasElse);
  for (auto [from, to] : {std::pair<Region *, Region *>{&op.getThenRegion(), &newIf.getThenRegion()},
                          {&op.getElseRegion(), &newIf.getElseRegion()}}) {
    if (from->empty())
      continue;
    OpBuilder::InsertionGuard guard(b);
    Block *block = &to->front();
    if (!block->empty() && isa<scf::YieldOp>(block->back()))
      block->back().erase();
    b.setInsertionPointToEnd(block);
    for (Operation &inner : from->front().without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    auto yield = cast<scf::YieldOp>(from->front().getTerminator());
    scf::YieldOp::create(b, yield.getLoc(), flatten(yield.getOperands()));
  }
  unflatten(op.getResults(), newIf.getResults());
  return success();
}

LogicalResult KernelLowering::lowerElementwise(Operation *op) {
  if (op->getNumRegions() != 0)
    return op->emitOpError("ops with regions are not supported in tile kernels");
  int numRegs = 1;
  for (Value r : op->getResults())
    if (isa<RankedTensorType>(r.getType()))
      numRegs = layoutOf(r).numRegs();
  SmallVector<SmallVector<Value>> results(op->getNumResults());
  for (int i = 0; i < numRegs; ++i) {
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(isa<RankedTensorType>(v.getType()) ? regs[v][i] : scalars.lookup(v));
    if (op->getNumResults() != 1)
      return op->emitOpError("expected one result");
    Type resultType = getElementTypeOrSelf(op->getResult(0).getType());
    FailureOr<Value> r = emitScalar(op, operands, resultType);
    if (failed(r))
      return failure();
    results[0].push_back(*r);
  }
  Value res = op->getResult(0);
  if (isa<RankedTensorType>(res.getType()))
    regs[res] = results[0];
  else
    scalars.map(res, results[0][0]);
  return success();
}

/// Emits one scalar instance of an elementwise op. Transcendentals use the approximate NVVM
/// instructions (what the fast path of every attention kernel uses); 16-bit inputs compute in f32.
FailureOr<Value> KernelLowering::emitScalar(Operation *op, ValueRange operands, Type resultType) {
  if (!isa<math::MathDialect>(op->getDialect())) {
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultType);
    state.addAttributes(op->getAttrs());
    return b.create(state)->getResult(0);
  }
  if (!isa<FloatType>(resultType) || operands.size() != 1)
    return op->emitOpError("is not supported in tile kernels yet"), failure();
  Type f32 = b.getF32Type();
  Value x = operands[0];
  if (resultType != f32)
    x = arith::ExtFOp::create(b, loc, f32, x);
  auto intrinsic = [&](StringRef name, Value arg) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr(name), ValueRange{arg}).getResult(0);
  };
  auto mulConst = [&](Value v, double c) -> Value {
    return arith::MulFOp::create(b, loc, v, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(c)));
  };
  Value y;
  if (isa<math::Exp2Op>(op))
    y = intrinsic("llvm.nvvm.ex2.approx.f32", x);
  else if (isa<math::ExpOp>(op))
    y = intrinsic("llvm.nvvm.ex2.approx.f32", mulConst(x, kLog2E));
  else if (isa<math::Log2Op>(op))
    y = intrinsic("llvm.nvvm.lg2.approx.f", x);
  else if (isa<math::LogOp>(op))
    y = mulConst(intrinsic("llvm.nvvm.lg2.approx.f", x), kLn2);
  else if (isa<math::RsqrtOp>(op))
    y = intrinsic("llvm.nvvm.rsqrt.approx.f", x);
  else if (isa<math::SqrtOp>(op))
    y = intrinsic("llvm.nvvm.sqrt.rn.f", x); // IEEE sqrt, round to nearest
  else if (isa<math::AbsFOp>(op))
    y = intrinsic("llvm.fabs.f32", x);
  else if (isa<math::TanhOp>(op))
    // tanh.approx.f32 (sm_75+) has no LLVM intrinsic: one inline PTX instruction.
    y = LLVM::InlineAsmOp::create(b, loc, f32, ValueRange{x}, "tanh.approx.f32 $0, $1;", "=f,f",
                                  /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
                                  LLVM::AsmDialectAttr(), ArrayAttr())
            .getResult(0);
  else
    return op->emitOpError("is not supported in tile kernels yet"), failure();
  if (resultType != f32)
    y = arith::TruncFOp::create(b, loc, resultType, y);
  return y;
}

struct ConvertTGPUToNVVMPass : public flare::tgpu::impl::ConvertTGPUToNVVMBase<ConvertTGPUToNVVMPass> {
  using ConvertTGPUToNVVMBase::ConvertTGPUToNVVMBase;
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : top.getOps<func::FuncOp>())
      if (tile::isKernel(func))
        kernels.push_back(func);
    if (kernels.empty())
      return;
    OpBuilder b(top.getContext());
    top->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    b.setInsertionPointToEnd(top.getBody());
    auto module = gpu::GPUModuleOp::create(b, top.getLoc(), kKernelModuleName);
    b.setInsertionPointToStart(module.getBody());
    // One dynamic shared-memory buffer for the whole module: `.extern .shared .align 16 .b8 __flare_smem[]`.
    LLVM::GlobalOp::create(b, top.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0), /*isConstant=*/false,
                           LLVM::Linkage::External, kSharedMemorySymbol, Attribute(), /*alignment=*/16,
                           /*addrSpace=*/3);
    for (func::FuncOp func : kernels) {
      if (failed(KernelLowering(func, module, maxSharedBytes, wgmma).run()))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
