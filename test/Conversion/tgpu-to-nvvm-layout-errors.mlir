// convert-tgpu-to-nvvm on its own, with layouts written by hand: tiles without a layout and layouts the
// lowering cannot handle are diagnosed.
// RUN: flare-opt %s -split-input-file --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory -verify-diagnostics

// tgpu-assign-layouts has not run: the first tile without a #tgpu.linear encoding is reported.
func.func @no_layout(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  // expected-error @+1 {{'tile.load' op has a tile without a #tgpu.linear layout; run tgpu-assign-layouts first}}
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<64xf32>
  return
}

// -----

// Only splat constants become registers (every register holds the same value).
#L = #tgpu.linear<shape = [4], reg = [[1], [2]], lane = [[0], [0], [0], [0], [0]], warp = [[0], [0]]>
func.func @non_splat_constant() attributes {tile.kernel} {
  // expected-error @+1 {{'arith.constant' op only splat constants are supported on tiles}}
  %c = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32, #L>
  return
}

// -----

// On 2x32, lane bit 0 of #S moves (1, 1): along the reduced axis 1 and along rows at once, so a row
// reduction cannot combine lanes by shuffles alone.
#B = #tgpu.linear<shape = [2, 32], reg = [[0, 1]], lane = [[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]], warp = [[0, 0], [0, 0]]>
#S = #tgpu.linear<shape = [2, 32], reg = [[0, 1]], lane = [[1, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = [[0, 0], [0, 0]]>
#R = #tgpu.linear<shape = [2], reg = [], lane = [[1], [0], [0], [0], [0]], warp = [[0], [0]]>
func.func @mixed_axis(%x: f32) attributes {tile.kernel} {
  %s = tile.splat %x : f32 -> tensor<2x32xf32, #B>
  %c = tgpu.convert_layout %s : tensor<2x32xf32, #B> -> tensor<2x32xf32, #S>
  // expected-error @+1 {{'tile.reduce' op source layout mixes the reduced axis with other dimensions}}
  %r = tile.reduce sum %c {axis = 1 : i32} : tensor<2x32xf32, #S> -> tensor<2xf32, #R>
  return
}
