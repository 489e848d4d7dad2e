// What convert-attn-to-tile rejects: modifier ops the generated kernel cannot express yet, and
// functions that are not exactly `return attn.attention(arguments)` (the kernel replaces the whole
// function, so nothing else may happen in it).
// RUN: flare-opt %s -split-input-file --attn-choose-config --convert-attn-to-tile -verify-diagnostics
// Block sizes must be powers of two (the block ranges are computed with arithmetic shifts).
// RUN: not flare-opt %s -split-input-file --attn-choose-config="block-m=96" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=POW2
// POW2: error: 'attn.attention' op attn-choose-config: block_m and block_n must be powers of two from 16 to 256, got 96
// Partial row sums: a power of two from 2 whose double divides the keys per step.
// RUN: not flare-opt %s -split-input-file --attn-choose-config="partial-row-sums=3" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=PARTIAL
// RUN: not flare-opt %s -split-input-file --attn-choose-config="partial-row-sums=64 block-n=64" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: error: 'attn.attention' op attn-choose-config: partial_row_sums={{3|64}} must be 0 or a power of two from 2 whose double divides the {{[0-9]+}} keys per step

// math.sin has no tile implementation: the region op is reported, not the attention.
func.func @sin_score(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      // expected-error @+1 {{'math.sin' op is not supported in generated attention kernels yet (supported math ops: exp, exp2, log, log2, sqrt, rsqrt, absf, tanh)}}
      %y = math.sin %s : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The same for a math op computed once per program (on the head index, hoisted before the KV loop).
func.func @sin_hoisted(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %hi = arith.index_cast %h : index to i32
      %hf = arith.sitofp %hi : i32 to f32
      // expected-error @+1 {{'math.sin' op is not supported in generated attention kernels yet}}
      %w = math.sin %hf : f32
      %y = arith.addf %s, %w : f32
      attn.yield %y : f32
    } : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The function returns something besides the attention's results.
func.func @extra_result(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
  // expected-error @+1 {{'attn.attention' op convert-attn-to-tile: the function 'extra_result' must consist of one attn.attention on its arguments and return its results}}
  %o = attn.attention %q, %k, %v
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>
  return %o, %q : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

// -----

// The attention computes an LSE that the function drops: not all of its results are returned.
func.func @dropped_lse(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>)
    -> tensor<?x?x?x128xbf16> {
  // expected-error @+1 {{must consist of one attn.attention on its arguments and return its results}}
  %o, %lse = attn.attention %q, %k, %v
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// The query is computed in the function (a negation) instead of being an argument.
func.func @computed_query(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x128x128xbf16>, %v: tensor<1x8x128x128xbf16>)
    -> tensor<1x8x128x128xbf16> {
  %nq = arith.negf %q : tensor<1x8x128x128xbf16>
  // expected-error @+1 {{the function 'computed_query' must consist of one attn.attention on its arguments and return its results}}
  %o = attn.attention %nq, %k, %v
      : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16> -> tensor<1x8x128x128xbf16>
  return %o : tensor<1x8x128x128xbf16>
}

// -----

// Two attentions in one function: the first is not followed by the return.
func.func @two_attentions(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x128x128xbf16>, %v: tensor<1x8x128x128xbf16>)
    -> tensor<1x8x128x128xbf16> {
  // expected-error @+1 {{must consist of one attn.attention on its arguments and return its results}}
  %o1 = attn.attention %q, %k, %v
      : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16> -> tensor<1x8x128x128xbf16>
  %o2 = attn.attention %o1, %k, %v
      : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16> -> tensor<1x8x128x128xbf16>
  return %o2 : tensor<1x8x128x128xbf16>
}

// -----

// An attention nested in another op's region is not the body of a function.
func.func @nested(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x128x128xbf16>, %v: tensor<1x8x128x128xbf16>)
    -> tensor<1x8x128x128xbf16> {
  %r = scf.execute_region -> tensor<1x8x128x128xbf16> {
    // expected-error @+1 {{'attn.attention' op convert-attn-to-tile: attn.attention must sit directly in a func.func}}
    %o = attn.attention %q, %k, %v
        : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16> -> tensor<1x8x128x128xbf16>
    scf.yield %o : tensor<1x8x128x128xbf16>
  }
  return %r : tensor<1x8x128x128xbf16>
}

