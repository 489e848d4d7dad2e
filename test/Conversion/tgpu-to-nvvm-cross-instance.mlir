// convert-tgpu-to-nvvm, persistent kernels whose consumers fill the ring by TMA and leave out the
// element-wise fallback (tma-fallback=0): the ring's barriers live across program instances. They
// are initialised once, before the tile loop; each instance numbers its uses of the ring from 0 (so
// the loop's code is that of a fresh ring) and the tile loop carries the parity of each stage's
// completed phases, which every wait adds; an instance issues its own first copy only in the CTA's
// first turn; after the instance's loop thread 0 issues the next instance's first copy into stage
// 0 (its bounds and blocks lowered anew for that instance's program ids), once this instance's last
// use of the stage is released; the output is staged in the last stage. With the fallback the ring
// stays per instance.
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm="wgmma=1 tma=1 tma-fallback=0" --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm="wgmma=1 tma=1" --cse --canonicalize | FileCheck %s --check-prefix=FALLBACK

// CHECK-LABEL: gpu.func @cross_instance(
// The ring's barriers (three stages of 16 KiB from byte 33792, barriers from 82944), once:
// CHECK: gpu.barrier
// CHECK: %[[FULL0:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[82944]
// CHECK-NEXT: nvvm.mbarrier.init %[[FULL0]], %c1_i32
// CHECK: %[[EMPTY0:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[82968]
// CHECK-NEXT: nvvm.mbarrier.init %[[EMPTY0]], %c8_i32
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %{{[0-9]+}} step %c1_i32 iter_args(%[[BITS:arg[0-9]+]] = %c0_i32) -> (i32)
// CHECK-NOT: nvvm.mbarrier.init
// The instance's own first copy (stage 0): only in the first turn, no wait.
// CHECK: %[[FIRST_TURN:[0-9]+]] = arith.cmpi eq, %[[TURN]], %c0_i32
// CHECK: %[[OWN:[0-9]+]] = arith.andi %{{[0-9]+}}, %[[FIRST_TURN]]
// CHECK-NEXT: scf.if %[[OWN]] {
// CHECK-NOT: nvvm.mbarrier.try_wait
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{[0-9]+}}, %c16384_i32
// CHECK-NEXT: llvm.getelementptr %{{[0-9]+}}[33792]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The loop: a refill waits for the stage's release with the stage's carried parity added, and so
// does the wait for the stage's copy.
// CHECK: scf.for
// CHECK: arith.shrui %[[BITS]], %{{[0-9]+}} : i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: arith.shrui %[[BITS]], %{{[0-9]+}} : i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.yield
// After the loop: the next instance's first copy into stage 0, after this instance's last use of
// the stage is released and any earlier store has read its panels.
// CHECK: arith.shrui %[[BITS]], %{{[0-9]+}} : i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %{{[0-9]+}}, %c16384_i32
// CHECK-NEXT: llvm.getelementptr %{{[0-9]+}}[33792]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The stages' parities for the next instance.
// CHECK: %[[B0:[0-9]+]] = arith.xori %[[BITS]], %{{[0-9]+}} : i32
// CHECK: %[[B1:[0-9]+]] = arith.xori %[[B0]], %{{[0-9]+}} : i32
// CHECK: %[[NEXT:[0-9]+]] = arith.xori %[[B1]], %{{[0-9]+}} : i32
// The output staged in the last stage.
// CHECK: %[[STAGING:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[66560]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %[[STAGING]]
// CHECK: scf.yield %[[NEXT]] : i32
// CHECK: gpu.return

// With the fallback: fresh barriers per instance.
// FALLBACK-LABEL: gpu.func @cross_instance(
// FALLBACK: scf.for %{{arg[0-9]+}} = %c0_i32
// FALLBACK: nvvm.mbarrier.init
// FALLBACK: llvm.getelementptr %{{[0-9]+}}[66560]
// FALLBACK: gpu.return
func.func @cross_instance(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.persistent = true} {
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
