// What convert-tgpu-to-nvvm rejects after tgpu-assign-layouts: each case is a diagnostic on the op, not
// a crash or bad IR. (Every result is stored: tgpu-assign-layouts drops unused ops.)
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory -verify-diagnostics

// Reductions combine 32-bit values (shuffles and shared-memory words): f16 must be extended first.
func.func @reduce_f16(%p: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f16> -> !tile.view<f16, 1>
  %t = tile.load %v[%n] : !tile.view<f16, 1> -> tensor<64xf16>
  // expected-error @+1 {{'tile.reduce' op reductions of 'f16' are not supported yet; extend to 32 bits first}}
  %s = tile.reduce sum %t {axis = 0 : i32} : tensor<64xf16> -> f16
  %b = tile.splat %s : f16 -> tensor<64xf16>
  tile.store %b, %v[%n] : tensor<64xf16>, !tile.view<f16, 1>
  return
}

// -----

// Nor i1 (an "any" over a predicate tile).
func.func @reduce_i1(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %r = tile.range 0, 32 : tensor<32xi32>
  %s = tile.splat %n : i32 -> tensor<32xi32>
  %b = arith.cmpi slt, %r, %s : tensor<32xi32>
  // expected-error @+1 {{'tile.reduce' op reductions of 'i1' are not supported yet; extend to 32 bits first}}
  %x = tile.reduce max %b {axis = 0 : i32} : tensor<32xi1> -> i1
  %w = arith.extui %x : i1 to i32
  %t = tile.splat %w : i32 -> tensor<32xi32>
  tile.store %t, %v[%n] : tensor<32xi32>, !tile.view<i32, 1>
  return
}

// -----

// A scalar op of a dialect the lowering does not know.
func.func @poison(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  // expected-error @+1 {{'ub.poison' op cannot be lowered to NVVM by convert-tgpu-to-nvvm}}
  %u = ub.poison : i32
  %t = tile.splat %u : i32 -> tensor<32xi32>
  tile.store %t, %v[%n] : tensor<32xi32>, !tile.view<i32, 1>
  return
}

// -----

// math ops other than the float unary ones with an NVVM/LLVM lowering: integer abs...
func.func @absi(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %t = tile.load %v[%n] : !tile.view<i32, 1> -> tensor<32xi32>
  // expected-error @+1 {{'math.absi' op is not supported in tile kernels yet}}
  %a = math.absi %t : tensor<32xi32>
  tile.store %a, %v[%n] : tensor<32xi32>, !tile.view<i32, 1>
  return
}

// -----

// ...a ternary op...
func.func @fma(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<32xf32>
  // expected-error @+1 {{'math.fma' op is not supported in tile kernels yet}}
  %a = math.fma %t, %t, %t : tensor<32xf32>
  tile.store %a, %v[%n] : tensor<32xf32>, !tile.view<f32, 1>
  return
}

// -----

// ...and a unary one without an approximate instruction.
func.func @sin(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<32xf32>
  // expected-error @+1 {{'math.sin' op is not supported in tile kernels yet}}
  %a = math.sin %t : tensor<32xf32>
  tile.store %a, %v[%n] : tensor<32xf32>, !tile.view<f32, 1>
  return
}
