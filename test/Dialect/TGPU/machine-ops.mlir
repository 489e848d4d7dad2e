// The machine protocol ops of tgpu: their text form (parsed, printed, parsed again) and what their
// verifiers reject. convert-tgpu-to-nvvm emits them into per-thread code; test/Conversion/
// tgpu-machine-to-nvvm.mlir lowers each to NVVM.
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics | flare-opt -split-input-file | FileCheck %s

// One stage of a ring: the producer initialises its full barrier (one arrival plus the TMA bytes)
// and empty barrier (8 consumer warps), announces 16 KiB, the consumers wait for phase 0 and release
// the stage; the two consumer warpgroups hand the MMA turn over on named barrier 1.
// CHECK-LABEL: func.func @ring_stage
// CHECK: tgpu.mbarrier_init %arg0, %c1_i32
// CHECK: tgpu.mbarrier_init %arg1, %c8_i32
// CHECK: tgpu.fence_async_shared
// CHECK: tgpu.mbarrier_arrive_expect_tx %arg0, %c16384_i32
// CHECK: tgpu.mbarrier_wait %arg0, %c0_i32
// CHECK: tgpu.mbarrier_arrive %arg1
// CHECK: tgpu.named_barrier_arrive %c1_i32, %c256_i32
// CHECK: tgpu.named_barrier_sync %c1_i32, %c256_i32
func.func @ring_stage(%full: !tgpu.mbarrier, %empty: !tgpu.mbarrier) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %c256 = arith.constant 256 : i32
  %bytes = arith.constant 16384 : i32
  tgpu.mbarrier_init %full, %c1
  tgpu.mbarrier_init %empty, %c8
  tgpu.fence_async_shared
  tgpu.mbarrier_arrive_expect_tx %full, %bytes
  tgpu.mbarrier_wait %full, %c0
  tgpu.mbarrier_arrive %empty
  tgpu.named_barrier_arrive %c1, %c256
  tgpu.named_barrier_sync %c1, %c256
  return
}

// -----

// A warp-specialised kernel's register budgets and one wgmma group.
// CHECK-LABEL: func.func @budgets_and_groups
// CHECK: tgpu.set_max_registers decrease 40
// CHECK: tgpu.set_max_registers increase 232
// CHECK: tgpu.wgmma_fence
// CHECK: tgpu.wgmma_commit
// CHECK: tgpu.wgmma_wait 1
// CHECK: tgpu.wgmma_wait 0
func.func @budgets_and_groups() {
  tgpu.set_max_registers decrease 40
  tgpu.set_max_registers increase 232
  tgpu.wgmma_fence
  tgpu.wgmma_commit
  tgpu.wgmma_wait 1
  tgpu.wgmma_wait 0
  return
}

// -----

// TMA: a box of a tensor map into a ring stage, completing its full barrier; a store out of shared
// memory, committed and waited for until its source was read.
// CHECK-LABEL: func.func @tma
// CHECK: %[[MAP:.*]] = tgpu.tensor_map %arg1 : !llvm.ptr
// CHECK: tgpu.tma_load %arg0, %[[MAP]][%c0_i32, %arg4], %arg2 : !llvm.ptr<7>
// CHECK: tgpu.tma_store %[[MAP]][%c0_i32, %arg4, %c0_i32], %arg3 : !llvm.ptr<3>
// CHECK: tgpu.tma_reduce_add %[[MAP]][%c0_i32, %arg4], %arg3 : !llvm.ptr<3>
// CHECK: tgpu.tma_store_commit
// CHECK: tgpu.tma_store_wait 0
func.func @tma(%dst: !llvm.ptr<7>, %param: !llvm.ptr, %bar: !tgpu.mbarrier, %src: !llvm.ptr<3>, %row: i32) {
  %c0 = arith.constant 0 : i32
  %map = tgpu.tensor_map %param : !llvm.ptr
  tgpu.tma_load %dst, %map[%c0, %row], %bar : !llvm.ptr<7>
  tgpu.tma_store %map[%c0, %row, %c0], %src : !llvm.ptr<3>
  tgpu.tma_reduce_add %map[%c0, %row], %src : !llvm.ptr<3>
  tgpu.tma_store_commit
  tgpu.tma_store_wait 0
  return
}

// -----

// One m64n8k16 step each way: A from shared memory (a descriptor), K-major and M-major, and A from
// registers with an N-major B.
!acc = !llvm.struct<(f32, f32, f32, f32)>
// CHECK-LABEL: func.func @wgmma
// CHECK: %[[D:.*]] = tgpu.wgmma %arg0, a_desc %arg1, b_desc %arg2 n = 8, bf16 : !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[T:.*]] = tgpu.wgmma %[[D]], a_desc %arg1 a_m_major, b_desc %arg2 n = 8, bf16 : !llvm.struct<(f32, f32, f32, f32)>
// CHECK: tgpu.wgmma %[[T]], a_regs(%arg3, %arg3, %arg3, %arg3), b_desc %arg2 b_n_major n = 8, f16 : !llvm.struct<(f32, f32, f32, f32)>
func.func @wgmma(%acc: !acc, %descA: i64, %descB: i64, %r: i32) -> !acc {
  %d = tgpu.wgmma %acc, a_desc %descA, b_desc %descB n = 8, bf16 : !acc
  %t = tgpu.wgmma %d, a_desc %descA a_m_major, b_desc %descB n = 8, bf16 : !acc
  %e = tgpu.wgmma %t, a_regs(%r, %r, %r, %r), b_desc %descB b_n_major n = 8, f16 : !acc
  return %e : !acc
}

// -----

// cp.async (sm_80 and the TMA fallback): 16 bytes of which 8 are read, into a stage whose full
// barrier the copying threads complete.
// CHECK-LABEL: func.func @cp_async
// CHECK: tgpu.cp_async %arg0, %arg1, %c8_i32 : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: tgpu.cp_async_commit
// CHECK: tgpu.cp_async_mbarrier_arrive %arg2
// CHECK: tgpu.cp_async_wait 1
func.func @cp_async(%dst: !llvm.ptr<3>, %src: !llvm.ptr<1>, %bar: !tgpu.mbarrier) {
  %c8 = arith.constant 8 : i32
  tgpu.cp_async %dst, %src, %c8 : !llvm.ptr<3>, !llvm.ptr<1>
  tgpu.cp_async_commit
  tgpu.cp_async_mbarrier_arrive %bar
  tgpu.cp_async_wait 1
  return
}

// -----

// A barrier id computed at run time (a warpgroup's own barrier) is not checked.
// CHECK-LABEL: func.func @dynamic_id
// CHECK: tgpu.named_barrier_sync %arg0, %c128_i32
func.func @dynamic_id(%id: i32) {
  %c128 = arith.constant 128 : i32
  tgpu.named_barrier_sync %id, %c128
  return
}

// -----

func.func @barrier_id() {
  %c16 = arith.constant 16 : i32
  %c128 = arith.constant 128 : i32
  // expected-error @+1 {{named barrier id 16 is outside 0-15}}
  tgpu.named_barrier_sync %c16, %c128
  return
}

// -----

func.func @barrier_threads() {
  %c1 = arith.constant 1 : i32
  %c100 = arith.constant 100 : i32
  // expected-error @+1 {{named barrier thread count 100 must be a multiple of 32 from 32 to 1024}}
  tgpu.named_barrier_arrive %c1, %c100
  return
}

// -----

func.func @registers() {
  // expected-error @+1 {{register count 20 must be a multiple of 8 from 24 to 256}}
  tgpu.set_max_registers decrease 20
  return
}

// -----

func.func @pending() {
  // expected-error @+1 {{pending groups 8 must be from 0 to 7}}
  tgpu.wgmma_wait 8
  return
}

// -----

func.func @global_barrier(%smem: !llvm.ptr<1>, %at: i32) {
  // expected-error @+1 {{must be pointer to shared memory (!llvm.ptr<3>)}}
  %r = tgpu.ring %smem[%at] : !llvm.ptr<1> -> !tgpu.ring<3>
  return
}

// -----

func.func @tma_rank(%dst: !llvm.ptr<7>, %map: !tgpu.tensormap, %bar: !tgpu.mbarrier) {
  // expected-error @+1 {{takes 1 to 5 coordinates (one per tensor map dimension), got 0}}
  tgpu.tma_load %dst, %map[], %bar : !llvm.ptr<7>
  return
}

// -----

func.func @tma_reduce_rank(%map: !tgpu.tensormap, %src: !llvm.ptr<3>, %i: i32) {
  // expected-error @+1 {{takes 1 to 5 coordinates (one per tensor map dimension), got 6}}
  tgpu.tma_reduce_add %map[%i, %i, %i, %i, %i, %i], %src : !llvm.ptr<3>
  return
}

// -----

func.func @wgmma_both(%acc: !llvm.struct<(f32, f32, f32, f32)>, %d: i64, %r: i32) {
  // expected-error @+1 {{takes A either from shared memory (a_desc) or from registers (a_regs), not both or neither}}
  %e = tgpu.wgmma %acc, a_desc %d a_regs(%r, %r, %r, %r), b_desc %d n = 8, bf16 : !llvm.struct<(f32, f32, f32, f32)>
  return
}

// -----

func.func @wgmma_m_major_registers(%acc: !llvm.struct<(f32, f32, f32, f32)>, %d: i64, %r: i32) {
  // expected-error @+1 {{reads an M-major A (a_m_major) only from shared memory (a_desc)}}
  %e = tgpu.wgmma %acc, a_m_major a_regs(%r, %r, %r, %r), b_desc %d n = 8, bf16 : !llvm.struct<(f32, f32, f32, f32)>
  return
}

// -----

func.func @wgmma_acc(%acc: !llvm.struct<(f32, f32)>, %d: i64) {
  // expected-error @+1 {{accumulator must be an LLVM struct of n / 2 = 4 f32 values}}
  %e = tgpu.wgmma %acc, a_desc %d, b_desc %d n = 8, bf16 : !llvm.struct<(f32, f32)>
  return
}

// -----

// Warp specialisation: 8 consumer warps take 232 registers a thread, one producer warpgroup runs the
// region with 40 and leaves at its tgpu.warp_exit.
// CHECK-LABEL: func.func @roles
// CHECK: tgpu.warp_specialize(%arg0) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
// CHECK-NEXT: tgpu.mbarrier_init %arg1, %c1_i32
// CHECK-NEXT: tgpu.warp_exit
// CHECK-NEXT: }
// CHECK-NEXT: tgpu.mbarrier_wait
func.func @roles(%warp: i32, %full: !tgpu.mbarrier) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  tgpu.warp_specialize(%warp) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
    tgpu.mbarrier_init %full, %c1
    tgpu.warp_exit
  }
  tgpu.mbarrier_wait %full, %c0
  return
}

// -----

func.func @consumer_warps(%warp: i32) {
  // expected-error @+1 {{consumer warps 6 must be whole warpgroups (a positive multiple of 4)}}
  tgpu.warp_specialize(%warp) consumers(6 warps, 232 registers) producer(4 warps, 40 registers) {
    tgpu.warp_exit
  }
  return
}

// -----

func.func @producer_warps(%warp: i32) {
  // expected-error @+1 {{producer warps 8 must be one warpgroup (4)}}
  tgpu.warp_specialize(%warp) consumers(8 warps, 160 registers) producer(8 warps, 40 registers) {
    tgpu.warp_exit
  }
  return
}

// -----

func.func @budget_step(%warp: i32) {
  // expected-error @+1 {{producer register count 44 must be a multiple of 8 from 24 to 256}}
  tgpu.warp_specialize(%warp) consumers(8 warps, 232 registers) producer(4 warps, 44 registers) {
    tgpu.warp_exit
  }
  return
}

// -----

// 8 x 32 x 240 + 4 x 32 x 40 = 66560 registers: more than an SM has.
func.func @register_file(%warp: i32) {
  // expected-error @+1 {{register budgets need 66560 registers, more than the 64512 an SM gives one CTA}}
  tgpu.warp_specialize(%warp) consumers(8 warps, 240 registers) producer(4 warps, 40 registers) {
    tgpu.warp_exit
  }
  return
}

// -----

// The kernel's block must hold both roles: 8 + 4 warps are 384 threads, not 256.
gpu.module @block_size {
  gpu.func @k(%warp: i32) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    // expected-error @+1 {{needs 384 threads, but the kernel's block has 256}}
    tgpu.warp_specialize(%warp) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
      tgpu.warp_exit
    }
    gpu.return
  }
}

// -----

func.func @no_exit(%warp: i32, %full: !tgpu.mbarrier) {
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{producer region must end in tgpu.warp_exit (the producer warps leave the kernel)}}
  tgpu.warp_specialize(%warp) consumers(8 warps, 232 registers) producer(4 warps, 40 registers) {
    tgpu.mbarrier_init %full, %c1
  }
  return
}

// -----

// Shared-memory areas: a name, a size and an alignment (placed by tgpu-allocate-shared-memory).
// CHECK-LABEL: func.func @areas
// CHECK: tgpu.shared_area "rings" 98304 bytes align 1024
// CHECK: tgpu.shared_area "scratch" 0 bytes align 1
func.func @areas() -> (i32, i32) {
  %ring = tgpu.shared_area "rings" 98304 bytes align 1024
  %none = tgpu.shared_area "scratch" 0 bytes align 1
  return %ring, %none : i32, i32
}

// -----

func.func @area_alignment() -> i32 {
  // expected-error @+1 {{alignment 48 must be a power of two up to 1024 (the buffer's own)}}
  %a = tgpu.shared_area "odd" 64 bytes align 48
  return %a : i32
}

// -----

func.func @area_size() -> i32 {
  // expected-error @+1 {{size -16 is negative}}
  %a = tgpu.shared_area "negative" -16 bytes align 16
  return %a : i32
}

// -----

// A ring of 3 stages with barriers from byte %at: stage %s's `full` and `empty` barriers, and the wait
// of ring index %i on them.
// CHECK-LABEL: func.func @ring
// CHECK: %[[R:.*]] = tgpu.ring %arg0[%arg1] : !llvm.ptr<3> -> !tgpu.ring<3>
// CHECK-NEXT: %[[F:.*]] = tgpu.ring_barrier full %[[R]][%arg2] : !tgpu.ring<3>
// CHECK-NEXT: %[[E:.*]] = tgpu.ring_barrier empty %[[R]][%arg2] : !tgpu.ring<3>
// CHECK-NEXT: tgpu.ring_wait %[[F]], use %arg3 of 3
// CHECK-NEXT: tgpu.ring_wait %[[E]], use %arg3 of 3
func.func @ring(%smem: !llvm.ptr<3>, %at: i32, %s: i32, %i: i32) {
  %r = tgpu.ring %smem[%at] : !llvm.ptr<3> -> !tgpu.ring<3>
  %f = tgpu.ring_barrier full %r[%s] : !tgpu.ring<3>
  %e = tgpu.ring_barrier empty %r[%s] : !tgpu.ring<3>
  tgpu.ring_wait %f, use %i of 3
  tgpu.ring_wait %e, use %i of 3
  return
}

// -----

func.func @ring_without_stages(%smem: !llvm.ptr<3>, %at: i32) {
  // expected-error @+1 {{a ring has at least one stage, not 0}}
  %r = tgpu.ring %smem[%at] : !llvm.ptr<3> -> !tgpu.ring<0>
  return
}

// -----

// The persistent tile loop's schedule: chunked, then split (stream-K) by the steps of a split range.
// CHECK-LABEL: func.func @tile_schedule
// CHECK-NEXT: %[[S:.*]], %[[T:.*]] = tgpu.tile_schedule grid(%arg0, %arg1, %arg2) pairs{{$}}
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = tgpu.tile_instance %[[S]][%arg3] : !tgpu.tile_schedule
// CHECK-NEXT: %[[SS:.*]], %{{.*}} = tgpu.tile_split %[[S]] steps(%arg4)
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}:3 = tgpu.tile_instance %[[SS]][%arg3] : !tgpu.tile_schedule<split>
// CHECK-NEXT: %{{.*}}, %{{.*}} = tgpu.tile_schedule grid(%arg0, %arg1, %arg2){{$}}
// CHECK-NEXT: %{{.*}} = tgpu.tile_take %arg5 grid(%arg0, %arg1, %arg2) turn(%arg3) : !llvm.ptr<1>
func.func @tile_schedule(%x: i32, %y: i32, %z: i32, %turn: i32, %steps: i32, %counters: !llvm.ptr<1>) -> (i32, i32, i32, i32) {
  %s, %turns = tgpu.tile_schedule grid(%x, %y, %z) pairs
  %px, %py, %pz = tgpu.tile_instance %s[%turn] : !tgpu.tile_schedule
  %ss, %sturns = tgpu.tile_split %s steps(%steps)
  %qx, %qy, %qz, %lo, %hi, %slot = tgpu.tile_instance %ss[%turn] : !tgpu.tile_schedule<split>
  %single, %sturns1 = tgpu.tile_schedule grid(%x, %y, %z)
  %taken = tgpu.tile_take %counters grid(%x, %y, %z) turn(%turn) : !llvm.ptr<1>
  return %turns, %sturns, %px, %taken : i32, i32, i32, i32
}

// -----

func.func @split_twice(%x: i32, %steps: i32) {
  %s, %turns = tgpu.tile_schedule grid(%x, %x, %x) pairs
  %ss, %sturns = tgpu.tile_split %s steps(%steps)
  // expected-error @+1 {{operand #0 must be chunked tile schedule (!tgpu.tile_schedule), but got '!tgpu.tile_schedule<split>'}}
  %sss, %ssturns = "tgpu.tile_split"(%ss, %steps) : (!tgpu.tile_schedule<split>, i32) -> (!tgpu.tile_schedule<split>, i32)
  return
}

// -----

func.func @instance_without_piece(%x: i32, %steps: i32, %turn: i32) {
  %s, %turns = tgpu.tile_schedule grid(%x, %x, %x) pairs
  %ss, %sturns = tgpu.tile_split %s steps(%steps)
  // expected-error @+2 {{'tgpu.tile_instance' op inferred type(s) 'i32', 'i32', 'i32', 'i32', 'i32', 'i32' are incompatible with return type(s) of operation 'i32', 'i32', 'i32'}}
  // expected-error @+1 {{'tgpu.tile_instance' op failed to infer returned types}}
  %a, %b, %c = "tgpu.tile_instance"(%ss, %turn) : (!tgpu.tile_schedule<split>, i32) -> (i32, i32, i32)
  return
}
