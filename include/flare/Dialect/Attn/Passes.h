//===- Passes.h - Passes of the attention dialect ---------------*- C++ -*-===//
#ifndef FLARE_DIALECT_ATTN_PASSES_H
#define FLARE_DIALECT_ATTN_PASSES_H

#include "mlir/Pass/Pass.h"

#include <cstdint>

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
/// The key offset of "no block" in generated kernels (the overlapped loop's P V before its first
/// step, a key outside a packed or paged sequence): far below every view, so its rows fail the
/// bounds checks and loads there read zeros.
inline constexpr int64_t kFarAwayKey = -(int64_t(1) << 30);

#define GEN_PASS_DECL
#include "Attn/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Attn/Passes.h.inc"

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_PASSES_H
