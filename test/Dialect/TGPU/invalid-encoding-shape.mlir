// A #tgpu.linear encoding describes the tensor it is attached to, so its shape must be the tensor's.
// The attribute verifies itself as a tensor encoding, so the check applies to every tensor type that
// carries one (function signatures, arith ops, tile ops), not only to tgpu.convert_layout. (Regression
// test: only tgpu.convert_layout used to compare the shapes, and a later pass then read the registers of
// a 4-element layout for an 8-element tile.)
//
// RUN: flare-opt %s -split-input-file -verify-diagnostics

// A 4-element layout on an 8-element tile, in a signature.
// expected-error @+1 {{#tgpu.linear layout of shape [4] on a tensor of shape [8]}}
func.func private @bigger_tile(tensor<8xf32, #tgpu.linear<shape = [4], reg = [], lane = [[1], [2], [0], [0], [0]], warp = []>>)

// -----

// Same element count (32), other rank.
// expected-error @+1 {{#tgpu.linear layout of shape [32] on a tensor of shape [4, 8]}}
func.func private @other_rank(tensor<4x8xf32, #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>>)

// -----

// On the result of an elementwise op inside a body.
#l4 = #tgpu.linear<shape = [4], reg = [], lane = [[1], [2], [0], [0], [0]], warp = []>
func.func @in_body(%x: f32) {
  // expected-error @+1 {{#tgpu.linear layout of shape [4] on a tensor of shape [2]}}
  %c = arith.constant dense<1.0> : tensor<2xf32, #l4>
  return
}

// -----

// On a tile op's result type.
#l8 = #tgpu.linear<shape = [8], reg = [], lane = [[1], [2], [4], [0], [0]], warp = []>
func.func @on_tile_op() {
  // expected-error @+1 {{#tgpu.linear layout of shape [8] on a tensor of shape [16]}}
  %r = tile.range 0, 16 : tensor<16xi32, #l8>
  return
}
