// Invalid #tgpu.linear layouts and tgpu.convert_layout ops.
// RUN: flare-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #tgpu.linear
//===----------------------------------------------------------------------===//

// Tile sizes are powers of two: 6 is not.
// expected-error @+1 {{invalid linear layout: dimension size 6 is not a power of two}}
func.func private @shape_not_pow2(tensor<6xf32, #tgpu.linear<shape = [6], reg = [[1], [2]], lane = [[0], [0], [0], [0], [0]], warp = []>>)

// -----

// Nor is 0.
// expected-error @+1 {{invalid linear layout: dimension size 0 is not a power of two}}
func.func private @shape_zero(tensor<0xf32, #tgpu.linear<shape = [0], reg = [], lane = [[0], [0], [0], [0], [0]], warp = []>>)

// -----

// An 8-element tile has 3 coordinate bits; the bases {1, 1, 2} (reg, reg, lane 0) span only bits 0 and 1,
// so elements 4..7 are held by no thread.
// expected-error @+1 {{invalid linear layout: the layout does not cover every element of the tile}}
func.func private @not_covered(tensor<8xf32, #tgpu.linear<shape = [8], reg = [[1], [1]], lane = [[2], [0], [0], [0], [0]], warp = []>>)

// -----

// On 4x8, every basis moving only along the columns leaves the rows uncovered (2 of 5 bits missing).
// expected-error @+1 {{the layout does not cover every element of the tile}}
func.func private @rows_not_covered(tensor<4x8xf32, #tgpu.linear<shape = [4, 8], reg = [[0, 1]], lane = [[0, 2], [0, 4], [0, 0], [0, 0], [0, 0]], warp = [[0, 1]]>>)

// -----

// A warp has 32 lanes: exactly 5 lane bases, not 4...
// expected-error @+1 {{invalid linear layout: a layout needs exactly 5 lane bases (32 lanes)}}
func.func private @four_lane_bases(tensor<8xf32, #tgpu.linear<shape = [8], reg = [[1], [2], [4]], lane = [[0], [0], [0], [0]], warp = []>>)

// -----

// ...and not 6.
// expected-error @+1 {{invalid linear layout: a layout needs exactly 5 lane bases (32 lanes)}}
func.func private @six_lane_bases(tensor<8xf32, #tgpu.linear<shape = [8], reg = [[1], [2], [4]], lane = [[0], [0], [0], [0], [0], [0]], warp = []>>)

// -----

// Every basis vector has one entry per dimension: a rank-2 layout with a 1-entry register basis (the
// parser checks each inner list; see also invalid-basis-grouping.mlir).
// expected-error @+1 {{each reg basis vector needs 2 entries, one per dimension}}
func.func private @basis_rank(tensor<8x8xf32, #tgpu.linear<shape = [8, 8], reg = [[1]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = []>>)

// -----

// A scalar layout has no room for a basis entry.
// expected-error @+1 {{a rank-0 (scalar) layout takes no reg basis vectors}}
func.func private @scalar_basis(tensor<f32, #tgpu.linear<shape = [], reg = [[1]], lane = [], warp = []>>)

// -----

// A basis entry moves one coordinate bit: 3 = 0b11 is two bits.
// expected-error @+1 {{invalid linear layout: basis component 3 is not a power of two inside dimension 0}}
func.func private @basis_not_pow2(tensor<8xf32, #tgpu.linear<shape = [8], reg = [[3], [2], [4]], lane = [[0], [0], [0], [0], [0]], warp = []>>)

// -----

// 8 is a power of two but outside a dimension of size 8 (coordinates 0..7).
// expected-error @+1 {{invalid linear layout: basis component 8 is not a power of two inside dimension 0}}
func.func private @basis_outside(tensor<8xf32, #tgpu.linear<shape = [8], reg = [[1], [2], [8]], lane = [[0], [0], [0], [0], [0]], warp = []>>)

// -----

// expected-error @+1 {{basis component -1 is not a power of two inside dimension 0}}
func.func private @basis_negative(tensor<8xf32, #tgpu.linear<shape = [8], reg = [[-1], [2], [4]], lane = [[0], [0], [0], [0], [0]], warp = []>>)

// -----

// The keywords come in order: shape, reg, lane, warp.
// expected-error @+1 {{expected 'reg'}}
func.func private @missing_reg(tensor<8xf32, #tgpu.linear<shape = [8], lane = [[0], [0], [0], [0], [0]], warp = []>>)

//===----------------------------------------------------------------------===//
// tgpu.convert_layout
//===----------------------------------------------------------------------===//

// -----

// A conversion keeps the shape.
#a = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
#b = #tgpu.linear<shape = [64], reg = [[32]], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @shapes_differ(%x: tensor<32xf32, #a>) {
  // expected-error @+1 {{'tgpu.convert_layout' op source and result must have the same shape and element type}}
  %y = tgpu.convert_layout %x : tensor<32xf32, #a> -> tensor<64xf32, #b>
  return
}

// -----

// ...and the element type.
#a = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @elements_differ(%x: tensor<32xf32, #a>) {
  // expected-error @+1 {{'tgpu.convert_layout' op source and result must have the same shape and element type}}
  %y = tgpu.convert_layout %x : tensor<32xf32, #a> -> tensor<32xf16, #a>
  return
}

// -----

// Both sides carry a #tgpu.linear encoding: a plain tensor source...
#a = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @source_without_layout(%x: tensor<32xf32>) {
  // expected-error @+1 {{'tgpu.convert_layout' op source has no #tgpu.linear layout}}
  %y = tgpu.convert_layout %x : tensor<32xf32> -> tensor<32xf32, #a>
  return
}

// -----

// ...a plain tensor result...
#a = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @result_without_layout(%x: tensor<32xf32, #a>) {
  // expected-error @+1 {{'tgpu.convert_layout' op result has no #tgpu.linear layout}}
  %y = tgpu.convert_layout %x : tensor<32xf32, #a> -> tensor<32xf32>
  return
}

// -----

// ...or an encoding of another kind are all rejected.
#a = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @foreign_encoding(%x: tensor<32xf32, "blocked">) {
  // expected-error @+1 {{'tgpu.convert_layout' op source has no #tgpu.linear layout}}
  %y = tgpu.convert_layout %x : tensor<32xf32, "blocked"> -> tensor<32xf32, #a>
  return
}

// -----

// The layout describes the tile it is on: a layout of 64 elements on a tile of 32. The tensor type
// verifies its #tgpu.linear encoding against its own shape, so the result type is rejected where it is
// parsed, before tgpu.convert_layout's verifier (whose "layout shape differs from the tile shape" check
// no parsed op can reach any more). See also invalid-encoding-shape.mlir.
#a = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
#b = #tgpu.linear<shape = [64], reg = [[32]], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @layout_shape_differs(%x: tensor<32xf32, #a>) {
  // expected-error @+1 {{#tgpu.linear layout of shape [64] on a tensor of shape [32]}}
  %y = tgpu.convert_layout %x : tensor<32xf32, #a> -> tensor<32xf32, #b>
  return
}

// -----

// Same for the source: a 4x8 layout on an 8x4 tile (same element count, transposed shape). The bad
// type is the function argument's, so the error is reported at the signature.
#a = #tgpu.linear<shape = [4, 8], reg = [], lane = [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]], warp = []>
#b = #tgpu.linear<shape = [8, 4], reg = [], lane = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], warp = []>
// expected-error @+1 {{#tgpu.linear layout of shape [4, 8] on a tensor of shape [8, 4]}}
func.func @source_layout_transposed(%x: tensor<8x4xf32, #a>) {
  %y = tgpu.convert_layout %x : tensor<8x4xf32, #a> -> tensor<8x4xf32, #b>
  return
}

// -----

// Only ranked tensors convert.
func.func @unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'tgpu.convert_layout' op operand #0 must be ranked tensor of any type values}}
  %y = "tgpu.convert_layout"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

//===----------------------------------------------------------------------===//
// #tgpu.warp_roles
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{consumer register count 230 must be a multiple of 8 from 24 to 256}}
func.func @budget_not_a_multiple_of_8() attributes {tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 230, producer_registers = 40>} {
  return
}

// -----

// expected-error @+1 {{producer register count 16 must be a multiple of 8 from 24 to 256}}
func.func @budget_too_small() attributes {tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 232, producer_registers = 16>} {
  return
}

// -----

func.func @roles_on_a_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tgpu.warp_roles' is a #tgpu.warp_roles<...> of a tile kernel}}
  scf.for %i = %c0 to %n step %c1 {
  } {tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 232, producer_registers = 40>}
  return
}
