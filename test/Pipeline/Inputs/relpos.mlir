// Score modifiers that gather from an aux table per score element (a relative-position bias indexed
// by kv - q), without and with a causal mask: the configurations that fit what they need
// (examples-fit-*.test).
func.func @relpos(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %bias: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xf32>):
      %off = arith.constant 65536 : index
      %d = arith.subi %kv, %qi : index
      %i = arith.addi %d, %off : index
      %x = attn.aux_load %t[%i] : tensor<?xf32>
      %y = arith.addf %s, %x : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

func.func @relpos_causal(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %bias: tensor<?xf32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%bias : tensor<?xf32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xf32>):
      %off = arith.constant 65536 : index
      %d = arith.subi %kv, %qi : index
      %i = arith.addi %d, %off : index
      %x = attn.aux_load %t[%i] : tensor<?xf32>
      %y = arith.addf %s, %x : f32
      attn.yield %y : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xf32>):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}
