//===- Generator.h - The FlashAttention generator of convert-attn-to-tile -*- C++ -*-===//
//
// The class that turns one attn.attention into a tile kernel, shared by its pieces: region inlining
// (RegionInlining.cpp), the mask's KV block ranges (MaskBlockRanges.cpp), one KV step (KvStep.cpp)
// and the kernel's construction (KernelConstruction.cpp). AttnToTile.cpp holds the pass; the file
// comment there describes the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_ATTNTOTILE_GENERATOR_H
#define FLARE_LIB_CONVERSION_ATTNTOTILE_GENERATOR_H

#include "../../Dialect/Attn/Transforms/MaskAnalysis.h"
#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/Config.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <optional>

namespace flare::attn::generator {
using namespace mlir;

inline constexpr double kLog2E = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

enum class Shape { Uniform, Row, Col, Full };

inline Shape join(Shape a, Shape b) {
  if (a == b || b == Shape::Uniform)
    return a;
  if (a == Shape::Uniform)
    return b;
  return Shape::Full;
}

/// An interval [lo, hi) of KV block indices (i32 values).
struct Interval {
  Value lo, hi;
};

/// The backward kernels' tiles: BLOCK_N keys per program instance, BLOCK_M query rows per step;
/// `transposed`: the step computes S^T = K Q^T (keys x queries), so that P^T and dS^T, the A
/// operands of dV += P^T dO and dK += dS^T Q, are the accumulators themselves (wgmma from
/// registers) and only dQ = dS K reads a transposed tile.
struct BackwardTiles {
  int64_t blockM = 64, blockN = 64, numWarps = 8;
  bool transposed = false;
  /// dQ = dS K computed and added in column chunks of this many (0: the whole head dim at once).
  int64_t dqChunk = 0;
  /// dK in `<name>_bwd` and dV in `<name>_bwd_dv`, each kernel on its own (backwardSplitsDkDv).
  bool splitDkDv = false;
};
/// The tiles of the deterministic mode's dQ kernel: DQ_BLOCK_M query rows per program instance,
/// DQ_BLOCK_N keys per step (the forward's loop shape).
struct BackwardDqTiles {
  int64_t blockM = 64, blockN = 64, numWarps = 4;
  bool producer = false; // a producer warpgroup issues the K and V copies (#tile.schedule<producer_warpgroup = true>)
  bool pingPong = false; // the two warpgroups take turns issuing their MMAs (#tile.schedule<ping_pong = ...>)
};
/// The backward tiles for a head dim on a target (the fastest measured); `dqByAtomics`: the main
/// kernel also sums dQ (else dQ has a kernel of its own).
/// `auxPerElement`: a modifier reads an aux table per score element (AttentionFacts::auxPerElement).
BackwardTiles chooseBackwardTiles(int64_t headDim, const Target &target, bool dqByAtomics, bool auxPerElement);
BackwardDqTiles chooseBackwardDqTiles(int64_t headDim, const Target &target);

class Generator {
public:
  Generator(AttentionOp op, func::FuncOp func, MaskInfo mask, ConfigAttr config)
      : op(op), func(func), mask(std::move(mask)), config(config), ranges(op), b(op.getContext()),
        loc(op.getLoc()) {}

  /// The forward kernel (KernelConstruction.cpp).
  LogicalResult run();
  /// The backward kernels (BackwardKernels.cpp): `<name>_bwd_preprocess`, `<name>_bwd` and
  /// `<name>_bwd_dq`, with the tiles `tiles` chooses. With `dqTiles`, dQ is computed by `<name>_bwd_dq`
  /// itself, one block of query rows per program instance, without atomics (deterministic); without,
  /// the main kernel adds dQ's products into f32 sums atomically and `<name>_bwd_dq` converts them.
  /// With `blockLists` and a mask of class generic, the kernels visit the blocks that block lists
  /// name, written by `<name>_bwd_block_mask` (BlockLists.cpp).
  LogicalResult runBackward(const BackwardTiles &tiles, std::optional<BackwardDqTiles> dqTiles = std::nullopt,
                            bool blockLists = false);

private:
  AttentionOp op;
  func::FuncOp func;
  MaskInfo mask;
  ConfigAttr config;
  ModifierRanges ranges;
  OpBuilder b;
  Location loc;
  /// The head dims of Q.K (D_qk) and of V and O (D_v), and the tiles' widths for them: the next
  /// powers of two (tiles are powers of two; the padding is zeros, see prepare()).
  int64_t realHeadDim = 0, realHeadDimV = 0;
  int64_t headDim = 0, headDimV = 0;
  /// The S tile is tileM x tileN (query rows x keys): the forward's BLOCK_M x BLOCK_N, the backward's
  /// own blocks.
  int64_t tileM = 0, tileN = 0;
  /// The region values computed once per instance (hoisted): Uniform and the shape of the rows that
  /// do not change in the loop: Row in the forward (its Q block is fixed), Col in the backward.
  Shape invariant = Shape::Row;
  /// The forward's packed GQA rows (pack_gqa): the regions' head argument is one value per row.
  bool headsPerRow = false;
  /// The score tile is S^T (keys x queries: the backward's transposed form) instead of S.
  bool keysAreRows = false;
  Type elemType, f32, i32Type;
  /// What the regions' index values compute in: i32 where ModifierRanges proves that exact (every
  /// shipped modifier), else i64, the op's own index semantics.
  Type indexType;
  func::FuncOp kernel;

  // Kernel scalars (i32 unless noted).
  Value batchIdx, headIdx, seqQ, seqKV, q0, q1, numBlocks;
  // A paged cache (attn.attention's page_table): this sequence's row of the table, the rows a page
  // advances in K and V's views, and the sequence's last page (the table's entries past it are
  // never read).
  Value pageTableRow, pageRows, lastPage;
  // Packed sequences (cu_seqlens): the sequence's first row of K and V.
  Value sequenceStartKV;
  /// The view row of key `kv0` (the first key of a block, or of a row piece, which lies in one page):
  /// kv0 itself, or for a paged cache row kv0 mod page_size of its page; kFarAway for a key outside
  /// the sequence.
  Value cacheRow(Value kv0);
  /// Keys per row piece of a K or V block: a paged cache whose pages hold fewer keys than a block
  /// gathers it in pieces of the largest power of two dividing the page size (tile.load's
  /// row_pieces), one TMA copy each; 0 where a block is one piece.
  int64_t keyPieceRows();
  /// The view rows of the key block at `kv0`: one per row piece (cacheRow of each piece's first key).
  SmallVector<Value> keyBlockRows(Value kv0);
  /// The [BLOCK_N, width] block of `view` (K or V) whose pieces start at view rows `rows`.
  Value loadKeyBlock(Value view, int64_t width, ArrayRef<Value> rows);
  Value qView, kView, vView, oView, lseView, qTile;
  SmallVector<Value> auxPtrs, auxLens;
  Value qRows; // [BLOCK_M] i32: q0 + 0..BLOCK_M-1
  /// [BLOCK_M] i32: the last key each query row keeps (keptKeyBound), Skv - 1 at most; null where
  /// the mask is not of that form.
  Value keptBound;

  // Region values: shape class, and the emitted value (hoisted ones shared, per-body ones local).
  DenseMap<Value, Shape> shapes;
  DenseMap<Value, Value> hoisted;
  DenseMap<Value, Value> *body = nullptr;
  DenseMap<std::pair<Value, int>, Value> *broadcasts = nullptr;

  // --- scalar helpers ---------------------------------------------------------------------------
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value smin(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value smax(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value ext64(Value x) { return arith::ExtSIOp::create(b, loc, b.getI64Type(), x); }
  /// floor(x / BLOCK_N) and ceil(x / BLOCK_N) for a power-of-two BLOCK_N (an arithmetic shift
  /// rounds toward -inf, also for negative x).
  Value floorBlocks(Value x) { return arith::ShRSIOp::create(b, loc, x, c32(llvm::Log2_64(config.getBlockN()))); }
  Value ceilBlocks(Value x) { return floorBlocks(add(x, c32(config.getBlockN() - 1))); }

  RankedTensorType tileType(ArrayRef<int64_t> shape, Type elem) { return RankedTensorType::get(shape, elem); }
  /// S = Q K^T over the head dim and acc + P V into the head-dim columns, with the padding of a head
  /// dim between powers of two promised zero (tile.dot's k_extent / n_extent), so that the
  /// lowering issues no MMAs over it.
  Value dotQK(Type type, Value q, Value kT, Value acc) {
    auto dot = tile::DotOp::create(b, loc, type, q, kT, acc);
    if (realHeadDim < headDim)
      dot.setKExtentAttr(b.getI64IntegerAttr(realHeadDim));
    return dot;
  }
  Value dotPV(Value p, Value v, Value acc) {
    auto dot = tile::DotOp::create(b, loc, acc.getType(), p, v, acc);
    if (realHeadDimV < headDimV)
      dot.setNExtentAttr(b.getI64IntegerAttr(realHeadDimV));
    return dot;
  }
  Value splat(Value scalar, ArrayRef<int64_t> shape) {
    return tile::SplatOp::create(b, loc, tileType(shape, scalar.getType()), scalar);
  }
  Value splatF32(double v, ArrayRef<int64_t> shape) {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(tileType(shape, f32), b.getF32FloatAttr(v)));
  }
  Value broadcastRows(Value row, int64_t cols) { // [M] -> [M, cols]
    auto t = cast<RankedTensorType>(row.getType());
    int64_t m = t.getDimSize(0);
    Value e = tile::ExpandDimsOp::create(b, loc, tileType({m, 1}, t.getElementType()), row, 1);
    return tile::BroadcastOp::create(b, loc, tileType({m, cols}, t.getElementType()), e);
  }
  Value broadcastCols(Value col, int64_t rows) { // [N] -> [rows, N]
    auto t = cast<RankedTensorType>(col.getType());
    int64_t n = t.getDimSize(0);
    Value e = tile::ExpandDimsOp::create(b, loc, tileType({1, n}, t.getElementType()), col, 0);
    return tile::BroadcastOp::create(b, loc, tileType({rows, n}, t.getElementType()), e);
  }
  /// The op's softmax scale (its `scale`, else 1 / sqrt(D)).
  double softmaxScale() {
    return op.getScaleAttr() ? op.getScaleAttr().getValueAsDouble() : 1.0 / std::sqrt(double(realHeadDim));
  }
  /// Iteration t of a loop over the blocks [lo, flo) u [fhi, hi) that the mask cuts: lo + t below
  /// the full range [flo, fhi), then fhi + (t - left) above it (left = flo - lo).
  Value partialBlock(Value t, Value lo, Value left, Value fhi) {
    return select(cmp(arith::CmpIPredicate::slt, t, left), add(lo, t), add(fhi, sub(t, left)));
  }
  Value indexRange(Value start, int64_t n) {
    Value r = tile::RangeOp::create(b, loc, tileType({n}, i32Type), 0, static_cast<int32_t>(n));
    return arith::AddIOp::create(b, loc, r, splat(start, {n}));
  }

  SmallVector<int64_t> dims(Shape s) {
    switch (s) {
    case Shape::Uniform:
      return {};
    case Shape::Row:
      return {tileM};
    case Shape::Col:
      return {tileN};
    case Shape::Full:
      return {tileM, tileN};
    }
    return {};
  }
  Type convertScalar(Type t) { return t.isIndex() ? indexType : t; }
  /// An i32 kernel index (scalar or tile) as a region index value.
  Value asIndex(Value x) {
    if (indexType == i32Type)
      return x;
    Type t = isa<RankedTensorType>(x.getType()) ? Type(tileType(cast<RankedTensorType>(x.getType()).getShape(), indexType))
                                                 : indexType;
    return arith::ExtSIOp::create(b, loc, t, x);
  }
  Type shaped(Type scalar, Shape s) {
    Type t = convertScalar(scalar);
    return s == Shape::Uniform ? t : Type(tileType(dims(s), t));
  }

  // --- modifier regions ----------------------------------------------------------------------------
  /// One loop step's region values (body, broadcasts), bound while it lives.
  struct StepScope {
    Generator &g;
    DenseMap<Value, Value> local;
    DenseMap<std::pair<Value, int>, Value> localBroadcasts;
    explicit StepScope(Generator &g) : g(g) {
      g.body = &local;
      g.broadcasts = &localBroadcasts;
    }
    ~StepScope() {
      g.body = nullptr;
      g.broadcasts = nullptr;
    }
    StepScope(const StepScope &) = delete;
    StepScope &operator=(const StepScope &) = delete;
  };
  /// Binds both regions' batch and head arguments and their index argument `indexArg` (2: the query
  /// rows, 3: the keys) to `index()`, and emits their hoisted part.
  LogicalResult emitHoistedRegions(unsigned indexArg, llvm::function_ref<Value()> index);
  void classify(Region &region, bool isScore);
  Value lookup(Value v);
  Value at(Value v, Shape s);
  LogicalResult emitOp(Operation *inner, DenseMap<Value, Value> &into);
  LogicalResult emitRegion(Region &region, bool hoistedPart, DenseMap<Value, Value> &into);

  // --- kernel pieces -------------------------------------------------------------------------------
  /// Checks the function's form and sets the types both directions use.
  LogicalResult prepare();
  LogicalResult buildKernel();
  /// `<name>_combine` (SplitKvCombine.cpp): the split_kv parts merged into the output and LSE; `abi`
  /// is the forward kernel's signature, which it shares.
  void buildCombineKernel(FunctionType abi);
  /// `<name>_block_mask` (BlockLists.cpp): the block lists of `block_lists` from mask_mod; `abi` is
  /// the forward kernel's signature, which it shares (the lists are its last argument).
  LogicalResult buildBlockMaskKernel(FunctionType abi);
  /// One set of block lists a classifier writes (BlockLists.cpp; dialects/Attn/Rationale.md, "Block
  /// lists"): per block of queryBlock query rows the key blocks of keyBlock keys, or with
  /// `overQueries` per block of keys the query blocks (the backward's dK/dV kernels read them), kept
  /// in part and kept entirely by mask_mod.
  struct ListWalk {
    unsigned listsArg = 0; ///< the lists it writes
    bool overQueries = false;
    int64_t queryBlock = 0, keyBlock = 0;
  };
  /// A classifier kernel: one or two walks (the second's program instances after the first's, in one
  /// launch), with the signature of the kernel family it serves.
  struct ListKernel {
    std::string name;
    FunctionType abi;
    unsigned firstAux = 0; ///< the first aux pointer; heads_q, heads_kv, seq_q, seq_kv, aux lengths follow
    SmallVector<ListWalk, 2> walks;
  };
  LogicalResult buildListKernel(const ListKernel &spec);
  /// One walk's program: the lists of fixed block `fixedIdx` (seqQ, seqKV, the aux values, the batch
  /// and head indices already bound).
  LogicalResult emitListWalk(const ListWalk &walk, Value lists, Value fixedIdx, Value headsQ);
  /// One block's record in the block lists (BlockLists.cpp; dialects/Attn/Rationale.md,
  /// "Block lists"): [partial count, full count, `listed` slots], the partial blocks' indices from
  /// the front of the slots, the full blocks' from the back.
  struct BlockList {
    Value record; ///< !tile.ptr<i32> to the record
    Value partialCount, fullCount;
    Value lastIndex, lastSlot; ///< listed - 1, listed + 1
    /// The t-th partial and full block (t below the count), read in the loop.
    Value partialAt(Generator &g, Value t);
    Value fullAt(Generator &g, Value t);
    /// The t-th of the partial blocks followed by the full ones (t below the sum of the counts).
    Value anyAt(Generator &g, Value t);
  };
  BlockList blockList;
  /// The record of block `block` (of `fixedBlock` rows along an axis of `fixedLen`: the forward's
  /// query rows, the backward's keys) of the program's (batch, head), `listed` slots: one per batch
  /// entry and head where mask_mod reads them (listsPerBatch / listsPerHead), else shared.
  Value listRecord(Value lists, Value block, Value fixedLen, int64_t fixedBlock, Value listed, Value headsQ);
  BlockList listOf(Value lists, Value block, Value fixedLen, int64_t fixedBlock, Value listed, Value headsQ);
  bool listsPerBatch() { return !op.getMaskMod().empty() && !op.getMaskMod().front().getArgument(0).use_empty(); }
  bool listsPerHead() { return !op.getMaskMod().empty() && !op.getMaskMod().front().getArgument(1).use_empty(); }
  Value evalLeaves(const LinearExpr &e);
  /// Which blocks a mask range runs over: KV blocks for the query rows [fixedLo, fixedHi] (the
  /// forward) or query blocks for the keys [fixedLo, fixedHi] (the backward), `block` indices each.
  struct BlockAxis {
    bool overQueries;
    Value fixedLo, fixedHi, numBlocks;
    int64_t block;
  };
  std::pair<Interval, Interval> blocksOf(const MaskNode &node, const BlockAxis &axis);
  Value keptKeyBound(const MaskNode &node);
  /// One step of the canonical loop on KV block `block` (`state`: m, l, acc); attn-overlap
  /// pipelines its P V one step behind where the configuration asks.
  FailureOr<SmallVector<Value>> kvStep(Value block, bool masked, ValueRange state);

  // --- backward (BackwardKernels.cpp, ScoreModGradient.cpp) ---------------------------------------
  /// d score_mod(x) / dx, elementwise on the Full tile, for the score_mod region already emitted
  /// (into `body`): the forward-mode derivative of the straight-line region; null when it is 1.
  FailureOr<Value> scoreModDerivative();
  /// A `rows` x `cols` block of `view` (element type) at (`row`, `col`). A dot operand that feeds two
  /// dots is loaded once per dot; `separateCopy` spells the padding out (the same zero), so that CSE
  /// keeps the copies apart and the lowering places each in the layout its own dot reads.
  Value loadBlock(Value view, int64_t rows, int64_t cols, Value row, Value col, bool separateCopy = false) {
    TypedAttr zero = separateCopy ? TypedAttr(b.getFloatAttr(elemType, 0.0)) : TypedAttr();
    return tile::LoadOp::create(b, loc, tileType({rows, cols}, elemType), view, ValueRange{row, col}, zero).getResult();
  }
  /// A [queries] vector across the score tile (S or S^T).
  Value byQuery(Value x) { return keysAreRows ? broadcastCols(x, tileM) : broadcastRows(x, tileN); }
  /// A [keys] vector across the score tile.
  Value byKey(Value x) { return keysAreRows ? broadcastRows(x, tileN) : broadcastCols(x, tileM); }
  /// What one backward step recomputes from the score tile: P = exp(S - LSE) (zero where masked);
  /// with a score_mod whose derivative is not 1, `factor` = P * score_mod' * scale, made as soon as
  /// P is (one tile held until dP instead of P and the derivative both; null otherwise); and the
  /// kept elements (null: all).
  struct Recomputed {
    Value p, factor, keep;
  };
  /// P of the score tile `qk` (Q K^T; `lse()` gives the rows' LSE where it is needed): the regions' per-step index
  /// argument `stepIndexArg` (2: query rows, 3: keys) bound to `stepIndex` in `local`; `masked`
  /// evaluates the Sq and Skv bounds and mask_mod on `queries` and `keys` (i32 index vectors).
  FailureOr<Recomputed> recomputeP(Value qk, llvm::function_ref<Value()> lse, bool masked, Value queries, Value keys,
                                   unsigned stepIndexArg, Value stepIndex, DenseMap<Value, Value> &local);
  /// dS = P * (dP - D) * scale, or factor * (dP - D) with a score_mod (zero where masked: score_mod'
  /// may not be finite there).
  Value scoreGradient(const Recomputed &r, Value dp, Value delta, bool masked);
};

/// Parts `<name>_combine` merges a step (one query row per program instance): loaded together as a
/// [kCombineParts, D] tile, the loads of a step all in flight at once. Split decoding's rule gives
/// the measured shape (batch 1, GQA 32:8, a 132-SM device) 16 parts: one step.
inline constexpr int64_t kCombineParts = 16;

/// A block offset far below every view: its rows fail the bounds checks, so loads at it read zeros.
inline constexpr int64_t kFarAway = kFarAwayKey;

} // namespace flare::attn::generator

#endif // FLARE_LIB_CONVERSION_ATTNTOTILE_GENERATOR_H
