//===- Config.h - The configuration of a generated attention kernel -*- C++ -*-===//
//
// `#attn.config` (dialects/Attn/AttnAttrs.td) is the one form of a generated attention kernel's
// configuration. chooseAttentionConfig is the one place it is chosen; attn-choose-config attaches
// its choice (with the pass's overrides) to each attn.attention, and convert-attn-to-tile follows it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_ATTN_CONFIG_H
#define FLARE_DIALECT_ATTN_CONFIG_H

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Target/Target.h"

namespace flare::attn {

/// What the configured choice depends on besides the target.
struct AttentionFacts {
  int64_t headDim = 0;
  bool f16 = false;
  MaskClass maskClass = MaskClass::None;
  bool readsAux = false; ///< the modifiers read aux tensors (ALiBi slopes, document ids)

  /// The facts of `op`, whose mask class is `maskClass` (attn-classify-mask's analysis).
  static AttentionFacts of(AttentionOp op, MaskClass maskClass);
};

/// The configured choice for `facts` on `target` (measured on the H200; bench/NOTES.md).
ConfigAttr chooseAttentionConfig(mlir::MLIRContext *ctx, const Target &target, const AttentionFacts &facts);

/// Kernel hints for launchers that attn-choose-config records on the op and convert-attn-to-tile
/// moves to the kernel: whether the configured kernel splits its last instances (1 or 0), and
/// whether asking for single instances per turn changes it (where not, a kernel cache answers both
/// requests with one kernel).
inline constexpr const char *kSplitByDefaultHint = "flare.attention.split_by_default";
inline constexpr const char *kCanUnpairHint = "flare.attention.can_unpair";

/// The generated kernel's configuration as text, on the kernel function through the GPU layer (read
/// into KernelInfo::attentionConfig): what reproduces the kernel (CompileOptions::attentionConfig).
inline constexpr const char *kKernelConfigAttrName = "flare.attention_config";

/// Only a persistent kernel whose program instances all take the same steps (no mask) can split
/// them between CTAs or run them one per turn; a masked one pairs them for balance.
inline bool hasEqualInstances(ConfigAttr config, MaskClass maskClass) {
  return config.has(ConfigSwitch::Persistent) && maskClass == MaskClass::None;
}

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_CONFIG_H
