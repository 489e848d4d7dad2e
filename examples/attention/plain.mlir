// Plain attention: O = softmax(Q K^T / sqrt(D)) V, with the log-sum-exp of every row.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec plain.mlir --emit=ptx -o plain.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @plain(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
