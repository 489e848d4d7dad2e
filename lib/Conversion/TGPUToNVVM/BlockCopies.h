//===- BlockCopies.h - A view's blocks into shared memory ------*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. How a block of a view reaches shared memory (and single elements
// reach registers) apart from which loop or operand asks: the kernel's parameters after its own
// (HiddenParams.h: a persistent kernel's grid, the split workspace, the TMA flag and the tensor
// maps); tensor maps (which views a map can describe, tgpu::planTensorMap where the target and the
// options copy by TMA; the map of a view and this instance's coordinates in it; whether the runtime
// encoded every map of the launch) and the bulk tensor copies into 128-byte swizzled panels
// (TensorMaps.cpp); cp.async copies into core matrices or swizzled panels, the element-by-element
// fallbacks, predicated global loads with the bounds of a view's elements, and a tile's loads,
// gathers and direct stores register by register (LowerMemory.cpp, LowerGather.cpp).
// KernelLowering.h derives from it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_BLOCKCOPIES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_BLOCKCOPIES_H

#include "DotOperands.h"
#include "HiddenParams.h"
#include "flare/Dialect/TGPU/TensorMapPlan.h"

#include <optional>

namespace flare::tgpu::lowering {

class BlockCopies : public DotOperands {
protected:
  using DotOperands::DotOperands;

  /// Coordinates offsets + coord of a view and their element offset; the bounds of every dimension
  /// (`checkLast`) or of all but the last are and-ed into `inside`, starting from `initial`. With
  /// `pieceRows` (tile.load's row_pieces), `offsets` holds each piece's first row and then the column,
  /// and row coord[0] lies in piece coord[0] / pieceRows.
  BlockElement blockElement(const ViewInfo &view, ArrayRef<Value> offsets, ArrayRef<Value> coord, Value initial,
                            bool checkLast, int64_t pieceRows = 0);
  /// The rows of one row piece of `load` (0 without row_pieces).
  static int64_t pieceRowsOf(tile::LoadOp load) {
    const int64_t pieces = load.getNumRowPieces();
    return pieces > 1 ? load.getResult().getType().getDimSize(0) / pieces : 0;
  }
  /// `pred ? *(addr + byteOffset) : pad` as one predicated ld.global (no branch) for 16- and 32-bit
  /// elements, the offset an immediate of the instruction.
  Value predicatedLoad(Value addr, Value pred, Value pad, Type elem, int64_t byteOffset = 0);
  /// `vec` consecutive elements at `addr` (16-byte aligned when pred holds) as one predicated vector
  /// load, or `pad` in every lane when pred is false.
  SmallVector<Value> predicatedVectorLoad(Value addr, Value pred, Value pad, Type elem, int vec);
  /// `vec` consecutive 32-bit elements at `addr`, the first at column `col`: one vector load when
  /// `whole` holds, else element i when col + i < limit (unsigned), `pad` where neither loads. One asm
  /// statement whose loads write the same registers under their predicates, so that nothing reads the
  /// loaded registers before their use (a select between the two paths waited for the load where it
  /// was issued).
  SmallVector<Value> predicatedGroupLoad(Value addr, Value whole, Value col, Value limit, Value pad, Type elem,
                                         int vec);
  /// tile.load into registers: per group of consecutive elements one vector load where the group
  /// lies inside the view at an aligned address, else each element under its own bounds.
  LogicalResult lowerLoad(tile::LoadOp op);
  /// tile.gather (LowerGather.cpp): affine offsets get one address per thread and one load per
  /// distinct element; clamped ones marked bounds_crossing predicated loads; others one per register.
  LogicalResult lowerGather(tile::GatherOp op);
  /// Every register of `value` to global memory at `offsets` of `view`, each under its bounds check.
  void storeDirect(Value value, const ViewInfo &view, ArrayRef<Value> offsets, bool atomicAdd);
  /// Copies the block `load` reads at `offsets` into shared memory at byte offset `dstBase` in the
  /// core-matrix layout of a wgmma operand whose K dimension is `k`: `innerIsK` when the load's last
  /// dimension is the operand's K (K-major A or B), else its N (N-major B). One 16-byte cp.async per
  /// 8 contiguous elements, zero-filled outside the view and when `valid` is false; when `aligned`
  /// is given and false at run time, element loads and one 16-byte shared store per group instead.
  /// The caller commits the group.
  /// With `mbarrier`, the thread arrives on it once its copies have landed.
  /// With `swizzled`, the block lands in the 128-byte swizzled layout instead (flare::swizzledOffset:
  /// panels of 64 columns, rows of 128 bytes, chunk c of row r at c ^ (r % 8); what a TMA box with
  /// 128-byte swizzle writes), for either major-ness, and the chunks go to threads in row order: a
  /// warp reads whole 128-byte lines of global memory and still writes all 32 banks.
  void copyTileAsync(tile::LoadOp load, ArrayRef<Value> offsets, Value valid, Value dstBase, bool innerIsK, int64_t k,
                     Value aligned = Value(), Value mbarrier = Value(), bool swizzled = false);
  /// Byte offset of 16-byte chunk `chunk` of row `row` in 128-byte swizzled panels of `rows` rows:
  /// panel chunk / 8, then the row, then position (chunk % 8) ^ (row % 8) (flare::swizzledOffset).
  Value swizzledChunkOffset(Value row, Value chunk, int64_t rows);
  /// The 8 elements from `src` on (columns col .. col + 7 of a view row) as one vector, each loaded
  /// only when its column is inside the view and `rowsOk` (when given) holds, else zero.
  Value loadChunkElementwise(const ViewInfo &view, Value src, Value col, Value rowsOk, Type elem);
  /// Copies the block `load` reads at `offsets` (a 2-D block of 16-bit elements with rows of a multiple
  /// of 64) into 128-byte swizzled panels at byte offset `dstBase`, element by element with bounds
  /// checks, 16-byte chunks handed to threads in a rolled loop: the fallback of TMA copies for views
  /// that are not 16-byte aligned, slow but light on registers. The caller publishes the stores.
  void copyTileRolled(tile::LoadOp load, ArrayRef<Value> offsets, Value dstBase);
  /// True at run time when cp.async can copy `load`'s rows: 16-byte aligned base, row strides of
  /// whole 16-byte units, a last-dimension offset (loop-invariant) that is a multiple of 8 elements.
  Value cpAsyncAligned(tile::LoadOp load, bool checkLastOffset);

  gpu::GPUFuncOp kernelFunc;
  HiddenParams params; // the parameters after the kernel's own: grid, split workspace, TMA flag, maps
  /// tgpu::planTensorMap (flare/Dialect/TGPU/TensorMapPlan.h) where this lowering copies by TMA
  /// (`tma` and a target that has it), else nothing.
  std::optional<TensorMapPlan> planTensorMap(Value view, RankedTensorType block, bool sums = false);
  std::optional<TensorMapPlan> planTensorMap(tile::LoadOp load);
  /// The map of `plan` (one hidden parameter per view and box, shared by every loop that reads it)
  /// and the coordinates of this program instance's view in it.
  TensorMapRead tensorMapFor(const TensorMapPlan &plan);
  /// i1: the runtime encoded every tensor map of this launch (else the kernel copies with cp.async).
  Value tensorMapsUsable();
  /// Copies the block of `read` at (row, col) into 128-byte swizzled panels at byte offset `dstBase`,
  /// one TMA box per 64-column panel, completing `mbarrier`'s transaction count.
  void copyTileTma(const TensorMapRead &read, Value row, Value col, Value dstBase, Value mbarrier);
  /// copyTileTma of a load's block at `offsets` (its row pieces' first rows, then the column): one
  /// copy per piece into the rows of the panels that piece fills.
  void copyBlockTma(const TensorMapRead &read, ArrayRef<Value> offsets, Value dstBase, Value mbarrier);

  /// How the consumer warpgroups share a staged block (storePanelsByTma): all of it together, or each
  /// its own rows (64-row boxes) or its own panels.
  enum class StagingSplit { None, Rows, Panels };
  /// The TMA path of a tile's stores and reduce-adds: `value` into swizzled panels at byte offset
  /// `base`, then thread 0's bulk tensor stores (reduce-adds with `add`) at `offsets` through `map`.
  /// With `deferWait` (a persistent kernel's own staging area) thread 0 waits for the copy's read of
  /// the panels only before the next store. With split Rows (rows 0-63 held by warpgroup 0, 64-127
  /// by warpgroup 1; `map` of 64-row boxes) each warpgroup's first thread stores that warpgroup's
  /// rows, with Panels its own half of the panels, behind the warpgroup's own named barrier.
  void storePanelsByTma(Value value, const TensorMapRead &map, Value base, ArrayRef<Value> offsets,
                        bool deferWait, StagingSplit split = StagingSplit::None, bool add = false);
  /// `value`'s layout gives each of two warpgroups (8 warps) whole `panelCols`-wide column panels of
  /// its own, every row of them.
  bool panelsSplitByWarpgroup(Value value, int64_t panelCols);
  bool reducesInFlight = false;   // a TMA reduce's read of its panels may be pending
  bool tmaStoresInFlight = false; // a TMA store's read of its panels may be pending at the end
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_BLOCKCOPIES_H
