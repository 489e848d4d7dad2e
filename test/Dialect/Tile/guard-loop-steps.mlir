// tile-guard-loop-steps: a loop whose step is a run-time value runs no iteration when that step is
// not positive (ub' = step > 0 ? ub : lb), instead of never ending; constant steps are left alone.
// RUN: flare-opt %s -split-input-file --tile-guard-loop-steps | FileCheck %s

// CHECK-LABEL: func.func @runtime_step
// CHECK-SAME: (%[[X:.*]]: !tile.ptr<f32>, %[[N:.*]]: i32, %[[S:.*]]: i32)
// CHECK-DAG: %[[LB:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[POS:.*]] = arith.cmpi sgt, %[[S]], %[[ZERO]] : i32
// CHECK: %[[UB:.*]] = arith.select %[[POS]], %[[N]], %[[LB]] : i32
// CHECK: scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[S]]
func.func @runtime_step(%x: !tile.ptr<f32>, %n: i32, %s: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %xv = tile.make_view %x, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %init = arith.constant dense<0.0> : tensor<128xf32>
  %r = scf.for %i = %c0 to %n step %s iter_args(%acc = %init) -> (tensor<128xf32>) : i32 {
    %a = tile.load %xv[%i] : !tile.view<f32, 1> -> tensor<128xf32>
    %b = arith.addf %acc, %a : tensor<128xf32>
    scf.yield %b : tensor<128xf32>
  }
  tile.store %r, %xv[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// A constant step: nothing to guard.
// CHECK-LABEL: func.func @constant_step
// CHECK-NOT: arith.select
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i32
func.func @constant_step(%n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  scf.for %i = %c0 to %n step %c64 : i32 {
  }
  return
}

// -----

// Functions that are not tile kernels are not touched.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: arith.select
func.func @not_a_kernel(%n: i32, %s: i32) {
  %c0 = arith.constant 0 : i32
  scf.for %i = %c0 to %n step %s : i32 {
  }
  return
}
