// convert-tgpu-to-nvvm sizes the shared-memory areas a kernel needs and tgpu-allocate-shared-memory
// checks their total against `max-shared-bytes` (the pipeline passes the architecture's per-CTA limit
// to both, see Pipeline/shared-memory-per-arch.mlir). A kernel
// over the limit is an error at the op that needs the most: "kernel '<name>' needs N bytes of shared
// memory (this op alone M), more than the L a CTA may use". A small limit of 64 bytes here.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm=max-shared-bytes=64 --tgpu-allocate-shared-memory=max-shared-bytes=64 -verify-diagnostics
// (Dot operands kept in shared memory are in shared-memory-limit-dot.mlir.)

// A cross-warp row reduction keeps [warp][row] partials: 4 warps x 4 rows x 4 bytes = 64 bytes, exactly
// the limit: accepted.
func.func @reduction_at_limit(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  tile.store %m, %w[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// 8 rows: 4 warps x 8 rows x 4 bytes = 128 bytes, one reduction over the limit.
func.func @reduction_over_limit(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x512xf32>
  // expected-error @+1 {{kernel 'reduction_over_limit' needs 128 bytes of shared memory (128 for this op), more than the 64 a CTA may use: use smaller tiles or fewer warps}}
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<8x512xf32> -> tensor<8xf32>
  tile.store %m, %w[%c0] : tensor<8xf32>, !tile.view<f32, 1>
  return
}

// -----

// A layout conversion through shared memory writes the whole tile: adding a transposed [8, 8] tile to a
// loaded one converts the transpose to the blocked layout, 64 x 4 = 256 bytes. The conversion carries
// the location of the value it converts, here the tile.trans.
func.func @conversion_over_limit(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %q, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x8xf32>
  %y = tile.load %o[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x8xf32>
  // expected-error @+1 {{kernel 'conversion_over_limit' needs 256 bytes of shared memory (256 for this op), more than the 64 a CTA may use}}
  %yt = tile.trans %y : tensor<8x8xf32> -> tensor<8x8xf32>
  %s = arith.addf %x, %yt : tensor<8x8xf32>
  tile.store %s, %o[%c0, %c0] : tensor<8x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// Shared memory is one buffer reused by every op, so a kernel needs the largest op's scratch, not the
// sum: the 64-byte reduction and the 256-byte conversion below need 256 bytes, and the error is at the
// conversion (the largest user), not at the reduction that comes first.
func.func @largest_user(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %q, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %o = tile.make_view %q, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  tile.store %m, %w[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  %a = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x8xf32>
  %b = tile.load %o[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x8xf32>
  // expected-error @+1 {{kernel 'largest_user' needs 256 bytes of shared memory (256 for this op), more than the 64 a CTA may use}}
  %bt = tile.trans %b : tensor<8x8xf32> -> tensor<8x8xf32>
  %s = arith.addf %a, %bt : tensor<8x8xf32>
  tile.store %s, %o[%c0, %c0] : tensor<8x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// Elements narrower than 32 bits take a 32-bit word each in the conversion scratch: a [4, 4] i1 mask
// (16 elements) needs 64 bytes, not 2: accepted at a 64-byte limit.
func.func @mask_conversion_at_limit(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<i32> -> !tile.view<i32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<i32, 2> -> tensor<4x4xi32>
  %y = tile.load %v[%c0, %c0] : !tile.view<i32, 2> -> tensor<4x4xi32>
  %z = arith.constant dense<0> : tensor<4x4xi32>
  %pos = arith.cmpi sgt, %y, %z : tensor<4x4xi32>
  %post = tile.trans %pos : tensor<4x4xi1> -> tensor<4x4xi1>
  %s = arith.select %post, %x, %z : tensor<4x4xi1>, tensor<4x4xi32>
  tile.store %s, %v[%c0, %c0] : tensor<4x4xi32>, !tile.view<i32, 2>
  return
}

// -----

// Kernels are checked one by one: the first fits, the second is reported.
func.func @small(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<2x512xf32>
  %m = tile.reduce sum %x {axis = 1 : i32} : tensor<2x512xf32> -> tensor<2xf32>
  tile.store %m, %w[%c0] : tensor<2xf32>, !tile.view<f32, 1>
  return
}
func.func @big(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 16 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<2x4096xf32>
  // 16 warps x 2 rows x 4 bytes = 128 bytes.
  // expected-error @+1 {{kernel 'big' needs 128 bytes of shared memory (128 for this op), more than the 64 a CTA may use}}
  %m = tile.reduce sum %x {axis = 1 : i32} : tensor<2x4096xf32> -> tensor<2xf32>
  tile.store %m, %w[%c0] : tensor<2xf32>, !tile.view<f32, 1>
  return
}
