// Verifier errors of the tile ops for matrix products and attention: trans, reshape, dot,
// online_softmax, atomic_add, addptr.
// RUN: flare-opt %s -split-input-file -verify-diagnostics

func.func @trans_rank(%x: tensor<4x8x2xf32>) {
  // expected-error @+1 {{'tile.trans' op transposes 2-D tiles}}
  %t = tile.trans %x : tensor<4x8x2xf32> -> tensor<2x8x4xf32>
  return
}

// -----

// The transpose of [4, 8] is [8, 4], not [4, 8].
func.func @trans_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op result must be [8, 4] of 'f32'}}
  %t = tile.trans %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// 4 x 64 = 256 elements cannot become 128.
func.func @reshape_count(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'tile.reshape' op cannot reshape [4, 64] into [128]: element count or type differs}}
  %r = tile.reshape %x : tensor<4x64xf32> -> tensor<128xf32>
  return
}

// -----

func.func @reshape_type(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'tile.reshape' op cannot reshape [4, 64] into [256]: element count or type differs}}
  %r = tile.reshape %x : tensor<4x64xf32> -> tensor<256xi32>
  return
}

// -----

func.func @dot_rank(%a: tensor<64xbf16>, %b: tensor<64x32xbf16>, %c: tensor<64x32xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must be 2-D tiles}}
  %d = tile.dot %a, %b, %c : tensor<64xbf16>, tensor<64x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  return
}

// -----

// Tensor-core operands are 16-bit floats: f32 operands are rejected...
func.func @dot_f32_operands(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must both be bf16 or both f16, got 'f32' and 'f32'}}
  %d = tile.dot %a, %b, %c : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

// ...and so is a bf16 x f16 mix.
func.func @dot_mixed(%a: tensor<16x16xbf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{'tile.dot' op operands must both be bf16 or both f16, got 'bf16' and 'f16'}}
  %d = tile.dot %a, %b, %c : tensor<16x16xbf16>, tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @dot_accumulator(%a: tensor<16x16xbf16>, %b: tensor<16x16xbf16>, %c: tensor<16x16xbf16>) {
  // expected-error @+1 {{'tile.dot' op the accumulator and result must be f32}}
  %d = tile.dot %a, %b, %c : tensor<16x16xbf16>, tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
  return
}

// -----

// a is [M, K] = [16, 32], b must be [32, N].
func.func @dot_inner(%a: tensor<16x32xbf16>, %b: tensor<16x16xbf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{'tile.dot' op inner dimensions differ: a is [16, 32], b is [16, 16]}}
  %d = tile.dot %a, %b, %c : tensor<16x32xbf16>, tensor<16x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

// [16, 32] x [32, 8] -> [16, 8].
func.func @dot_result(%a: tensor<16x32xbf16>, %b: tensor<32x8xbf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{'tile.dot' op accumulator and result must be [16, 8]}}
  %d = tile.dot %a, %b, %c : tensor<16x32xbf16>, tensor<32x8xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

// mma.sync m16n8k16 needs M >= 16, K >= 16, N >= 8.
func.func @dot_small(%a: tensor<8x16xbf16>, %b: tensor<16x8xbf16>, %c: tensor<8x8xf32>) {
  // expected-error @+1 {{'tile.dot' op tensor-core tiles need M >= 16, K >= 16 and N >= 8, got M = 8, K = 16, N = 8}}
  %d = tile.dot %a, %b, %c : tensor<8x16xbf16>, tensor<16x8xbf16>, tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @online_softmax_scores(%s: tensor<64x64xbf16>, %m: tensor<64xf32>, %l: tensor<64xf32>) {
  // expected-error @+1 {{'tile.online_softmax' op scores must be a 2-D f32 tile}}
  %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l : tensor<64x64xbf16>, tensor<64xf32>
  return
}

// -----

// One running max per score row: 64 rows, not 32.
func.func @online_softmax_rows(%s: tensor<64x64xf32>, %m: tensor<32xf32>, %l: tensor<32xf32>) {
  // expected-error @+1 {{'tile.online_softmax' op running max must be 'tensor<64xf32>', one value per score row}}
  %p, %m2, %l2, %a = "tile.online_softmax"(%s, %m, %l) : (tensor<64x64xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<64x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// The running sum and the new sum share one type.
func.func @online_softmax_sum(%s: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64x4xf32>) {
  // expected-error @+1 {{'tile.online_softmax' op failed to verify that all of {sum, new_sum} have same type}}
  %p, %m2, %l2, %a = "tile.online_softmax"(%s, %m, %l) : (tensor<64x64xf32>, tensor<64xf32>, tensor<64x4xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

// Partial sums: G a power of two from 2 (1 partial is the plain [M] form).
func.func @online_softmax_one_partial(%s: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64x1xf32>) {
  // expected-error @+1 {{'tile.online_softmax' op running sum must be 'tensor<64xf32>', or 64 x G partial sums (G a power of two from 2, the 64 columns a multiple of 2 G), got 'tensor<64x1xf32>'}}
  %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l : tensor<64x64xf32>, tensor<64xf32>, tensor<64x1xf32>
  return
}

// -----

// Partial sums: the columns split into pairs, G partials taking them in turn (2 G must divide them).
func.func @online_softmax_partials_columns(%s: tensor<64x8xf32>, %m: tensor<64xf32>, %l: tensor<64x8xf32>) {
  // expected-error @+1 {{'tile.online_softmax' op running sum must be 'tensor<64xf32>', or 64 x G partial sums (G a power of two from 2, the 8 columns a multiple of 2 G), got 'tensor<64x8xf32>'}}
  %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l : tensor<64x8xf32>, tensor<64xf32>, tensor<64x8xf32>
  return
}

// -----

// The max, new max and alpha share one type.
func.func @online_softmax_alpha(%s: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>) {
  // expected-error @+1 {{'tile.online_softmax' op failed to verify that all of {max, new_max, alpha} have same type}}
  %p, %m2, %l2, %a = "tile.online_softmax"(%s, %m, %l) : (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32xf32>)
  return
}

// -----

// Atomic adds exist for f32 and i32 only.
func.func @atomic_bf16(%v: !tile.view<bf16, 1>, %t: tensor<64xbf16>, %i: i32) {
  // expected-error @+1 {{'tile.atomic_add' op atomic adds of 'bf16' are not supported (f32 or i32)}}
  tile.atomic_add %t, %v[%i] : tensor<64xbf16>, !tile.view<bf16, 1>
  return
}

// -----

// The block-access checks of load/store apply too.
func.func @atomic_elem(%v: !tile.view<f32, 1>, %t: tensor<64xi32>, %i: i32) {
  // expected-error @+1 {{'tile.atomic_add' op tile element type 'i32' differs from view element type 'f32'}}
  tile.atomic_add %t, %v[%i] : tensor<64xi32>, !tile.view<f32, 1>
  return
}

// -----

func.func @atomic_offsets(%v: !tile.view<f32, 2>, %t: tensor<8x8xf32>, %i: i32) {
  // expected-error @+1 {{'tile.atomic_add' op a rank-2 view needs 2 offsets, got 1}}
  tile.atomic_add %t, %v[%i] : tensor<8x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// The offset is an i32 or i64 element count.
func.func @addptr_index(%q: !tile.ptr<f32>, %i: index) {
  // expected-error @+1 {{'tile.addptr' op operand #1 must be 32-bit signless integer or 64-bit signless integer}}
  %a = "tile.addptr"(%q, %i) : (!tile.ptr<f32>, index) -> !tile.ptr<f32>
  return
}

// -----

// The result is the base's pointer type.
func.func @addptr_type(%q: !tile.ptr<f32>, %i: i32) {
  // expected-error @+1 {{'tile.addptr' op failed to verify that all of {base, result} have same type}}
  %a = "tile.addptr"(%q, %i) : (!tile.ptr<f32>, i32) -> !tile.ptr<f16>
  return
}
