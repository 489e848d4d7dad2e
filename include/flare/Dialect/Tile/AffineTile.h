//===- AffineTile.h - Integer tiles that are affine in their coordinates -*- C++ -*-===//
//
// The offsets of most gathers are affine functions of the tile's coordinates: kv - q + C for a
// relative-position bias, q0 + i for a row's document id, usually clamped into the table they read.
// tile-version-gathers and the lowering of tile.gather recognise that form here.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_TILE_AFFINETILE_H
#define FLARE_DIALECT_TILE_AFFINETILE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace flare::tile {

class GatherOp;

/// value[c] = constant + sum_d coef[d] * c[d] + sum_k factor_k * scalar_k over the coordinates c of an
/// i32 tile, with scalar_k uniform i32 values of the tile program. Equal to the IR's i32 arithmetic
/// modulo 2^32 (wrapping or not); coefficients and the constant stay below 2^31 in magnitude.
struct AffineTile {
  int64_t constant = 0;
  llvm::SmallVector<int64_t> coef;
  llvm::SmallVector<std::pair<mlir::Value, int64_t>> uniform;

  bool isConstant() const;
  /// The smallest and largest of sum_d coef[d] * c[d] over the coordinates of a tile of `shape`.
  std::pair<int64_t, int64_t> coordinateSpan(llvm::ArrayRef<int64_t> shape) const;
};

/// constant + sum_k factor_k * scalar_k of `affine` in the integer type `type` (i32: wrapping as the
/// tile program's arithmetic does; i64: exact), emitted at `b`'s insertion point; `scalar` gives the
/// value to use for each uniform scalar (the identity in tile IR, the scalar's register in the
/// lowering), sign-extended where `type` is wider.
mlir::Value emitUniformPart(mlir::OpBuilder &b, mlir::Location loc, const AffineTile &affine, mlir::Type type,
                            llvm::function_ref<mlir::Value(mlir::Value)> scalar);

/// The smallest and largest value of `affine` over a tile of `shape`, exact in i64, emitted at `b`'s
/// insertion point; `scalar` gives the value to use for each uniform scalar (the identity in tile IR,
/// the scalar's register in the lowering).
std::pair<mlir::Value, mlir::Value> emitValueRange(mlir::OpBuilder &b, mlir::Location loc, const AffineTile &affine,
                                                   llvm::ArrayRef<int64_t> shape,
                                                   llvm::function_ref<mlir::Value(mlir::Value)> scalar);

/// The affine form of an i32 tile built from tile.range, tile.splat, constants, tile.expand_dims,
/// tile.broadcast, arith.addi / subi, and arith.muli / shli by constants; nullopt for anything else.
std::optional<AffineTile> affineOf(mlir::Value tile);

/// A uniform bound: a constant, or the scalar a tile.splat repeats.
struct UniformBound {
  mlir::Value scalar; ///< i32; null for a constant
  int64_t constant = 0;
};

/// offsets = maxsi(minsi(x, hi), lo) (`minFirst`) or minsi(maxsi(x, lo), hi), x affine, the bounds
/// uniform: the clamp the attention generator puts on every aux table index.
struct ClampedAffine {
  mlir::Operation *inner; ///< the clamp's op that reads x
  mlir::Value x;
  AffineTile affine;
  UniformBound lo, hi;
  bool minFirst = true;
};
std::optional<ClampedAffine> matchClampedAffine(mlir::Value offsets);

/// The affine form in which the lowering reads `gather` at one address per thread (where the layout's
/// registers add to the thread's coordinates), a load per distinct element at an immediate offset:
/// its offsets' own, or for a clamped gather marked `bounds_crossing` (tile-version-gathers'
/// else-branch, read with predicated loads) the clamp's x, the clamp then stored in `clamped`.
/// nullopt: the lowering reads one address per register.
std::optional<AffineTile> oneAddressForm(GatherOp gather, std::optional<ClampedAffine> *clamped = nullptr);

} // namespace flare::tile

#endif // FLARE_DIALECT_TILE_AFFINETILE_H
