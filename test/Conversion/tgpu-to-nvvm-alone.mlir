// convert-tgpu-to-nvvm as the first pass over a kernel that holds no tile (only scalars, so
// tgpu-assign-layouts has nothing to lay out): the lowering loads the tgpu dialect itself for its
// shared-memory areas instead of crashing on ops of a dialect the input never named.
// RUN: flare-opt %s --convert-tgpu-to-nvvm | FileCheck %s
// RUN: flare-opt %s --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=PLACED

// CHECK-LABEL: gpu.func @store_count(
// CHECK: tgpu.shared_area "scratch" 0 bytes align 1
// CHECK: llvm.store
// CHECK: gpu.return
// PLACED-LABEL: gpu.func @store_count(
// PLACED-SAME: tgpu.shared_bytes = 0 : i32
// PLACED-NOT: tgpu.shared_area
func.func @store_count(%out: !tile.ptr<i32>, %i: i32, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  tile.scalar_store %n, %out[%i] : i32, !tile.ptr<i32>, i32
  return
}
