// Round trip of #tgpu.linear on tensor encodings and of tgpu.convert_layout, in custom and generic form.
// RUN: flare-opt %s -split-input-file | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s

// The layout of the dialect's documentation, on tensor<8x32xf32> with 2 warps: reg bits move along the
// columns (4 contiguous elements per thread), lane bits 0-2 cover columns 4..28, lane bits 3-4 go down
// rows 1 and 2, the warp bit moves 4 rows. The 8 bases span the 3 + 5 coordinate bits of 8x32, so every
// element is held exactly once: (thread t = lane + 32 * warp) holds row 4*warp + lane/8,
// columns 4*(lane%8) .. 4*(lane%8)+3.
// CHECK-LABEL: func.func private @doc_layout
// CHECK-SAME: (tensor<8x32xf32, #tgpu.linear<shape = [8, 32], reg = {{\[\[}}0, 1], [0, 2]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = {{\[\[}}4, 0]]>>)
func.func private @doc_layout(tensor<8x32xf32, #tgpu.linear<shape = [8, 32], reg = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp = [[4, 0]]>>)

// -----

// A scalar (rank 0): no bases at all, every thread holds the value.
// CHECK-LABEL: func.func private @scalar_layout
// CHECK-SAME: (tensor<f32, #tgpu.linear<shape = [], reg = [], lane = [], warp = []>>)
func.func private @scalar_layout(tensor<f32, #tgpu.linear<shape = [], reg = [], lane = [], warp = []>>)

// -----

// Zero bases are broadcasts: a 4-element tile held by lanes 0..3 (lane bits 0 and 1), repeated by lanes
// 4..31 (bits 2-4 have zero bases) and by both warps; no register bits (one register per thread).
// CHECK-LABEL: func.func private @broadcast_layout
// CHECK-SAME: (tensor<4xi32, #tgpu.linear<shape = [4], reg = [], lane = {{\[\[}}1], [2], [0], [0], [0]], warp = {{\[\[}}0]]>>)
func.func private @broadcast_layout(tensor<4xi32, #tgpu.linear<shape = [4], reg = [], lane = [[1], [2], [0], [0], [0]], warp = [[0]]>>)

// -----

// A basis may move along two dimensions at once (a swizzle). On 2x32 the coordinate bits are row bit 0
// and column bits 0-4; lane bit 0 -> (1, 1) and the register bit -> (0, 1) together still reach the row
// bit, (1, 0) = (1, 1) ^ (0, 1), so the 6 bases span all 6 coordinate bits and the layout is valid.
// CHECK-LABEL: func.func private @swizzled_layout
// CHECK-SAME: (tensor<2x32xbf16, #tgpu.linear<shape = [2, 32], reg = {{\[\[}}0, 1]], lane = {{\[\[}}1, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = []>>)
func.func private @swizzled_layout(tensor<2x32xbf16, #tgpu.linear<shape = [2, 32], reg = [[0, 1]], lane = [[1, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = []>>)

// -----

// convert_layout between two layouts of tensor<4x64xf32> over 4 warps (128 threads, 2 elements each):
// #row: 2 contiguous columns per thread (reg), 32 lanes along a row of 64, one warp per row;
// #col: 2 rows per thread (reg), lane bit 0 covers rows 2-3, lane bits 1-4 columns 0-15, and the two
//       warp bits pick one of four column blocks of 16.
// Both have 1 + 5 + 2 = 8 bases for the 2 + 6 coordinate bits of 4x64.
// CHECK-LABEL: func.func @convert(
// CHECK-SAME: %[[X:.*]]: tensor<4x64xf32, #tgpu.linear<shape = [4, 64], reg = {{\[\[}}0, 1]], lane = {{\[\[}}0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], warp = {{\[\[}}1, 0], [2, 0]]>>
// CHECK: %[[Y:.*]] = tgpu.convert_layout %[[X]] : tensor<4x64xf32, [[ROW:#tgpu.linear<[^>]*>]]> -> tensor<4x64xf32, #tgpu.linear<shape = [4, 64], reg = {{\[\[}}1, 0]], lane = {{\[\[}}2, 0], [0, 1], [0, 2], [0, 4], [0, 8]], warp = {{\[\[}}0, 16], [0, 32]]>>
// CHECK: %[[Z:.*]] = tgpu.convert_layout %[[Y]] : tensor<4x64xf32, [[COL:#tgpu.linear<[^>]*>]]> -> tensor<4x64xf32, [[ROW]]>
// CHECK: return %[[Z]] : tensor<4x64xf32, [[ROW]]>
#row = #tgpu.linear<shape = [4, 64], reg = [[0, 1]], lane = [[0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], warp = [[1, 0], [2, 0]]>
#col = #tgpu.linear<shape = [4, 64], reg = [[1, 0]], lane = [[2, 0], [0, 1], [0, 2], [0, 4], [0, 8]], warp = [[0, 16], [0, 32]]>
func.func @convert(%x: tensor<4x64xf32, #row>) -> tensor<4x64xf32, #row> {
  %y = tgpu.convert_layout %x : tensor<4x64xf32, #row> -> tensor<4x64xf32, #col>
  %z = tgpu.convert_layout %y : tensor<4x64xf32, #col> -> tensor<4x64xf32, #row>
  return %z : tensor<4x64xf32, #row>
}

// -----

// Converting to the same layout verifies (the lowering makes it the identity permutation of registers);
// any element type is allowed, here i1.
// CHECK-LABEL: func.func @convert_same
// CHECK: tgpu.convert_layout %{{.*}} : tensor<32xi1, #tgpu.linear<shape = [32], reg = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = []>> -> tensor<32xi1, #tgpu.linear<shape = [32], reg = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = []>>
#l = #tgpu.linear<shape = [32], reg = [], lane = [[1], [2], [4], [8], [16]], warp = []>
func.func @convert_same(%x: tensor<32xi1, #l>) -> tensor<32xi1, #l> {
  %y = tgpu.convert_layout %x : tensor<32xi1, #l> -> tensor<32xi1, #l>
  return %y : tensor<32xi1, #l>
}
