// convert-tgpu-to-nvvm with wgmma and TMA: a kernel marked `#tile.schedule<producer_warpgroup = true>`
// (ProducerWarpgroup.cpp) runs one more warpgroup (known block size 384 for 8 warps, one CTA per SM).
// Warps 8-11 branch off at the start, give up registers (setmaxnreg.dec 40), initialise the kernel's
// first ring and announce it (named barrier 4, arrive only), issue the TMA copies of every streamed
// loop (waiting on `empty`, announcing the bytes on `full`) and exit. The kernel's own warps take the
// registers (setmaxnreg.inc 232), wait for the ring on named barrier 4, and in their loops only wait
// on `full`, compute and arrive on `empty`: no copy of theirs is left in the loops, and their CTA
// barriers become named barrier 3 over their 256 threads (the producer never reaches them). The input is the ring
// continuation's kernel (tgpu-to-nvvm-ring-continuation.mlir): two streamed loops sharing one ring, so
// that the producer numbers the second loop's ring index on from the first loop's count.
// Without the attribute, with two CTAs per SM (setmaxnreg needs one), without TMA, or when no
// streamed loop is one the producer can issue, the kernel keeps its 256 threads.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=NOTMA
// The registers of the two roles are the kernel's tgpu.warp_roles (tgpu-warp-specialize keeps a
// hand-written choice that fits): 224 and 56 here instead of 232 and 40.
// RUN: sed 's/tile.schedule = #tile.schedule<producer_warpgroup = true>}/tile.schedule = #tile.schedule<producer_warpgroup = true>, tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 224, producer_registers = 56>}/' %s | flare-opt -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" | FileCheck %s --check-prefix=ROLES
// ROLES-LABEL: gpu.func @produced(
// ROLES: tgpu.warp_specialize(%{{.*}}) consumers(8 warps, 224 registers) producer(4 warps, 56 registers) {

// 8 warps of consumers and 4 of the producer; setmaxnreg is honoured with one CTA per SM only.
// CHECK-LABEL: gpu.func @produced(
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME: nvvm.minctasm = 1 : i32
// Its warpgroups move register budgets: the runtime compiles its PTX as a whole program.
// CHECK-SAME: tgpu.register_budgets
// The start: warps >= 8 give up registers; the producer numbers its own threads from 0. Its thread 0
// initialises the kernel's first ring (`full` expects one expect-tx (TMA) or the 128 producer threads
// (maps not encoded), `empty` each of the 8 consumer warps) and the producer announces it on named
// barrier 4 without waiting: its first copies leave at once.
// CHECK: %[[TID:[a-z0-9_]+]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[WARP:[a-z0-9_]+]] = arith.shrui %[[TID]], %c5_i32 : i32
// CHECK: tgpu.warp_specialize(%[[WARP]]) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
// CHECK-NEXT: %[[PTID:[a-z0-9_]+]] = arith.subi %[[TID]], %c256_i32 : i32
// CHECK-NEXT: %[[INIT:[a-z0-9_]+]] = arith.cmpi eq, %[[PTID]], %c0_i32 : i32
// CHECK: %[[MAPS:[a-z0-9_]+]] = arith.cmpi ne, %{{[a-z0-9_]+}}, %c0_i32 : i32
// CHECK-NEXT: %[[FULLCOUNT:[a-z0-9_]+]] = arith.select %[[MAPS]], %c1_i32, %c128_i32 : i32
// CHECK-NEXT: scf.if %[[INIT]] {
// CHECK: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %[[FULLCOUNT]]
// CHECK: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %c8_i32
// CHECK: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %[[FULLCOUNT]]
// CHECK: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %c8_i32
// CHECK: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %[[FULLCOUNT]]
// CHECK: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %c8_i32
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: {{^ *}}}{{ *$}}
// Where the maps did not encode, all 128 producer threads arrive on `full` after their copies: they
// first meet on the producer's own named barrier 7, after its thread 0 initialised the barriers.
// CHECK-NEXT: %[[NOMAPS:[a-z0-9_]+]] = arith.cmpi eq, %{{[a-z0-9_]+}}, %c0_i32 : i32
// CHECK-NEXT: scf.if %[[NOMAPS]] {
// CHECK-NEXT: tgpu.named_barrier_sync %c7_i32, %c128_i32
// CHECK-NEXT: }
// CHECK-NEXT: tgpu.named_barrier_arrive %c4_i32, %c384_i32
// The producer's first loop (ring index = iteration, 3 stages). Its thread 0 waits for the stage's
// previous use to be released on `empty` (from ring index 3 on), expects the stage's 8192 bytes on
// `full` and issues the TMA copy. Launches whose tensor maps did not encode: all 128 producer
// threads wait, copy element by element, fence for the async proxy and arrive on `full`.
// CHECK-NOT: gpu.barrier
// CHECK: %[[NB:[a-z0-9_]+]] = arith.divui %{{[a-z0-9_]+}}, %c64_i32 : i32
// CHECK-NEXT: scf.for %[[I:[a-z0-9_]+]] = %c0_i32 to %[[NB]] step %c1_i32 : i32 {
// CHECK-NEXT: %{{[a-z0-9_]+}} = arith.remui %[[I]], %c3_i32 : i32
// CHECK-NEXT: %[[PREV:[a-z0-9_]+]] = arith.subi %[[I]], %c3_i32 : i32
// CHECK: scf.if %[[MAPS]] {
// CHECK-NEXT: scf.if %[[INIT]] {
// CHECK-NEXT: %[[REUSE:[a-z0-9_]+]] = arith.cmpi sge, %[[PREV]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[REUSE]] {
// CHECK: tgpu.ring_wait
// CHECK: }
// CHECK-NEXT: tgpu.mbarrier_arrive_expect_tx %[[FULL0:[a-z0-9_]+]], %c8192_i32
// CHECK: tgpu.tma_load %{{.*}}, %{{[a-z0-9_]+}}[{{.*}}], %[[FULL0]]
// CHECK: } else {
// CHECK: tgpu.ring_wait
// CHECK: scf.for
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.mbarrier_arrive %[[FULL0]]
// The second loop continues the ring: no second meeting with the consumers, and its ring index is
// the first loop's iteration count plus its own iteration. Then the producer exits.
// CHECK-NOT: gpu.barrier
// CHECK: %[[COUNT:[a-z0-9_]+]] = arith.maxsi %[[NB]], %c0_i32 : i32
// CHECK-NOT: gpu.barrier
// CHECK: %[[MB:[a-z0-9_]+]] = arith.divui %{{[a-z0-9_]+}}, %c64_i32 : i32
// CHECK-NEXT: scf.for %[[J:[a-z0-9_]+]] = %c0_i32 to %[[MB]] step %c1_i32 : i32 {
// CHECK-NEXT: %[[T:[a-z0-9_]+]] = arith.addi %[[COUNT]], %[[J]] : i32
// CHECK-NEXT: %{{[a-z0-9_]+}} = arith.remui %[[T]], %c3_i32 : i32
// CHECK-NEXT: %{{[a-z0-9_]+}} = arith.subi %[[T]], %c3_i32 : i32
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{.*}}, %c8192_i32
// CHECK: tgpu.tma_load
// CHECK-NOT: gpu.barrier
// CHECK: tgpu.warp_exit
// CHECK-NEXT: }
// The consumers, with the registers the producer gave back. (Before the ring, thread 0 loads A, a
// copy outside the loops.)
// CHECK-NOT: tgpu.warp_specialize
// CHECK-NOT: gpu.barrier
// The consumers initialise nothing of the ring: they wait on named barrier 4 (their 256 threads and
// the producer's 128 arrivals) before the first loop.
// CHECK-NOT: tgpu.mbarrier_init %{{[a-z0-9_]+}}, %c8_i32
// CHECK: tgpu.named_barrier_sync %c4_i32, %c384_i32
// The consumers' loops: wait on `full`, the MMAs, lane 0 of each warp arrives on `empty`; no copy,
// no expect-tx, no whole-CTA barrier in either loop or after them.
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tgpu.cp_async
// CHECK: scf.for {{.*}} iter_args(
// CHECK-NOT: tgpu.cp_async
// CHECK-NOT: tgpu.mbarrier_arrive_expect_tx
// CHECK: tgpu.ring_wait
// CHECK-NOT: tgpu.cp_async
// CHECK: = tgpu.wgmma 
// CHECK-NOT: tgpu.cp_async
// CHECK: tgpu.mbarrier_arrive %{{[a-z0-9_]+}}
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tgpu.cp_async
// CHECK-NOT: tgpu.mbarrier_init
// CHECK: scf.for {{.*}} iter_args(
// CHECK-NOT: tgpu.cp_async
// CHECK-NOT: tgpu.mbarrier_arrive_expect_tx
// CHECK: tgpu.ring_wait
// CHECK-NOT: tgpu.cp_async
// CHECK: = tgpu.wgmma 
// CHECK-NOT: tgpu.cp_async
// CHECK: tgpu.mbarrier_arrive %{{[a-z0-9_]+}}
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tgpu.cp_async
// CHECK-NOT: tgpu.warp_exit
// CHECK: gpu.return

// Without TMA (cp.async rings) there is no producer: 256 threads, the consumers copy in their loops.
// NOTMA-LABEL: gpu.func @produced(
// NOTMA-SAME: known_block_size = array<i32: 256, 1, 1>
// NOTMA-NOT: nvvm.minctasm
// NOTMA-NOT: tgpu.warp_specialize
// NOTMA-NOT: tgpu.warp_exit
// NOTMA-NOT: tgpu.named_barrier_sync %c3_i32,
// NOTMA: scf.for {{.*}} iter_args(
// NOTMA: tgpu.cp_async_mbarrier_arrive
// NOTMA: = tgpu.wgmma 
// NOTMA-NOT: tgpu.warp_specialize
// NOTMA-NOT: tgpu.warp_exit
// NOTMA: gpu.return
func.func @produced(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>} {
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
  %mb = arith.divui %m, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %acc2 = scf.for %i = %c0 to %mb step %c1 iter_args(%acc0 = %acc) -> (tensor<128x64xf32>) : i32 {
    %j = arith.addi %i, %nb : i32
    %row = arith.muli %j, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  tile.store %acc2, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// `#tile.schedule<producer_warpgroup = false>`: 256 threads, no register moves, no exit; the CTA barriers stay
// whole-CTA barriers and the consumers' loops issue their own TMA copies.
// CHECK-LABEL: gpu.func @not_requested(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: tgpu.register_budgets
// CHECK-SAME: {
// CHECK-NOT: nvvm.minctasm
// CHECK-NOT: tgpu.warp_specialize
// CHECK-NOT: tgpu.named_barrier_sync %c3_i32,
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} iter_args(
// CHECK: tgpu.tma_load
// CHECK: = tgpu.wgmma 
// CHECK-NOT: tgpu.warp_specialize
// CHECK-NOT: tgpu.warp_exit
// CHECK-NOT: tgpu.named_barrier_sync %c3_i32,
func.func @not_requested(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<>} {
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
  %mb = arith.divui %m, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %acc2 = scf.for %i = %c0 to %mb step %c1 iter_args(%acc0 = %acc) -> (tensor<128x64xf32>) : i32 {
    %j = arith.addi %i, %nb : i32
    %row = arith.muli %j, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  tile.store %acc2, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Requested, but the only streamed loop is not at the kernel's top level (the producer only issues
// loops whose bounds and offsets it computes from the arguments): that loop keeps its own copies and
// the producer's branch and register moves go away (256 threads). The kernel's barriers stay named
// barriers, now over all 256 threads of the CTA.
// CHECK-LABEL: gpu.func @nested(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: nvvm.minctasm
// CHECK-NOT: tgpu.warp_specialize
// CHECK-NOT: tgpu.warp_exit
// CHECK-NOT: gpu.barrier
// CHECK: tgpu.named_barrier_sync %c3_i32, %c256_i32
// CHECK: scf.for {{.*}} iter_args(
// CHECK: tgpu.tma_load
// CHECK: = tgpu.wgmma 
// CHECK-NOT: tgpu.warp_specialize
// CHECK-NOT: tgpu.warp_exit
// CHECK-NOT: gpu.barrier
func.func @nested(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %k: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>} {
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
  %any = arith.cmpi sgt, %k, %c0 : i32
  scf.if %any {
    %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
      %row = arith.muli %i, %c64 : i32
      %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
      %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
      scf.yield %s : tensor<128x64xf32>
    }
    tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  }
  return
}
