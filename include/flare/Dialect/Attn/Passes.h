//===- Passes.h - Passes of the attention dialect ---------------*- C++ -*-===//
#ifndef FLARE_DIALECT_ATTN_PASSES_H
#define FLARE_DIALECT_ATTN_PASSES_H

#include "mlir/Pass/Pass.h"


namespace mlir {
namespace arith { class ArithDialect; }
namespace func { class FuncDialect; }
namespace math { class MathDialect; }
namespace scf { class SCFDialect; }
} // namespace mlir

namespace flare::tile {
class TileDialect;
}

namespace flare::attn {
#define GEN_PASS_DECL
#include "Attn/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Attn/Passes.h.inc"

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_PASSES_H
