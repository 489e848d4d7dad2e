// Round trip of the tile ops for matrix products and attention: addptr, trans, reshape, dot,
// online_softmax and atomic_add (custom and generic form).
// RUN: flare-opt %s -split-input-file | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s

// addptr advances a pointer by an i64 or i32 element count; the pointer type is kept.
// CHECK-LABEL: func.func @addptr
// CHECK: %[[A:.*]] = tile.addptr %{{.*}}, %{{.*}} : !tile.ptr<bf16>, i64
// CHECK: tile.addptr %[[A]], %{{.*}} : !tile.ptr<bf16>, i32
func.func @addptr(%q: !tile.ptr<bf16>, %off: i64, %n: i32) attributes {tile.kernel} {
  %a = tile.addptr %q, %off : !tile.ptr<bf16>, i64
  %b = tile.addptr %a, %n : !tile.ptr<bf16>, i32
  return
}

// -----

// trans swaps the two dimensions; reshape keeps the row-major order (4 x 64 = 256 = 2 x 128).
// CHECK-LABEL: func.func @trans_reshape
// CHECK: tile.trans %{{.*}} : tensor<32x128xbf16> -> tensor<128x32xbf16>
// CHECK: tile.reshape %{{.*}} : tensor<4x64xf32> -> tensor<256xf32>
// CHECK: tile.reshape %{{.*}} : tensor<4x64xf32> -> tensor<2x128xf32>
func.func @trans_reshape(%b: tensor<32x128xbf16>, %x: tensor<4x64xf32>) {
  %t = tile.trans %b : tensor<32x128xbf16> -> tensor<128x32xbf16>
  %r = tile.reshape %x : tensor<4x64xf32> -> tensor<256xf32>
  %s = tile.reshape %x : tensor<4x64xf32> -> tensor<2x128xf32>
  return
}

// -----

// dot: d[M, N] = a[M, K] * b[K, N] + c[M, N] with bf16 or f16 operands and an f32 accumulator; the
// smallest shape is M = 16, K = 16, N = 8 (one mma.sync m16n8k16).
// CHECK-LABEL: func.func @dot
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xbf16>, tensor<32x128xbf16>, tensor<64x128xf32> -> tensor<64x128xf32>
// CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x16xf16>, tensor<16x8xf16>, tensor<16x8xf32> -> tensor<16x8xf32>
func.func @dot(%a: tensor<64x32xbf16>, %b: tensor<32x128xbf16>, %c: tensor<64x128xf32>,
               %ha: tensor<16x16xf16>, %hb: tensor<16x8xf16>, %hc: tensor<16x8xf32>) {
  %d = tile.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x128xbf16>, tensor<64x128xf32> -> tensor<64x128xf32>
  %e = tile.dot %ha, %hb, %hc : tensor<16x16xf16>, tensor<16x8xf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

// online_softmax: scores [64, 64] with the running max and sum per row [64] -> (p, new max, new sum,
// alpha); the result types follow the operands.
// CHECK-LABEL: func.func @online_softmax
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xf32>, tensor<64xf32>{{$}}
func.func @online_softmax(%s: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>) {
  %p, %m2, %l2, %alpha = tile.online_softmax %s, %m, %l : tensor<64x64xf32>, tensor<64xf32>
  return
}

// -----

// The normalizer as 4 partial sums per row: its type follows the max's (new sum of the same type).
// CHECK-LABEL: func.func @online_softmax_partial_sums
// CHECK: %{{.*}}, %{{.*}}, %[[L2:.*]], %{{.*}} = tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} {lazy} : tensor<64x64xf32>, tensor<64xf32>, tensor<64x4xf32>{{$}}
// CHECK: return %[[L2]] : tensor<64x4xf32>
func.func @online_softmax_partial_sums(%s: tensor<64x64xf32>, %m: tensor<64xf32>, %l: tensor<64x4xf32>) -> tensor<64x4xf32> {
  %p, %m2, %l2, %alpha = tile.online_softmax %s, %m, %l {lazy} : tensor<64x64xf32>, tensor<64xf32>, tensor<64x4xf32>
  return %l2 : tensor<64x4xf32>
}

// -----

// atomic_add into a view, f32 and i32.
// CHECK-LABEL: func.func @atomic_add
// CHECK: tile.atomic_add %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<64x128xf32>, !tile.view<f32, 2>
// CHECK: tile.atomic_add %{{.*}}, %{{.*}}[%{{.*}}] : tensor<32xi32>, !tile.view<i32, 1>
func.func @atomic_add(%p: !tile.ptr<f32>, %q: !tile.ptr<i32>, %n: i32, %t: tensor<64x128xf32>, %u: tensor<32xi32>) {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %q, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  tile.atomic_add %t, %v[%n, %n] : tensor<64x128xf32>, !tile.view<f32, 2>
  tile.atomic_add %u, %w[%n] : tensor<32xi32>, !tile.view<i32, 1>
  return
}
