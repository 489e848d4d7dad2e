// TMA planning (flare::tgpu::planTensorMap) on the IR, before any lowering: the test pass annotates
// every load, store and atomic add whose blocks a host-encoded tensor map can move with the map's
// description (sizes and strides innermost first, [kind, value]: 0 a constant, 1 a kernel argument,
// 2 that argument truncated to i32; `outer` dimensions from the view's offset terms). convert-tgpu-to-
// nvvm builds its copies from the same plans (tgpu-to-nvvm-tma.mlir, -tma-reduce.mlir, -tma-operand.mlir).
// RUN: flare-opt %s --tgpu-test-tensor-map-plans | FileCheck %s

// CHECK-LABEL: func.func @plans
func.func @plans(%p: !tile.ptr<bf16>, %q: !tile.ptr<bf16>, %acc: !tile.ptr<f32>, %rows: i32, %stride: i32,
                 %head_stride: i64, %table: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  // A view of constant sizes over pointer argument 0: a map of [64 columns, 128 rows], strides [1, 64].
  %v = tile.make_view %p, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  // CHECK: tile.load {{.*}} {tgpu.test.tensor_map = {outer = 0 : i64, pieces = 1 : i64, pointer = 0 : i64, sizes = [array<i64: 0, 64>, array<i64: 0, 128>], strides = [array<i64: 0, 1>, array<i64: 0, 64>]}} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %a = tile.load %v[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  // Rows of 32 bf16 are half a 128-byte panel; more than 256 rows is over a box's limit: no plan.
  // CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %half = tile.load %v[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  // CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<512x64xbf16>
  %tall = tile.load %v[%c0, %c0] : !tile.view<bf16, 2> -> tensor<512x64xbf16>
  // A view per program instance: base = q + pid * head_stride (an i64 argument), sizes and row
  // stride i32 arguments: one outer dimension, strided by argument 5.
  %pid = tile.program_id x
  %pid64 = arith.extsi %pid : i32 to i64
  %off = arith.muli %pid64, %head_stride : i64
  %head = tile.addptr %q, %off : !tile.ptr<bf16>, i64
  %hv = tile.make_view %head, [%rows, %c128], [%stride, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  // CHECK: tile.load {{.*}} {tgpu.test.tensor_map = {outer = 1 : i64, pieces = 1 : i64, pointer = 1 : i64, sizes = [array<i64: 0, 128>, array<i64: 1, 3>, array<i64: 0, 2147483648>], strides = [array<i64: 0, 1>, array<i64: 1, 4>, array<i64: 1, 5>]}}
  %k = tile.load %hv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
  // Row pieces (blocks gathered from pages): a copy per piece of 16 rows, two swizzle atoms each.
  %r0 = tile.scalar_load %table[%c0] : !tile.ptr<i32>, i32 -> i32
  %r1 = tile.scalar_load %table[%c1] : !tile.ptr<i32>, i32 -> i32
  // CHECK: tile.load {{.*}} {row_pieces = 2 : i64, tgpu.test.tensor_map = {outer = 1 : i64, pieces = 2 : i64
  %paged = tile.load %hv[%r0, %r1, %c0] {row_pieces = 2} : !tile.view<bf16, 2> -> tensor<32x128xbf16>
  // Pieces of 4 rows would split a swizzle atom: no plan.
  // CHECK: tile.load %{{.*}} {row_pieces = 8 : i64} : !tile.view<bf16, 2> -> tensor<32x128xbf16>
  %small = tile.load %hv[%r0, %r0, %r0, %r0, %r0, %r0, %r0, %r0, %c0] {row_pieces = 8} : !tile.view<bf16, 2> -> tensor<32x128xbf16>
  // A store of bf16 blocks takes the map too.
  // CHECK: tile.store {{.*}} {tgpu.test.tensor_map = {outer = 1 : i64
  tile.store %k, %hv[%c0, %c0] : tensor<64x128xbf16>, !tile.view<bf16, 2>
  // f32 sums added by a reduce: panels of 32 columns.
  %av = tile.make_view %acc, [%rows, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %sums = arith.constant dense<1.0> : tensor<64x64xf32>
  // CHECK: tile.atomic_add {{.*}} {tgpu.test.tensor_map = {outer = 0 : i64, pieces = 1 : i64, pointer = 2 : i64, sizes = [array<i64: 0, 64>, array<i64: 1, 3>], strides = [array<i64: 0, 1>, array<i64: 0, 64>]}}
  tile.atomic_add %sums, %av[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  // A view whose innermost stride is not the constant 1 cannot be a map.
  %sv = tile.make_view %p, [%c128, %c64], [%c64, %stride] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  // CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %strided = tile.load %sv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  return
}
