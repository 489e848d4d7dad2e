// Causal sliding-window attention (Mistral-style, window 256): query i sees keys i - 255 .. i.
// Blocks left of the window and right of the diagonal are skipped; blocks wholly inside run unmasked.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec sliding_window.mlir --emit=ptx -o sliding_window.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @sliding_window(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %window = arith.constant 256 : index
      %causal = arith.cmpi sge, %qi, %kv : index
      %dist = arith.subi %qi, %kv : index
      %near = arith.cmpi slt, %dist, %window : index
      %keep = arith.andi %causal, %near : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
