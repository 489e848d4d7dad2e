// tile.trans and tile.reshape are free in registers: tgpu-assign-layouts gives their results the
// operand's layout re-expressed (dimensions swapped, or the row-major bits regrouped), so the lowering
// keeps every register as it is -- no shuffle, no shared memory, no barrier: the stores write the
// loaded values.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s

// Transpose [8, 16] -> [16, 8] and store it into a view of the transposed shape.
// CHECK-LABEL: gpu.func @trans
// CHECK-SAME: tgpu.shared_bytes = 0 : i32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// CHECK: %[[L:.*]] = llvm.inline_asm {{.*}}ld.global.v4.b32
// CHECK: %[[W0:.*]] = llvm.extractvalue %[[L]][0]
// CHECK-NEXT: %[[R0:.*]] = llvm.bitcast %[[W0]] : i32 to f32
// CHECK-NEXT: %[[W1:.*]] = llvm.extractvalue %[[L]][1]
// CHECK-NEXT: %[[R1:.*]] = llvm.bitcast %[[W1]] : i32 to f32
// CHECK-NEXT: %[[W2:.*]] = llvm.extractvalue %[[L]][2]
// CHECK-NEXT: %[[R2:.*]] = llvm.bitcast %[[W2]] : i32 to f32
// CHECK-NEXT: %[[W3:.*]] = llvm.extractvalue %[[L]][3]
// CHECK-NEXT: %[[R3:.*]] = llvm.bitcast %[[W3]] : i32 to f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// CHECK: llvm.store %[[R0]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %[[R1]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %[[R2]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %[[R3]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @trans(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %q, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<8x16xf32>
  %t = tile.trans %x : tensor<8x16xf32> -> tensor<16x8xf32>
  tile.store %t, %o[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}

// -----

// Reshape [4, 32] -> [128] and [128] -> [2, 64], then store.
// CHECK-LABEL: gpu.func @reshape
// CHECK-SAME: tgpu.shared_bytes = 0 : i32
// CHECK: %[[L:.*]] = llvm.inline_asm {{.*}}ld.global.v4.b32
// CHECK: %[[W0:.*]] = llvm.extractvalue %[[L]][0]
// CHECK-NEXT: %[[R0:.*]] = llvm.bitcast %[[W0]] : i32 to f32
// CHECK-COUNT-3: llvm.extractvalue %[[L]]
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// CHECK: llvm.store %[[R0]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK-COUNT-3: llvm.store
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @reshape(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x32xf32>
  %flat = tile.reshape %x : tensor<4x32xf32> -> tensor<128xf32>
  %r = tile.reshape %flat : tensor<128xf32> -> tensor<2x64xf32>
  tile.store %r, %v[%c0, %c0] : tensor<2x64xf32>, !tile.view<f32, 2>
  return
}
