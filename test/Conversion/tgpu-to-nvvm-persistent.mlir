// convert-tgpu-to-nvvm on a kernel marked `#tile.schedule<persistent = true>`: the body still describes one
// program instance; the kernel gets the grid its program ids index as three hidden i32 parameters
// after its own (then the TMA flag and maps), `tgpu.persistent` for the runtime, and runs the body in
// a loop over instances. CTA c of G takes chunks c, c + G, ... of two consecutive instances (one when
// there are fewer than 2G), decomposed x-fastest into program ids. With a producer warpgroup, the
// producer walks the same instances: it initialises the ring and the top-level TMA operand's
// one-stage ring (`full`, `empty`) once, announces them on named barrier 4, and per instance waits
// until the consumers released the previous instance's block, then copies this one's; the streamed
// loop's ring index runs on across instances (the tile loop carries it). The consumers wait for the
// announcement once, before their tile loop; per instance they derive their thread values anew
// behind an opaque zero (so LLVM keeps them in the loop), wait for the operand with the parity of
// their turn, release it once the last product reading it is done (in the last iteration of the
// loop reading it, or after the loop when that ran no iteration), and leave the output's TMA store in flight:
// each warpgroup stores its own 64 rows (its named barrier, its first thread) and waits for the
// copy's read only before its next store and after the loop. The MMA turn passes on from one
// instance to the next (given once before the tile loop, taken back once after it), and with
// nothing of the consumers' own to protect, the instance ends without a barrier (but for launches
// whose maps did not encode).
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// With `#tile.schedule<pair_instances = false>` every CTA takes one instance per turn, c + turn * G, in both
// warpgroup roles; nothing else changes.
// RUN: sed 's/persistent = true>} {/persistent = true, pair_instances = false>} {/' %s | flare-opt -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=SINGLE
// With `#tile.schedule<operands_after_first_stage = true>` the producer copies each instance's operand after
// the first stage of the instance's loop (or after the loop when it runs no iteration), not before
// the loop; a kernel lowered with the element-wise fallback keeps it first.
// RUN: sed 's/producer_warpgroup = true, persistent = true>} {/producer_warpgroup = true, persistent = true, operands_after_first_stage = true>} {/' %s | flare-opt -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=LATE
// RUN: sed 's/producer_warpgroup = true, persistent = true>} {/producer_warpgroup = true, persistent = true, operands_after_first_stage = true>} {/' %s | flare-opt -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=LATEFB
// With `#tile.schedule<dynamic_instances = true>` both roles run a while loop over the instances the
// producer's first thread takes (`tgpu.tile_take` on the counters in the workspace, a hidden pointer
// after the grid, `tgpu.split_slot_bytes = 0` for the runtime; tgpu-machine-to-nvvm.mlir has its
// arithmetic), put in slot turn % 2 of a two-stage ring whose `empty` barrier every warp of the CTA
// (8 + 4) arrives on once it read the slot. The consumers wait for the ring's set-up before their loop.
// RUN: sed 's/producer_warpgroup = true, persistent = true>} {/producer_warpgroup = true, persistent = true, pair_instances = false, dynamic_instances = true>} {/' %s | flare-opt -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=DYN
// DYN-LABEL: gpu.func @persistent(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32, %arg7: i32, %arg8: !llvm.ptr<1>, %arg9: i32,
// DYN-SAME: tgpu.persistent
// DYN-SAME: tgpu.split_slot_bytes = 0 : i32
// DYN: tgpu.warp_specialize({{.*}}) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
// DYN: tgpu.mbarrier_init %{{[0-9]+}}, %c12_i32
// DYN: tgpu.mbarrier_init %{{[0-9]+}}, %c12_i32
// DYN: tgpu.named_barrier_sync %c7_i32, %c128_i32
// DYN-NEXT: tgpu.named_barrier_arrive %c4_i32, %c384_i32
// DYN-NEXT: scf.while (%[[PTURN:arg[0-9]+]] = %c0_i32, %{{arg[0-9]+}} = %c0_i32) : (i32, i32) -> (i32, i32, i32) {
// DYN: tgpu.ring_wait %{{[0-9]+}}, use %{{[0-9]+}} of 2
// DYN: %[[TAKEN:[0-9]+]] = tgpu.tile_take %arg8 grid(%arg5, %arg6, %arg7) turn(%[[PTURN]]) : !llvm.ptr<1>
// DYN: llvm.store %[[TAKEN]]
// DYN: tgpu.mbarrier_arrive
// DYN: tgpu.ring_wait %{{[0-9]+}}, use %[[PTURN]] of 2
// DYN: llvm.load
// DYN: nvvm.bar.warp.sync
// DYN: tgpu.mbarrier_arrive
// DYN: scf.condition
// DYN: tgpu.warp_exit
// DYN: tgpu.named_barrier_sync %c4_i32, %c384_i32
// DYN: scf.while (%[[CTURN:arg[0-9]+]] = %c0_i32, %{{arg[0-9]+}} = %c0_i32) : (i32, i32) -> (i32, i32, i32) {
// DYN-NOT: atom
// DYN: tgpu.ring_wait %{{[0-9]+}}, use %[[CTURN]] of 2
// DYN: llvm.load
// DYN: nvvm.bar.warp.sync
// DYN: tgpu.mbarrier_arrive
// DYN: scf.condition
// DYN: } do {
// DYN: tgpu.ring_wait %{{[0-9]+}}, use %{{arg[0-9]+}} of 1
// DYN: scf.yield
// DYN-LABEL: gpu.func @alone(
// LATE-LABEL: gpu.func @persistent(
// LATE-DAG: %[[MAP11:.*]] = tgpu.tensor_map %arg11 : !llvm.ptr
// LATE-DAG: %[[MAP9:.*]] = tgpu.tensor_map %arg9 : !llvm.ptr
// LATE: tgpu.warp_specialize({{.*}}) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
// LATE: scf.for %[[PTURN:arg[0-9]+]] = %c0_i32 to %{{turns[_0-9]*}} step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// LATE: %[[PROW:[0-9]+]] = arith.muli %{{[a-z_0-9]+}}, %c128_i32 : i32
// LATE-NOT: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]]
// LATE: scf.for %[[KV:arg[0-9]+]] = %c0_i32 to %[[NB:[0-9]+]] step %c1_i32  : i32 {
// LATE-NOT: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]]
// LATE: tgpu.tma_load %{{[0-9]+}}, %[[MAP11]]
// LATE: %[[FIRSTIT:[0-9]+]] = arith.cmpi eq, %[[KV]], %c0_i32 : i32
// LATE-NEXT: %[[QHERE:[0-9]+]] = arith.andi %[[FIRSTIT]], %{{[0-9]+}} : i1
// LATE-NEXT: scf.if %[[QHERE]] {
// LATE-NEXT: %{{[0-9]+}} = arith.subi %[[PTURN]], %c1_i32 : i32
// LATE: tgpu.ring_wait %{{[0-9]+}}, use %{{[0-9]+}} of 1
// LATE: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c16384_i32
// LATE-NEXT: llvm.addrspacecast
// LATE-NEXT: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]][%c0_i32, %[[PROW]]], %{{[0-9]+}}
// LATE: %[[NONE:[0-9]+]] = arith.cmpi sle, %[[NB]], %c0_i32 : i32
// LATE-NEXT: %[[QAFTER:[0-9]+]] = arith.andi %[[NONE]], %{{[0-9]+}} : i1
// LATE-NEXT: scf.if %[[QAFTER]] {
// LATE: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c16384_i32
// LATE-NEXT: llvm.addrspacecast
// LATE-NEXT: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]][%c0_i32, %[[PROW]]], %{{[0-9]+}}
// LATE: scf.yield
// LATE: tgpu.warp_exit
// LATEFB-LABEL: gpu.func @persistent(
// LATEFB-DAG: %[[MAP9:.*]] = tgpu.tensor_map %arg9 : !llvm.ptr
// LATEFB: tgpu.warp_specialize({{.*}}) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
// LATEFB: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]]
// LATEFB: scf.for
// LATEFB-NOT: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]]
// LATEFB: tgpu.warp_exit
// SINGLE-LABEL: gpu.func @persistent(
// Single instances: the same schedule without `pairs` (its arithmetic: tgpu-machine-to-nvvm.mlir).
// SINGLE: tgpu.named_barrier_arrive %c4_i32, %c384_i32
// SINGLE-NEXT: %[[PSCHED:[a-z_0-9]+]], %[[PTURNS:[a-z_0-9]+]] = tgpu.tile_schedule grid(%arg5, %arg6, %arg7){{$}}
// SINGLE-NEXT: scf.for %[[PTURN:arg[0-9]+]] = %c0_i32 to %[[PTURNS]] step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// SINGLE-NEXT: %[[PX:[a-z_0-9]+]], %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tgpu.tile_instance %[[PSCHED]][%[[PTURN]]] : !tgpu.tile_schedule
// SINGLE-NEXT: arith.muli %[[PX]], %c128_i32 : i32
// SINGLE: tgpu.warp_exit
// SINGLE: %[[SCHED:[a-z_0-9]+]], %[[TURNS:[a-z_0-9]+]] = tgpu.tile_schedule grid(%arg5, %arg6, %arg7){{$}}
// SINGLE: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %[[TURNS]] step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// SINGLE-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tgpu.tile_instance %[[SCHED]][%[[TURN]]] : !tgpu.tile_schedule

// CHECK-LABEL: gpu.func @persistent(
// CHECK-SAME: %arg4: i32, %arg5: i32, %arg6: i32, %arg7: i32, %arg8: i32, %arg9: !llvm.ptr
// CHECK-SAME: tgpu.persistent
// CHECK-SAME: tgpu.user_args = 5 : i32
// CHECK-DAG: %[[MAP10:.*]] = tgpu.tensor_map %arg10 : !llvm.ptr
// CHECK-DAG: %[[MAP11:.*]] = tgpu.tensor_map %arg11 : !llvm.ptr
// CHECK-DAG: %[[MAP9:.*]] = tgpu.tensor_map %arg9 : !llvm.ptr
// The producer: registers given up, the ring's three stages and the operand's two barriers
// initialised once (`full` of the operand: one expect-tx; `empty`: the 8 consumer warps), announced.
// CHECK: tgpu.warp_specialize({{.*}}) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
// CHECK-COUNT-6: tgpu.mbarrier_init
// CHECK: tgpu.mbarrier_init %{{[0-9]+}}, %c1_i32
// CHECK-NEXT: tgpu.ring_barrier empty %{{[0-9a-z_]+}}[%c0_i32] : !tgpu.ring<1>
// CHECK-NEXT: tgpu.mbarrier_init %{{[0-9]+}}, %c8_i32
// CHECK: tgpu.named_barrier_arrive %c4_i32, %c384_i32
// The schedule of the instances of the grid (%arg5, %arg6, %arg7) in chunks of two (its arithmetic:
// tgpu-machine-to-nvvm.mlir), walked by the producer as by the consumers.
// CHECK: %[[PSCHED:[a-z_0-9]+]], %[[PTURNS:[a-z_0-9]+]] = tgpu.tile_schedule grid(%arg5, %arg6, %arg7) pairs{{$}}
// CHECK-NEXT: %[[PTILES:[0-9]+]] = scf.for %[[PTURN:arg[0-9]+]] = %c0_i32 to %[[PTURNS]] step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// CHECK-NEXT: %[[PX:[a-z_0-9]+]], %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} = tgpu.tile_instance %[[PSCHED]][%[[PTURN]]] : !tgpu.tile_schedule
// CHECK-NEXT: %[[PROW:[0-9]+]] = arith.muli %[[PX]], %c128_i32 : i32
// The operand's copy: after the consumers released the previous instance's (turn - 1 >= 0).
// CHECK: %[[PREV:[0-9]+]] = arith.subi %[[PTURN]], %c1_i32 : i32
// CHECK-NEXT: %[[HADPREV:[0-9]+]] = arith.cmpi sge, %[[PREV]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[HADPREV]] {
// CHECK: tgpu.ring_wait %{{[0-9]+}}, use %[[PREV]] of 1
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c16384_i32
// CHECK: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]][%c0_i32, %[[PROW]]], %{{[0-9]+}}
// Then the streamed loop's stages, their ring index numbered on from the instance's first.
// CHECK: scf.for
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c8192_i32
// CHECK: tgpu.tma_load %{{[0-9]+}}, %[[MAP11]]
// CHECK: scf.yield %{{[0-9]+}} : i32
// CHECK: tgpu.warp_exit
// The consumers.
// CHECK: tgpu.named_barrier_sync %c4_i32, %c384_i32
// CHECK-NEXT: %[[SECONDWG:[0-9]+]] = arith.cmpi uge, %{{[0-9]+}}, %c4_i32 : i32
// CHECK-NEXT: scf.if %[[SECONDWG]] {
// CHECK-NEXT: tgpu.named_barrier_arrive %c1_i32, %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: %{{[0-9]+}} = scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %{{turns[_0-9]*}} step %c1_i32 iter_args(%[[RING:arg[0-9]+]] = %c0_i32) -> (i32)  : i32 {
// CHECK: llvm.inline_asm has_side_effects "mov.u32 $0, 0;", "=r"  : () -> i32
// No copy of theirs when the maps encoded; the operand arrives on its one-stage ring, ring index =
// their turn.
// CHECK-NOT: tgpu.tma_load
// CHECK: tgpu.ring_wait %{{[0-9]+}}, use %[[TURN]] of 1
// CHECK-NOT: tgpu.tma_load
// CHECK: scf.for %[[I:arg[0-9]+]] = %c0_i32 to %[[NB:[0-9]+]] step %c1_i32
// CHECK: %[[NEXT:[0-9]+]] = arith.addi %[[I]], %c1_i32 : i32
// CHECK-NEXT: %[[LASTIT:[0-9]+]] = arith.cmpi sge, %[[NEXT]], %[[NB]] : i32
// CHECK: = tgpu.wgmma 
// CHECK: tgpu.wgmma_wait 0
// Each warp's lane 0 releases the operand once the last product reading it is done: in the loop's
// last iteration (then, with the ring's stage)...
// CHECK: %[[LANE0:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c0_i32 : i32
// CHECK-NEXT: %[[LASTREL:[0-9]+]] = arith.andi %[[LASTIT]], %[[LANE0]] : i1
// CHECK-NEXT: scf.if %[[LASTREL]] {
// CHECK-NEXT: tgpu.mbarrier_arrive %[[EMPTY:[0-9]+]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[LANE0]] {
// CHECK: tgpu.mbarrier_arrive
// CHECK: scf.yield
// ...or after the loop when it ran no iteration.
// CHECK: %[[NONE:[0-9]+]] = arith.cmpi sle, %[[NB]], %c0_i32 : i32
// CHECK-NEXT: %[[LANE0B:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c0_i32 : i32
// CHECK-NEXT: %[[NONEREL:[0-9]+]] = arith.andi %[[NONE]], %[[LANE0B]] : i1
// CHECK-NEXT: scf.if %[[NONEREL]] {
// CHECK-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
// The store, per warpgroup (named barrier 5 + g over its 128 threads): its first thread waits for the
// previous instance's copy to have read the panels, then the panels, its TMA store of 64 rows from
// row 64 g, committed and left in flight.
// CHECK-NOT: tgpu.named_barrier_sync %c3_i32,
// CHECK: %[[LOCAL:[0-9]+]] = arith.andi %{{[0-9]+}}, %c127_i32 : i32
// CHECK-NEXT: %[[LEADER:[0-9]+]] = arith.cmpi eq, %[[LOCAL]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: tgpu.tma_store_wait 0
// CHECK-NEXT: }
// CHECK-NEXT: %[[WGBAR:[0-9]+]] = arith.addi %[[GROUP:[0-9]+]], %c5_i32 : i32
// CHECK-NEXT: tgpu.named_barrier_sync %[[WGBAR]], %c128_i32
// CHECK: tgpu.named_barrier_sync %[[WGBAR]], %c128_i32
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: %{{[0-9]+}} = arith.muli %[[GROUP]], %c64_i32 : i32
// CHECK: tgpu.tma_store %[[MAP10]]
// CHECK-NEXT: tgpu.tma_store_commit
// CHECK-NOT: tgpu.tma_store_wait
// The instance's last barrier only where the maps did not encode (the direct store's branch).
// CHECK: } else {
// CHECK: tgpu.named_barrier_sync %c3_i32, %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %{{[0-9]+}} : i32
// CHECK-NEXT: }
// CHECK-NEXT: %[[FIRSTWG:[0-9]+]] = arith.cmpi ult, %{{[0-9]+}}, %c4_i32 : i32
// CHECK-NEXT: scf.if %[[FIRSTWG]] {
// CHECK-NEXT: tgpu.named_barrier_sync %c1_i32, %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: %[[ANYLOCAL:[0-9]+]] = arith.andi %{{[0-9]+}}, %c127_i32 : i32
// CHECK-NEXT: %[[ISSUER:[0-9]+]] = arith.cmpi eq, %[[ANYLOCAL]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[ISSUER]] {
// CHECK-NEXT: tgpu.tma_store_wait 0
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
func.func @persistent(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
  %va = tile.make_view %a, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %o = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o, %vc[%row0, %c0] : tensor<128x64xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Without a producer warpgroup the consumers copy A (a top-level TMA operand) themselves, one
// instance ahead: thread 0 initialises its `full` and `empty` barriers and copies the first
// instance's block before the tile loop; at each instance's start it keeps the next instance's
// coordinates in shared memory; every warp releases the block after its last product reading it, and
// after that loop thread 0 waits until all have and copies the next instance's block. The instance
// waits for A on its one-stage ring, ring index = the turn. The ring is set up per instance; the
// output (16 KiB, more than one 8 KiB stage) is staged in the ring's stages, so its copy is waited
// for at once, and every instance ends with a CTA barrier.
// Only the MMA turn is carried.
// CHECK-LABEL: gpu.func @alone(
// CHECK-SAME: %arg4: i32, %arg5: i32, %arg6: i32, %arg7: i32, %arg8: i32, %arg9: !llvm.ptr
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: tgpu.persistent
// CHECK-DAG: %[[MAP11:.*]] = tgpu.tensor_map %arg11 : !llvm.ptr
// CHECK-DAG: %[[MAP9:.*]] = tgpu.tensor_map %arg9 : !llvm.ptr
// CHECK-NOT: tgpu.warp_specialize
// CHECK: %[[RING0:[0-9]+]] = tgpu.ring %{{[0-9]+}}[%c16384_i32] : !llvm.ptr<3> -> !tgpu.ring<1>
// CHECK-NEXT: %[[FULL0:[0-9]+]] = tgpu.ring_barrier full %[[RING0]][%c0_i32] : !tgpu.ring<1>
// CHECK-NEXT: tgpu.mbarrier_init %[[FULL0]], %c1_i32
// CHECK-NEXT: %[[EMPTY0:[0-9]+]] = tgpu.ring_barrier empty %{{[0-9a-z_]+}}[%c0_i32] : !tgpu.ring<1>
// CHECK-NEXT: tgpu.mbarrier_init %[[EMPTY0]], %c8_i32
// CHECK: tgpu.mbarrier_arrive_expect_tx %[[FULL0]], %c16384_i32
// CHECK: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]][%c0_i32, %{{[0-9]+}}], %[[FULL0]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %[[TRIPS:turns[_0-9]*]] step %c1_i32  : i32 {
// CHECK: %[[RING:[0-9]+]] = tgpu.ring %{{[0-9]+}}[%c16384_i32] : !llvm.ptr<3> -> !tgpu.ring<1>
// CHECK-NEXT: %[[FULL:[0-9]+]] = tgpu.ring_barrier full %[[RING]][%c0_i32] : !tgpu.ring<1>
// CHECK: %[[EMPTY:[0-9]+]] = tgpu.ring_barrier empty %[[RING]][%c0_i32] : !tgpu.ring<1>
// CHECK-NEXT: %[[NEXT:[0-9]+]] = arith.addi %[[TURN]], %c1_i32 : i32
// CHECK-NEXT: %[[HASNEXT:[0-9]+]] = arith.cmpi slt, %[[NEXT]], %[[TRIPS]] : i32
// CHECK-NEXT: %[[T0:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c0_i32 : i32
// CHECK-NEXT: %[[KEEP:[0-9]+]] = arith.andi %[[T0]], %[[HASNEXT]] : i1
// CHECK-NEXT: scf.if %[[KEEP]] {
// CHECK: tgpu.tile_instance %{{[a-z_0-9]+}}[%[[NEXT]]] : !tgpu.tile_schedule
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} : i32, !llvm.ptr<3>
// CHECK: llvm.store %c0_i32, %{{[0-9]+}} : i32, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK: gpu.barrier
// CHECK: tgpu.mbarrier_init
// CHECK: tgpu.ring_wait %[[FULL]], use %[[TURN]] of 1
// CHECK: scf.for
// CHECK: tgpu.mbarrier_arrive %[[EMPTY]]
// CHECK: scf.yield
// CHECK: tgpu.mbarrier_arrive %[[EMPTY]]
// CHECK: scf.if
// CHECK-NEXT: tgpu.ring_wait %[[EMPTY]], use %[[TURN]] of 1
// CHECK-NEXT: llvm.getelementptr %{{[0-9]+}}[16400]
// CHECK-NEXT: %[[ROW:[0-9]+]] = llvm.load
// CHECK-NEXT: llvm.getelementptr %{{[0-9]+}}[16404]
// CHECK-NEXT: %[[COL:[0-9]+]] = llvm.load
// CHECK-NEXT: tgpu.mbarrier_arrive_expect_tx %[[FULL]], %c16384_i32
// CHECK-NEXT: llvm.addrspacecast
// CHECK-NEXT: tgpu.tma_load %{{[0-9]+}}, %[[MAP9]][%[[COL]], %[[ROW]]], %[[FULL]]
// CHECK: tgpu.tma_store %[[MAP11]]
// CHECK-NEXT: tgpu.tma_store_commit
// CHECK-NEXT: tgpu.tma_store_wait 0
// CHECK: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: %[[FIRSTWG:[0-9]+]] = arith.cmpi ult, %{{[0-9]+}}, %c4_i32 : i32
// CHECK-NEXT: scf.if %[[FIRSTWG]] {
// CHECK-NEXT: tgpu.named_barrier_sync %c1_i32, %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
func.func @alone(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
  %va = tile.make_view %a, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %o = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o, %vc[%row0, %c0] : tensor<128x64xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Without a producer warpgroup, an output that fits one stage of the ring (16 KiB, three stages of
// 16 KiB from byte 33792) is staged in the last stage (66560) and its copy left in flight: the
// instance's first copy (stage 0) goes ahead of it, each refill waits for the store's read after the
// stage's `empty`, thread 0 waits for it before the next instance writes the staging, and once
// after the tile loop.
// CHECK-LABEL: gpu.func @last_stage(
// CHECK-DAG: %[[MAP11:.*]] = tgpu.tensor_map %arg11 : !llvm.ptr
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c16384_i32
// CHECK-NEXT: %[[S0:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[33792]
// CHECK-NEXT: llvm.addrspacecast %[[S0]]
// CHECK-NEXT: tgpu.tma_load
// CHECK: tgpu.ring_wait %{{[0-9]+}}, use %{{[0-9]+}} of 3
// CHECK-NEXT: }
// CHECK-NEXT: tgpu.tma_store_wait 0
// CHECK-NEXT: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c16384_i32
// CHECK: tgpu.tma_store_wait 0
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: %[[STAGING:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[66560]
// CHECK-NEXT: tgpu.tma_store %[[MAP11]][{{.*}}], %[[STAGING]]
// CHECK-NEXT: tgpu.tma_store_commit
// CHECK-NEXT: }
// CHECK: tgpu.tma_store_wait 0
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
func.func @last_stage(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
  %va = tile.make_view %a, [%m, %c128], [%c128, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c128 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c128 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %o = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o, %vc[%row0, %c0] : tensor<128x64xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// `#tile.schedule<persistent = false>`: no hidden grid, program ids from the launch.
// CHECK-LABEL: gpu.func @launched(
// CHECK-SAME: %arg4: i32, %arg5: i32, %arg6: !llvm.ptr
// CHECK-NOT: tgpu.persistent
// CHECK: gpu.block_id x
// CHECK-NOT: gpu.grid_dim
// CHECK: gpu.return
func.func @launched(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
  %va = tile.make_view %a, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %o = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o, %vc[%row0, %c0] : tensor<128x64xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Two loops read the produced operand, their bounds computed before the first: each warp releases
// it after the instance's last product reading it. The first loop's last iteration does when the
// second loop runs no iteration, the second loop's last iteration when it runs, and after the loops
// only when neither ran.
// CHECK-LABEL: gpu.func @two_loops(
// The consumers' first loop: its last iteration while the second loop runs none (lb2 >= ub2).
// CHECK: tgpu.warp_exit
// CHECK: scf.for %[[I:arg[0-9]+]] = %c0_i32 to %[[UB1:[0-9]+]] step %c1_i32 iter_args({{.*}}) -> (f32,
// CHECK: %[[NEXT1:[0-9]+]] = arith.addi %[[I]], %c1_i32 : i32
// CHECK-NEXT: %[[LAST1:[0-9]+]] = arith.cmpi sge, %[[NEXT1]], %[[UB1]] : i32
// CHECK-NEXT: %[[IDLE2:[0-9]+]] = arith.cmpi sge, %[[UB1]], %[[UB2:arg[0-9]+]] : i32
// CHECK-NEXT: %[[REL1:[0-9]+]] = arith.andi %[[LAST1]], %[[IDLE2]] : i1
// CHECK: tgpu.wgmma_wait 0
// CHECK: %[[L0:[0-9]+]] = arith.andi %[[REL1]], %{{[0-9]+}} : i1
// CHECK-NEXT: scf.if %[[L0]] {
// CHECK-NEXT: tgpu.mbarrier_arrive %[[EMPTY:[0-9]+]]
// The second loop: its own last iteration.
// CHECK: scf.for %[[J:arg[0-9]+]] = %[[UB1]] to %[[UB2]] step %c1_i32 iter_args({{.*}}) -> (f32,
// CHECK: %[[NEXT2:[0-9]+]] = arith.addi %[[J]], %c1_i32 : i32
// CHECK-NEXT: %[[LAST2:[0-9]+]] = arith.cmpi sge, %[[NEXT2]], %[[UB2]] : i32
// CHECK: tgpu.wgmma_wait 0
// CHECK: %[[L1:[0-9]+]] = arith.andi %[[LAST2]], %{{[0-9]+}} : i1
// CHECK-NEXT: scf.if %[[L1]] {
// CHECK-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
// After the loops, unless the first loop released it (it ran, the second did not) or the second
// did (it ran).
// CHECK: scf.yield
// CHECK: %[[IDLE2B:[0-9]+]] = arith.cmpi sge, %[[UB1]], %[[UB2]] : i32
// CHECK-NEXT: %[[RUNS1:[0-9]+]] = arith.cmpi sgt, %[[UB1]], %c0_i32 : i32
// CHECK-NEXT: arith.andi %[[RUNS1]], %[[IDLE2B]] : i1
// CHECK: scf.if %{{[0-9]+}} {
// CHECK-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
func.func @two_loops(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32, %n2: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
  %va = tile.make_view %a, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %acc2 = scf.for %j = %nb to %n2 step %c1 iter_args(%acc1 = %acc) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %j, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc1 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %o = arith.truncf %acc2 : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o, %vc[%row0, %c0] : tensor<128x64xbf16>, !tile.view<bf16, 2>
  return
}
