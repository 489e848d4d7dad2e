// A rank-0 (scalar) #tgpu.linear layout has basis vectors of 0 entries each. Whatever the parser accepts
// it must keep: `reg = [[], []]` (two register bits, four registers holding the same value) must either
// print back as written or be rejected -- not be silently read as another layout.
//
// Fixed bug, kept as a regression test: the bases are stored flattened (rank entries per vector), so for
// rank 0 the number of vectors was lost: `reg = [[], []]` parsed and printed back as `reg = []`, a
// different layout. A rank-0 layout now takes no basis vectors at all.
//
// RUN: flare-opt %s > %t 2>&1 || echo "flare-opt failed" >> %t
// RUN: FileCheck %s < %t
// CHECK: {{reg = \[\[\], \[\]\]|error: .*basis}}

func.func private @scalar_with_register_bits(tensor<f32, #tgpu.linear<shape = [], reg = [[], []], lane = [[], [], [], [], []], warp = []>>)
