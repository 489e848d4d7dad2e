// What the backward generator rejects: a score_mod op with no derivative rule on the path from the
// score to the result, reported at that op.
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config --convert-attn-to-tile=grad=true -verify-diagnostics

func.func @remainder(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %c = arith.constant 3.0 : f32
      // expected-error @+1 {{'arith.remf' op cannot be differentiated with respect to the score for the backward pass}}
      %y = arith.remf %s, %c : f32
      attn.yield %y : f32
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// -----

// The score selects between branches (a float condition on the score is piecewise: the derivative of
// each branch is taken, the comparison is constant almost everywhere), so this one is accepted; an op
// that only reads indices (no tangent) never needs a rule.
func.func @clamp(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %lim = arith.constant 5.0 : f32
      %big = arith.cmpf ogt, %s, %lim : f32
      %y = arith.select %big, %lim, %s : f32
      %i = arith.index_cast %kv : index to i32
      %f = arith.sitofp %i : i32 to f32
      %z = arith.remf %f, %lim : f32
      %w = arith.addf %y, %z : f32
      attn.yield %w : f32
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
