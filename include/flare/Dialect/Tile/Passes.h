//===- Passes.h - Passes of the tile dialect --------------------*- C++ -*-===//
#ifndef FLARE_DIALECT_TILE_PASSES_H
#define FLARE_DIALECT_TILE_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith { class ArithDialect; }
namespace math { class MathDialect; }
namespace scf { class SCFDialect; }
} // namespace mlir

namespace flare::tile {
#define GEN_PASS_DECL
#include "Tile/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Tile/Passes.h.inc"
} // namespace flare::tile

#endif // FLARE_DIALECT_TILE_PASSES_H
