// Round trip of attn.attention in all its forms: no modifier regions, score_mod only, mask_mod only, both
// regions with the log-sum-exp result; custom and generic form.
// RUN: flare-opt %s -split-input-file | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Plain multi-head attention (Hq = Hkv = 8), the scale left to its default 1/sqrt(D).
// CHECK-LABEL: func.func @mha
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xbf16>, %[[K:.*]]: tensor<2x8x256x64xbf16>, %[[V:.*]]: tensor<2x8x256x64xbf16>)
// CHECK-NEXT: %[[O:.*]] = attn.attention %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16> -> tensor<2x8x128x64xbf16>
// CHECK-NOT: score_mod
// CHECK-NOT: mask_mod
// CHECK-NEXT: return %[[O]]
// GENERIC-LABEL: sym_name = "mha"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<2x8x128x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16>) -> tensor<2x8x128x64xbf16>
func.func @mha(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x8x256x64xbf16>, %v: tensor<2x8x256x64xbf16>)
    -> tensor<2x8x128x64xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<2x8x128x64xbf16>, tensor<2x8x256x64xbf16>, tensor<2x8x256x64xbf16> -> tensor<2x8x128x64xbf16>
  return %o : tensor<2x8x128x64xbf16>
}

// -----

// score_mod only, with an explicit scale: ALiBi-style bias s - slope * (q - kv), in f16 with grouped
// query attention (Hq = 32 is a multiple of Hkv = 8: 4 query heads share each key/value head).
// CHECK-LABEL: func.func @score_mod_only
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} attributes {scale = 1.250000e-01 : f32} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %[[B:.*]]: index, %[[H:.*]]: index, %[[QI:.*]]: index, %[[KV:.*]]: index):
// CHECK-NEXT:   %[[D:.*]] = arith.subi %[[QI]], %[[KV]] : index
// CHECK-NEXT:   %[[DI:.*]] = arith.index_cast %[[D]] : index to i32
// CHECK-NEXT:   %[[DF:.*]] = arith.sitofp %[[DI]] : i32 to f32
// CHECK-NEXT:   %[[SLOPE:.*]] = arith.constant 6.250000e-02 : f32
// CHECK-NEXT:   %[[BIAS:.*]] = arith.mulf %[[SLOPE]], %[[DF]] : f32
// CHECK-NEXT:   %[[R:.*]] = arith.subf %[[S]], %[[BIAS]] : f32
// CHECK-NEXT:   attn.yield %[[R]] : f32
// CHECK-NEXT: } : tensor<1x32x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16> -> tensor<1x32x512x128xf16>
// CHECK-NOT: mask_mod
// GENERIC-LABEL: sym_name = "score_mod_only"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}> ({
// GENERIC-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// GENERIC: "attn.yield"(%{{.*}}) : (f32) -> ()
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<1x32x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>) -> tensor<1x32x512x128xf16>
func.func @score_mod_only(%q: tensor<1x32x512x128xf16>, %k: tensor<1x8x512x128xf16>, %v: tensor<1x8x512x128xf16>)
    -> tensor<1x32x512x128xf16> {
  %o = attn.attention %q, %k, %v attributes {scale = 0.125 : f32}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %d = arith.subi %qi, %kv : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %slope = arith.constant 0.0625 : f32
      %bias = arith.mulf %slope, %df : f32
      %r = arith.subf %s, %bias : f32
      attn.yield %r : f32
    } : tensor<1x32x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16> -> tensor<1x32x512x128xf16>
  return %o : tensor<1x32x512x128xf16>
}

// -----

// mask_mod only: a causal mask (keep kv <= q) on dynamic batch and sequence sizes, head dim 256, and
// multi-query attention (one key/value head).
// CHECK-LABEL: func.func @mask_mod_only
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KV:.*]]: index):
// CHECK-NEXT:   %[[KEEP:.*]] = arith.cmpi uge, %[[QI]], %[[KV]] : index
// CHECK-NEXT:   attn.yield %[[KEEP]] : i1
// CHECK-NEXT: } : tensor<?x16x?x256xbf16>, tensor<?x1x?x256xbf16>, tensor<?x1x?x256xbf16> -> tensor<?x16x?x256xbf16>
// GENERIC-LABEL: sym_name = "mask_mod_only"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// GENERIC: "attn.yield"(%{{.*}}) : (i1) -> ()
func.func @mask_mod_only(%q: tensor<?x16x?x256xbf16>, %k: tensor<?x1x?x256xbf16>, %v: tensor<?x1x?x256xbf16>)
    -> tensor<?x16x?x256xbf16> {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi uge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<?x16x?x256xbf16>, tensor<?x1x?x256xbf16>, tensor<?x1x?x256xbf16> -> tensor<?x16x?x256xbf16>
  return %o : tensor<?x16x?x256xbf16>
}

// -----

// Both regions and the log-sum-exp result [B, Hq, Sq] in f32: a soft-capped score (30 * tanh(s / 30))
// with a sliding-window causal mask (0 <= q - kv < 256, as one unsigned compare of q - kv), on fully
// dynamic sizes except the head dimension.
// CHECK-LABEL: func.func @both_with_lse
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.attention %{{.*}}, %{{.*}}, %{{.*}} attributes {scale = 8.838830e-02 : f32} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK:        math.tanh
// CHECK:        attn.yield %{{.*}} : f32
// CHECK-NEXT: } mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KV:.*]]: index):
// CHECK-NEXT:   %[[D:.*]] = arith.subi %[[QI]], %[[KV]] : index
// CHECK:        %[[KEEP:.*]] = arith.cmpi ult, %[[D]], %{{.*}} : index
// CHECK-NEXT:   attn.yield %[[KEEP]] : i1
// CHECK-NEXT: } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
// CHECK: return %[[O]], %[[LSE]]
// GENERIC-LABEL: sym_name = "both_with_lse"
// GENERIC: "attn.attention"
// GENERIC: : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
func.func @both_with_lse(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v attributes {scale = 0.0883883 : f32}
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %cap = arith.constant 30.0 : f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %r = arith.mulf %cap, %t : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %d = arith.subi %qi, %kv : index
      %w = arith.constant 256 : index
      %keep = arith.cmpi ult, %d, %w : index
      attn.yield %keep : i1
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
      -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// The LSE result without any region, and a select inside a modifier (branches are written as
// arith.select: modifier regions hold straight-line scalar code).
// CHECK-LABEL: func.func @lse_and_select
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} score_mod {
// CHECK: arith.select
// CHECK: } : tensor<4x4x64x64xf16>, tensor<4x2x64x64xf16>, tensor<4x2x64x64xf16> -> tensor<4x4x64x64xf16>{{$}}
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x4x64x64xf16>, tensor<4x2x64x64xf16>, tensor<4x2x64x64xf16> -> tensor<4x4x64x64xf16>, tensor<4x4x64xf32>
func.func @lse_and_select(%q: tensor<4x4x64x64xf16>, %k: tensor<4x2x64x64xf16>, %v: tensor<4x2x64x64xf16>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %first = arith.cmpi eq, %h, %b : index
      %z = arith.constant 0.0 : f32
      %r = arith.select %first, %z, %s : f32
      attn.yield %r : f32
    } : tensor<4x4x64x64xf16>, tensor<4x2x64x64xf16>, tensor<4x2x64x64xf16> -> tensor<4x4x64x64xf16>
  %o2, %lse = attn.attention %q, %k, %v
      : tensor<4x4x64x64xf16>, tensor<4x2x64x64xf16>, tensor<4x2x64x64xf16> -> tensor<4x4x64x64xf16>, tensor<4x4x64xf32>
  return
}

// -----

// Auxiliary tensors: every region receives them as trailing block arguments and reads them with
// attn.aux_load; attn.q_len and attn.kv_len give the sequence lengths (bottom-right causal here).
// CHECK-LABEL: func.func @aux_and_lengths
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} aux(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi32>) score_mod {
// CHECK: attn.aux_load %{{.*}}[%{{.*}}] : tensor<?xf32>
// CHECK: mask_mod {
// CHECK: attn.kv_len
// CHECK: attn.q_len
// CHECK: attn.aux_load %{{.*}}[%{{.*}}] : tensor<?xi32>
func.func @aux_and_lengths(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>,
                           %slopes: tensor<?xf32>, %doc: tensor<?xi32>) -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v aux(%slopes, %doc : tensor<?xf32>, tensor<?xi32>)
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>, %d: tensor<?xi32>):
      %slope = attn.aux_load %sl[%h] : tensor<?xf32>
      %r = arith.addf %s, %slope : f32
      attn.yield %r : f32
    }
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %sl: tensor<?xf32>, %d: tensor<?xi32>):
      %n = attn.kv_len
      %m = attn.q_len
      %off = arith.subi %n, %m : index
      %lim = arith.addi %qi, %off : index
      %causal = arith.cmpi sle, %kv, %lim : index
      %dq = attn.aux_load %d[%qi] : tensor<?xi32>
      %dk = attn.aux_load %d[%kv] : tensor<?xi32>
      %same = arith.cmpi eq, %dq, %dk : i32
      %keep = arith.andi %causal, %same : i1
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}
