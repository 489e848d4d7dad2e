// Causal attention (top-left aligned, as PyTorch's is_causal): query i sees keys j <= i.
// attn-classify-mask recognises it: KV blocks right of the diagonal are never visited and blocks left of
// it run without mask code.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec causal.mlir --emit=ptx -o causal.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
