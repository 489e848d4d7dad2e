//===- TensorMapPlan.h - Which blocks a host-encoded tensor map can copy -*- C++ -*-===//
//
// The analysis half of TMA: whether the 2-D blocks a tile kernel moves through a view can be copied
// by a tensor map that the host encodes at launch, and how that map is described. Kernels compute
// their views' bases per program instance, so a map is built over the kernel's pointer argument and
// the view's offset terms (value x host-known stride) become its outer dimensions:
//
//     base = addptr(%arg_ptr, x_1 * s_1 + ... + x_n * s_n),   sizes [R, C], strides [S, 1]
//     -> dims (innermost first) [C, R, 2^31, ...], strides [1, S, s_1, ..., s_n], box [panel, rows, 1, ...]
//
// with R, C, S and every s_i constants or kernel arguments. Pure analysis of the IR: convert-tgpu-to-
// nvvm builds the copies, the hidden parameters and `tgpu.tensor_maps` from a plan.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_TGPU_TENSORMAPPLAN_H
#define FLARE_DIALECT_TGPU_TENSORMAPPLAN_H

#include "flare/Dialect/Tile/TileDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>

namespace flare::tgpu {

inline constexpr int64_t kTmaPanelBytes = 128;             // one swizzle span: a panel's row
inline constexpr int64_t kTmaMaxBoxDim = 256;              // TMA's limit per box dimension
inline constexpr int kTmaMaxRank = 5;                      // dimensions of a tensor map
inline constexpr int64_t kTmaUnboundedDim = int64_t(1) << 31; // an outer dimension's size

/// The columns of a 128-byte panel row of `type`'s elements: 64 16-bit elements, 32 f32.
inline int64_t tmaPanelCols(mlir::RankedTensorType type) {
  return kTmaPanelBytes * 8 / type.getElementTypeBitWidth();
}

/// How blocks of one type of one view are copied through a tensor map. Sizes and strides (innermost
/// first) are [kind, value] pairs as in `tgpu.tensor_maps`: kind 0 a constant, 1 kernel argument
/// `value`, 2 that argument truncated to 32 bits.
struct TensorMapPlan {
  mlir::Value view;                 // the block's view (a tile.make_view result)
  mlir::RankedTensorType block;     // the block a copy moves
  int64_t pieces = 1;               // in this many row pieces, a copy each (tile.load's row_pieces)
  unsigned pointerArg = 0;          // the kernel's pointer argument the map is built over
  llvm::SmallVector<std::array<int64_t, 2>> sizes, strides;
  llvm::SmallVector<mlir::Value> outerValues; // the offset terms' values: the outer coordinates
};

/// A scalar the host knows at launch (a constant or a kernel argument of `func`, through sign
/// extensions and one truncation to i32), encoded [kind, value] as in TensorMapPlan; else nothing.
std::optional<std::array<int64_t, 2>> hostScalar(mlir::Value v, mlir::func::FuncOp func);

/// `v` (an integer) is a multiple of `m` for every value of the kernel's arguments.
bool knownMultipleOf(mlir::Value v, int64_t m);

/// How blocks of type `block` (2-D, rows of a multiple of 8 up to 256, whole 128-byte panel rows) of
/// `view` can be copied through a host-encoded tensor map, or nothing: the view's sizes and strides
/// must be kernel arguments or constants of `func`, the last stride 1, and its base a pointer argument
/// plus a sum of (value x argument-or-constant stride) terms, at most three. `sums`: the block is f32
/// sums a TMA reduce adds (else 16-bit elements a copy moves).
std::optional<TensorMapPlan> planTensorMap(mlir::Value view, mlir::RankedTensorType block, mlir::func::FuncOp func,
                                           bool sums = false);
/// The plan of `load`'s blocks, copied in its row pieces (each a whole number of 8-row swizzle atoms).
std::optional<TensorMapPlan> planTensorMap(tile::LoadOp load, mlir::func::FuncOp func);

} // namespace flare::tgpu

#endif // FLARE_DIALECT_TGPU_TENSORMAPPLAN_H
