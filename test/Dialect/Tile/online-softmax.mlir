// tile-decompose-online-softmax rewrites each tile.online_softmax into the reductions and elementwise
// ops of its equations (before layouts are assigned). For scores s [M, N] in log2 units and the running
// row max m and normalizer l [M]:
//   m'    = max(m, max_j s[:, j])
//   m_0   = (m' == -inf) ? 0 : m'        a row with no visible key yet: exp2 gives 0, never NaN
//   p     = exp2(s - m_0)
//   alpha = exp2(m - m_0)
//   l'    = alpha * l + sum_j p[:, j]
// and the op's four results (p, m', l', alpha) are replaced by these values.
// RUN: flare-opt %s -split-input-file --tile-decompose-online-softmax | FileCheck %s
// After the rewrite the kernels lay out and lower like any other tile code.
// RUN: flare-opt %s -split-input-file --tile-decompose-online-softmax --tgpu-assign-layouts --convert-tgpu-to-nvvm | FileCheck %s --check-prefix=LOWERED

// The whole decomposition, in order, on [64, 32] scores.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[S:[^:]*]]: tensor<64x32xf32>, %[[M:[^:]*]]: tensor<64xf32>, %[[L:[^:]*]]: tensor<64xf32>)
// CHECK-NOT: tile.online_softmax
// m' = maximumf(m, rowmax(s)) (maximumf: a NaN score propagates).
// CHECK-NEXT: %[[ROWMAX:.*]] = tile.reduce max %[[S]] {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[NEWMAX:.*]] = arith.maximumf %[[M]], %[[ROWMAX]] : tensor<64xf32>
// m_0 = select(m' == -inf, 0, m'): -inf is 0xFF800000.
// CHECK-NEXT: %[[NINF:.*]] = arith.constant dense<0xFF800000> : tensor<64xf32>
// CHECK-NEXT: %[[NOKEY:.*]] = arith.cmpf oeq, %[[NEWMAX]], %[[NINF]] : tensor<64xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[NOKEY]], %[[ZERO]], %[[NEWMAX]] : tensor<64xi1>, tensor<64xf32>
// p = exp2(s - m_0), m_0 broadcast along the rows: [64] -> [64, 1] -> [64, 32].
// CHECK-NEXT: %[[COL:.*]] = tile.expand_dims %[[SAFE]] {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
// CHECK-NEXT: %[[BCAST:.*]] = tile.broadcast %[[COL]] : tensor<64x1xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.subf %[[S]], %[[BCAST]] : tensor<64x32xf32>
// CHECK-NEXT: %[[P:.*]] = math.exp2 %[[SHIFTED]] : tensor<64x32xf32>
// alpha = exp2(m - m_0): the old max against the new (safe) one.
// CHECK-NEXT: %[[DM:.*]] = arith.subf %[[M]], %[[SAFE]] : tensor<64xf32>
// CHECK-NEXT: %[[ALPHA:.*]] = math.exp2 %[[DM]] : tensor<64xf32>
// l' = alpha * l + rowsum(p).
// CHECK-NEXT: %[[ROWSUM:.*]] = tile.reduce sum %[[P]] {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[ALPHA]], %[[L]] : tensor<64xf32>
// CHECK-NEXT: %[[NEWSUM:.*]] = arith.addf %[[SCALED]], %[[ROWSUM]] : tensor<64xf32>
// The results, in the op's order (p, m', l', alpha); m' is the true max, not the select's m_0.
// CHECK-NEXT: return %[[P]], %[[NEWMAX]], %[[NEWSUM]], %[[ALPHA]] : tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
func.func @step(%s: tensor<64x32xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>)
    -> (tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l : tensor<64x32xf32>, tensor<64xf32>
  return %p, %m2, %l2, %a : tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// The flash-attention pattern in a tile kernel: the state (m, l, acc) is carried by scf.for, alpha
// rescales the accumulator. Every op in the loop is rewritten, the loop-carried values now come from
// the decomposition, and the rest of the body is left as it was.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for {{.*}} iter_args(%[[M:[^ ]*]] = %{{.*}}, %[[L:[^ ]*]] = %{{.*}}, %[[ACC:[^ ]*]] = %{{.*}})
// CHECK: %[[S:.*]] = tile.load
// CHECK-NEXT: %[[ROWMAX:.*]] = tile.reduce max %[[S]] {axis = 1 : i32}
// CHECK-NEXT: %[[NEWMAX:.*]] = arith.maximumf %[[M]], %[[ROWMAX]]
// CHECK: %[[P:.*]] = math.exp2
// CHECK: %[[ALPHA:.*]] = math.exp2
// CHECK: %[[NEWSUM:.*]] = arith.addf
// alpha is broadcast back over the rows of the accumulator, as written in the input.
// CHECK: %[[AC:.*]] = tile.expand_dims %[[ALPHA]] {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[AB:.*]] = tile.broadcast %[[AC]] : tensor<16x1xf32> -> tensor<16x64xf32>
// CHECK-NEXT: %[[RESCALED:.*]] = arith.mulf %[[ACC]], %[[AB]] : tensor<16x64xf32>
// CHECK-NEXT: %[[NEWACC:.*]] = arith.addf %[[RESCALED]], %[[P]] : tensor<16x64xf32>
// CHECK-NEXT: scf.yield %[[NEWMAX]], %[[NEWSUM]], %[[NEWACC]] : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
// CHECK-NOT: tile.online_softmax
// One warp: the loop carries the registers of m and l (8 each) and of acc (32).
// LOWERED-LABEL: gpu.func @in_loop
// LOWERED: %{{.*}}:48 = scf.for
// The row max and row sum are shuffle reductions; exp2 is ex2.approx.
// LOWERED: arith.maximumf
// LOWERED: nvvm.shfl.sync bfly
// LOWERED: arith.cmpf oeq
// LOWERED: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// LOWERED: nvvm.shfl.sync bfly
// LOWERED: scf.yield {{.*}} : f32{{(, f32){47}$}}
// LOWERED: gpu.return
func.func @in_loop(%sp: !tile.ptr<f32>, %op: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %sv = tile.make_view %sp, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %op, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %res:3 = scf.for %j = %c0 to %n step %c64
      iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %s = tile.load %sv[%c0, %j] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
    %alpha1 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %alpha_b = tile.broadcast %alpha1 : tensor<16x1xf32> -> tensor<16x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<16x64xf32>
    %acc_new = arith.addf %acc_scaled, %p : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  tile.store %res#2, %ov[%c0, %c0] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Four partial sums per row, l [64, 4]: column j adds into partial (j / 2) mod 4, i.e. p as
// [64, 4, 4, 2] (pair, partial, element of the pair) summed over the pairs' elements and then over
// the pairs; alpha scales every partial of its row.
// CHECK-LABEL: func.func @partial_sums(
// CHECK-SAME: %[[S:[^:]*]]: tensor<64x32xf32>, %[[M:[^:]*]]: tensor<64xf32>, %[[L:[^:]*]]: tensor<64x4xf32>)
// CHECK: %[[P:.*]] = math.exp2 %{{.*}} : tensor<64x32xf32>
// CHECK: %[[ALPHA:.*]] = math.exp2 %{{.*}} : tensor<64xf32>
// CHECK-NEXT: %[[GROUPED:.*]] = tile.reshape %[[P]] : tensor<64x32xf32> -> tensor<64x4x4x2xf32>
// CHECK-NEXT: %[[PAIRS:.*]] = tile.reduce sum %[[GROUPED]] {axis = 3 : i32} : tensor<64x4x4x2xf32> -> tensor<64x4x4xf32>
// CHECK-NEXT: %[[PARTIAL:.*]] = tile.reduce sum %[[PAIRS]] {axis = 1 : i32} : tensor<64x4x4xf32> -> tensor<64x4xf32>
// CHECK-NEXT: %[[ACOL:.*]] = tile.expand_dims %[[ALPHA]] {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
// CHECK-NEXT: %[[A4:.*]] = tile.broadcast %[[ACOL]] : tensor<64x1xf32> -> tensor<64x4xf32>
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %[[A4]], %[[L]] : tensor<64x4xf32>
// CHECK-NEXT: %[[NEWSUM:.*]] = arith.addf %[[SCALED]], %[[PARTIAL]] : tensor<64x4xf32>
// CHECK-NEXT: return %[[NEWSUM]] : tensor<64x4xf32>
func.func @partial_sums(%s: tensor<64x32xf32>, %m: tensor<64xf32>, %l: tensor<64x4xf32>) -> tensor<64x4xf32> {
  %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l : tensor<64x32xf32>, tensor<64xf32>, tensor<64x4xf32>
  return %l2 : tensor<64x4xf32>
}

// -----

// lazy: the reference max moves only when the block raises it by more than 8 (log2 units), so alpha
// is exactly exp2(0) = 1 on the steps that keep it. A row's first visible key always moves it:
// x - (-inf) = +inf > 8, and (-inf) - (-inf) = NaN fails the ordered comparison.
// CHECK-LABEL: func.func @lazy_step(
// CHECK-SAME: %[[S:[^:]*]]: tensor<64x32xf32>, %[[M:[^:]*]]: tensor<64xf32>, %[[L:[^:]*]]: tensor<64xf32>)
// CHECK-NEXT: %[[ROWMAX:.*]] = tile.reduce max %[[S]] {axis = 1 : i32} : tensor<64x32xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[TRUEMAX:.*]] = arith.maximumf %[[M]], %[[ROWMAX]] : tensor<64xf32>
// CHECK-NEXT: %[[RISE:.*]] = arith.subf %[[TRUEMAX]], %[[M]] : tensor<64xf32>
// CHECK-NEXT: %[[EIGHT:.*]] = arith.constant dense<8.000000e+00> : tensor<64xf32>
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpf ole, %[[RISE]], %[[EIGHT]] : tensor<64xf32>
// CHECK-NEXT: %[[NEWMAX:.*]] = arith.select %[[KEEP]], %[[M]], %[[TRUEMAX]] : tensor<64xi1>, tensor<64xf32>
// The rest is the plain decomposition on the reference.
// CHECK: %[[NOKEY:.*]] = arith.cmpf oeq, %[[NEWMAX]], %{{.*}} : tensor<64xf32>
// CHECK: %[[SAFE:.*]] = arith.select %[[NOKEY]], %{{.*}}, %[[NEWMAX]] : tensor<64xi1>, tensor<64xf32>
// CHECK: %[[DM:.*]] = arith.subf %[[M]], %[[SAFE]] : tensor<64xf32>
// CHECK-NEXT: %[[ALPHA:.*]] = math.exp2 %[[DM]] : tensor<64xf32>
// CHECK: return %{{.*}}, %[[NEWMAX]], %{{.*}}, %[[ALPHA]]
func.func @lazy_step(%s: tensor<64x32xf32>, %m: tensor<64xf32>, %l: tensor<64xf32>)
    -> (tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l {lazy} : tensor<64x32xf32>, tensor<64xf32>
  return %p, %m2, %l2, %a : tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// The accumulator's rescale marked tile.skip_unit_factor: each thread compares its distinct alpha
// values (one per row it holds: 8 of the 32 registers of a one-warp [16, 64] tile here) with 1 and
// multiplies only when one differs (NaN included); otherwise the registers pass through unchanged.
// LOWERED-LABEL: gpu.func @skip_rescale
// LOWERED: scf.for
// LOWERED: arith.cmpf une, %{{.*}}, %[[ONE:.*]] : f32
// LOWERED-NEXT: arith.cmpf une, %{{.*}}, %[[ONE]] : f32
// LOWERED-NEXT: arith.ori
// LOWERED-COUNT-6: arith.cmpf une, %{{.*}}, %[[ONE]] : f32
// LOWERED-NOT: arith.cmpf une
// LOWERED: %[[ANY:.*]] = arith.ori
// LOWERED-NEXT: %{{.*}}:32 = scf.if %[[ANY]] -> (f32{{(, f32){31}[)]}} {
// LOWERED-COUNT-32: arith.mulf
// LOWERED-NEXT: scf.yield
// LOWERED-NEXT: } else {
// LOWERED-NOT: arith.mulf
// LOWERED: scf.yield
// LOWERED: gpu.return
func.func @skip_rescale(%sp: !tile.ptr<f32>, %op: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %c64 = arith.constant 64 : i32
  %sv = tile.make_view %sp, [%n, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %op, [%c16, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %nb = arith.divui %n, %c16 : i32
  %r:3 = scf.for %i = %c0 to %nb step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %row = arith.muli %i, %c16 : i32
    %s = tile.load %sv[%row, %c0] : !tile.view<f32, 2> -> tensor<16x64xf32>
    %p, %m2, %l2, %a = tile.online_softmax %s, %m, %l {lazy} : tensor<16x64xf32>, tensor<16xf32>
    %ac = tile.expand_dims %a {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %ab = tile.broadcast %ac : tensor<16x1xf32> -> tensor<16x64xf32>
    %scaled = arith.mulf %acc, %ab {tile.skip_unit_factor} : tensor<16x64xf32>
    %next = arith.addf %scaled, %p : tensor<16x64xf32>
    scf.yield %m2, %l2, %next : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  tile.store %r#2, %ov[%c0, %c0] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Two ops in one function, each decomposed on its own shapes ([8, 128] and [32, 16]); results that are
// unused are replaced all the same (the pass does not delete code).
// CHECK-LABEL: func.func @two_ops
// CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<8x128xf32> -> tensor<8xf32>
// CHECK: tile.broadcast %{{.*}} : tensor<8x1xf32> -> tensor<8x128xf32>
// CHECK: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<8x128xf32> -> tensor<8xf32>
// CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<32x16xf32> -> tensor<32xf32>
// CHECK: tile.broadcast %{{.*}} : tensor<32x1xf32> -> tensor<32x16xf32>
// CHECK: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<32x16xf32> -> tensor<32xf32>
// CHECK-NOT: tile.online_softmax
// CHECK: return
func.func @two_ops(%s1: tensor<8x128xf32>, %m1: tensor<8xf32>, %l1: tensor<8xf32>,
                   %s2: tensor<32x16xf32>, %m2: tensor<32xf32>, %l2: tensor<32xf32>) {
  %p1, %n1, %k1, %a1 = tile.online_softmax %s1, %m1, %l1 : tensor<8x128xf32>, tensor<8xf32>
  %p2, %n2, %k2, %a2 = tile.online_softmax %s2, %m2, %l2 : tensor<32x16xf32>, tensor<32xf32>
  return
}

// -----

// Code without the op is left exactly as it was.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT: return
func.func @untouched(%s: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = tile.reduce max %s {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}
