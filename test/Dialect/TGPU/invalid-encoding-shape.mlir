// A #tgpu.linear encoding describes the tensor it is attached to, so its shape must be the tensor's.
//
// XFAIL: *
// Known gap: only tgpu.convert_layout compares the layout's shape with its tensor's. The attribute does
// not implement VerifiableTensorEncoding, so `tensor<8xf32, #tgpu.linear<shape = [4], ...>>` is accepted
// anywhere else (function signatures, arith ops, tile ops), and a later pass then reads registers of a
// 4-element layout for an 8-element tile. Remove the XFAIL once tensor types check their encoding.
//
// RUN: flare-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{shape}}
func.func private @bigger_tile(tensor<8xf32, #tgpu.linear<shape = [4], reg = [], lane = [[1], [2], [0], [0], [0]], warp = []>>)

// -----

// expected-error @+1 {{shape}}
func.func private @other_rank(tensor<4x8xf32, #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>>)
