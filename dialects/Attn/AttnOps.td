//===- AttnOps.td - Operations of the attention dialect -------------------===//
#ifndef FLARE_ATTN_OPS
#define FLARE_ATTN_OPS

include "AttnDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

class Attn_Op<string mnemonic, list<Trait> traits = []> : Op<Attn_Dialect, mnemonic, traits>;

def Attn_AttentionOp : Attn_Op<"attention", [RecursiveMemoryEffects]> {
  let summary = "exact scaled-dot-product attention with modifier regions";
  let description = [{
    ```mlir
    %o, %lse = attn.attention %q, %k, %v {scale = 0.0883883 : f32}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
        attn.yield %s : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %kv: index):
        %keep = arith.cmpi uge, %qi, %kv : index
        attn.yield %keep : i1
      } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
        -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
    ```
    Q is [B, Hq, Sq, D], K and V are [B, Hkv, Skv, D] with Hq a multiple of Hkv (MHA, GQA, MQA).
    The output has Q's shape and element type; the optional second result is the per-row log-sum-exp
    [B, Hq, Sq] in f32. `scale` defaults to 1/sqrt(D). Regions are optional and must be pure.
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key, AnyRankedTensor:$value,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs AnyRankedTensor:$output, Optional<AnyRankedTensor>:$lse);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict-with-keyword
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` type($query) `,` type($key) `,` type($value) `->` type($output) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
                                     ParentOneOf<["AttentionOp"]>]> {
  let summary = "the value of a modifier region";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // FLARE_ATTN_OPS
