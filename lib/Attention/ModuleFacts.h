//===- ModuleFacts.h - What a custom attention module tells flare::attention -*- C++ -*-===//
#ifndef FLARE_LIB_ATTENTION_MODULEFACTS_H
#define FLARE_LIB_ATTENTION_MODULEFACTS_H

#include "flare/Dialect/Attn/Config.h"

#include <string>
#include <vector>

namespace flare::detail {

/// What a custom module's attn.attention fixes, which the call's tensors and options must agree with.
struct ModuleFacts {
  std::string funcName;
  std::string elemType; // "bf16" / "f16"
  int64_t headDim = 0, headDimV = 0; // Q.K's, V's
  bool hasLse = false;
  std::vector<std::string> auxTypes;
  std::vector<int64_t> qShape, kShape; // static dims (-1 dynamic)
  attn::AttentionFacts config;         // what its configured choice depends on
  bool kvLens = false, varlen = false; // operands kv_lens, cu_seqlens
};

/// The facts of a custom module (parsed once per distinct text; throws flare::Error when it does
/// not parse or holds no single attn.attention in a func.func).
const ModuleFacts &moduleFacts(const std::string &text);

} // namespace flare::detail

#endif // FLARE_LIB_ATTENTION_MODULEFACTS_H
