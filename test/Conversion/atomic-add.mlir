// tile.atomic_add lowers like tile.store -- each register's coordinate, one unsigned bounds check per
// dimension, a predicated access -- but with llvm.atomicrmw (fadd for f32, add for i32, monotonic
// ordering, the old value unused) instead of llvm.store. Elements a layout holds more than once (in
// several lanes or warps) are added by one owner only: anything else would add them several times.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s
// RUN: flarec %s -o - | FileCheck %s --check-prefix=PTX

// 64 f32 on one warp (blocked, 4 per thread): lanes 0..15 hold the tile, lanes 16..31 repeat it, so
// only threads with (lane & 16) == 0 add. 4 registers: 4 atomics per thread.
// CHECK-LABEL: gpu.func @f32_add
// CHECK-SAME: (%[[P:[^:]*]]: !llvm.ptr<1>, %[[N:[^:]*]]: i32)
// CHECK: %[[TID:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK: %[[DUP:.*]] = arith.andi %[[LANE]], %c16_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[OWNER:.*]] = arith.cmpi eq, %[[DUP]], %c0_i32{{[_0-9]*}} : i32
// CHECK: %[[G:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[OK:.*]] = arith.cmpi ult, %[[G]], %[[N]] : i32
// CHECK-NEXT: %[[PRED:.*]] = arith.andi %[[OWNER]], %[[OK]] : i1
// CHECK: scf.if %[[PRED]] {
// CHECK-NEXT: %[[ADDR:.*]] = llvm.getelementptr %[[P]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.atomicrmw fadd %[[ADDR]], %{{.*}} monotonic : !llvm.ptr<1>, f32
// CHECK-NEXT: }
// CHECK-COUNT-3: llvm.atomicrmw fadd %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, f32
// CHECK-NOT: llvm.atomicrmw
// CHECK-NOT: llvm.store
// CHECK: gpu.return
// The PTX has one global atomic add per register (atom.global.add or red.global.add, the backend's
// choice), and no plain store.
// PTX-LABEL: .visible .entry f32_add(
// PTX-COUNT-4: {{atom|red}}.global.add.f32
// PTX-NOT: st.global
// PTX: ret;
func.func @f32_add(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %one = arith.constant dense<1.0> : tensor<64xf32>
  tile.atomic_add %one, %v[%c0] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// -----

// i32: atomicrmw add. 16 elements on one warp: lanes 0..3 hold them, lanes 4..31 repeat (lane bits
// 2, 3, 4 have zero bases): owners have (lane & 28) == 0.
// CHECK-LABEL: gpu.func @i32_add
// CHECK: %[[DUP:.*]] = arith.andi %{{.*}}, %c28_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[OWNER:.*]] = arith.cmpi eq, %[[DUP]], %c0_i32{{[_0-9]*}} : i32
// CHECK: arith.andi %[[OWNER]], %{{.*}} : i1
// CHECK-COUNT-4: llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK-NOT: llvm.atomicrmw
// PTX-LABEL: .visible .entry i32_add(
// PTX-COUNT-4: {{atom|red}}.global.add.{{u32|s32}}
func.func @i32_add(%q: !tile.ptr<i32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %w = tile.make_view %q, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %r = tile.range 0, 16 : tensor<16xi32>
  tile.atomic_add %r, %w[%c0] : tensor<16xi32>, !tile.view<i32, 1>
  return
}

// -----

// Row sums of [4, 256] on 4 warps, added atomically: the sliced result ([4]: reg 2, lanes all zero,
// warps 0 and 1) is held by every lane, and warps w and w ^ 1 hold the same rows: only lane 0 of warps
// 0 and 2 adds ((lane & 31) == 0 and (warp & 1) == 0), 2 registers each: every row is added once.
// CHECK-LABEL: gpu.func @row_sums
// CHECK: %[[LANE:.*]] = arith.andi %[[TID:.*]], %c31_i32 : i32
// CHECK: %[[WARP:.*]] = arith.shrui %[[TID]], %c5_i32 : i32
// CHECK: gpu.barrier
// CHECK: %[[L:.*]] = arith.andi %[[LANE]], %c31_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[LOK:.*]] = arith.cmpi eq, %[[L]], %c0_i32{{[_0-9]*}} : i32
// CHECK: %[[W:.*]] = arith.andi %[[WARP]], %c1_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[WOK:.*]] = arith.cmpi eq, %[[W]], %c0_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[OWNER:.*]] = arith.andi %[[LOK]], %[[WOK]] : i1
// CHECK: arith.andi %[[OWNER]], %{{.*}} : i1
// CHECK-COUNT-2: llvm.atomicrmw fadd
// CHECK-NOT: llvm.atomicrmw
// CHECK: gpu.return
func.func @row_sums(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %q, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce sum %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  tile.atomic_add %m, %w[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}
