// convert-attn-to-tile computes the modifier regions' index values in 32 bits where the index
// ranges (include/flare/Dialect/Attn/ModifierRanges.h) prove that exact, and in 64 bits, the op's own
// index semantics, elsewhere. Comparisons the ranges decide become constants.
// RUN: flare-opt %s -split-input-file --attn-choose-config="block-m=64 block-n=64 num-warps=4 overlap=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s

// ALiBi's distance kv - qi lies in (-2^28, 2^28): 32 bits hold it, no value is widened.
// CHECK-LABEL: func.func @distance_in_32_bits
// CHECK-NOT: i64>
// CHECK: arith.subi %{{.*}}, %{{.*}} : tensor<64x64xi32>
// CHECK-NOT: i64>
// CHECK: return
func.func @distance_in_32_bits(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> tensor<?x?x?x64xbf16> {
  %o = attn.attention %q, %k, %v
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):
      %d = arith.subi %kv, %qi : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %y = arith.addf %s, %df : f32
      attn.yield %y : f32
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// 16 * qi reaches 2^32: the indices are widened (sign-extended) and the product and comparison are
// 64-bit, as the op means them.
// CHECK-LABEL: func.func @product_in_64_bits
// CHECK: %[[Q64:.*]] = arith.extsi %{{.*}} : tensor<64xi32> to tensor<64xi64>
// CHECK: %[[P:.*]] = arith.muli %[[Q64]], %{{.*}} : tensor<64xi64>
// CHECK: scf.for
// CHECK: %[[K64:.*]] = arith.extsi %{{.*}} : tensor<64xi32> to tensor<64xi64>
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : tensor<64x64xi64>
func.func @product_in_64_bits(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
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

// Zero-extending a possibly negative i32 (qi - kv) into index gives values up to 2^32 - 1: computed in
// 64 bits (a 32-bit index would read them as negative).
// CHECK-LABEL: func.func @zero_extension_in_64_bits
// CHECK: scf.for
// CHECK: arith.subi %{{.*}}, %{{.*}} : tensor<64x64xi32>
// CHECK: arith.extui %{{.*}} : tensor<64x64xi32> to tensor<64x64xi64>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<64x64xi64>
func.func @zero_extension_in_64_bits(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
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

// A left window of 2^63 - 1 keys is decided (always kept) and folds away: the kernel is the causal
// one, in 32 bits, with no element of the region left.
// CHECK-LABEL: func.func @unbounded_window_folds
// CHECK-NOT: i64>
// CHECK-NOT: 9223372036854775807
// CHECK: return
func.func @unbounded_window_folds(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
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
