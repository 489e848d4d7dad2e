//===- ModifierRanges.h - Integer ranges of attention modifier regions -*- C++ -*-===//
//
// The values every integer (and index) SSA value of an attn.attention's score_mod and mask_mod
// regions can take, from the op's problem bounds:
//
//     b in [0, B - 1], h in [0, Hq - 1], qi in [0, Sq - 1], kv in [0, Skv - 1],
//     attn.q_len = Sq, attn.kv_len = Skv,
//
// where a static dimension of the op's types gives its exact size and a dynamic one the bounds of
// generated kernels (kMaxSeqLen, kMaxBatchOrHeads; flare::attention enforces them). Ranges flow forward
// through the region's straight-line code by interval arithmetic on exact integers (`__int128`), so
// each value also knows whether its operation can wrap around: a result whose exact range leaves its
// type's range is wrapped, and then only known to lie in that type.
//
// Three consumers:
//   - the verifier rejects what has no defined result: a divisor that may be zero, a signed division
//     that may overflow (MIN / -1), a shift amount that may be negative or reach the width;
//   - the generator folds comparisons that the ranges decide (a window wider than any sequence), and
//     computes index values in 32 bits only where that is provably the same as 64 (indexFitsI32);
//   - the mask analysis reads only operations that do not wrap as linear arithmetic.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_ATTN_MODIFIERRANGES_H
#define FLARE_DIALECT_ATTN_MODIFIERRANGES_H

#include "flare/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>

namespace flare::attn {

/// The largest sequence length (Sq or Skv) of a generated kernel: index values and mask bounds are
/// computed in 32 bits there, and a mask bound a * qi + c of the shipped masks (|a| = 1, c up to
/// Skv + Sq + a window) stays below 2^31 with room for the block arithmetic around it. (2^28 - 1
/// keys of one head at head dim 128 in bf16 are 68 GB.)
inline constexpr int64_t kMaxSeqLen = (int64_t{1} << 28) - 1;
/// The largest batch size and number of query heads (the grid's y and z limits).
inline constexpr int64_t kMaxBatchOrHeads = 65535;

/// A closed interval of exact integers.
struct IntRange {
  __int128 lo = 0, hi = 0;

  static IntRange point(__int128 v) { return {v, v}; }
  /// Every value of a signed `bits`-bit integer.
  static IntRange ofWidth(unsigned bits);
  bool contains(__int128 v) const { return lo <= v && v <= hi; }
  bool within(const IntRange &other) const { return other.lo <= lo && hi <= other.hi; }
  bool fitsSigned(unsigned bits) const { return within(ofWidth(bits)); }
  bool nonNegative() const { return lo >= 0; }
};

/// The ranges of one attn.attention's modifier regions (see the file comment).
class ModifierRanges {
public:
  explicit ModifierRanges(AttentionOp op);

  /// The values `v` (an integer or index value of a region) takes; its type's whole range when it is
  /// not one the analysis reached.
  IntRange range(mlir::Value v) const;
  /// False when the operation defining `v` may wrap around (its exact result can leave the type).
  bool exact(mlir::Value v) const;
  /// The outcome of `cmp` when the ranges of its operands decide it.
  std::optional<bool> decided(mlir::arith::CmpIOp cmp) const;
  /// True when computing every index value of the op's regions in 32 bits gives the values of the
  /// op's 64-bit index semantics: each live index value fits in 32 bits, shifts of index values move
  /// by less than 32, and unsigned reads of index values see no negative one. Values only a decided
  /// comparison reads are not live (the generator folds that comparison).
  bool indexFitsI32() const { return indexFitsI32_; }

  /// The first operation without a defined result (see the file comment) and why; null when none.
  mlir::Operation *undefinedOp() const { return undefinedOp_; }
  const std::string &undefinedReason() const { return undefinedReason_; }

private:
  struct Fact {
    IntRange range;
    bool exact = true;
  };
  void analyze(mlir::Region &region, unsigned firstIndexArg);
  Fact transfer(mlir::Operation *op);
  void checkDefined(mlir::Operation *op);
  void checkNarrow(mlir::Region &region);

  AttentionOp op_;
  IntRange batch_, heads_, seqQ_, seqKV_;
  llvm::DenseMap<mlir::Value, Fact> facts_;
  bool indexFitsI32_ = true;
  mlir::Operation *undefinedOp_ = nullptr;
  std::string undefinedReason_;
};

/// The width an integer or index type computes in (index: 64); 0 for anything else.
unsigned integerWidth(mlir::Type type);

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_MODIFIERRANGES_H
