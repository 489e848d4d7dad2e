// attn-partial-row-sums: in a kernel whose configuration has partial_row_sums = G, the normalizer of
// each tile.online_softmax becomes G partial sums per row ([M] -> [M, G]) from its zero start through
// the loops that carry it and the selects that choose it whole, and one tile.reduce adds the partials
// up right before the first op that reads the whole sum.
// RUN: flare-opt %s -split-input-file --attn-partial-row-sums | FileCheck %s
// groups=N: every function, configured or not.
// RUN: flare-opt %s -split-input-file --attn-partial-row-sums="groups=2" | FileCheck %s --check-prefix=TWO
// RUN: not flare-opt %s -split-input-file --attn-partial-row-sums="groups=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GROUPS
// (Its errors: partial-row-sums-errors.mlir.)
// The generated kernel (the lowering of the partial form: test/Dialect/Tile/online-softmax.mlir).
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="partial-row-sums=4 last-pv-after-loops=1" --convert-attn-to-tile --attn-overlap --attn-partial-row-sums --canonicalize --cse | FileCheck %s --check-prefix=GEN
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="block-n=64 partial-row-sums=4 last-pv-after-loops=0" --convert-attn-to-tile --attn-overlap --attn-partial-row-sums --canonicalize --cse | FileCheck %s --check-prefix=GEN-EXTRA
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="partial-row-sums=0" --convert-attn-to-tile --attn-overlap --attn-partial-row-sums | FileCheck %s --check-prefix=GEN-OFF

// GROUPS: attn-partial-row-sums: groups=3 is not a power of two

// Two loops, the second starting from the first's state; inside, a select by one condition keeps the
// sum of an extra step. After the loops the sum is read per row (a select by l == 0, a divide): one
// reduce, before the first of them; the unrelated zero constant stays [16].
// CHECK-LABEL: func.func @two_loops(
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<16x4xf32>
// CHECK: %[[A:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %[[L:.*]] = %[[Z]], {{.*}}) -> (tensor<16xf32>, tensor<16x4xf32>, tensor<16x64xf32>)
// CHECK: tile.online_softmax %{{.*}}, %{{.*}}, %[[L]] : tensor<16x64xf32>, tensor<16xf32>, tensor<16x4xf32>
// CHECK: %[[B:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %[[L2:.*]] = %[[A]]#1, {{.*}}) -> (tensor<16xf32>, tensor<16x4xf32>, tensor<16x64xf32>)
// CHECK: %[[P:.*]], %{{.*}}, %[[NEW:.*]], %{{.*}} = tile.online_softmax %{{.*}}, %{{.*}}, %[[L2]] : tensor<16x64xf32>, tensor<16xf32>, tensor<16x4xf32>
// CHECK: %[[KEEP:.*]] = tile.splat %{{.*}} : i1 -> tensor<16x4xi1>
// CHECK: %[[KEPT:.*]] = arith.select %[[KEEP]], %[[NEW]], %[[L2]] : tensor<16x4xi1>, tensor<16x4xf32>
// CHECK: scf.yield %{{.*}}, %[[KEPT]], %{{.*}} : tensor<16xf32>, tensor<16x4xf32>, tensor<16x64xf32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<16xf32>
// CHECK: %[[SUM:.*]] = tile.reduce sum %[[B]]#1 {axis = 1 : i32} : tensor<16x4xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[NONE:.*]] = arith.cmpf oeq, %[[SUM]], %[[ZERO]] : tensor<16xf32>
// CHECK: arith.select %[[NONE]], %{{.*}}, %[[SUM]] : tensor<16xi1>, tensor<16xf32>
// CHECK-NOT: tile.reduce
// CHECK: return
// TWO-LABEL: func.func @two_loops(
// TWO: tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xf32>, tensor<16x2xf32>
// TWO: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<16x2xf32> -> tensor<16xf32>
func.func @two_loops(%sp: !tile.ptr<f32>, %op: !tile.ptr<f32>, %n: i32, %last: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32,
                flare.attention_config = #attn.config<block_m = 16, block_n = 64, warps = 4, partial_row_sums = 4, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %sv = tile.make_view %sp, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %op, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %a:3 = scf.for %j = %c0 to %n step %c64
      iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %s = tile.load %sv[%c0, %j] : !tile.view<f32, 2> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
    %acc_new = arith.addf %acc, %p : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %b:3 = scf.for %j = %c0 to %n step %c64
      iter_args(%m = %a#0, %l = %a#1, %acc = %a#2) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %s = tile.load %sv[%c0, %j] : !tile.view<f32, 2> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
    %valid = arith.cmpi slt, %j, %last : i32
    %keep = tile.splat %valid : i1 -> tensor<16xi1>
    %l_kept = arith.select %keep, %l_new, %l : tensor<16xi1>, tensor<16xf32>
    %acc_new = arith.addf %acc, %p : tensor<16x64xf32>
    scf.yield %m_new, %l_kept, %acc_new : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %none = arith.cmpf oeq, %b#1, %zero : tensor<16xf32>
  %safe = arith.select %none, %one, %b#1 : tensor<16xi1>, tensor<16xf32>
  %inv = arith.divf %one, %safe : tensor<16xf32>
  %inv1 = tile.expand_dims %inv {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %inv_b = tile.broadcast %inv1 : tensor<16x1xf32> -> tensor<16x64xf32>
  %o = arith.mulf %b#2, %inv_b : tensor<16x64xf32>
  tile.store %o, %ov[%c0, %c0] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Not asked for (partial_row_sums = 0) or no configuration: unchanged without groups=N.
// CHECK-LABEL: func.func @one_sum(
// CHECK-NOT: tile.reduce
// CHECK: tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xf32>{{$}}
// TWO-LABEL: func.func @one_sum(
// TWO: tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16xf32>, tensor<16x2xf32>
// TWO-NEXT: tile.reduce sum
func.func @one_sum(%s: tensor<16x64xf32>, %m: tensor<16xf32>) -> tensor<16xf32>
    attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 64, warps = 4, pair_instances>} {
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l0 : tensor<16x64xf32>, tensor<16xf32>
  return %l_new : tensor<16xf32>
}
// CHECK-LABEL: func.func @unconfigured(
// CHECK-NOT: tile.reduce
// CHECK: return
func.func @unconfigured(%s: tensor<16x64xf32>, %m: tensor<16xf32>) -> tensor<16xf32> {
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l0 : tensor<16x64xf32>, tensor<16xf32>
  return %l_new : tensor<16xf32>
}

// The generated kernel: the loops carry [128, 4]; the sum is taken after the last P V (after the
// loops), right before the epilogue reads it.
// GEN-LABEL: func.func @causal(
// GEN: scf.for {{.*}} -> (tensor<128xf32>, tensor<128x4xf32>, tensor<128x128xf32>, tensor<128x128xbf16>)
// GEN: scf.for {{.*}} -> (tensor<128xf32>, tensor<128x4xf32>, tensor<128x128xf32>, tensor<128x128xbf16>)
// GEN: scf.yield
// GEN-NEXT: }
// GEN-NEXT: tile.dot
// GEN-NEXT: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<128x4xf32> -> tensor<128xf32>
// GEN-NOT: tile.reduce
// GEN: return
// GEN-OFF-LABEL: func.func @plain(
// GEN-OFF-NOT: x4xf32>
// GEN-OFF-NOT: tile.reduce
// GEN-OFF: return
// Overlapped with an extra last step (last-pv-after-loops=0): that step keeps the partial sums under a
// splat of their own shape; the epilogue sums them once.
// GEN-EXTRA-LABEL: func.func @causal(
// GEN-EXTRA: scf.for {{.*}} -> (tensor<128xf32>, tensor<128x4xf32>, tensor<128x128xf32>, tensor<128x64xbf16>)
// GEN-EXTRA: tile.online_softmax {{.*}} : tensor<128x64xf32>, tensor<128xf32>, tensor<128x4xf32>
// GEN-EXTRA: %[[VALID:.*]] = arith.cmpi slt
// GEN-EXTRA: tile.online_softmax {{.*}} : tensor<128x64xf32>, tensor<128xf32>, tensor<128x4xf32>
// GEN-EXTRA: %[[KEEP:.*]] = tile.splat %[[VALID]] : i1 -> tensor<128x4xi1>
// GEN-EXTRA-NEXT: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : tensor<128x4xi1>, tensor<128x4xf32>
// GEN-EXTRA: tile.reduce sum %{{.*}} {axis = 1 : i32} : tensor<128x4xf32> -> tensor<128xf32>
// GEN-EXTRA-NOT: tile.reduce
// GEN-EXTRA: return
