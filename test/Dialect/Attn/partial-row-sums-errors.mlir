// attn-partial-row-sums's errors (groups=8, every function): 8 columns cannot be 8 partial sums of
// column pairs; a normalizer that starts at 1 or at a function argument cannot be split.
// RUN: flare-opt %s -split-input-file --verify-diagnostics --attn-partial-row-sums="groups=8" -o /dev/null

func.func @narrow(%s: tensor<16x8xf32>, %m: tensor<16xf32>) -> tensor<16xf32> {
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  // expected-error @below {{cannot keep 8 partial sums per row: the block's 8 columns are not a multiple of 16}}
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l0 : tensor<16x8xf32>, tensor<16xf32>
  return %l_new : tensor<16xf32>
}

// -----

func.func @starts_at_one(%s: tensor<16x64xf32>, %m: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @below {{the normalizer of an online softmax step starts at a value other than zero}}
  %l0 = arith.constant dense<1.0> : tensor<16xf32>
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l0 : tensor<16x64xf32>, tensor<16xf32>
  return %l_new : tensor<16xf32>
}

// -----

// expected-error @below {{the normalizer of this online softmax step starts at a value attn-partial-row-sums cannot split}}
func.func @starts_at_argument(%s: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) -> tensor<16xf32> {
  // expected-note @below {{the step}}
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
  return %l_new : tensor<16xf32>
}
