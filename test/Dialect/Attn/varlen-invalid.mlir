// attn.attention's cu_seqlens operand form: a round trip, and each verifier error (B = 1 in the
// tensors, 1-D offsets of equal length, not with kv_lens or page_table).
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @packed
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} cu_seqlens(%{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xi32>)
func.func @packed(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
    : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

func.func @batch_two(%q: tensor<2x8x?x64xbf16>, %k: tensor<2x2x?x64xbf16>, %v: tensor<2x2x?x64xbf16>,
                     %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<2x8x?x64xbf16> {
  // expected-error @+1 {{with cu_seqlens the query holds the sequences packed along dimension 2: its dimension 0 must be 1}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
    : tensor<2x8x?x64xbf16>, tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16> -> tensor<2x8x?x64xbf16>
  return %o : tensor<2x8x?x64xbf16>
}

// -----

func.func @lengths_differ(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>,
                          %cq: tensor<4xi32>, %ck: tensor<5xi32>) -> tensor<1x8x?x64xbf16> {
  // expected-error @+1 {{cu_seqlens of queries and keys must have the same length, batch + 1}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<4xi32>, tensor<5xi32>)
    : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

func.func @rank_two(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>,
                    %cq: tensor<?x?xi32>, %ck: tensor<?xi32>) -> tensor<1x8x?x64xbf16> {
  // expected-error @+1 {{cu_seqlens must be i32 [batch + 1] offsets}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?x?xi32>, tensor<?xi32>)
    : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}

// -----

func.func @with_lens(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>,
                     %n: tensor<?xi32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x8x?x64xbf16> {
  // expected-error @+1 {{cu_seqlens cannot be combined with kv_lens or page_table}}
  %o = attn.attention %q, %k, %v kv_lens(%n : tensor<?xi32>) cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
    : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x8x?x64xbf16>
  return %o : tensor<1x8x?x64xbf16>
}
