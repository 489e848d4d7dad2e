//===- LoweringPlans.h - Records and helpers of the per-thread lowering -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm: the constants, small layout helpers and the records the lowering
// (KernelLowering.h) keeps about views, shared-memory operands, rings of stages, streamed loops,
// TMA copies and the producer warpgroup's work. Plain data: everything that emits IR is in
// KernelLowering.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_LOWERINGPLANS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_LOWERINGPLANS_H

#include "flare/Dialect/TGPU/Pipelining.h"
#include "flare/Dialect/TGPU/TensorMapPlan.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "flare/Layout/LinearLayout.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <array>

namespace flare::tgpu::lowering {
using namespace mlir;

constexpr double kLog2E = 1.4426950408889634;  // log2(e): exp(x) = exp2(x * log2(e))
constexpr double kLn2 = 0.6931471805599453;    // ln(2):   log(x) = log2(x) * ln(2)
constexpr int kWarpSize = 32;
constexpr StringLiteral kSharedMemorySymbol = "__flare_smem";
constexpr StringLiteral kKernelModuleName = "flare_kernels";

constexpr int kMaxVectorBytes = 16; // widest global access: ld.global.v4.b32
constexpr int kCoreRowBytes = 16;   // one row of a wgmma core matrix (8 x 16 bytes)
constexpr int kCoreBytes = 128;     // one wgmma core matrix
constexpr int kPipelineStages = 3;  // shared-memory slots of a cp.async-pipelined K loop
constexpr int kStreamStages = 3;    // shared-memory stages of a loop's streamed dot operands (at most)
constexpr int kTmaStages = 6;       // shared-memory stages of a TMA-pipelined K loop (at most)
constexpr int64_t kReservedSharedBytes = 16 * 1024; // left for a streamed loop body's own scratch

/// `v` rounded up to a multiple of `align` (shared-memory offsets and sizes).
inline int64_t alignUp(int64_t v, int64_t align) { return static_cast<int64_t>(llvm::alignTo(v, align)); }

struct ViewInfo {
  Value base;                    // !llvm.ptr<1>
  SmallVector<Value> sizes;      // i32
  SmallVector<Value> strides;    // i64
  bool unitInnerStride = false;  // the innermost stride is the constant 1: rows are contiguous
};

/// The bits of input `in` whose basis is zero: registers (or threads) differing in them hold the same
/// element, so only the one with those bits clear needs to write it.
inline int zeroBasisMask(const LinearLayout &layout, LayoutInput in) {
  int mask = 0;
  const auto &bases = layout.bases(in);
  for (size_t bit = 0; bit < bases.size(); ++bit)
    if (llvm::all_of(bases[bit], [](int64_t v) { return v == 0; }))
      mask |= 1 << bit;
  return mask;
}

/// One element of a block access: its view coordinates, its offset from the view's base (elements,
/// 64-bit), and `inside`: the caller's initial predicate and-ed with 0 <= coord < size for every
/// checked dimension (null when nothing was checked).
struct BlockElement {
  SmallVector<Value> coord; // i32 per dimension
  Value offset;             // i64
  Value inside;             // i1 or null
};

/// An scf.for between `from` and `until` in their block (until its end with a null `until`).
inline bool loopAfter(Operation *from, Operation *until = nullptr) {
  for (Operation *at = from->getNextNode(); at && at != until; at = at->getNextNode())
    if (isa<scf::ForOp>(at))
      return true;
  return false;
}

/// True when `v` is available at `op`: a block argument or result of an op before `op` (or before one
/// of its ancestors) in the same block.
inline bool definedBefore(Value v, Operation *op) {
  for (Operation *at = op; at; at = at->getParentOp()) {
    if (v.getParentBlock() != at->getBlock())
      continue;
    Operation *def = v.getDefiningOp();
    return !def || def->isBeforeInBlock(at);
  }
  return false;
}

struct LazyTile {
  Attribute layoutAttr;
  LinearLayout layout;
  Type elem;
  int64_t byteOffset;
  DenseMap<int, Value> loaded;
  bool persistent = false; // lives at persistentBase + byteOffset for the whole kernel
};

/// A wgmma dot operand in shared memory: `base` is its byte offset from the shared buffer (i32),
/// `nMajor` whether B runs along N (or A along M), `swizzled` its layout.
struct SmemOperand {
  Value base;
  bool nMajor = false; // B: N-major; A: M-major (swizzled panels of another dot's K-major block)
  bool swizzled = false; // 128-byte swizzled panels (copyTileAsync) instead of core matrices
  /// As a dot's A: its descriptors made at the dot, not hoisted out of the loop (tgpu.descriptors_at_dot).
  bool descriptorsAtDot = false;
};

/// How a streamed load reads through a tensor map: the map the runtime encodes from the kernel's
/// arguments (a hidden grid-constant parameter, described in the kernel's `tgpu.tensor_maps`), the
/// coordinates of the view's base in the map's outer dimensions, and the box (64 columns, all rows,
/// or one row piece's rows: tile.load's row_pieces).
struct TensorMapRead {
  Value map;                      // !tgpu.tensormap: the parameter's map (tgpu.tensor_map)
  SmallVector<Value> outerCoords; // i32, dimensions 2.. of the map
  int64_t boxCols = 0, boxRows = 0, panels = 0; // one box per 64-column panel (and row piece)
  int64_t pieces = 1;                           // row pieces: boxRows x pieces rows per panel
};


/// One mbarrier in shared memory.
constexpr int64_t kMBarrierBytes = 8;

/// The mbarriers of a ring of `stages` shared-memory stages (streamed loops, the TMA K loop): a `full`
/// and then an `empty` barrier per stage, 8 bytes each, from byte offset `at` of the shared buffer.
struct BarrierRing {
  Value at; // i32
  int stages;
  /// The bytes of the barriers of a ring of `stages` stages.
  static constexpr int64_t bytesFor(int64_t stages) { return 2 * stages * kMBarrierBytes; }
};

/// A streamed load (tgpu-pipeline-loops' facts) and where its block sits inside a stage of the ring.
struct Stream : tgpu::StreamedLoad {
  int64_t offset = 0;  // its byte offset inside a stage
};

/// A streamed loop's ring of shared-memory stages: where it is, its barriers, how stages are filled.
struct StreamRing {
  Value base;            // i32 shared byte offset of stage 0
  int64_t stageBytes = 0;
  int64_t barriersAt = 0; // byte offset of the barriers from `base`
  BarrierRing barriers;  // `full` and `empty` per stage
  Value useTma;          // i1: thread 0 fills stages by TMA (null: every thread copies by cp.async)
  int64_t tmaBytes = 0;  // bytes one stage's TMA copies deliver
  bool produced = false; // the producer warpgroup fills the stages (ProducerWarpgroup.cpp)
  bool carried = false;  // a persistent kernel's first ring: its index runs on across instances
};

/// What one streamed loop copies into a stage, for any of its induction values.
struct StageCopies {
  scf::ForOp loop;
  SmallVector<Stream> streams;          // with their offsets inside a stage
  SmallVector<TensorMapRead> tmaReads;  // one per stream when the ring uses TMA
  Value aligned;                        // cp.async: the rows are 16-byte aligned (null with TMA)
};

/// A streamed loop that continues the ring of the loop before it: no barriers or set-up of its own,
/// its iterations numbered on from the earlier loop's (stage and barrier phase of iteration t are
/// those of ring index `first` + t), its first copies issued by the earlier loop's last iteration.
struct RingContinuation {
  StreamRing ring;
  StageCopies copies;
  Value first;      // i32: ring index of the loop's first iteration
  Value prevEmpty;  // i1: the earlier loop ran no iteration (so the first copies are still due)
  Operation *handback = nullptr; // the earlier loop's ping-pong turn hand-back (null: no turns)
  Value noneBefore; // i1: none of the instance's earlier loops ran an iteration
};

/// One streamed loop whose stages the producer fills, in ring order; `fresh`: it starts a ring
/// (the producer first meets the consumers at the CTA barrier after the ring's initialisation).
struct ProducerLoop {
  scf::ForOp loop;
  SmallVector<Stream> streams;
  StreamRing ring; // its Values are the consumers'; the producer rebuilds them
  bool fresh;
  /// The kernel's first ring: the producer initialises its barriers itself at the start and
  /// announces them on named barrier kRingReady, without waiting for the consumers.
  bool producerInit = false;
};

/// Lowered scalars and views of their own, for code that lowers the kernel's top-level scalars anew
/// (the producer's branch, another program instance's coordinates): swapScalarScope exchanges them
/// with the current ones, and exchanging again restores those.
struct ScalarScope {
  IRMapping scalars;
  DenseMap<Value, ViewInfo> views;
};

struct StoredOperand {
  int64_t offset;
  bool nMajor;
  Block *block; // the lowered block the store was emitted in: later uses inside it may reuse it
};

/// A top-level load whose block only feeds wgmma A operands of loops' dots (Q of an attention
/// kernel) or B operands of later top-level dots (its last V block), copied by TMA straight into
/// 128-byte swizzled panels at persistentBase + `offset` (TmaOperands.h, loadOperandByTma): the
/// block never occupies registers. `barrier` (shared byte offset) completes when the bytes have
/// landed; the loops or the dots wait for it (waitForTmaOperand).
struct TmaOperand {
  Value base;              // i32 shared byte offset of the panels (emitted at the top level)
  Value barrier;           // !llvm.ptr<3>: its mbarrier (emitted at the top level)
  Value useTma;            // i1: the maps encoded (else every thread copied and fenced)
  bool nMajor = false;     // a B operand (rows along K): N-major panels
  Block *waited = nullptr; // the lowered block the last wait was emitted in
  /// Copied by the producer warpgroup (a persistent kernel's Q and last V block): a one-stage ring
  /// (`full` at `barrier`, then `empty`) whose ring index is the program instance's turn in the
  /// tile loop. The producer copies the next instance's Q as soon as the consumers have released
  /// this one's after its last loop, while they finish the instance.
  bool produced = false;
  Value empty; // !llvm.ptr<3>: a produced operand's `empty` barrier
  /// Without a producer warpgroup the consumers copy the next instance's block themselves
  /// (consumerIssued[issue]; -1: the producer does): thread 0, after the block's last reader, once
  /// every warp has released it.
  int issue = -1;
};

/// What the producer warpgroup needs to copy a produced TmaOperand.
struct ProducedOperand {
  tile::LoadOp load;
  int64_t panelsAt = 0;  // byte offset of the panels from persistentBase
  int64_t barrierAt = 0; // byte offset of its barriers from operandBarrierBase
  int64_t bytes = 0;
  TensorMapPlan plan;
  bool afterLoops = false; // a B operand of a top-level dot after the loops: copied after them
  int64_t coordsAt = 0;    // consumer-issued: byte offset of the next copy's coordinates (i32s)
};

/// A produced operand read by dots inside top-level loops (Q): released right after the last of
/// those products completes, in the last iteration of the last loop that runs, instead of after
/// the loops (the producer copies the next instance's block sooner). `loops` in block order;
/// `inLoop[j]` records that loop j's lowering emitted its release (streamed loops only). The
/// release's branch in the loop body also shapes ptxas's schedule: without it the previous P V's
/// wait rises to the first row max and the head-dim-128 kernel is 1-3% slower (bench/NOTES.md a52).
struct EarlyRelease {
  SmallVector<scf::ForOp> loops;
  SmallVector<bool> inLoop;
};

/// While a streamed loop's body is lowered: its dots that read an early-released operand, and
/// where to release it after them: the operand, the loop's index in its EarlyRelease, and the
/// condition (this is the instance's last product reading it).
struct PendingRelease {
  Value operand;
  size_t loop;
  Value cond;
};

/// wgmma dots whose operands need no shared-memory stores are committed but not waited for: their
/// result stays in the accumulator struct until an op uses it (or a region or loop iteration ends),
/// and `wgmma.wait_group` then waits for that group only, leaving younger ones in flight. In commit
/// order.
struct PendingDot {
  Value result; // the tile.dot result
  Value acc;    // the accumulator struct the MMAs write
  /// The result's registers past the columns the MMAs write (tile.dot's n_extent): the
  /// accumulator's, unchanged.
  SmallVector<Value> tail;
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_LOWERINGPLANS_H
