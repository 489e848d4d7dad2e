// attn-defer-rescale: in a kernel whose configuration has defer_rescale, an overlapped loop's rescale
// of the accumulator (acc' = P_prev V_prev + acc, then softmax, then yield acc' * alpha) moves into
// the next step, right before its P V product: the loop carries alpha (1 before the first step, the
// previous loop's last factor where a loop continues its accumulator), and the last factor is applied
// where the accumulator leaves the loops, once, before the first op that reads it.
// RUN: flare-opt %s -split-input-file --attn-defer-rescale | FileCheck %s
// RUN: flare-opt %s -split-input-file --attn-defer-rescale="all=true" | FileCheck %s --check-prefix=ALL
// The generated kernel with the extra last step (last-pv-after-loops=0): the factor that step carries
// (1, by its select) is applied after the loops.
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="defer-rescale=1 last-pv-after-loops=0" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --canonicalize --cse | FileCheck %s --check-prefix=GEN
// Not configured: nothing moves.
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="defer-rescale=0" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --canonicalize --cse | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @two_loops(
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<16xf32>
// CHECK: %[[A:.*]]:4 = scf.for {{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}, %[[AP:.*]] = %[[ONE]]) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16xf32>)
// CHECK: %[[E:.*]] = tile.expand_dims %[[AP]] {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[E]] : tensor<16x1xf32> -> tensor<16x64xf32>
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[ACC]], %[[B]] : tensor<16x64xf32>
// CHECK-NEXT: %[[PV:.*]] = tile.dot %{{.*}}, %{{.*}}, %[[R]]
// CHECK: %{{.*}}, %[[M2:.*]], %[[L2:.*]], %[[ALPHA:.*]] = tile.online_softmax
// CHECK-NOT: arith.mulf
// CHECK: scf.yield %[[M2]], %[[L2]], %[[PV]], %[[ALPHA]]
// The second loop continues the first's accumulator and its factor.
// CHECK: %[[B2:.*]]:4 = scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[A]]#2, %{{.*}} = %[[A]]#3)
// CHECK: scf.yield
// After the loops: the last factor, then the P V that reads the accumulator.
// CHECK: %[[XE:.*]] = tile.expand_dims %[[B2]]#3 {axis = 1 : i32}
// CHECK-NEXT: %[[XB:.*]] = tile.broadcast %[[XE]]
// CHECK-NEXT: %[[X:.*]] = arith.mulf %[[B2]]#2, %[[XB]] : tensor<16x64xf32>
// CHECK-NEXT: tile.dot %{{.*}}, %{{.*}}, %[[X]]
// CHECK-NOT: arith.mulf %[[B2]]#2
// CHECK: return
func.func @two_loops(%p0: tensor<16x32xbf16>, %v: tensor<32x64xbf16>, %s: tensor<16x32xf32>, %n: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, defer_rescale, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %a:3 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %pv = tile.dot %p0, %v, %acc : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %pv, %bc : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %r : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %b:3 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %a#0, %l = %a#1, %acc = %a#2)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %pv = tile.dot %p0, %v, %acc : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %pv, %bc : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %r : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %last = tile.dot %p0, %v, %b#2 : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
  return %last : tensor<16x64xf32>
}

// -----

// Not an overlapped step (the loop rescales before its P V, which is what it yields), and a function
// without a configuration (unless all=true): unchanged.
// CHECK-LABEL: func.func @not_overlapped(
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>)
// CHECK-LABEL: func.func @unconfigured(
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>)
// ALL-LABEL: func.func @unconfigured(
// ALL: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16xf32>)
func.func @not_overlapped(%p0: tensor<16x32xbf16>, %v: tensor<32x64xbf16>, %s: tensor<16x32xf32>, %n: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, defer_rescale, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %a:3 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %pv = tile.dot %p0, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}
func.func @unconfigured(%p0: tensor<16x32xbf16>, %v: tensor<32x64xbf16>, %s: tensor<16x32xf32>, %n: i32)
    -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %a:3 = scf.for %j = %c0 to %n step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %pv = tile.dot %p0, %v, %acc : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %pv, %bc : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %r : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}

// The generated kernel: the extra last step's factor (1 by its select) applied after the loops, before
// the epilogue's normalization.
// GEN-LABEL: func.func @causal(
// GEN: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>, tensor<128xf32>)
// GEN: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>, tensor<128xf32>)
// GEN: %[[KEEP:.*]] = tile.splat %{{.*}} : i1 -> tensor<128xi1>
// GEN-NEXT: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : tensor<128xi1>, tensor<128xf32>
// GEN: scf.yield
// GEN-NEXT: }
// GEN: %[[E:.*]] = tile.expand_dims %[[LOOP:[0-9]+]]#4
// GEN-NEXT: %[[B:.*]] = tile.broadcast %[[E]]
// GEN-NEXT: %[[X:.*]] = arith.mulf %[[LOOP]]#2, %[[B]] : tensor<128x128xf32>
// GEN-NEXT: arith.mulf %[[X]], %{{.*}} : tensor<128x128xf32>
// OFF-LABEL: func.func @causal(
// OFF: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>)
// OFF-NOT: tensor<128x128xbf16>, tensor<128xf32>)
