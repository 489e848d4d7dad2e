// convert-tgpu-to-nvvm with wgmma and TMA, `#tile.schedule<peel_zero_first = true>`: a streamed loop whose
// dot multiplies a carried A operand that enters the loop as zeros (an overlapped attention loop's
// P V: P of the block before the first) runs its first iteration peeled off before the loop, under
// `scf.if (lb < ub)`, without that dot: its result is the accumulator. The loop then starts at
// lb + 1 with the unchanged body, and the ring keeps its numbering (the peeled iteration uses ring
// index 0). Here the peeled iteration issues only S's four MMAs (one commit group) and yields P
// (the accumulator's zeros fold away); the loop issues S's and P V's (register A, inline asm).
// Without the attribute, or when A starts as anything but zeros, nothing is peeled.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s

// CHECK-LABEL: gpu.func @peeled(
// CHECK: scf.if %{{.*}} -> (bf16,
// CHECK: tgpu.ring_wait
// CHECK-COUNT-4: = tgpu.wgmma 
// CHECK-NEXT: tgpu.wgmma_commit
// CHECK-NOT: wgmma.mma_async
// CHECK: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield
// CHECK: scf.for %{{.*}} = %c1_i32 to %{{.*}} step %c1_i32 iter_args(
// CHECK: tgpu.ring_wait
// CHECK-COUNT-4: = tgpu.wgmma 
// CHECK-NEXT: tgpu.wgmma_commit
// CHECK-COUNT-4: = tgpu.wgmma {{.*}}, a_regs({{.*}}){{.*}} n = 64, bf16
// CHECK: scf.yield

func.func @peeled(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<peel_zero_first = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %v, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %p0 = arith.constant dense<0.0> : tensor<128x64xbf16>
  %nb = arith.divui %n, %c64 : i32
  %acc, %p = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero, %pp = %p0) -> (tensor<128x64xf32>, tensor<128x64xbf16>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %kb = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %kt = tile.trans %kb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %at, %kt, %zero : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %vt = tile.load %vv[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %o = tile.dot %pp, %vt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %pn = arith.truncf %s : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %o, %pn : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// CHECK-LABEL: gpu.func @not_peeled(
// CHECK-NOT: -> (bf16,
// CHECK: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32 iter_args(
// CHECK-COUNT-4: = tgpu.wgmma 
// CHECK-COUNT-4: = tgpu.wgmma {{.*}}, a_regs({{.*}}){{.*}} n = 64, bf16
func.func @not_peeled(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %v, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %p0 = arith.constant dense<0.0> : tensor<128x64xbf16>
  %nb = arith.divui %n, %c64 : i32
  %acc, %p = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero, %pp = %p0) -> (tensor<128x64xf32>, tensor<128x64xbf16>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %kb = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %kt = tile.trans %kb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %at, %kt, %zero : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %vt = tile.load %vv[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %o = tile.dot %pp, %vt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %pn = arith.truncf %s : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %o, %pn : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// CHECK-LABEL: gpu.func @ones_first(
// CHECK-NOT: -> (bf16,
// CHECK: scf.for %{{.*}} = %c0_i32 to %{{.*}} step %c1_i32 iter_args(
// CHECK-COUNT-4: = tgpu.wgmma 
// CHECK-COUNT-4: = tgpu.wgmma {{.*}}, a_regs({{.*}}){{.*}} n = 64, bf16
func.func @ones_first(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<peel_zero_first = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %v, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %p0 = arith.constant dense<1.0> : tensor<128x64xbf16>
  %nb = arith.divui %n, %c64 : i32
  %acc, %p = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero, %pp = %p0) -> (tensor<128x64xf32>, tensor<128x64xbf16>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %kb = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %kt = tile.trans %kb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %at, %kt, %zero : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %vt = tile.load %vv[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %o = tile.dot %pp, %vt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %pn = arith.truncf %s : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %o, %pn : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}
