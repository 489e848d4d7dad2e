// Prefix-LM: the first 256 keys (the prefix) are visible to every query, the rest causally.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec prefix_lm.mlir --emit=ptx -o prefix_lm.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @prefix_lm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %prefix = arith.constant 256 : index
      %in_prefix = arith.cmpi slt, %kv, %prefix : index
      %causal = arith.cmpi sge, %qi, %kv : index
      %keep = arith.ori %in_prefix, %causal : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
