// attn-classify-mask reads each attn.attention's mask_mod as a formula over linear index constraints
// (a * qi + b * kv + c >= 0 with b in {-1, 0, 1}, c a constant plus multiples of values that depend on
// neither qi nor kv; see lib/Dialect/Attn/Transforms/MaskAnalysis.h) and records the family it
// recognises in `mask_class`: none, causal, causal_bottom_right, sliding_window, prefix_lm, linear or
// generic. convert-attn-to-tile runs the same analysis to skip empty KV blocks and to drop the mask
// code of full ones; a `generic` part is evaluated per element and lets no block run unmasked.
// RUN: flare-opt %s -split-input-file --attn-classify-mask | FileCheck %s

// No mask_mod at all: every key is kept.
// CHECK-LABEL: func.func @none
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} attributes {mask_class = #attn.mask_class<none>} :
func.func @none(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>)
    -> tensor<1x8x128x64xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

// -----

// Top-left causal as PyTorch's is_causal: qi >= kv is the single constraint qi - kv >= 0. The scale
// the user wrote stays next to the new attribute, and the region is left as it was.
// CHECK-LABEL: func.func @causal_sge
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} attributes {mask_class = #attn.mask_class<causal>, scale = 1.250000e-01 : f32} mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KV:.*]]: index):
// CHECK-NEXT:   %[[KEEP:.*]] = arith.cmpi sge, %[[QI]], %[[KV]] : index
// CHECK-NEXT:   attn.yield %[[KEEP]] : i1
func.func @causal_sge(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v attributes {scale = 0.125 : f32}
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// The same mask written unsigned, kv <=u qi: both sides are indices, provably >= 0, so the unsigned
// compare is the signed one and the mask is causal.
// CHECK-LABEL: func.func @causal_ule
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<causal>} mask_mod {
func.func @causal_ule(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi ule, %kv, %qi : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Causal on i32 values: index_cast keeps the value, and kv < qi + 1 is kv <= qi, so this is causal
// too (the constant folds into the constraint: qi + 1 - kv - 1 >= 0).
// CHECK-LABEL: func.func @causal_i32
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<causal>} mask_mod {
func.func @causal_i32(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %q32 = arith.index_cast %qi : index to i32
      %k32 = arith.index_cast %kv : index to i32
      %one = arith.constant 1 : i32
      %lim = arith.addi %q32, %one : i32
      %keep = arith.cmpi slt, %k32, %lim : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Bottom-right causal (FlashAttention's convention for Sq != Skv): kv <= qi + (kv_len - q_len), the
// causal constraint shifted by exactly kv_len - q_len.
// CHECK-LABEL: func.func @causal_bottom_right
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<causal_bottom_right>} mask_mod {
func.func @causal_bottom_right(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %nkv = attn.kv_len
      %nq = attn.q_len
      %shift = arith.subi %nkv, %nq : index
      %last = arith.addi %qi, %shift : index
      %keep = arith.cmpi sle, %kv, %last : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Sliding window (Mistral-style, 256 keys): qi >= kv is an upper kv bound that moves with qi,
// qi - kv < 256 a lower one; their conjunction is a window.
// CHECK-LABEL: func.func @sliding_window_signed
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<sliding_window>} mask_mod {
func.func @sliding_window_signed(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
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

// -----

// The same window as one unsigned compare of a difference, (qi - kv) <u 256: qi - kv may be negative,
// which reads as a huge unsigned value, so the compare means 0 <= qi - kv < 256, both bounds at once.
// CHECK-LABEL: func.func @sliding_window_unsigned
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<sliding_window>} mask_mod {
func.func @sliding_window_unsigned(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %dist = arith.subi %qi, %kv : index
      %window = arith.constant 256 : index
      %keep = arith.cmpi ult, %dist, %window : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Prefix-LM: a disjunction of a fixed kv bound (the first 256 keys, visible to every query) and the
// causal constraint.
// CHECK-LABEL: func.func @prefix_lm
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<prefix_lm>} mask_mod {
func.func @prefix_lm(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
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

// -----

// kv <= 2 * qi: a linear upper bound with slope 2, not the causal diagonal, and no lower bound.
// CHECK-LABEL: func.func @linear_slope
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<linear>} mask_mod {
func.func @linear_slope(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %two = arith.constant 2 : index
      %lim = arith.muli %qi, %two : index
      %keep = arith.cmpi sle, %kv, %lim : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A sliding window with its left bound only, kv >= qi - 100 (every key right of it kept): a linear
// lower bound without an upper one. The generator skips the blocks left of the band.
// CHECK-LABEL: func.func @window_left_only
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<linear>} mask_mod {
func.func @window_left_only(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %left = arith.constant 100 : index
      %lo = arith.subi %qi, %left : index
      %keep = arith.cmpi sge, %kv, %lo : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A head-dependent causal offset, kv <= qi + 64 * h: the head index is a leaf of the constraint (one
// value per program instance), which is linear but neither causal form.
// CHECK-LABEL: func.func @linear_head_offset
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<linear>} mask_mod {
func.func @linear_head_offset(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c64 = arith.constant 64 : index
      %off = arith.muli %h, %c64 : index
      %lim = arith.addi %qi, %off : index
      %keep = arith.cmpi sle, %kv, %lim : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Document masking: the ids come from an aux tensor, read at qi and at kv. An aux read is no linear
// index expression, so the whole mask is generic even though it is and-ed with the causal bound.
// CHECK-LABEL: func.func @generic_document
// CHECK: attn.attention {{.*}} aux(%{{.*}} : tensor<?xi32>) attributes {mask_class = #attn.mask_class<generic>} mask_mod {
func.func @generic_document(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>,
                            %doc: tensor<?xi32>) -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v aux(%doc : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %ids: tensor<?xi32>):
      %dq = attn.aux_load %ids[%qi] : tensor<?xi32>
      %dk = attn.aux_load %ids[%kv] : tensor<?xi32>
      %same = arith.cmpi eq, %dq, %dk : i32
      %causal = arith.cmpi sge, %qi, %kv : index
      %keep = arith.andi %same, %causal : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// Only andi and ori combine constraints: an exclusive or of two linear bounds is generic.
// CHECK-LABEL: func.func @generic_xor
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<generic>} mask_mod {
func.func @generic_xor(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c128 = arith.constant 128 : index
      %causal = arith.cmpi sge, %qi, %kv : index
      %early = arith.cmpi slt, %kv, %c128 : index
      %keep = arith.xori %causal, %early : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// qi * kv is not linear (a product of two element indices): generic.
// CHECK-LABEL: func.func @generic_product
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<generic>} mask_mod {
func.func @generic_product(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c4096 = arith.constant 4096 : index
      %prod = arith.muli %qi, %kv : index
      %keep = arith.cmpi slt, %prod, %c4096 : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// kv appears with coefficient 2 (2 * kv <= qi): the block intervals are derived for kv coefficients
// -1, 0 and +1 only, so this linear-looking mask is generic.
// CHECK-LABEL: func.func @generic_kv_slope
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<generic>} mask_mod {
func.func @generic_kv_slope(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %two = arith.constant 2 : index
      %kv2 = arith.muli %two, %kv : index
      %keep = arith.cmpi sle, %kv2, %qi : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// An unsigned compare whose left side may be negative and whose meaning is then inverted:
// (qi - kv) >=u kv holds for every kv > qi (a negative difference is huge unsigned), which no signed
// constraint says, so the analysis gives up: generic.
// CHECK-LABEL: func.func @generic_unsigned_difference
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<generic>} mask_mod {
func.func @generic_unsigned_difference(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %dist = arith.subi %qi, %kv : index
      %keep = arith.cmpi uge, %dist, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Every attn.attention of the module is classified, each on its own.
// CHECK-LABEL: func.func @two_ops
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<none>} :
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<causal>} mask_mod {
func.func @two_ops(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>)
    -> (tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>) {
  %o1 = attn.attention %q, %k, %v
      : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  %o2 = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o1, %o2 : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>
}

// -----

// Zero-extension of a difference that may be negative: extui(qi - kv) < 256 (signed, in i64) holds for
// 0 <= qi - kv < 256 only, since a negative i32 difference zero-extends to a value >= 2^31. That is a
// window (both bounds), like the unsigned compare above; the analysis must not read extui as keeping
// the value, which would leave only kv > qi - 256 (no upper bound: class "linear", and the blocks right
// of the diagonal would run as full blocks without mask code). A sound answer is sliding_window or,
// conservatively, generic.
// CHECK-LABEL: func.func @zero_extended_difference
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<{{sliding_window|generic}}>} mask_mod {
func.func @zero_extended_difference(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %q32 = arith.index_cast %qi : index to i32
      %k32 = arith.index_cast %kv : index to i32
      %d = arith.subi %q32, %k32 : i32
      %d64 = arith.extui %d : i32 to i64
      %w = arith.constant 256 : i64
      %keep = arith.cmpi slt, %d64, %w : i64
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// The same through index_castui (i32 -> index zero-extends too, as the reference implements it).
// CHECK-LABEL: func.func @index_castui_difference
// CHECK: attn.attention {{.*}} attributes {mask_class = #attn.mask_class<{{sliding_window|generic}}>} mask_mod {
func.func @index_castui_difference(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %q32 = arith.index_cast %qi : index to i32
      %k32 = arith.index_cast %kv : index to i32
      %d = arith.subi %q32, %k32 : i32
      %du = arith.index_castui %d : i32 to index
      %w = arith.constant 256 : index
      %keep = arith.cmpi slt, %du, %w : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A window bound wider than any sequence (the largest 64-bit value) is decided by the index ranges
// (kv >= 0 > qi - (2^63 - 1) always): that comparison is `true`, and what remains is causal.
// CHECK-LABEL: func.func @unbounded_left_window
// CHECK: mask_class = #attn.mask_class<causal>
func.func @unbounded_left_window(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %left = arith.constant 9223372036854775807 : index
      %lo = arith.subi %qi, %left : index
      %above = arith.cmpi sge, %kv, %lo : index
      %below = arith.cmpi sle, %kv, %qi : index
      %keep = arith.andi %below, %above : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// 2^32 is no different: once read as 0 in 32 bits (keeping only the diagonal), it is decided too.
// CHECK-LABEL: func.func @window_two_to_the_32
// CHECK: mask_class = #attn.mask_class<causal>
func.func @window_two_to_the_32(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %left = arith.constant 4294967296 : index
      %lo = arith.subi %qi, %left : index
      %above = arith.cmpi sge, %kv, %lo : index
      %below = arith.cmpi sle, %kv, %qi : index
      %keep = arith.andi %below, %above : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// qi + (2^63 - 1) wraps around for qi >= 1 (index arithmetic is 64-bit two's complement): it is not
// linear, and the mask is evaluated per element, exactly as written.
// CHECK-LABEL: func.func @wrapping_bound
// CHECK: mask_class = #attn.mask_class<generic>
func.func @wrapping_bound(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %right = arith.constant 9223372036854775807 : index
      %hi = arith.addi %qi, %right : index
      %keep = arith.cmpi sle, %kv, %hi : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// A bound whose block arithmetic could leave 32 bits (16 * qi reaches 2^32) is evaluated per element
// (in 64 bits) rather than classified.
// CHECK-LABEL: func.func @steep_bound
// CHECK: mask_class = #attn.mask_class<generic>
func.func @steep_bound(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c16 = arith.constant 16 : index
      %x = arith.muli %qi, %c16 : index
      %keep = arith.cmpi sge, %x, %kv : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// i32 arithmetic that may wrap (qi + 2^31 - 1 in 32 bits) is not linear either.
// CHECK-LABEL: func.func @wrapping_i32
// CHECK: mask_class = #attn.mask_class<generic>
func.func @wrapping_i32(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %q32 = arith.index_cast %qi : index to i32
      %k32 = arith.index_cast %kv : index to i32
      %big = arith.constant 2147483647 : i32
      %x = arith.addi %q32, %big : i32
      %keep = arith.cmpi sle, %k32, %x : i32
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
