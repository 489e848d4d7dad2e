// Each inner list of a #tgpu.linear basis is one basis vector and must have one entry per dimension.
// The parser checks every inner list as it reads it and reports the first bad one. (Regression test: the
// parser used to flatten all inner lists into one array and only check that the total length was a
// multiple of the rank, so on a rank-2 layout `reg = [[1], [0], [0], [1]]` was silently read, and
// printed, as `reg = [[1, 0], [0, 1]]`.)
//
// RUN: flare-opt %s -split-input-file -verify-diagnostics

// Four 1-entry vectors: 4 entries in all, a multiple of the rank 2, but each vector is short.
// expected-error @+1 {{each reg basis vector needs 2 entries, one per dimension}}
func.func private @split_vectors(tensor<2x2xf32, #tgpu.linear<shape = [2, 2], reg = [[1], [0], [0], [1]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = []>>)

// -----

// Three entries then one: also 4 in all.
// expected-error @+1 {{each reg basis vector needs 2 entries, one per dimension}}
func.func private @uneven_vectors(tensor<2x2xf32, #tgpu.linear<shape = [2, 2], reg = [[1, 0, 0], [1]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = []>>)

// -----

// The lane and warp bases are read the same way: the message names the list that is wrong.
// expected-error @+1 {{each lane basis vector needs 2 entries, one per dimension}}
func.func private @lane_vectors(tensor<2x2xf32, #tgpu.linear<shape = [2, 2], reg = [[1, 0], [0, 1]], lane = [[0], [0, 0], [0, 0], [0, 0], [0, 0], [0]], warp = []>>)

// -----

// expected-error @+1 {{each warp basis vector needs 2 entries, one per dimension}}
func.func private @warp_vectors(tensor<2x2xf32, #tgpu.linear<shape = [2, 2], reg = [[1, 0], [0, 1]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = [[0, 0, 0, 0]]>>)
