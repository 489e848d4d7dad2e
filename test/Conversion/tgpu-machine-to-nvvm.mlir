// convert-tgpu-machine-to-nvvm: each machine op of tgpu becomes the NVVM op that implements it (the
// wait a try_wait.parity with its suspend-time hint, the named barriers nvvm.barrier with an id and
// a thread count, the TMA copies cp.async.bulk.tensor with a box, ...); other ops stay. An mbarrier
// becomes its shared-memory address, a tensor map its parameter's address.
// RUN: flare-opt %s --convert-tgpu-machine-to-nvvm | FileCheck %s

// CHECK-LABEL: func.func @protocol
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[ID:[^:]*]]: i32, %[[DST:[^:]*]]: !llvm.ptr<7>, %[[MAP:[^:]*]]: !llvm.ptr)
// CHECK: %[[FULL:.*]] = llvm.getelementptr %[[SMEM]]
// CHECK: %[[EMPTY:.*]] = llvm.getelementptr %[[SMEM]]
// CHECK: nvvm.mbarrier.init %[[FULL]], %c1_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL]], %c16384_i32
// CHECK: %[[HINT:.*]] = arith.constant 10000000 : i32
// CHECK: nvvm.mbarrier.try_wait.parity %[[FULL]], %c0_i32, %[[HINT]] : !llvm.ptr<3>, i32, i32
// CHECK: nvvm.mbarrier.arrive %[[EMPTY]] : !llvm.ptr<3>
// CHECK: nvvm.barrier.arrive id = %c1_i32 number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %c256_i32
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[FULL]], box[%c0_i32, %[[ID]]]
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[MAP]], %[[SMEM]], box[%c0_i32, %[[ID]]]
// CHECK: nvvm.cp.async.bulk.tensor.reduce %[[MAP]], %[[SMEM]], box[%c0_i32, %[[ID]]] {redKind = #nvvm.tma_redux_kind<add>}
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: arith.addi
// CHECK-NOT: tgpu.
func.func @protocol(%smem: !llvm.ptr<3>, %id: i32, %dst: !llvm.ptr<7>, %param: !llvm.ptr) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c256 = arith.constant 256 : i32
  %bytes = arith.constant 16384 : i32
  %ring = tgpu.ring %smem[%c0] : !llvm.ptr<3> -> !tgpu.ring<1>
  %full = tgpu.ring_barrier full %ring[%c0] : !tgpu.ring<1>
  %empty = tgpu.ring_barrier empty %ring[%c0] : !tgpu.ring<1>
  %map = tgpu.tensor_map %param : !llvm.ptr
  tgpu.mbarrier_init %full, %c1
  tgpu.fence_async_shared
  tgpu.mbarrier_arrive_expect_tx %full, %bytes
  tgpu.mbarrier_wait %full, %c0
  tgpu.mbarrier_arrive %empty
  tgpu.named_barrier_arrive %c1, %c256
  tgpu.named_barrier_sync %id, %c256
  tgpu.set_max_registers decrease 40
  tgpu.set_max_registers increase 232
  tgpu.wgmma_fence
  tgpu.wgmma_commit
  tgpu.wgmma_wait 1
  tgpu.tma_load %dst, %map[%c0, %id], %full : !llvm.ptr<7>
  tgpu.tma_store %map[%c0, %id], %smem : !llvm.ptr<3>
  tgpu.tma_reduce_add %map[%c0, %id], %smem : !llvm.ptr<3>
  tgpu.tma_store_commit
  tgpu.tma_store_wait 0
  %sum = arith.addi %id, %c1 : i32
  return %sum : i32
}

// wgmma: A from shared memory becomes nvvm.wgmma.mma_async (B N-major: its layout row; A M-major:
// its layout col, PTX's transposed A); A from registers one inline wgmma instruction with the
// accumulator tied.
!acc = !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: func.func @wgmma
// CHECK: %[[D:.*]] = nvvm.wgmma.mma_async %arg1, %arg2, %arg0, <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: %[[E:.*]] = nvvm.wgmma.mma_async %arg1, %arg2, %[[D]], <m = 64, n = 8, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK: llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, 1, 1, 1;{{.*}}", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l"
func.func @wgmma(%acc: !acc, %descA: i64, %descB: i64, %r: i32) -> !acc {
  %d = tgpu.wgmma %acc, a_desc %descA, b_desc %descB n = 8, bf16 : !acc
  %t = tgpu.wgmma %d, a_desc %descA a_m_major, b_desc %descB b_n_major n = 8, bf16 : !acc
  %e = tgpu.wgmma %t, a_regs(%r, %r, %r, %r), b_desc %descB b_n_major n = 8, f16 : !acc
  return %e : !acc
}

// cp.async: the .cg form of 16 bytes with the bytes to read, its groups, and the .noinc arrival.
// CHECK-LABEL: func.func @cp_async
// CHECK: %[[BAR:.*]] = llvm.getelementptr %arg0
// CHECK: nvvm.cp.async.shared.global %arg0, %arg1, 16, cache =  cg, %c8_i32 : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.mbarrier.arrive %[[BAR]] {noinc = true} : !llvm.ptr<3>
// CHECK: nvvm.cp.async.wait.group 1
func.func @cp_async(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %at: i32) {
  %c8 = arith.constant 8 : i32
  %ring = tgpu.ring %dst[%at] : !llvm.ptr<3> -> !tgpu.ring<2>
  %bar = tgpu.ring_barrier full %ring[%at] : !tgpu.ring<2>
  tgpu.cp_async %dst, %src, %c8 : !llvm.ptr<3>, !llvm.ptr<1>
  tgpu.cp_async_commit
  tgpu.cp_async_mbarrier_arrive %bar
  tgpu.cp_async_wait 1
  return
}

// Warp specialisation: warps from 8 on branch off, give registers back, run the producer's code and
// exit; the others raise their budget after the branch.
// CHECK-LABEL: func.func @roles
// CHECK: %[[FULL:.*]] = llvm.getelementptr %arg1
// CHECK: %[[C8:.*]] = arith.constant 8 : i32
// CHECK: %[[P:.*]] = arith.cmpi uge, %arg0, %[[C8]] : i32
// CHECK: scf.if %[[P]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK-NEXT: nvvm.mbarrier.init %[[FULL]]
// CHECK-NEXT: nvvm.exit
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity %[[FULL]]
func.func @roles(%warp: i32, %smem: !llvm.ptr<3>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ring = tgpu.ring %smem[%c0] : !llvm.ptr<3> -> !tgpu.ring<1>
  %full = tgpu.ring_barrier full %ring[%c0] : !tgpu.ring<1>
  tgpu.warp_specialize(%warp) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
    tgpu.mbarrier_init %full, %c1
    tgpu.warp_exit
  }
  tgpu.mbarrier_wait %full, %c0
  return
}

// A ring's barriers: `full` of stage s at at + 8s, `empty` after every stage's `full`; ring index i
// waits for the parity (i / stages) & 1 of its stage's barrier.
// CHECK-LABEL: func.func @ring
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[AT:[^:]*]]: i32, %[[STAGE:[^:]*]]: i32, %[[USE:[^:]*]]: i32)
// CHECK: %[[FOFF:.*]] = arith.addi %[[AT]], %c0_i32 : i32
// CHECK: %[[FS:.*]] = arith.muli %[[STAGE]], %c8_i32 : i32
// CHECK: %[[FOFF2:.*]] = arith.addi %[[FOFF]], %[[FS]] : i32
// CHECK: %[[FULL:.*]] = llvm.getelementptr %[[SMEM]][%[[FOFF2]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[EOFF:.*]] = arith.addi %[[AT]], %c24_i32 : i32
// CHECK: %[[ES:.*]] = arith.muli %[[STAGE]], %c8_i32{{.*}} : i32
// CHECK: %[[EOFF2:.*]] = arith.addi %[[EOFF]], %[[ES]] : i32
// CHECK: %[[EMPTY:.*]] = llvm.getelementptr %[[SMEM]][%[[EOFF2]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[ROUND:.*]] = arith.divui %[[USE]], %c3_i32 : i32
// CHECK: %[[PARITY:.*]] = arith.andi %[[ROUND]], %c1_i32 : i32
// CHECK: nvvm.mbarrier.try_wait.parity %[[FULL]], %[[PARITY]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: nvvm.mbarrier.try_wait.parity %[[EMPTY]]
// CHECK-NOT: tgpu.
func.func @ring(%smem: !llvm.ptr<3>, %at: i32, %stage: i32, %use: i32) {
  %ring = tgpu.ring %smem[%at] : !llvm.ptr<3> -> !tgpu.ring<3>
  %full = tgpu.ring_barrier full %ring[%stage] : !tgpu.ring<3>
  %empty = tgpu.ring_barrier empty %ring[%stage] : !tgpu.ring<3>
  tgpu.ring_wait %full, use %use of 3
  tgpu.ring_wait %empty, use %use of 3
  return
}

// The persistent tile loop's schedule: CTA c of G takes chunks c, c + G, ... of two instances (x
// fastest) when there are at least 2G, else of one; turn t runs instance ((t >> s) * G + c) << s
// plus (t & s), s = 1 for pairs. The split schedule's arithmetic (and the folded sequences the
// schedule runs) are checked by tgpu-test-tile-schedule.mlir and tgpu-to-nvvm-split.mlir.
// CHECK-LABEL: func.func @tile_schedule
// CHECK-SAME: (%[[GX:[^:]*]]: i32, %[[GY:[^:]*]]: i32, %[[GZ:[^:]*]]: i32, %[[TURN:[^:]*]]: i32)
// CHECK: %[[CTAS:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[CTA:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[XY:.*]] = arith.muli %[[GX]], %[[GY]] : i32
// CHECK-NEXT: %[[TOTAL:.*]] = arith.muli %[[XY]], %[[GZ]] : i32
// CHECK-NEXT: %[[TWOG:.*]] = arith.addi %[[CTAS]], %[[CTAS]] : i32
// CHECK-NEXT: %[[PAIRS:.*]] = arith.cmpi uge, %[[TOTAL]], %[[TWOG]] : i32
// CHECK-NEXT: %[[SHIFT:.*]] = arith.extui %[[PAIRS]] : i1 to i32
// CHECK: %[[CHUNKIDX:.*]] = arith.shrui %[[TURN]], %[[SHIFT]] : i32
// CHECK-NEXT: %[[ROUND:.*]] = arith.muli %[[CHUNKIDX]], %[[CTAS]] : i32
// CHECK-NEXT: %[[CHUNK:.*]] = arith.addi %[[ROUND]], %[[CTA]] : i32
// (The two halves of the instance in either order: clang and g++ evaluate the builder's nested
// calls in opposite orders.)
// CHECK-DAG: %[[SECOND:.*]] = arith.andi %[[TURN]], %[[SHIFT]] : i32
// CHECK-DAG: %[[FIRST:.*]] = arith.shli %[[CHUNK]], %[[SHIFT]] : i32
// CHECK: %[[INST:.*]] = arith.addi %[[FIRST]], %[[SECOND]] : i32
// CHECK-NEXT: %[[YZ:.*]] = arith.divui %[[INST]], %[[GX]] : i32
// CHECK-NEXT: %[[PX:.*]] = arith.remui %[[INST]], %[[GX]] : i32
// CHECK-NEXT: %[[PY:.*]] = arith.remui %[[YZ]], %[[GY]] : i32
// CHECK-NEXT: %[[PZ:.*]] = arith.divui %[[YZ]], %[[GY]] : i32
// CHECK-NOT: tgpu.
// CHECK: return %{{.*}}, %[[PX]], %[[PY]], %[[PZ]]
func.func @tile_schedule(%gx: i32, %gy: i32, %gz: i32, %turn: i32) -> (i32, i32, i32, i32) {
  %s, %turns = tgpu.tile_schedule grid(%gx, %gy, %gz) pairs
  %x, %y, %z = tgpu.tile_instance %s[%turn] : !tgpu.tile_schedule
  return %turns, %x, %y, %z : i32, i32, i32, i32
}

// An instance taken from the shared counter: the CTA's own index at turn 0, else the CTA count plus
// the counter's next value (relaxed); past the grid's instances the CTA counts itself done
// (acquire-release) and the last one sets both counters back to zero.
// CHECK-LABEL: func.func @tile_take
// CHECK-SAME: (%[[C:[^:]*]]: !llvm.ptr<1>, %[[GX:[^:]*]]: i32, %[[GY:[^:]*]]: i32, %[[GZ:[^:]*]]: i32, %[[TURN:[^:]*]]: i32)
// CHECK: %[[CTAS:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[CTA:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TURN]], %{{.*}} : i32
// CHECK: %[[INDEX:.*]] = scf.if %[[FIRST]] -> (i32) {
// CHECK-NEXT: scf.yield %[[CTA]] : i32
// CHECK-NEXT: } else {
// CHECK: %[[NEXT:.*]] = llvm.inline_asm has_side_effects "atom.relaxed.gpu.global.add.u32 $0, [$1], 1;"
// CHECK-NEXT: %[[TAKEN:.*]] = arith.addi %[[CTAS]], %[[NEXT]] : i32
// CHECK-NEXT: scf.yield %[[TAKEN]] : i32
// CHECK: %[[XY:.*]] = arith.muli %[[GX]], %[[GY]] : i32
// CHECK-NEXT: %[[TOTAL:.*]] = arith.muli %[[XY]], %[[GZ]] : i32
// CHECK-NEXT: %[[PAST:.*]] = arith.cmpi uge, %[[INDEX]], %[[TOTAL]] : i32
// CHECK-NEXT: scf.if %[[PAST]] {
// CHECK: %[[DONE:.*]] = llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;"
// CHECK: %[[LASTCTA:.*]] = arith.subi %[[CTAS]], %{{.*}} : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[DONE]], %[[LASTCTA]] : i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK: llvm.inline_asm has_side_effects "st.relaxed.gpu.global.u32 [$0], 0;"
// CHECK: llvm.inline_asm has_side_effects "st.relaxed.gpu.global.u32 [$0], 0;"
// CHECK-NOT: tgpu.
// CHECK: return %[[INDEX]]
func.func @tile_take(%counters: !llvm.ptr<1>, %gx: i32, %gy: i32, %gz: i32, %turn: i32) -> i32 {
  %index = tgpu.tile_take %counters grid(%gx, %gy, %gz) turn(%turn) : !llvm.ptr<1>
  return %index : i32
}

