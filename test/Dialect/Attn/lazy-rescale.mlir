// attn-lazy-rescale: in a kernel whose configuration has lazy_rescale, every tile.online_softmax
// becomes lazy (its reference max moves only by more than 8, so alpha is exactly 1 on almost every
// step) and every multiply of a tile by a row-broadcast of an alpha skips the factors of exactly 1
// (tile.skip_unit_factor), alpha followed through selects and the loops that carry it.
// RUN: flare-opt %s -split-input-file --attn-lazy-rescale | FileCheck %s
// all=true: every function, configured or not.
// RUN: flare-opt %s -split-input-file --attn-lazy-rescale="all=true" | FileCheck %s --check-prefix=ALL
// The generated kernel: the same marks where the configuration asks for them, none where it does not.
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="lazy-rescale=1 last-pv-after-loops=0" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale | FileCheck %s --check-prefix=GEN
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="lazy-rescale=1 defer-rescale=1" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale | FileCheck %s --check-prefix=GEN-DEFER
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="lazy-rescale=0" --convert-attn-to-tile --attn-overlap --attn-defer-rescale --attn-lazy-rescale | FileCheck %s --check-prefix=GEN-EAGER

// The rescale of the accumulator by alpha; the normalization by 1 / l after the loop is not a rescale.
// CHECK-LABEL: func.func @lazy(
// CHECK: tile.online_softmax {{.*}} {lazy}
// CHECK: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<16x64xf32>
// CHECK: scf.yield
// CHECK: arith.mulf
// CHECK-NOT: tile.skip_unit_factor
// CHECK: return
func.func @lazy(%sp: !tile.ptr<f32>, %op: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32,
                flare.attention_config = #attn.config<block_m = 16, block_n = 64, warps = 4, lazy_rescale, pair_instances>} {
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
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %inv = arith.divf %one, %res#1 : tensor<16xf32>
  %inv1 = tile.expand_dims %inv {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %inv_b = tile.broadcast %inv1 : tensor<16x1xf32> -> tensor<16x64xf32>
  %o = arith.mulf %res#2, %inv_b : tensor<16x64xf32>
  tile.store %o, %ov[%c0, %c0] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// The deferred form: a step applies the previous step's alpha (carried by the loop, through a select
// that keeps 1 on an extra step) and the last one is applied after the loop; both multiplies skip.
// CHECK-LABEL: func.func @deferred(
// CHECK: scf.for
// CHECK: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<16x64xf32>
// CHECK: tile.online_softmax {{.*}} {lazy}
// CHECK: scf.yield
// CHECK: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<16x64xf32>
// CHECK: return
func.func @deferred(%sp: !tile.ptr<f32>, %op: !tile.ptr<f32>, %n: i32, %last: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32,
                flare.attention_config = #attn.config<block_m = 16, block_n = 64, warps = 4, lazy_rescale, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %sv = tile.make_view %sp, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %op, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %a0 = arith.constant dense<1.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %res:4 = scf.for %j = %c0 to %n step %c64 iter_args(%m = %m0, %l = %l0, %acc = %acc0, %a = %a0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16xf32>) : i32 {
    %a1 = tile.expand_dims %a {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %a_b = tile.broadcast %a1 : tensor<16x1xf32> -> tensor<16x64xf32>
    %acc_scaled = arith.mulf %acc, %a_b : tensor<16x64xf32>
    %s = tile.load %sv[%c0, %j] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<16x64xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
    %valid = arith.cmpi slt, %j, %last : i32
    %keep = tile.splat %valid : i1 -> tensor<16xi1>
    %alpha_kept = arith.select %keep, %alpha, %a0 : tensor<16xi1>, tensor<16xf32>
    %acc_new = arith.addf %acc_scaled, %p : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %acc_new, %alpha_kept : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16xf32>
  }
  %a1 = tile.expand_dims %res#3 {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %a_b = tile.broadcast %a1 : tensor<16x1xf32> -> tensor<16x64xf32>
  %o = arith.mulf %res#2, %a_b : tensor<16x64xf32>
  tile.store %o, %ov[%c0, %c0] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Not asked for: a configuration without lazy_rescale, and a function without one (unless all=true).
// CHECK-LABEL: func.func @eager(
// CHECK-NOT: lazy
// CHECK-NOT: tile.skip_unit_factor
// CHECK: return
// ALL-LABEL: func.func @eager(
// ALL: tile.online_softmax {{.*}} {lazy}
// ALL: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor}
func.func @eager(%s: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 64, warps = 4, pair_instances>} {
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
  %alpha1 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %alpha_b = tile.broadcast %alpha1 : tensor<16x1xf32> -> tensor<16x64xf32>
  %r = arith.mulf %acc, %alpha_b : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
// CHECK-LABEL: func.func @unconfigured(
// CHECK-NOT: lazy
// CHECK-NOT: tile.skip_unit_factor
// CHECK: return
// ALL-LABEL: func.func @unconfigured(
// ALL: tile.online_softmax {{.*}} {lazy}
// ALL: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor}
func.func @unconfigured(%s: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x64xf32>)
    -> tensor<16x64xf32> {
  %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x64xf32>, tensor<16xf32>
  %alpha1 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %alpha_b = tile.broadcast %alpha1 : tensor<16x1xf32> -> tensor<16x64xf32>
  %r = arith.mulf %acc, %alpha_b : tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// The generated kernel, overlapped (P V of the previous block first): both loops' steps are lazy and
// their rescales skip; the epilogue's 1 / l does not.
// GEN-LABEL: func.func @plain(
// GEN-SAME: lazy_rescale
// GEN: scf.for
// GEN: tile.online_softmax {{.*}} {lazy}
// GEN: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<128x128xf32>
// GEN: scf.yield
// GEN: scf.for
// GEN: tile.online_softmax {{.*}} {lazy}
// GEN: arith.mulf %{{.*}}, %{{.*}} {tile.skip_unit_factor} : tensor<128x128xf32>
// GEN: scf.yield
// GEN-NOT: tile.skip_unit_factor
// GEN: return
// Deferred, with the last P V after the loops: the carried alpha's rescale in each loop and after them.
// GEN-DEFER-LABEL: func.func @plain(
// GEN-DEFER-COUNT-3: {tile.skip_unit_factor}
// GEN-DEFER-NOT: {tile.skip_unit_factor}
// GEN-EAGER-LABEL: func.func @plain(
// GEN-EAGER-NOT: lazy
// GEN-EAGER-NOT: tile.skip_unit_factor
