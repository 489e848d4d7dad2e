// convert-tgpu-to-nvvm on sm_90a: a tile.atomic_add of an f32 block whose view the host can describe
// (the backward's dQ sums) is one TMA reduce per 32-column panel (TensorMaps.cpp, reduceThroughTma).
// The threads write the block into 128-byte swizzled panels of an area of their own, fence them for
// the async proxy, and thread 0 adds them with tgpu.tma_reduce_add through a tensor map marked
// `float` (the runtime encodes it as FLOAT32, so the addition is f32's). The reduce stays in flight:
// thread 0 waits for it to have read the panels before the next step writes them, and before the
// kernel returns. Launches whose maps did not encode add element by element; sm_80, or a view the
// host cannot describe, add element by element only.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot=arch=sm_80 --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm=arch=sm_80 --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=SM80
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=NOFB
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory --convert-tgpu-machine-to-nvvm | FileCheck %s --check-prefix=NVVM

// A 64 x 64 f32 block added on every step of a loop: the map is [64 columns, rows] of f32 with
// 32 x 64 boxes; the staging is 16384 bytes (two panels of 64 rows x 128 bytes).
// CHECK-LABEL: gpu.func @sums(
// CHECK-SAME: %[[FLAG:[a-z0-9]+]]: i32, %[[MAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tgpu.shared_bytes = 16384 : i32
// CHECK-SAME: tgpu.tensor_maps = [{box = array<i32: 32, 64>, elem_bytes = 4 : i32, float, pointer = 1 : i32,
// CHECK-SAME: sizes = [array<i64: 0, 64>, array<i64: 1, 2>], strides = [array<i64: 0, 1>, array<i64: 0, 64>], swizzle = 128 : i32}]
// CHECK-DAG: %[[MAPV:.*]] = tgpu.tensor_map %[[MAP]] : !llvm.ptr
// CHECK: %[[TID:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[ROW0:.*]] = arith.muli %{{.*}}, %c64_i32 : i32
// CHECK: scf.for
// CHECK: %[[USE:.*]] = arith.cmpi ne, %[[FLAG]], %c0_i32 : i32
// CHECK: scf.if %[[USE]] {
// CHECK-NEXT: %[[T0:.*]] = arith.cmpi eq, %[[TID]], %c0_i32 : i32
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK-NEXT: tgpu.tma_store_wait 0
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// Four f32 per 16-byte chunk, the chunk XOR-swizzled by the row within each 32-column panel.
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: llvm.atomicrmw
// CHECK: tgpu.fence_async_shared
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK-NEXT: tgpu.tma_reduce_add %[[MAPV]][%c0_i32, %[[ROW0]]], %{{.*}} : !llvm.ptr<3>
// CHECK-NEXT: %[[P1:.*]] = llvm.getelementptr %{{.*}}[8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: tgpu.tma_reduce_add %[[MAPV]][%c32_i32, %[[ROW0]]], %[[P1]] : !llvm.ptr<3>
// CHECK-NEXT: tgpu.tma_store_commit
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, f32
// The kernel's end: the last reduce has read its panels.
// CHECK: tgpu.tma_store_wait 0
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// SM80-LABEL: gpu.func @sums(
// SM80-NOT: tgpu.tensor_maps
// SM80-NOT: tgpu.tma_reduce_add
// SM80: llvm.atomicrmw fadd
// SM80-NOT: tgpu.tma_
// SM80: gpu.return
// Without the fallback: the reduce only.
// NOFB-LABEL: gpu.func @sums(
// NOFB: tgpu.tma_required
// NOFB: tgpu.tma_reduce_add
// NOFB: tgpu.tma_reduce_add
// NOFB-NOT: llvm.atomicrmw
// NOFB: gpu.return
// NVVM-LABEL: gpu.func @sums(
// NVVM: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<add>}
func.func @sums(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %rows: i32, %steps: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %pid = tile.program_id x
  %r0 = arith.muli %pid, %c64 : i32
  %xv = tile.make_view %x, [%rows, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %out, [%rows, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  scf.for %i = %c0 to %steps step %c1 : i32 {
    %t = tile.load %xv[%r0, %c0] : !tile.view<f32, 2> -> tensor<64x64xf32>
    tile.atomic_add %t, %ov[%r0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  }
  return
}

// -----

// A column count the host does not know (an i32 argument): columns past it could not be clipped by
// the 16-byte chunk, so each element is added on its own.
// CHECK-LABEL: gpu.func @unknown_columns(
// CHECK-NOT: tgpu.tensor_maps
// CHECK-NOT: tgpu.tma_reduce_add
// CHECK: llvm.atomicrmw fadd
// CHECK: gpu.return
func.func @unknown_columns(%out: !tile.ptr<f32>, %rows: i32, %cols: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ov = tile.make_view %out, [%rows, %cols], [%cols, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %one = arith.constant dense<1.0> : tensor<64x64xf32>
  tile.atomic_add %one, %ov[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
