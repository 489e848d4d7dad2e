// convert-tgpu-to-nvvm with wgmma: streamed and pipelined dot operands whose views the host can
// describe are copied by TMA (TensorMaps.cpp). The kernel gains hidden parameters after its own (an
// i32 "maps encoded" flag, then one 128-byte tensor map per view, described in tgpu.tensor_maps for
// the runtime); thread 0 announces each stage's bytes on its `full` mbarrier and issues one
// cp.async.bulk.tensor per 64-column panel. Launches whose maps did not encode take the other path.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot=arch=sm_80 --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm=arch=sm_80 --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=SM80
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=NOFB

// A streamed B whose view starts at a per-program offset (pid * ldb): the map is 3-D, [64 columns,
// n rows, unbounded] with strides [1, 64, ldb (argument 4)], read at (0, row, pid).
// (A, loaded before the loop, has a map of its own: tgpu-to-nvvm-tma-operand.mlir.)
// CHECK-LABEL: gpu.func @stream(
// CHECK-SAME: %[[FLAG:[a-z0-9]+]]: i32, %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64}, %[[MAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tgpu.tensor_maps = [{box = array<i32: 64, 128>, {{.*}}pointer = 0 : i32{{.*}}}, {box = array<i32: 64, 64, 1>, elem_bytes = 2 : i32, pointer = 1 : i32,
// CHECK-SAME: sizes = [array<i64: 0, 64>, array<i64: 1, 3>, array<i64: 0, 2147483648>],
// CHECK-SAME: strides = [array<i64: 0, 1>, array<i64: 0, 64>, array<i64: 1, 4>], swizzle = 128 : i32}]
// CHECK-SAME: tgpu.user_args = 5 : i32
// CHECK-DAG: %[[MAPV:.*]] = tgpu.tensor_map %[[MAP]] : !llvm.ptr
// CHECK-NOT: tgpu.cp_async 
// CHECK: %[[PID:.*]] = arith.index_cast{{.*}}block_id
// `full` expects thread 0's arrival (TMA) or every thread's (cp.async), chosen by the flag.
// CHECK: %[[USE:.*]] = arith.cmpi ne, %[[FLAG]], %c0_i32 : i32
// CHECK: %[[COUNT:.*]] = arith.select %[[USE]], %c1_i32, %c256_i32 : i32
// CHECK: tgpu.mbarrier_init %{{.*}}, %[[COUNT]]
// The async proxy completes the barriers: their initialisation is fenced for it.
// CHECK: tgpu.fence_async_shared
// CHECK: gpu.barrier
// Prologue, TMA path: 64 x 64 x 2 bytes, one box.
// CHECK: scf.if %[[USE]] {
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{.*}}, %c8192_i32
// CHECK: %[[DST:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: tgpu.tma_load %[[DST]], %[[MAPV]][%c0_i32, %c0_i32, %[[PID]]], %{{.*}}
// Maps not encoded: every thread copies 16-byte chunks element by element in a rolled loop, stores
// them to the swizzled panel and arrives (no cp.async path: maps fail only where it would too).
// The writers fence their generic-proxy stores for wgmma's async proxy before they arrive.
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.mbarrier_arrive
// In the loop the refill takes the same two paths.
// CHECK: scf.for
// CHECK: tgpu.tma_load %{{.*}}, %[[MAPV]]
// CHECK: } else {
// CHECK: scf.for
// CHECK: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.mbarrier_arrive
// Waiting for the stage needs no proxy fence on the consumers' side (TMA writes through the async
// proxy; the fallback's writers fenced).
// CHECK: tgpu.ring_wait
// CHECK-NOT: tgpu.fence_async_shared
// CHECK: tgpu.wgmma_fence
// CHECK: = tgpu.wgmma 

// With tma-fallback=0 the kernel keeps its hidden parameters but not the other path: it is marked
// tgpu.tma_required (the runtime refuses launches whose maps do not encode), `full` expects thread 0
// alone, and no thread copies element by element or fences for it.
// NOFB-LABEL: gpu.func @stream(
// NOFB-SAME: %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64}, %[[MAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// NOFB-SAME: tgpu.tma_required
// NOFB-DAG: %[[MAPV:.*]] = tgpu.tensor_map %[[MAP]] : !llvm.ptr
// NOFB-NOT: arith.select
// NOFB: tgpu.mbarrier_init %{{.*}}, %c1_i32
// NOFB-NOT: vector<8xbf16>, !llvm.ptr<3>
// NOFB: tgpu.tma_load %{{.*}}, %[[MAPV]]
// NOFB-NOT: vector<8xbf16>, !llvm.ptr<3>
// NOFB: scf.for
// NOFB-NOT: vector<8xbf16>, !llvm.ptr<3>
// NOFB: tgpu.tma_load %{{.*}}, %[[MAPV]]
// NOFB-NOT: vector<8xbf16>, !llvm.ptr<3>
// NOFB: = tgpu.wgmma 
// NOFB-NOT: vector<8xbf16>, !llvm.ptr<3>
// NOFB: gpu.return

// Without wgmma nothing streams and no map is made.
// SM80-LABEL: gpu.func @stream(
// SM80-NOT: tgpu.tensor_maps
// SM80-NOT: tgpu.tma_
// SM80: gpu.return
func.func @stream(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %ldb: i64) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %pid64 = arith.extsi %pid : i32 to i64
  %off = arith.muli %pid64, %ldb : i64
  %bb = tile.addptr %b, %off : !tile.ptr<bf16>, i64
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %bb, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
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

// Row strides the kernel computes (n * 2) are not launch arguments: no tensor map, cp.async only.
// CHECK-LABEL: gpu.func @computed_stride(
// NOFB-LABEL: gpu.func @computed_stride(
// NOFB-NOT: tgpu.tma_required
// NOFB: tgpu.cp_async 
// CHECK-NOT: tgpu.tensor_maps
// CHECK-NOT: tgpu.tma_
// CHECK: tgpu.cp_async 
// CHECK: gpu.return
func.func @computed_stride(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %ldb = arith.muli %n, %c2 : i32
  %va = tile.make_view %a, [%c128, %c64], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
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

// A pipelined K loop (acc = dot(load A, load B, acc)) with both operands in tensor maps: a ring of
// 6 stages of 32 KiB, `full` expecting thread 0 and the stage's bytes (A: one 128-row box, B: two
// 64-column panels), 4 iterations issued ahead, no CTA-wide barrier in the loop: each warp releases
// the previous iteration's stage once its MMAs are done, and thread 0 refills the stage released one
// iteration earlier. Launches without maps run a rolled element-by-element loop instead.
// CHECK-LABEL: gpu.func @matmul(
// CHECK-SAME: %[[FLAG:[a-z0-9]+]]: i32, %[[MA:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64}, %[[MB:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tgpu.tensor_maps = [{box = array<i32: 64, 128>, {{.*}}pointer = 0 : i32{{.*}}}, {box = array<i32: 64, 64>, {{.*}}pointer = 1 : i32
// CHECK-DAG: %[[MAV:.*]] = tgpu.tensor_map %[[MA]] : !llvm.ptr
// CHECK-DAG: %[[MBV:.*]] = tgpu.tensor_map %[[MB]] : !llvm.ptr
// CHECK: %[[USE:.*]] = arith.cmpi ne, %[[FLAG]], %c0_i32 : i32
// CHECK: scf.if %[[USE]] -> (f32
// CHECK-COUNT-12: tgpu.mbarrier_init
// CHECK: gpu.barrier
// CHECK-COUNT-4: tgpu.mbarrier_arrive_expect_tx %{{.*}}, %c32768_i32
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: tgpu.ring_wait
// CHECK-COUNT-4: = tgpu.wgmma 
// CHECK: tgpu.wgmma_wait 1
// CHECK: tgpu.mbarrier_arrive %{{.*}}
// CHECK: tgpu.ring_wait
// CHECK: tgpu.mbarrier_arrive_expect_tx %{{.*}}, %c32768_i32
// CHECK: tgpu.tma_load %{{.*}}, %[[MAV]]
// CHECK-COUNT-2: tgpu.tma_load %{{.*}}, %[[MBV]]
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: tgpu.wgmma_wait 0
// CHECK: } else {
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
func.func @matmul(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %m: i32, %n: i32, %k: i32, %lda: i32, %ldb: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 64 : i32
  %bm = arith.constant 128 : i32
  %row0 = arith.muli %pid_m, %bm : i32
  %col0 = arith.muli %pid_n, %bm : i32
  %av = tile.make_view %a, [%m, %k], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<128x128xf32>) : i32 {
    %at = tile.load %av[%row0, %kk] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
    %bt = tile.load %bv[%kk, %col0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %next = tile.dot %at, %bt, %acc_i : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %cv[%row0, %col0] : tensor<128x128xf32>, !tile.view<f32, 2>
  return
}

// -----

// A 16-bit block stored at the kernel's top level through a view the host can describe goes out by
// TMA: every thread writes its registers (pairs of columns, 4 bytes) into 128-byte swizzled panels,
// fences them for the async proxy, and after a CTA barrier thread 0 issues one bulk tensor store per
// 64-column panel, commits them and waits until they have read the panels. The panels reuse the
// streamed loop's ring (offset 17408, after the 16 KiB of A and its mbarrier, 1024-byte aligned),
// which is free once the loop is done. The map of the output (argument 2, box 64 x 128, pid * ldc)
// follows A's and the streamed B's.
// CHECK-LABEL: gpu.func @store_out(
// Without the fallback no thread stores the output directly.
// NOFB-LABEL: gpu.func @store_out(
// NOFB-SAME: tgpu.tma_required
// NOFB-NOT: bf16, !llvm.ptr<1>
// NOFB: tgpu.tma_store
// NOFB-NOT: bf16, !llvm.ptr<1>
// NOFB: gpu.return
// CHECK-SAME: %[[FLAG:[a-z0-9]+]]: i32, %[[MAPA:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64}, %[[MAPB:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64}, %[[MAPC:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tgpu.shared_bytes = 66608 : i32
// CHECK-SAME: {box = array<i32: 64, 128, 1>, elem_bytes = 2 : i32, pointer = 2 : i32,
// CHECK-SAME: sizes = [array<i64: 0, 128>, array<i64: 1, 3>, array<i64: 0, 2147483648>],
// CHECK-SAME: strides = [array<i64: 0, 1>, array<i64: 0, 128>, array<i64: 1, 5>], swizzle = 128 : i32}]
// CHECK-DAG: %[[MAPAV:.*]] = tgpu.tensor_map %[[MAPA]] : !llvm.ptr
// CHECK-DAG: %[[MAPBV:.*]] = tgpu.tensor_map %[[MAPB]] : !llvm.ptr
// CHECK-DAG: %[[MAPCV:.*]] = tgpu.tensor_map %[[MAPC]] : !llvm.ptr
// CHECK: %[[PID:.*]] = arith.index_cast{{.*}}block_id
// CHECK: %[[USE:.*]] = arith.cmpi ne, %[[FLAG]], %c0_i32 : i32
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: scf.if %[[USE]] {
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.store %{{.*}} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: tgpu.fence_async_shared
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: %[[SRC0:.*]] = llvm.getelementptr %{{.*}}[17408] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: tgpu.tma_store %[[MAPCV]][%c0_i32, %c0_i32, %[[PID]]], %[[SRC0]]
// CHECK: %[[SRC1:.*]] = llvm.getelementptr %{{.*}}[33792] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: tgpu.tma_store %[[MAPCV]][%c64_i32, %c0_i32, %[[PID]]], %[[SRC1]]
// CHECK-NEXT: tgpu.tma_store_commit
// CHECK-NEXT: tgpu.tma_store_wait 0
// Maps not encoded: the registers go straight to global memory under their bounds checks.
// CHECK: } else {
// CHECK: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// CHECK: gpu.return

// Without wgmma (and so without tensor maps) the store is direct.
// SM80-LABEL: gpu.func @store_out(
// SM80-NOT: tgpu.tma_
// SM80: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// SM80: gpu.return
func.func @store_out(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %ldb: i64, %ldc: i64) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %pid64 = arith.extsi %pid : i32 to i64
  %offb = arith.muli %pid64, %ldb : i64
  %offc = arith.muli %pid64, %ldc : i64
  %bb = tile.addptr %b, %offb : !tile.ptr<bf16>, i64
  %cc = tile.addptr %c, %offc : !tile.ptr<bf16>, i64
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %bb, [%n, %c128], [%c128, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %cc, [%n, %c128], [%c128, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %s : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %vc[%c0, %c0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Without a ring the panels get an area of their own after everything else (here the only shared
// memory: 2 panels of 128 rows x 128 bytes at offset 0); the loaded block's registers hold 8
// consecutive columns, one 16-byte store each. A store inside a loop stays direct.
// CHECK-LABEL: gpu.func @store_plain(
// CHECK-SAME: tgpu.shared_bytes = 32768 : i32
// CHECK: scf.for
// CHECK-NOT: tgpu.tma_
// CHECK: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// CHECK: gpu.barrier
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: tgpu.tma_store %{{.*}}[%c0_i32, %{{.*}}], %{{.*}}
// CHECK: %[[SRC:.*]] = llvm.getelementptr %{{.*}}[16384] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: tgpu.tma_store %{{.*}}[%c64_i32, %{{.*}}], %[[SRC]]
// CHECK: tgpu.tma_store_wait 0
func.func @store_plain(%x: !tile.ptr<bf16>, %y: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row = arith.muli %pid, %c128 : i32
  %vx = tile.make_view %x, [%n, %c128], [%c128, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vy = tile.make_view %y, [%n, %c128], [%c128, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %t = tile.load %vx[%row, %c0] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
  scf.for %i = %c0 to %n step %c1 : i32 {
    tile.store %t, %vy[%row, %c0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  }
  tile.store %t, %vy[%row, %c0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// The hardware clips a TMA store's columns by the 16-byte chunk: a view whose rows are not a constant
// number of whole chunks (here N, an argument), or a column offset not on a chunk, is stored directly.
// CHECK-LABEL: gpu.func @store_runtime_cols(
// CHECK-NOT: tgpu.tensor_maps
// CHECK-NOT: tgpu.tma_
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @store_odd_offset(
// CHECK-NOT: tgpu.tensor_maps
// CHECK-NOT: tgpu.tma_
// CHECK: gpu.return
func.func @store_runtime_cols(%x: !tile.ptr<bf16>, %y: !tile.ptr<bf16>, %m: i32, %n: i32, %ld: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row = arith.muli %pid, %c128 : i32
  %vx = tile.make_view %x, [%m, %n], [%ld, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vy = tile.make_view %y, [%m, %n], [%ld, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %t = tile.load %vx[%row, %c0] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
  tile.store %t, %vy[%row, %c0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  return
}
func.func @store_odd_offset(%x: !tile.ptr<bf16>, %y: !tile.ptr<bf16>, %m: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c128 = arith.constant 128 : i32
  %c256 = arith.constant 256 : i32
  %pid = tile.program_id x
  %row = arith.muli %pid, %c128 : i32
  %vx = tile.make_view %x, [%m, %c256], [%c256, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vy = tile.make_view %y, [%m, %c256], [%c256, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %t = tile.load %vx[%row, %c0] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
  tile.store %t, %vy[%row, %c4] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  return
}
