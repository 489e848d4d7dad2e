// Multi-query attention: 32 query heads share one key/value head, non-causal, with the LSE.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec mqa.mlir --emit=ptx -o mqa.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @mqa(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x1x?x128xbf16>, %v: tensor<?x1x?x128xbf16>) -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x32x?x128xbf16>, tensor<?x1x?x128xbf16>, tensor<?x1x?x128xbf16> -> tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
  return %o, %lse : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
}
