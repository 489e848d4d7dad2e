// Grouped-query attention: 32 query heads share 8 key/value heads (query head h reads KV head h / 4),
// causal.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec gqa.mlir --emit=ptx -o gqa.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @gqa(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x?x128xbf16>
  return %o : tensor<?x32x?x128xbf16>
}
