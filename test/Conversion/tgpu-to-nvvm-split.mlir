// convert-tgpu-to-nvvm of a persistent kernel with tile.split_range (stream-K): the kernel gets its
// split workspace as a hidden pointer after the grid's three i32 (G slots of
// tgpu.split_slot_bytes, then G i32 flags); the schedule cuts the last instances' T * S steps into G
// ranges in 32-bit arithmetic (no 64-bit division: that is a call, and a call serializes the
// kernel's wgmma), on only when N > G, N mod G != 0, S >= 16 and S G < 2^31. tile.split_store:
// every thread's registers to its slot (coalesced: register r of all threads, then r + 1), a
// barrier, then thread 0 releases the flag (fence.acq_rel.gpu, flag = 1). tile.split_load: thread 0
// waits for the flag with acquire loads (trapping after 2^30 polls) and clears it, a barrier, then
// every thread loads its registers back.
// The schedule is tgpu.tile_split of the chunked tgpu.tile_schedule (steps: the split range's); its
// arithmetic after convert-tgpu-machine-to-nvvm (LOWERED): no 64-bit division.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --convert-tgpu-machine-to-nvvm --cse --canonicalize | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: gpu.func @pieces(
// CHECK-SAME: %arg0: !llvm.ptr<1>, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: i32, %[[WS:arg5]]: !llvm.ptr<1>)
// CHECK-SAME: tgpu.persistent
// CHECK-SAME: tgpu.split_slot_bytes = 16384 : i32
// CHECK-SAME: tgpu.user_args = 2 : i32
// CHECK: %[[CHUNKED:[a-z_0-9]+]], %{{[a-z_0-9]+}} = tgpu.tile_schedule grid(%arg2, %arg3, %arg4) pairs{{$}}
// CHECK: %[[SPLIT:[a-z_0-9]+]], %[[TURNS:[a-z_0-9]+]] = tgpu.tile_split %[[CHUNKED]] steps(%{{[0-9]+}})
// CHECK-NEXT: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %[[TURNS]]
// CHECK-NEXT: %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}}:3 = tgpu.tile_instance %[[SPLIT]][%[[TURN]]] : !tgpu.tile_schedule<split>
// LOWERED-LABEL: gpu.func @pieces(
// LOWERED-NOT: arith.divui %{{.*}} : i64
// LOWERED: %[[SG:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// LOWERED-NEXT: arith.cmpi ult, %[[SG]], %c2147483648_i64 : i64
// LOWERED-NEXT: arith.cmpi uge, %{{.*}}, %c16_i32 : i32
// LOWERED-NOT: arith.divui %{{.*}} : i64
// LOWERED: scf.for
// LOWERED-NOT: tgpu.tile_
// The piece that ends an instance: 32 registers a thread, then the release.
// CHECK: scf.if
// CHECK-COUNT-32: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK-NEXT: gpu.barrier
// CHECK: llvm.inline_asm has_side_effects "{\0Afence.acq_rel.gpu;\0Ast.relaxed.gpu.global.b32 [$0], 1;\0A}"
// CHECK: } else {
// The piece that began it: the wait, then its 32 registers back.
// CHECK: ld.acquire.gpu.global.b32
// CHECK: trap;
// CHECK: st.relaxed.gpu.global.b32 [$0], 0;
// CHECK: gpu.barrier
// CHECK-COUNT-32: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
func.func @pieces(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.schedule = #tile.schedule<persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c6 = arith.constant 6 : i32
  %c63 = arith.constant 63 : i32
  %r = arith.addi %n, %c63 : i32
  %steps = arith.shrsi %r, %c6 : i32
  %lo, %hi = tile.split_range %steps : i32
  %pid = tile.program_id x
  %view = tile.make_view %x, [%n, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %row = arith.muli %pid, %c64 : i32
  %acc = tile.load %view[%row, %c0] : !tile.view<f32, 2> -> tensor<64x64xf32>
  %ends = arith.cmpi ne, %lo, %c0 : i32
  %began = arith.cmpi ne, %hi, %steps : i32
  scf.if %ends {
    tile.split_store %acc : tensor<64x64xf32>
  } else {
    scf.if %began {
      %theirs = tile.split_load : tensor<64x64xf32>
      %sum = arith.addf %acc, %theirs : tensor<64x64xf32>
      tile.store %sum, %view[%row, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
    }
  }
  return
}
