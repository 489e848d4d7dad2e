// Logit soft-capping (Gemma 2, cap 50): score = 50 * tanh(score / 50), non-causal.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec softcap.mlir --emit=ptx -o softcap.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @softcap(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %cap = arith.constant 50.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
