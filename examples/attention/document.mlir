// Document masking for packed sequences: tokens attend causally within their own document; the
// document id of every position comes from an aux tensor (i32 [max(Sq, Skv)]). The id comparison is
// evaluated per element; the causal part still skips blocks right of the diagonal.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec document.mlir --emit=ptx -o document.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @document(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %doc: tensor<?xi32>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %same = arith.cmpi eq, %dq, %dk : i32
      %causal = arith.cmpi sge, %qi, %kv : index
      %keep = arith.andi %same, %causal : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
