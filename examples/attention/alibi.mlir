// ALiBi (Press et al.): score + slope[h] * (kv - qi), one slope per query head read from an aux
// tensor (f32 [Hq]), with a causal mask.
// Q [B, Hq, Sq, 128], K and V [B, Hkv, Skv, 128], bf16. Compile: flarec alibi.mlir --emit=ptx -o alibi.ptx
// (--emit=tile shows the generated FlashAttention kernel; its ABI is in dialects/Attn/Rationale.md).
func.func @alibi(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %slopes: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %slope = attn.aux_load %sl[%h] : tensor<?xf32>
      %dist = arith.subi %kv, %qi : index
      %di = arith.index_cast %dist : index to i32
      %df = arith.sitofp %di : i32 to f32
      %bias = arith.mulf %slope, %df : f32
      %y = arith.addf %s, %bias : f32
      attn.yield %y : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
