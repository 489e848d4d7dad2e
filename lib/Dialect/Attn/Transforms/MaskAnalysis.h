//===- MaskAnalysis.h - What a mask_mod region keeps, block by block -*- C++ -*-===//
//
// Reads a mask_mod region as a boolean formula over linear index constraints
//
//     a * qi + b * kv + c >= 0,     a any integer, b in {-1, 0, +1},
//
// where c is a constant plus integer multiples of "leaves": values of the region that depend on
// neither qi nor kv (the batch and head indices, attn.q_len, attn.kv_len and arithmetic on them).
// Comparisons (arith.cmpi) of linear index expressions become constraints, arith.andi / arith.ori
// become And / Or nodes; anything else (reads of aux tensors, non-linear arithmetic, xor, ...) is a
// Generic node, which keeps the mask correct by evaluating it per element but lets no block be
// skipped on its account.
//
// For a Q block of rows [q0, q1] and a KV block of columns [k0, k0 + BLOCK_N), the minimum and
// maximum of a * qi + b * kv over the rectangle sit at its corners, so every constraint yields, in
// closed form, the KV block indices that may hold a kept element (non-empty) and those that are
// certainly kept everywhere (full). And/Or combine these intervals; the generated kernel computes
// them at run time with a handful of scalar instructions per program instance.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_DIALECT_ATTN_TRANSFORMS_MASKANALYSIS_H
#define FLARE_LIB_DIALECT_ATTN_TRANSFORMS_MASKANALYSIS_H

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/ModifierRanges.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flare::attn {

/// q * qi + kv * kv_idx + constant + sum(coef * leaf).
struct LinearExpr {
  int64_t q = 0, kv = 0, constant = 0;
  llvm::SmallVector<std::pair<int64_t, mlir::Value>> leaves;

  /// Scaled by `factor`, or plus `factor` times `other`; nullopt when a coefficient overflows.
  std::optional<LinearExpr> scaled(int64_t factor) const;
  std::optional<LinearExpr> plus(const LinearExpr &other, int64_t factor = 1) const;
};

struct MaskNode {
  enum class Kind { True, Constraint, And, Or, Generic };
  Kind kind = Kind::Generic;
  LinearExpr expr;                      ///< Constraint: expr >= 0
  std::vector<MaskNode> children;       ///< And, Or

  /// False when no block can be proven full (a Generic node decides every block).
  bool mayHaveFullBlocks() const;
  bool containsGeneric() const;
};

struct MaskInfo {
  bool hasMask = false; ///< the op has a mask_mod region
  MaskNode root;        ///< True when it has none
  MaskClass maskClass = MaskClass::None;
};

/// Analyses `op`'s mask_mod region (see the file comment).
MaskInfo analyzeMask(AttentionOp op);

} // namespace flare::attn

#endif // FLARE_LIB_DIALECT_ATTN_TRANSFORMS_MASKANALYSIS_H
