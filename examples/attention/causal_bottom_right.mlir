// Causal attention aligned bottom-right (FlashAttention's convention when Sq != Skv): the last query
// sees every key, query i sees keys j <= i + Skv - Sq. With Sq > Skv the first Sq - Skv rows see no key:
// their output is 0 and their LSE -inf.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec causal_bottom_right.mlir --emit=ptx -o causal_bottom_right.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @causal_bottom_right(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %nkv = attn.kv_len
      %nq = attn.q_len
      %shift = arith.subi %nkv, %nq : index
      %last = arith.addi %qi, %shift : index
      %keep = arith.cmpi sle, %kv, %last : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
