// Each inner list of a #tgpu.linear basis is one basis vector and must have one entry per dimension.
//
// XFAIL: *
// Known bug: the parser flattens all inner lists into one array and the verifier only checks that the
// total length is a multiple of the rank, so on a rank-2 layout `reg = [[1], [0], [0], [1]]` is silently
// read as `reg = [[1, 0], [0, 1]]` (and printed that way). Remove the XFAIL once the parser checks the
// length of every inner list.
//
// RUN: flare-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{basis vectors must have 2 entries}}
func.func private @split_vectors(tensor<2x2xf32, #tgpu.linear<shape = [2, 2], reg = [[1], [0], [0], [1]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = []>>)

// -----

// Three entries then one: also 4 in all.
// expected-error @+1 {{basis vectors must have 2 entries}}
func.func private @uneven_vectors(tensor<2x2xf32, #tgpu.linear<shape = [2, 2], reg = [[1, 0, 0], [1]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = []>>)
