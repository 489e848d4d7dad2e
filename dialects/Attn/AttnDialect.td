//===- AttnDialect.td - The attention dialect -----------------------------===//
#ifndef FLARE_ATTN_DIALECT
#define FLARE_ATTN_DIALECT

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::flare::attn";
  let summary = "Exact attention with FlexAttention-style score and mask modifiers";
  let description = [{
    One op, `attn.attention`, describes softmax(scale * Q K^T + modifiers) V over batched, multi-head
    tensors. User modifiers are regions of pure `arith`/`math` code: `score_mod` rewrites a score,
    `mask_mod` decides whether a (query, key) pair takes part. The compiler derives the tiled
    online-softmax kernel from it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // FLARE_ATTN_DIALECT
