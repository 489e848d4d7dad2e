// tile.dot ... when %cond: d = cond ? a * b + c : c. With wgmma=true a dot whose A sits in registers
// (here P, the bf16 of an earlier dot's result) guards its MMAs with the condition: they are not
// issued when it is false and the tied accumulator registers keep their values; a dot whose A goes
// through shared memory runs, is waited for at once and its result selected. Without wgmma
// (mma.sync) the result is selected register by register.
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm=wgmma=true | FileCheck %s --check-prefix=WGMMA
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm | FileCheck %s --check-prefix=MMA

// WGMMA-LABEL: gpu.func @guarded_dot
// WGMMA: %[[W:.*]] = arith.cmpi ne, %arg6, %{{.*}} : i32
// The unguarded S = x y: two K steps on shared-memory operands.
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-2: nvvm.wgmma.mma_async
// P V (register A, 64 deep: four K steps), each MMA under the guard q = (when != 0).
// WGMMA: %[[WI:.*]] = arith.extui %[[W]] : i1 to i32
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-4: llvm.inline_asm has_side_effects "{\0A.reg .pred p, q;\0Asetp.ne.b32 p, 1, 0;\0Asetp.ne.b32 q, $69, 0;\0A@q wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %[[WI]] :
// WGMMA-NEXT: nvvm.wgmma.commit.group.sync.aligned
// x y + c under the condition (A in shared memory): the MMAs run, are waited for, and each of the
// thread's 32 accumulator registers is selected.
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA-COUNT-2: nvvm.wgmma.mma_async
// WGMMA-NEXT: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA-COUNT-32: arith.select %[[W]], %{{.*}}, %{{.*}} : f32
// WGMMA-NOT: wgmma.mma_async
// WGMMA: gpu.return

// MMA-LABEL: gpu.func @guarded_dot
// MMA: %[[W:.*]] = arith.cmpi ne, %arg6, %{{.*}} : i32
// Both guarded dots: the mma.sync results, then 32 selects each.
// MMA: nvvm.mma.sync
// MMA-COUNT-32: arith.select %[[W]], %{{.*}}, %{{.*}} : f32
// MMA: nvvm.mma.sync
// MMA-COUNT-32: arith.select %[[W]], %{{.*}}, %{{.*}} : f32
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
func.func @guarded_dot(%x: !tile.ptr<bf16>, %y: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %c: !tile.ptr<f32>,
                       %o1: !tile.ptr<f32>, %o2: !tile.ptr<f32>, %flag: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %xv = tile.make_view %x, [%c64, %c32], [%c32, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %yv = tile.make_view %y, [%c32, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %v, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o1v = tile.make_view %o1, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o2v = tile.make_view %o2, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %xt = tile.load %xv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %yt = tile.load %yv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  %vt = tile.load %vv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %ct = tile.load %cv[%c0, %c0] : !tile.view<f32, 2> -> tensor<64x64xf32>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %w = arith.cmpi ne, %flag, %c0 : i32
  %s = tile.dot %xt, %yt, %z : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
  %d1 = tile.dot %p, %vt, %ct when %w : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %d2 = tile.dot %xt, %yt, %ct when %w : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %d1, %o1v[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  tile.store %d2, %o2v[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
