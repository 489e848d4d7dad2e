// Every verifier error of attn.attention (operand shapes and types, results, scale, modifier regions).
// RUN: flare-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

// Q, K and V are rank 4 [batch, heads, seq, head_dim]: a rank-3 query (no batch) is rejected.
func.func @query_rank3(%q: tensor<8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op query must be rank 4 [batch, heads, seq, head_dim], got rank 3}}
  %o = attn.attention %q, %k, %v : tensor<8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<8x128x64xbf16>
  return
}

// -----

func.func @value_rank5(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op value must be rank 4 [batch, heads, seq, head_dim], got rank 5}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Inputs are 16-bit floats: f32 is rejected.
func.func @f32_inputs(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) {
  // expected-error @+1 {{'attn.attention' op query elements must be bf16 or f16, got 'f32'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return
}

// -----

// ...as is an f32 key next to a bf16 query (each operand is checked on its own first).
func.func @f32_key(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op key elements must be bf16 or f16, got 'f32'}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// bf16 and f16 cannot be mixed.
func.func @mixed_types(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xf16>) {
  // expected-error @+1 {{'attn.attention' op query, key and value must share one element type}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Head dimensions are multiples of 16 (the MMA's K) from 32 to 256: 72 is not one...
func.func @head_dim_72(%q: tensor<1x8x128x72xbf16>, %k: tensor<1x8x128x72xbf16>, %v: tensor<1x8x128x72xbf16>) {
  // expected-error @+1 {{'attn.attention' op the head dimension of the query and key is 72; supported: a multiple of 16 from 32 to 256}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x72xbf16>, tensor<1x8x128x72xbf16>, tensor<1x8x128x72xbf16> -> tensor<1x8x128x72xbf16>
  return
}

// -----

// ...nor is 16 (below 32)...
func.func @head_dim_16(%q: tensor<1x8x128x16xbf16>, %k: tensor<1x8x128x16xbf16>, %v: tensor<1x8x128x16xbf16>) {
  // expected-error @+1 {{'attn.attention' op the head dimension of the query and key is 16; supported: a multiple of 16 from 32 to 256}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x16xbf16>, tensor<1x8x128x16xbf16>, tensor<1x8x128x16xbf16> -> tensor<1x8x128x16xbf16>
  return
}

// -----

// ...and V's head dimension (which may differ from Q's and K's) has the same rule.
func.func @value_head_dim_288(%q: tensor<1x8x128x192xbf16>, %k: tensor<1x8x128x192xbf16>, %v: tensor<1x8x128x288xbf16>) {
  // expected-error @+1 {{'attn.attention' op the head dimension of the value is 288; supported: a multiple of 16 from 32 to 256}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x192xbf16>, tensor<1x8x128x192xbf16>, tensor<1x8x128x288xbf16> -> tensor<1x8x128x288xbf16>
  return
}

// -----

// The query's head dimension must be known statically.
func.func @head_dim_dynamic(%q: tensor<1x8x128x?xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op the head dimension of the query must be static}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x?xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x?xbf16>
  return
}

// -----

func.func @kv_head_dim(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x128xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op the key's head dimension must equal the query's}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

func.func @batch(%q: tensor<2x8x128x64xbf16>, %k: tensor<4x8x128x64xbf16>, %v: tensor<4x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op query, key and value must have the same batch size}}
  %o = attn.attention %q, %k, %v : tensor<2x8x128x64xbf16>, tensor<4x8x128x64xbf16>, tensor<4x8x128x64xbf16> -> tensor<2x8x128x64xbf16>
  return
}

// -----

// K and V pair up element for element: same heads and sequence length (here 128 keys, 256 values).
func.func @kv_seq(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x256x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op key and value must have the same number of heads and sequence length}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x256x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Grouped-query attention needs Hq = g * Hkv: 12 query heads cannot share 8 key/value heads.
func.func @heads_not_multiple(%q: tensor<1x12x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op query heads (12) must be a multiple of key/value heads (8)}}
  %o = attn.attention %q, %k, %v : tensor<1x12x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x12x128x64xbf16>
  return
}

// -----

// More key/value heads than query heads is not grouping either (4 % 8 != 0).
func.func @more_kv_heads(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{query heads (4) must be a multiple of key/value heads (8)}}
  %o = attn.attention %q, %k, %v : tensor<1x4x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x4x128x64xbf16>
  return
}

// -----

// Zero key/value heads (no division by zero in the verifier).
func.func @zero_kv_heads(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x0x128x64xbf16>, %v: tensor<1x0x128x64xbf16>) {
  // expected-error @+1 {{key's head count is 0 (every dimension must be at least 1)}}
  %o = attn.attention %q, %k, %v : tensor<1x4x128x64xbf16>, tensor<1x0x128x64xbf16>, tensor<1x0x128x64xbf16> -> tensor<1x4x128x64xbf16>
  return
}

// -----

// A static sequence length of 0 would launch no program: sizes are at least 1.
func.func @empty_sequence(%q: tensor<1x8x0x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{query's sequence length is 0 (every dimension must be at least 1)}}
  %o = attn.attention %q, %k, %v : tensor<1x8x0x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x0x64xbf16>
  return
}

// -----

// Generated kernels hold sequences of up to 2^28 - 1 keys (32-bit index arithmetic with headroom).
func.func @sequence_too_long(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x268435456x64xbf16>, %v: tensor<1x8x268435456x64xbf16>) {
  // expected-error @+1 {{key's sequence length 268435456 exceeds 268435455, the largest a generated kernel supports}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x268435456x64xbf16>, tensor<1x8x268435456x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// The grid holds at most 65535 batches and heads.
func.func @too_many_heads(%q: tensor<1x65536x16x64xbf16>, %k: tensor<1x1x16x64xbf16>, %v: tensor<1x1x16x64xbf16>) {
  // expected-error @+1 {{query's head count 65536 exceeds 65535, the largest a generated kernel supports}}
  %o = attn.attention %q, %k, %v : tensor<1x65536x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x65536x16x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// Results and scale
//===----------------------------------------------------------------------===//

// -----

// The output has the query's shape (not the key's sequence length)...
func.func @output_shape(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x256x64xbf16>, %v: tensor<1x8x256x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op the output must have the query's shape with the value's head dimension, and the query's element type}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x256x64xbf16>, tensor<1x8x256x64xbf16> -> tensor<1x8x256x64xbf16>
  return
}

// -----

// ...and the query's element type (no f32 output).
func.func @output_type(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op the output must have the query's shape with the value's head dimension, and the query's element type}}
  %o = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xf32>
  return
}

// -----

// The log-sum-exp is f32: a bf16 one is rejected...
func.func @lse_bf16(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op the log-sum-exp result must be f32 [batch, heads, seq_q]}}
  %o, %l = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>, tensor<1x8x128xbf16>
  return
}

// -----

// ...so is one that keeps the head dimension (rank 4)...
func.func @lse_rank(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{the log-sum-exp result must be f32 [batch, heads, seq_q]}}
  %o, %l = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>, tensor<1x8x128x1xf32>
  return
}

// -----

// ...and one per key/value head instead of per query head (GQA: Hq = 8, Hkv = 2).
func.func @lse_kv_heads(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) {
  // expected-error @+1 {{the log-sum-exp result must be f32 [batch, heads, seq_q]}}
  %o, %l = attn.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x8x128x64xbf16>, tensor<1x2x128xf32>
  return
}

// -----

func.func @scale_zero(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op scale must be positive}}
  %o = attn.attention %q, %k, %v attributes {scale = 0.0 : f32} : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

func.func @scale_negative(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op scale must be positive}}
  %o = attn.attention %q, %k, %v attributes {scale = -0.125 : f32} : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// NaN (0x7FC00000) is not positive.
func.func @scale_nan(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op scale must be positive and finite, got nan}}
  %o = attn.attention %q, %k, %v attributes {scale = 0x7FC00000 : f32} : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// +inf (0x7F800000) would make every score infinite.
func.func @scale_inf(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op scale must be positive and finite, got inf}}
  %o = attn.attention %q, %k, %v attributes {scale = 0x7F800000 : f32} : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// Modifier regions
//===----------------------------------------------------------------------===//

// -----

// score_mod takes (score: f32, b, h, q, kv: index): the score is missing here.
func.func @score_mod_args(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op score_mod takes ('f32', 'index', 'index', 'index', 'index') arguments}}
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %z = arith.constant 0.0 : f32
      attn.yield %z : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// The score is f32 even for bf16 inputs.
func.func @score_mod_bf16_score(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{score_mod takes ('f32', 'index', 'index', 'index', 'index') arguments}}
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: bf16, %b: index, %h: index, %qi: index, %kv: index):
      attn.yield %s : bf16
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// mask_mod takes (b, h, q, kv: index), no score.
func.func @mask_mod_args(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op mask_mod takes ('index', 'index', 'index', 'index') arguments}}
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi uge, %qi, %kv : index
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Indices are index, not i32.
func.func @mask_mod_i32(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{mask_mod takes ('index', 'index', 'index', 'index') arguments}}
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: i32, %h: i32, %qi: i32, %kv: i32):
      %keep = arith.cmpi uge, %qi, %kv : i32
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// score_mod yields the new score, an f32.
func.func @score_mod_yield(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op score_mod must yield one 'f32'}}
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %t = arith.truncf %s : f32 to bf16
      attn.yield %t : bf16
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// mask_mod yields whether to keep the pair, an i1 (not the index difference).
func.func @mask_mod_yield(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op mask_mod must yield one 'i1'}}
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %d = arith.subi %qi, %kv : index
      attn.yield %d : index
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// A modifier is a single block.
func.func @two_blocks(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  // expected-error @+1 {{'attn.attention' op score_mod must have a single block}}
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      cf.br ^bb1
    ^bb1:
      attn.yield %s : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// A modifier ends in attn.yield.
func.func @no_terminator(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      // expected-error @+1 {{block with no terminator}}
      %t = arith.addf %s, %s : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// attn.yield only terminates attention modifiers.
func.func @yield_outside(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op 'attn.attention'}}
  attn.yield %x : f32
}

// -----

// Modifiers are pure functions of their indices: reading memory is not allowed...
func.func @memref_load(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>,
                       %bias: memref<8xf32>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      // expected-error @+1 {{'memref.load' op is not allowed in score_mod: modifiers must be pure}}
      %x = memref.load %bias[%h] : memref<8xf32>
      %r = arith.addf %s, %x : f32
      attn.yield %r : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// ...nor is writing it (in mask_mod)...
func.func @memref_store(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>,
                        %log: memref<8xi1>) {
  %o = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi uge, %qi, %kv : index
      // expected-error @+1 {{'memref.store' op is not allowed in mask_mod: modifiers must be pure}}
      memref.store %keep, %log[%h] : memref<8xi1>
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// ...nor a call (whose effects are unknown)...
func.func private @bias(f32, index) -> f32
func.func @call(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      // expected-error @+1 {{'func.call' op is not allowed in score_mod: modifiers must be pure}}
      %r = func.call @bias(%s, %h) : (f32, index) -> f32
      attn.yield %r : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// ...nor a load nested in control flow: the check looks inside regions (the scf.if is reported, as its
// effects are those of its body).
func.func @nested_load(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>,
                       %bias: memref<8xf32>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %diag = arith.cmpi eq, %qi, %kv : index
      // expected-error @+1 {{'scf.if' op is not allowed in score_mod: modifiers must be pure}}
      %r = scf.if %diag -> f32 {
        %x = memref.load %bias[%h] : memref<8xf32>
        scf.yield %x : f32
      } else {
        scf.yield %s : f32
      }
      attn.yield %r : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Pure control flow is not allowed either: modifiers are straight-line scalar code (use arith.select).
func.func @pure_if(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %diag = arith.cmpi eq, %qi, %kv : index
      // expected-error @+1 {{'scf.if' op is not allowed in score_mod: modifiers are arith and math ops on scalars, attn.aux_load, attn.q_len and attn.kv_len}}
      %r = scf.if %diag -> f32 {
        scf.yield %s : f32
      } else {
        scf.yield %s : f32
      }
      attn.yield %r : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Modifiers compute on scalars: a vector is rejected where it is made.
func.func @vector_in_mod(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      // expected-error @+1 {{'arith.constant' op is not allowed in score_mod: modifiers compute on scalars, not 'vector<2xf32>'}}
      %c = arith.constant dense<1.0> : vector<2xf32>
      attn.yield %s : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Aux tensors are 1-D.
func.func @aux_rank2(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<2x2xf32>) {
  // expected-error @+1 {{'attn.attention' op aux operand #0 must be a 1-D tensor of i32, i64, f32, f16 or bf16, got 'tensor<2x2xf32>'}}
  %o = attn.attention %q, %k, %v aux(%a : tensor<2x2xf32>)
      : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// A region with aux operands takes them as trailing block arguments.
func.func @aux_args_missing(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'attn.attention' op mask_mod takes ('index', 'index', 'index', 'index', 'tensor<8xf32>') arguments}}
  %o = attn.attention %q, %k, %v aux(%a : tensor<8xf32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %t = arith.constant true
      attn.yield %t : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// attn.aux_load reads an aux argument of its own region, not any tensor in scope.
func.func @aux_load_outer(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<8xf32>) {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      // expected-error @+1 {{'attn.aux_load' op reads an aux tensor: its operand must be an aux argument of the enclosing modifier region}}
      %x = attn.aux_load %a[%h] : tensor<8xf32>
      attn.yield %x : f32
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// attn.q_len belongs in a modifier region.
func.func @q_len_outside() {
  // expected-error @+1 {{'attn.q_len' op expects parent op 'attn.attention'}}
  %n = attn.q_len
  return
}

// -----

// 128-bit integers have no lowering in the NVPTX backend (it would end the process).
func.func @i128_arith(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<?xi32>) {
  %o = attn.attention %q, %k, %v aux(%a : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xi32>):
      %x = arith.index_cast %qi : index to i64
      // expected-error @+1 {{'arith.extsi' op is not allowed in mask_mod: 'i128' is not a type generated kernels compute in (integers of 1 to 64 bits, index, f16, bf16, f32, f64)}}
      %w = arith.extsi %x : i64 to i128
      %z = arith.constant 0 : i128
      %keep = arith.cmpi sge, %w, %z : i128
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Integer division by zero has no defined result: a constant zero divisor is rejected...
func.func @divide_by_zero(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<?xi32>) {
  %o = attn.attention %q, %k, %v aux(%a : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xi32>):
      %z = arith.constant 0 : index
      // expected-error @+1 {{'arith.divsi' op divides by a value that may be zero; make the divisor provably non-zero (e.g. arith.maxsi with 1)}}
      %d = arith.divsi %qi, %z : index
      %keep = arith.cmpi sge, %d, %kv : index
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// ...and so is a divisor read from an aux tensor, which may hold a zero.
func.func @divide_by_aux(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<?xi32>) {
  %o = attn.attention %q, %k, %v aux(%a : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xi32>):
      %n = attn.aux_load %t[%h] : tensor<?xi32>
      %q32 = arith.index_cast %qi : index to i32
      // expected-error @+1 {{'arith.remui' op divides by a value that may be zero}}
      %r = arith.remui %q32, %n : i32
      %z = arith.constant 0 : i32
      %keep = arith.cmpi eq, %r, %z : i32
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// A signed division of an unbounded value by -1 may overflow.
func.func @divide_overflow(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<?xi32>) {
  %o = attn.attention %q, %k, %v aux(%a : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xi32>):
      %n = attn.aux_load %t[%h] : tensor<?xi32>
      %m1 = arith.constant -1 : i32
      %one = arith.constant 1 : i32
      // expected-error @+1 {{'arith.divsi' op may divide the smallest 32-bit value by -1, which overflows; bound the dividend or the divisor}}
      %r = arith.divsi %n, %m1 : i32
      %keep = arith.cmpi sgt, %r, %one : i32
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// Shifts by the width or more are poison: the amount must be provably in range.
func.func @shift_amount(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<?xi32>) {
  %o = attn.attention %q, %k, %v aux(%a : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xi32>):
      %n = attn.aux_load %t[%h] : tensor<?xi32>
      %q32 = arith.index_cast %qi : index to i32
      // expected-error @+1 {{'arith.shli' op shifts by an amount that may be negative or at least the width (32); mask it (e.g. arith.andi with 31)}}
      %s = arith.shli %q32, %n : i32
      %z = arith.constant 0 : i32
      %keep = arith.cmpi sge, %s, %z : i32
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}

// -----

// A divisor bounded away from zero and a masked shift amount verify.
func.func @guarded_division_is_fine(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>, %a: tensor<?xi32>) {
  %o = attn.attention %q, %k, %v aux(%a : tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index, %t: tensor<?xi32>):
      %n = attn.aux_load %t[%h] : tensor<?xi32>
      %one = arith.constant 1 : i32
      %d = arith.maxsi %n, %one : i32
      %q32 = arith.index_cast %qi : index to i32
      %r = arith.divsi %q32, %d : i32
      %s31 = arith.constant 31 : i32
      %amount = arith.andi %n, %s31 : i32
      %sh = arith.shrsi %q32, %amount : i32
      %keep = arith.cmpi sge, %r, %sh : i32
      attn.yield %keep : i1
    } : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return
}
