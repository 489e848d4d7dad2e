//===- TileDialect.h - The tile dialect -------------------------*- C++ -*-===//
#ifndef FLARE_DIALECT_TILE_TILEDIALECT_H
#define FLARE_DIALECT_TILE_TILEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Tile/TileDialect.h.inc"
#include "Tile/TileEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "Tile/TileTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Tile/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "Tile/TileOps.h.inc"

namespace flare::tile {
/// True when `func` is a tile kernel (carries the `tile.kernel` unit attribute).
bool isKernel(mlir::func::FuncOp func);
/// The kernel's warps per CTA (`tile.num_warps`, default 4).
int getNumWarps(mlir::func::FuncOp func);
/// The kernel's schedule (`tile.schedule`), or the default one where it has none.
ScheduleAttr getSchedule(mlir::func::FuncOp func);
/// True when tile.online_softmax may keep its normalizer as `groups` partial sums per row over
/// `columns` scores: a power of two from 2 whose double divides the columns.
bool isPartialSumGrouping(int64_t groups, int64_t columns);
} // namespace flare::tile

#endif // FLARE_DIALECT_TILE_TILEDIALECT_H
