// convert-tgpu-to-nvvm with wgmma: a streamed loop right after another one whose streams fill stages
// of the same layout continues its ring (StreamedLoop.cpp): the attention kernel's partial-block loop
// after its full-block loop. The ring is set up once (no second mbarrier initialisation, no CTA
// barriers between the loops), the second loop numbers its iterations on from the first loop's (stage
// and phase of ring index first + t), and the first loop's last iteration issues the second loop's
// first copies; the second loop issues them itself only when the first one ran no iteration.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=TMA

// One ring of 3 stages: 6 barriers, initialised once (with TMA also A's own barrier, 7).
// CHECK-LABEL: gpu.func @continued(
// CHECK-COUNT-6: tgpu.mbarrier_init
// CHECK-NOT: tgpu.mbarrier_init
// CHECK: scf.for
// The refill, issued once: the next iteration's blocks while there is one, else (the last iteration)
// the second loop's first blocks, when it has an iteration (both read the same views: the offsets are
// selected), into the next stage once its readers released it.
// CHECK: %[[HASNEXT:[a-z0-9_]+]] = arith.cmpi slt, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : i32
// CHECK: %[[DUE:[a-z0-9_]+]] = arith.ori %[[HASNEXT]], %{{[a-z0-9_]+}} : i1
// CHECK-NEXT: scf.if %[[DUE]] {
// CHECK: tgpu.ring_wait
// CHECK: arith.select %[[HASNEXT]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : i32
// CHECK: tgpu.cp_async_mbarrier_arrive
// CHECK-NOT: tgpu.cp_async_mbarrier_arrive
// CHECK: = tgpu.wgmma 
// CHECK: scf.yield
// Between the loops: no CTA barrier; the second loop's first copies, issued here only when the first
// loop ran no iteration. The two warpgroups' turns pass from one loop to the next: warpgroup 0 does
// not take its turn back after the first loop nor warpgroup 1 give it again before the second (with
// no CTA barrier between them, warpgroup 1's two arrivals could complete named barrier 1 alone).
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tgpu.named_barrier_sync %c1_i32,
// CHECK-NOT: tgpu.named_barrier_arrive %c1_i32,
// CHECK: tgpu.cp_async_mbarrier_arrive
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tgpu.named_barrier_sync %c1_i32,
// CHECK-NOT: tgpu.named_barrier_arrive %c1_i32,
// CHECK: scf.for
// CHECK-NOT: tgpu.mbarrier_init
// CHECK: tgpu.cp_async_mbarrier_arrive
// CHECK-NOT: tgpu.cp_async_mbarrier_arrive
// CHECK: = tgpu.wgmma 
// After the second loop warpgroup 0 takes back the turn.
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK: tgpu.named_barrier_sync %c1_i32, %c256_i32
// CHECK: gpu.return

// With TMA, thread 0 issues the second loop's first copies through the tensor map as well, with the
// same single expect-tx and copy as the next iteration's.
// TMA-LABEL: gpu.func @continued(
// TMA-COUNT-7: tgpu.mbarrier_init
// TMA-NOT: tgpu.mbarrier_init
// TMA: scf.for
// TMA: tgpu.mbarrier_arrive_expect_tx %{{.*}}, %c8192_i32
// TMA: tgpu.tma_load
// TMA-NOT: tgpu.mbarrier_arrive_expect_tx
// TMA: = tgpu.wgmma 
// TMA: scf.yield
// TMA-NOT: gpu.barrier
// TMA: scf.for
// TMA-NOT: tgpu.mbarrier_init
// TMA: gpu.return
func.func @continued(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
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

// A store between the loops (a TMA store's panels would reuse the ring's area): each loop sets up its
// own ring.
// CHECK-LABEL: gpu.func @store_between(
// CHECK-COUNT-6: tgpu.mbarrier_init
// CHECK: scf.for
// CHECK: tgpu.cp_async_mbarrier_arrive
// CHECK-NOT: tgpu.cp_async_mbarrier_arrive
// CHECK: = tgpu.wgmma 
// CHECK: gpu.barrier
// CHECK-COUNT-6: tgpu.mbarrier_init
// CHECK: scf.for
func.func @store_between(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
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
  tile.store %acc, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
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

// The second loop's bound is computed after the first loop: it cannot be known in the first loop's
// last iteration, so the second loop sets up its own ring.
// CHECK-LABEL: gpu.func @bound_after(
// CHECK-COUNT-6: tgpu.mbarrier_init
// CHECK: scf.for
// CHECK: tgpu.cp_async_mbarrier_arrive
// CHECK-NOT: tgpu.cp_async_mbarrier_arrive
// CHECK: = tgpu.wgmma 
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK-COUNT-6: tgpu.mbarrier_init
// CHECK: scf.for
func.func @bound_after(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
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
  %mb = arith.divui %m, %c64 : i32
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
