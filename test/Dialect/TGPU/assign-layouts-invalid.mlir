// Tiles tgpu-assign-layouts cannot lay out: sizes that are not powers of two (a linear layout maps bits
// to coordinates, so every dimension must be 2^k) and ops it does not know on tiles.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts -verify-diagnostics

// 100 elements: not a power of two.
func.func @load_100(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  // expected-error @+1 {{'tile.load' op tile shape 'tensor<100xf32>' must have power-of-two sizes}}
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<100xf32>
  return
}

// -----

func.func @range_12() attributes {tile.kernel} {
  // expected-error @+1 {{'tile.range' op tile shape 'tensor<12xi32>' must have power-of-two sizes}}
  %r = tile.range 0, 12 : tensor<12xi32>
  return
}

// -----

// One bad dimension is enough (3 x 4).
func.func @splat_3x4(%x: f32) attributes {tile.kernel} {
  // expected-error @+1 {{'tile.splat' op tile shape 'tensor<3x4xf32>' must have power-of-two sizes}}
  %s = tile.splat %x : f32 -> tensor<3x4xf32>
  return
}

// -----

// A broadcast result gets a blocked layout of its own, so it is checked too: 1x1 -> 1x24.
func.func @broadcast_24(%x: f32) attributes {tile.kernel} {
  %s = tile.splat %x : f32 -> tensor<1xf32>
  %e = tile.expand_dims %s {axis = 1 : i32} : tensor<1xf32> -> tensor<1x1xf32>
  // expected-error @+1 {{'tile.broadcast' op tile shape 'tensor<1x24xf32>' must have power-of-two sizes}}
  %b = tile.broadcast %e : tensor<1x1xf32> -> tensor<1x24xf32>
  return
}

// -----

// Only tile, arith and math ops (and scf.for/scf.if) may produce tiles.
func.func @poison_tile() attributes {tile.kernel} {
  // expected-error @+1 {{'ub.poison' op is not supported on tiles in a tile kernel}}
  %p = ub.poison : tensor<4xf32>
  return
}

// -----

// tile.online_softmax has no layout rule of its own: tile-decompose-online-softmax must run first (the
// pipeline runs it just before this pass).
func.func @online_softmax_not_decomposed(%s: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %sv = tile.make_view %s, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %sv[%c0, %c0] : !tile.view<f32, 2> -> tensor<16x64xf32>
  %m = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l = arith.constant dense<0.0> : tensor<16xf32>
  // expected-error @+1 {{'tile.online_softmax' op is not supported on tiles in a tile kernel}}
  %p, %m2, %l2, %a = tile.online_softmax %x, %m, %l : tensor<16x64xf32>, tensor<16xf32>
  tile.store %p, %sv[%c0, %c0] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// scf.while is not a supported loop in a kernel (its scf.yield has an unexpected parent).
func.func @while_loop(%n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %c = arith.cmpi slt, %i, %n : i32
    scf.condition(%c) %i : i32
  } do {
  ^bb0(%i: i32):
    %c1 = arith.constant 1 : i32
    %j = arith.addi %i, %c1 : i32
    // expected-error @+1 {{'scf.yield' op unexpected parent in a tile kernel}}
    scf.yield %j : i32
  }
  return
}

// -----

// The same ops outside a tile kernel are not the pass's business.
func.func @not_a_kernel(%x: f32) -> tensor<3xf32> {
  %p = ub.poison : tensor<3xf32>
  return %p : tensor<3xf32>
}
