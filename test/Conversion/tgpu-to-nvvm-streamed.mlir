// convert-tgpu-to-nvvm with wgmma: a loop whose load only feeds a dot operand streams it through
// shared memory (StreamedLoop.cpp). Here B (64 x 64 bf16) streams through a ring of 3 stages filled by
// cp.async one iteration ahead; A (Q-like, loaded before the loop) is stored to shared memory once,
// before the loop; the dot reads both through descriptors, is left in flight until the accumulator is
// yielded, and each warp then releases the stage. With two warpgroups (8 warps) they take turns
// issuing their MMAs (named barriers 1 and 2). These are the cp.async paths (tma=0); with TMA the same
// views are copied through tensor maps (tgpu-to-nvvm-tma.mlir). Last: the loop nested in another,
// with A stored before the outer one.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=0 ping-pong=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=NOPP

// The ring (3 x 8 KiB, 1024-byte aligned) and its 6 mbarriers sit after A's 16 KiB: 16384 + 24576 + 48.
// B (rows of 64 elements, 128 bytes) lands in the 128-byte swizzled layout: its descriptors carry
// swizzle mode 1 (bit 62), SBO 1024 (one 8-row atom) and, N-major, LBO 64 * 128 (one 64-wide panel of
// N further): 2^62 + (1024 >> 4) << 32 + (8192 >> 4) << 16 = 4611686293338849280. A (stored by the
// kernel, core matrices) keeps no swizzle, LBO 128 and SBO 64 * 16: 274878431232.
// CHECK-LABEL: gpu.func @stream(
// CHECK-SAME: tgpu.shared_bytes = 41008 : i32
// CHECK-DAG: %[[DESCA:.*]] = arith.constant 274878431232 : i64
// CHECK-DAG: %[[DESCB:.*]] = arith.constant 4611686293338849280 : i64
// Per stage: `full` expects every thread (256), `empty` every warp (8).
// CHECK-COUNT-3: tgpu.mbarrier_init %{{.*}}, %c{{(256|8)}}_i32
// CHECK: gpu.barrier
// Prologue: iteration 0's copies, then this thread's arrival on stage 0's `full` once they land.
// CHECK: tgpu.cp_async %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: tgpu.cp_async_mbarrier_arrive %{{.*}}
// Then A is stored once (its loads and the first copies are in flight together) and made visible to
// wgmma's async proxy.
// CHECK: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: tgpu.fence_async_shared
// CHECK-NEXT: gpu.barrier
// Warpgroup 1 gives warpgroup 0 the first turn.
// CHECK: tgpu.named_barrier_arrive %c1_i32, %c256_i32
// CHECK: scf.for
// Refill: wait until every warp released the stage (its `empty` barrier, ring index i - 2), copy
// iteration i + 1 (announced on its `full` barrier).
// CHECK: %[[FILL:.*]] = tgpu.ring_barrier full %{{[0-9a-z_]+}}[%[[STAGE:.*]]] : !tgpu.ring<3>
// CHECK: %[[FREE:.*]] = tgpu.ring_barrier empty %{{[0-9a-z_]+}}[%[[STAGE]]] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.ring_wait %[[FREE]], use %{{.*}} of 3
// CHECK: tgpu.cp_async 
// CHECK: tgpu.cp_async_mbarrier_arrive %[[FILL]]
// This iteration's stage has landed (ring index i on its `full` barrier).
// CHECK: %[[FULL:.*]] = tgpu.ring_barrier full %{{[0-9a-z_]+}}[%{{.*}}] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.ring_wait %[[FULL]], use %{{.*}} of 3
// CHECK-NEXT: tgpu.fence_async_shared
// No CTA-wide barrier in the loop: the turn, the MMAs, the other warpgroup's turn.
// CHECK-NOT: gpu.barrier
// CHECK: tgpu.named_barrier_sync %{{.*}}, %c256_i32
// Each operand's descriptor is built once; later K steps add their offset >> 4 (B, N-major: 16 rows
// of 128 bytes, 128; A, core matrices: 256 bytes, 16).
// CHECK: arith.ori %{{.*}}, %[[DESCB]] : i64
// CHECK: arith.ori %{{.*}}, %[[DESCA]] : i64
// CHECK: tgpu.wgmma_fence
// CHECK: = tgpu.wgmma 
// CHECK: arith.addi %{{.*}}, %c128_i64 : i64
// CHECK: arith.addi %{{.*}}, %c16_i64 : i64
// CHECK-COUNT-3: = tgpu.wgmma 
// CHECK: tgpu.wgmma_commit
// CHECK: tgpu.named_barrier_arrive %{{.*}}, %c256_i32
// The accumulator is yielded: wait for the group, then release the stage (lane 0 of each warp).
// CHECK-NEXT: tgpu.wgmma_wait 0
// CHECK: tgpu.mbarrier_arrive %{{.*}}
// CHECK: scf.yield
// After the loop warpgroup 0 takes back the turn warpgroup 1 left open.
// CHECK: tgpu.named_barrier_sync %c1_i32, %c256_i32

// NOPP-LABEL: gpu.func @stream(
// NOPP-NOT: tgpu.named_barrier_sync
// NOPP: = tgpu.wgmma 
// NOPP-NOT: tgpu.named_barrier_sync
// NOPP: gpu.return
func.func @stream(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A kernel may opt out of the turns (generated attention kernels do at head dim 256).
// CHECK-LABEL: gpu.func @no_turns(
// CHECK-NOT: tgpu.named_barrier_sync
// CHECK: = tgpu.wgmma 
// CHECK-NOT: tgpu.named_barrier_sync
// CHECK: gpu.return
func.func @no_turns(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<ping_pong = false>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A loop body that needs CTA-wide barriers (a reduction across the warps) would deadlock against the
// turns: the lowering drops them.
// CHECK-LABEL: gpu.func @body_with_barrier(
// CHECK-NOT: tgpu.named_barrier_sync
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK-NOT: tgpu.named_barrier_sync
// CHECK: gpu.return
func.func @body_with_barrier(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %vm = tile.make_view %c, [%c64], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %m = tile.reduce max %acc0 {axis = 0 : i32} : tensor<128x64xf32> -> tensor<64xf32>
    tile.store %m, %vm[%c0] : tensor<64xf32>, !tile.view<f32, 1>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Without the turns (ping-pong=0), the wait for a dot whose result the loop body uses after other
// arithmetic (the previous block's P V after the softmax) is pinned there: inline PTX waits behind a
// never-taken branch on the last value computed before it, since ptxas would hoist a plain wait.
// NOPP-LABEL: gpu.func @pinned_wait(
// NOPP: scf.for
// NOPP: tgpu.wgmma_commit
// NOPP: arith.addf %[[W:arg[0-9]+]], %[[W]] fastmath<contract> : f32
// NOPP-NOT: tgpu.wgmma_wait
// NOPP: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.geu.f32 p, $0, 0fFF800000;\0A@p bra PINNED;\0Amembar.cta;\0APINNED:\0Awgmma.wait_group.sync.aligned 0;\0A}", "f" %{{[0-9]+}} : (f32) -> ()
// NOPP-NOT: tgpu.wgmma_wait
// NOPP: arith.mulf
// NOPP: scf.yield
// With the turns the other warpgroup's MMAs hide the softmax: a plain wait.
// CHECK-LABEL: gpu.func @pinned_wait(
// CHECK-NOT: llvm.inline_asm has_side_effects "{{.*}}PINNED
// CHECK: tgpu.wgmma_wait 0
// CHECK-NOT: llvm.inline_asm has_side_effects "{{.*}}PINNED
// CHECK: gpu.return
func.func @pinned_wait(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %one = arith.constant dense<1.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc:2 = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero, %w0 = %one) -> (tensor<128x64xf32>, tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %w = arith.addf %w0, %w0 : tensor<128x64xf32>
    %u = arith.mulf %s, %w : tensor<128x64xf32>
    scf.yield %u, %w : tensor<128x64xf32>, tensor<128x64xf32>
  }
  tile.store %acc#0, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// The streamed loop inside an outer loop (the backward's query-block loop inside its GQA head loop):
// A, which neither loop changes, is stored to shared memory once, before the outer loop (its four
// 16-byte rows per thread, then the fence and barrier), so its registers are not live across the
// outer iterations; nothing stores and fences it again between the loops. (The stores inside the
// loops are the ring's unaligned-copy fallback.)
// CHECK-LABEL: gpu.func @nested(
// CHECK-COUNT-4: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK-NOT: tgpu.fence_async_shared
// CHECK: scf.for
// CHECK: = tgpu.wgmma
// CHECK: gpu.return
func.func @nested(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %heads: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %sum = scf.for %h = %c0 to %heads step %c1 iter_args(%outer = %zero) -> (tensor<128x64xf32>) : i32 {
    %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %outer) -> (tensor<128x64xf32>) : i32 {
      %row = arith.muli %i, %c64 : i32
      %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
      %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
      scf.yield %s : tensor<128x64xf32>
    }
    scf.yield %acc : tensor<128x64xf32>
  }
  tile.store %sum, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}
