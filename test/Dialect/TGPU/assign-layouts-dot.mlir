// tgpu-assign-layouts for the matrix ops: tile.dot asks for the mma.sync m16n8k16 fragment layouts of
// its operands (a tgpu.convert_layout where an operand has another layout) and gives its result the
// accumulator layout; tile.trans swaps the dimensions of its operand's layout and tile.reshape
// re-expresses it in the new shape (neither moves data); a loop-carried accumulator whose init is a
// constant is created in the accumulator layout, so the loop never converts it, also when an outer
// loop carries what an inner one accumulates.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts | FileCheck %s

// One warp, [16, 16] x [16, 8]. The m16n8k16 fragments, with lane = 4 * group + quad:
//   A [16, 16]: lane bits 0, 1 (quad) -> columns 2, 4; bits 2, 3, 4 (group) -> rows 1, 2, 4;
//               reg bit 0 -> column 1 (two bf16 packed in a 32-bit register), bit 1 -> row 8,
//               bit 2 -> column 8.
//   B [16, 8]:  quad -> rows (k) 2, 4; group -> columns (n) 1, 2, 4; reg -> k 1 and k 8.
//   C [16, 8]:  quad -> columns 2, 4; group -> rows 1, 2, 4; reg -> column 1 and row 8.
// The loads are blocked (8 contiguous bf16 per thread), so both operands are converted; the zero
// accumulator is created in the C layout directly.
// CHECK-LABEL: func.func @fragments
// CHECK: %[[A:.*]] = tile.load {{.*}} -> tensor<16x16xbf16, #tgpu.linear<shape = [16, 16], reg = {{\[\[}}0, 1], [0, 2], [0, 4]], lane = {{\[\[}}0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = []>>
// CHECK: %[[B:.*]] = tile.load {{.*}} -> tensor<16x8xbf16, #tgpu.linear<{{[^>]*}}>>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<16x8xf32, [[C:#tgpu.linear<shape = \[16, 8\], reg = \[\[0, 1\], \[8, 0\]\], lane = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\]>]]>
// CHECK: %[[AC:.*]] = tgpu.convert_layout %[[A]] : {{.*}} -> tensor<16x16xbf16, [[AL:#tgpu.linear<shape = \[16, 16\], reg = \[\[0, 1\], \[8, 0\], \[0, 8\]\], lane = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\]>]]>
// CHECK: %[[BC:.*]] = tgpu.convert_layout %[[B]] : {{.*}} -> tensor<16x8xbf16, [[BL:#tgpu.linear<shape = \[16, 8\], reg = \[\[1, 0\], \[8, 0\]\], lane = \[\[2, 0\], \[4, 0\], \[0, 1\], \[0, 2\], \[0, 4\]\], warp = \[\]>]]>
// CHECK: %[[D:.*]] = tile.dot %[[AC]], %[[BC]], %[[Z]] : tensor<16x16xbf16, [[AL]]>, tensor<16x8xbf16, [[BL]]>, tensor<16x8xf32, [[C]]> -> tensor<16x8xf32, [[C]]>
// The store takes the accumulator as it is.
// CHECK-NEXT: tile.store %[[D]]
func.func @fragments(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x8xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %d = tile.dot %at, %bt, %z : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// 4 warps, [64, 32] x [32, 64] accumulated over K in a loop (the matmul pattern). The warps stack along
// M, 16 rows each (warp bases (16, 0), (32, 0) in A and C); every warp needs all of B (zero warp bases);
// the repetitions are register bits: A's second K block (0, 16), C's and B's N blocks (0, 8) .. (0, 32),
// B's K blocks (16, 0).
// The accumulator's init constant is created in the C layout, the loop carries it in that layout, and
// the only conversions are the two loaded operands' (inside the loop, before the dot).
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, [[C:#tgpu.linear<shape = \[64, 64\], reg = \[\[0, 1\], \[8, 0\], \[0, 8\], \[0, 16\], \[0, 32\]\], lane = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\[16, 0\], \[32, 0\]\]>]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (tensor<64x64xf32, [[C]]>)
// CHECK: tgpu.convert_layout {{.*}} -> tensor<64x32xbf16, [[AL:#tgpu.linear<shape = \[64, 32\], reg = \[\[0, 1\], \[8, 0\], \[0, 8\], \[0, 16\]\], lane = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\[16, 0\], \[32, 0\]\]>]]>
// CHECK: tgpu.convert_layout {{.*}} -> tensor<32x64xbf16, [[BL:#tgpu.linear<shape = \[32, 64\], reg = \[\[1, 0\], \[8, 0\], \[16, 0\], \[0, 8\], \[0, 16\], \[0, 32\]\], lane = \[\[2, 0\], \[4, 0\], \[0, 1\], \[0, 2\], \[0, 4\]\], warp = \[\[0, 0\], \[0, 0\]\]>]]>
// CHECK: %[[D:.*]] = tile.dot %{{.*}}, %{{.*}}, %[[ACC]] : tensor<64x32xbf16, [[AL]]>, tensor<32x64xbf16, [[BL]]>, tensor<64x64xf32, [[C]]> -> tensor<64x64xf32, [[C]]>
// CHECK-NEXT: scf.yield %[[D]] : tensor<64x64xf32, [[C]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.store %[[R]]
func.func @accumulate(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %at = tile.load %av[%c0, %k] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
    %bt = tile.load %bv[%k, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Nested loops (the backward's dK and dV sums, over the heads of a group and then the query blocks):
// the outer loop yields what the inner loop accumulates, so the outer init is created in the
// accumulator layout and both loops carry it; no conversion of the sums anywhere.
// CHECK-LABEL: func.func @accumulate_nested
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, [[C:#tgpu.linear<shape = \[64, 64\], reg = \[\[0, 1\], \[8, 0\], \[0, 8\], \[0, 16\], \[0, 32\]\], lane = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\[16, 0\], \[32, 0\]\]>]]>
// CHECK: scf.for {{.*}} iter_args(%[[OUTER:.*]] = %[[Z]]) -> (tensor<64x64xf32, [[C]]>)
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[OUTER]]) -> (tensor<64x64xf32, [[C]]>)
// CHECK-NOT: tgpu.convert_layout %[[ACC]]
// CHECK: tile.dot %{{.*}}, %{{.*}}, %[[ACC]] : {{.*}} -> tensor<64x64xf32, [[C]]>
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<64x64xf32
// CHECK: tile.store
func.func @accumulate_nested(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %sum = scf.for %h = %c0 to %n step %c1 iter_args(%outer = %zero) -> (tensor<64x64xf32>) : i32 {
    %acc = scf.for %k = %c0 to %n step %c32 iter_args(%acc_i = %outer) -> (tensor<64x64xf32>) : i32 {
      %at = tile.load %av[%h, %k] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
      %bt = tile.load %bv[%k, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
      %d = tile.dot %at, %bt, %acc_i : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %acc : tensor<64x64xf32>
  }
  tile.store %sum, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// tile.trans swaps the two dimensions of every basis of its operand's layout: the loaded [8, 16]
// (reg (0, 1), (0, 2); lane (0, 4), (0, 8), (1, 0), (2, 0), (4, 0)) becomes [16, 8] with
// reg (1, 0), (2, 0); lane (4, 0), (8, 0), (0, 1), (0, 2), (0, 4). The store takes it as it is.
// CHECK-LABEL: func.func @trans
// CHECK: %[[X:.*]] = tile.load {{.*}} -> tensor<8x16xf32, [[L:#tgpu.linear<shape = \[8, 16\], reg = \[\[0, 1\], \[0, 2\]\], lane = \[\[0, 4\], \[0, 8\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\]>]]>
// CHECK-NEXT: %[[T:.*]] = tile.trans %[[X]] : tensor<8x16xf32, [[L]]> -> tensor<16x8xf32, #tgpu.linear<shape = [16, 8], reg = {{\[\[}}1, 0], [2, 0]], lane = {{\[\[}}4, 0], [8, 0], [0, 1], [0, 2], [0, 4]], warp = []>>
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.store %[[T]]
func.func @trans(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x16xf32>
  %t = tile.trans %x : tensor<8x16xf32> -> tensor<16x8xf32>
  tile.store %t, %v[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// tile.reshape keeps the row-major order: coordinate (r, c) of [4, 32] is element 32 r + c of [128],
// so the bases (0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (1, 0), (2, 0) become 1, 2, 4, 8, 16, 32, 64.
// CHECK-LABEL: func.func @reshape
// CHECK: %[[X:.*]] = tile.load {{.*}} -> tensor<4x32xf32, [[L:#tgpu.linear<shape = \[4, 32\], reg = \[\[0, 1\], \[0, 2\]\], lane = \[\[0, 4\], \[0, 8\], \[0, 16\], \[1, 0\], \[2, 0\]\], warp = \[\]>]]>
// CHECK-NEXT: %[[R:.*]] = tile.reshape %[[X]] : tensor<4x32xf32, [[L]]> -> tensor<128xf32, #tgpu.linear<shape = [128], reg = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = []>>
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.store %[[R]]
func.func @reshape(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %q, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x32xf32>
  %r = tile.reshape %x : tensor<4x32xf32> -> tensor<128xf32>
  tile.store %r, %w[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// Q K^T: the B operand is the transpose of a loaded K tile; the transposed layout is what gets converted
// to the B fragment layout.
// CHECK-LABEL: func.func @qk
// CHECK: %[[K:.*]] = tile.load {{.*}} -> tensor<8x16xbf16, #tgpu.linear<{{[^>]*}}>>
// CHECK-NEXT: %[[KT:.*]] = tile.trans %[[K]] : {{.*}} -> tensor<16x8xbf16, [[KTL:#tgpu.linear<[^>]*>]]>
// CHECK: tgpu.convert_layout %[[KT]] : tensor<16x8xbf16, [[KTL]]> -> tensor<16x8xbf16, #tgpu.linear<shape = [16, 8], reg = {{\[\[}}1, 0], [8, 0]], lane = {{\[\[}}2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warp = []>>
// CHECK: tile.dot
func.func @qk(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %s: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %qv = tile.make_view %q, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %s, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x16xbf16>
  %kt = tile.load %kv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<8x16xbf16>
  %ktt = tile.trans %kt : tensor<8x16xbf16> -> tensor<16x8xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %d = tile.dot %qt, %ktt, %z : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %d, %sv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}
