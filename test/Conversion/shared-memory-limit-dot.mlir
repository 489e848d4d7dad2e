// Dot operands that live in shared memory count against `max-shared-bytes` like any other scratch, and
// a kernel over the limit must get the error at the op that needs the memory -- the tile.dot -- as
// layout conversions and reductions do (shared-memory-limit.mlir).
//
// Fixed bug, kept as a regression test: the error is attributed to the largest *scratch* user (needShared), and the operands of a
// dot (mma.sync operands read lazily from shared memory, or wgmma operands) are accounted separately
// (lazyBytes), without a location. A kernel whose shared memory is all dot operands gets the error with
// no location at all, "<unknown>:0: error: kernel 'one_mma' needs 768 bytes of shared memory (this op
// alone 0), more than the 512 a CTA may use" (flarec prints it without file:line:col), and one that
// also has a small reduction gets it at the reduction. Fixed; kept as a regression test.
//
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm=max-shared-bytes=512 --tgpu-allocate-shared-memory=max-shared-bytes=512 -verify-diagnostics
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm='max-shared-bytes=512' --tgpu-allocate-shared-memory=max-shared-bytes=512 -verify-diagnostics

// mma.sync: A [16, 16] and B [16, 8] in bf16 go through shared memory, 512 + 256 = 768 bytes.
func.func @one_mma(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x8xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  // expected-error @+1 {{kernel 'one_mma' needs 768 bytes of shared memory}}
  %d = tile.dot %at, %bt, %z : tensor<16x16xbf16>, tensor<16x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// A dot next to a 64-byte cross-warp reduction: the dot's operands are what exceeds the limit.
// mma.sync: [64, 16] x [16, 32] on 4 warps, A 2048 + B 1024 bytes; with wgmma the same bytes.
func.func @dot_and_reduction(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %rv = tile.make_view %c, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %cv[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  tile.store %m, %rv[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  // expected-error @+1 {{kernel 'dot_and_reduction' needs}}
  %d = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// An operand that every iteration of a loop reads is stored once, before the loop ("persistent
// operands"): a kernel over the limit through it gets the error at its dot as well. Fixed bug: that
// area took the location of the largest scratch user, and a kernel with none (here) got
// "<unknown>:0: error: kernel ... needs ..." (the backward's resident K and V at head dim 256 with
// tiles that do not fit did).
// mma.sync: A [16, 32] stored before the loop, 1024 bytes; B [32, 8] per iteration, 512.
func.func @loop_operand(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (tensor<16x8xf32>) : i32 {
    %bt = tile.load %bv[%i, %c0] : !tile.view<bf16, 2> -> tensor<32x8xbf16>
    // expected-error @+1 {{kernel 'loop_operand' needs 1536 bytes of shared memory (1024 for this op)}}
    %d = tile.dot %at, %bt, %acc : tensor<16x32xbf16>, tensor<32x8xbf16>, tensor<16x8xf32> -> tensor<16x8xf32>
    scf.yield %d : tensor<16x8xf32>
  }
  tile.store %r, %cv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}
