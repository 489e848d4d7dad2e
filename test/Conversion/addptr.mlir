// tile.addptr advances a global pointer by a number of elements: one llvm.getelementptr typed with the
// pointee element (so the byte offset is elements x element size), with an i32 offset sign-extended to
// 64 bits first. Views made from the advanced pointer address relative to it.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s
// RUN: flarec %s -o - | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: gpu.func @advance(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr<1>, %[[OFF:[^:]*]]: i64, %[[ROW:[^:]*]]: i32, %[[N:[^:]*]]: i32)
// An i64 offset is used as is...
// CHECK: %[[A:.*]] = llvm.getelementptr %[[P]][%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// ...an i32 one is sign-extended (a negative offset moves back).
// CHECK-NEXT: %[[ROW64:.*]] = arith.extsi %[[ROW]] : i32 to i64
// CHECK-NEXT: %[[B:.*]] = llvm.getelementptr %[[A]][%[[ROW64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// The load's addresses start from the advanced pointer.
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[B]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK: llvm.inline_asm {{.*}}ld.global{{.*}} %[[ADDR]],
// The i64 offset is a 64-bit kernel parameter; bf16 elements are 2 bytes: offset << 1.
// PTX: .visible .entry advance(
// PTX: .param .u64 advance_param_1,
// PTX: ld.param.b64 [[OFFREG:%rd[0-9]+]], [advance_param_1];
// PTX: shl.b64 {{%rd[0-9]+}}, [[OFFREG]], 1;
func.func @advance(%p: !tile.ptr<bf16>, %off: i64, %row: i32, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tile.addptr %p, %off : !tile.ptr<bf16>, i64
  %b = tile.addptr %a, %row : !tile.ptr<bf16>, i32
  %v = tile.make_view %b, [%n], [%c1] : !tile.ptr<bf16> -> !tile.view<bf16, 1>
  %x = tile.load %v[%c0] : !tile.view<bf16, 1> -> tensor<256xbf16>
  tile.store %x, %v[%c0] : tensor<256xbf16>, !tile.view<bf16, 1>
  return
}

// -----

// One (batch, head) slice as in the attention examples: base + bh * rows * D elements, f32 elements.
// CHECK-LABEL: gpu.func @slice(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i32, %{{[^:]*}}: i32)
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[ROWS]], %{{.*}} : i64
// CHECK-NEXT: %[[HEAD:.*]] = llvm.getelementptr %[[P]][%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: llvm.getelementptr %[[HEAD]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
func.func @slice(%p: !tile.ptr<f32>, %s: i32, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %bh = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %d = arith.constant 64 : i64
  %bh64 = arith.extsi %bh : i32 to i64
  %s64 = arith.extsi %s : i32 to i64
  %rows = arith.muli %bh64, %s64 : i64
  %off = arith.muli %rows, %d : i64
  %head = tile.addptr %p, %off : !tile.ptr<f32>, i64
  %v = tile.make_view %head, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %z = arith.constant dense<0.0> : tensor<64xf32>
  tile.store %z, %v[%c0] : tensor<64xf32>, !tile.view<f32, 1>
  return
}
