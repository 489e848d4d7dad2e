// convert-tgpu-to-nvvm, persistent kernels marked `#tile.schedule<prefetch_next_instance = true>` whose
// consumers fill the ring by TMA and leave out the element-wise fallback (tma-fallback=0): after
// the instance's loop, thread 0 issues the next
// instance's first copy into stage 0 (its bounds and blocks lowered anew for that instance's
// program ids) once this instance's last use of the stage is released, on barriers it initialises
// afresh for it. Every instance numbers the ring from 0 on fresh barriers, as a ring of its own:
// it initialises stage 0's barriers and issues its own first copy only in the CTA's first turn, the
// other stages' barriers every turn. The output is staged in the last stage. With the fallback, or
// without the attribute, the ring is set up per instance.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=FALLBACK
// RUN: sed 's/, prefetch_next_instance = true//' %s | flare-opt --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=FALLBACK

// Three stages of 16 KiB from byte 33792; barriers from 82944 (full) and 82968 (empty).
// CHECK-LABEL: gpu.func @cross_instance(
// CHECK: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %{{turns[_0-9]*}} step %c1_i32  : i32 {
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if %{{[0-9]+}} {
// CHECK-NEXT: %[[FIRST:[0-9]+]] = arith.cmpi eq, %[[TURN]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[RING1:[0-9]+]] = tgpu.ring %{{[0-9]+}}[%c82944_i32] : !llvm.ptr<3> -> !tgpu.ring<3>
// CHECK-NEXT: %[[FULL0:[0-9]+]] = tgpu.ring_barrier full %[[RING1]][%c0_i32] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.mbarrier_init %[[FULL0]], %c1_i32
// CHECK: }
// CHECK-NEXT: %[[RING2:[0-9]+]] = tgpu.ring %{{[0-9]+}}[%c82944_i32] : !llvm.ptr<3> -> !tgpu.ring<3>
// CHECK-NEXT: %[[FULL1:[0-9]+]] = tgpu.ring_barrier full %[[RING2]][%c1_i32] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.mbarrier_init %[[FULL1]], %c1_i32
// CHECK: tgpu.fence_async_shared
// CHECK: gpu.barrier
// The instance's own first copy, into stage 0, only in the first turn.
// CHECK: %[[FIRST_TURN:[0-9]+]] = arith.cmpi eq, %[[TURN]], %c0_i32 : i32
// CHECK: %[[OWN:[0-9]+]] = arith.andi %{{[0-9]+}}, %[[FIRST_TURN]]
// CHECK-NEXT: scf.if %[[OWN]] {
// CHECK-NOT: nvvm.mbarrier.try_wait
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{[0-9]+}}, %c16384_i32
// CHECK-NEXT: llvm.getelementptr %{{[0-9]+}}[33792]
// CHECK: tgpu.tma_load
// CHECK: scf.for
// CHECK: scf.yield
// After the loop: when there is a next instance, thread 0 waits for this instance's last use of
// stage 0 to be released, initialises its barriers afresh and issues the next instance's copy.
// CHECK: %[[RELEASED:[0-9]+]] = tgpu.ring_barrier empty %{{[0-9a-z_]+}}[%c0_i32] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.ring_wait %[[RELEASED]], use %{{[0-9]+}} of 3
// CHECK: }
// CHECK-NEXT: %[[RING3:[0-9]+]] = tgpu.ring %{{[0-9]+}}[%c82944_i32] : !llvm.ptr<3> -> !tgpu.ring<3>
// CHECK-NEXT: %[[NEXT_FULL0:[0-9]+]] = tgpu.ring_barrier full %[[RING3]][%c0_i32] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.mbarrier_init %[[NEXT_FULL0]], %c1_i32
// CHECK: tgpu.mbarrier_init %{{[0-9]+}}, %c8_i32
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK: tgpu.mbarrier_arrive_expect_tx %[[NEXT_FULL0]], %c16384_i32
// CHECK-NEXT: llvm.getelementptr %{{[0-9]+}}[33792]
// CHECK: tgpu.tma_load %{{[0-9]+}}, %{{.*}}, %[[NEXT_FULL0]]
// The output staged in the last stage.
// CHECK: %[[STAGING:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[66560]
// CHECK-NEXT: tgpu.tma_store %{{.*}}, %[[STAGING]]
// CHECK: gpu.return

// Per instance: every barrier initialised in every turn, no copy for the next instance.
// FALLBACK-LABEL: gpu.func @cross_instance(
// FALLBACK: scf.for %{{arg[0-9]+}} = %c0_i32
// FALLBACK: gpu.barrier
// FALLBACK-NEXT: scf.if
// FALLBACK-NEXT: %[[RING4:[0-9]+]] = tgpu.ring %{{[0-9]+}}[%c82944_i32] : !llvm.ptr<3> -> !tgpu.ring<3>
// FALLBACK-NEXT: tgpu.ring_barrier full %[[RING4]][%c0_i32] : !tgpu.ring<3>
// FALLBACK-NEXT: tgpu.mbarrier_init
// FALLBACK: scf.yield
// FALLBACK-NOT: tgpu.mbarrier_init
// FALLBACK: llvm.getelementptr %{{[0-9]+}}[66560]
// FALLBACK: gpu.return
func.func @cross_instance(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<persistent = true, prefetch_next_instance = true>} {
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
