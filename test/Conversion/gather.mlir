// tile.gather: one element per tile element, read at its own offset (in elements) from a global
// pointer; the aux-tensor reads of generated attention kernels (ALiBi slopes, document ids).
//   - round trip of the custom form and of the generic form;
//   - verifier errors: offsets must be i32, the result has the offsets' shape and the pointer's
//     element type (the invalid cases print nothing and are checked by -verify-diagnostics);
//   - lowering: the result takes the offsets' layout, and every register of it becomes one
//     llvm.getelementptr on the base (typed with the element, offset sign-extended to i64) and one
//     plain llvm.load: no bounds check and no predicate (offsets must be clamped into the allocation
//     first, as convert-attn-to-tile does).
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=NVVM

// 1-D gather of f32 at offsets 0..127 on one warp: the range's blocked layout (4 consecutive elements
// per thread, registers r = 0..3 at elements T ^ r) carries over to the gathered tile, so each thread
// issues 4 loads.
// CHECK-LABEL: func.func @gather_f32
// CHECK: %[[R:.*]] = tile.range 0, 128 : tensor<128xi32>
// CHECK-NEXT: %[[G:.*]] = tile.gather %{{.*}}[%[[R]]] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
// CHECK: tile.store %[[G]], %{{.*}}[%{{.*}}] : tensor<128xf32>, !tile.view<f32, 1>
// NVVM-LABEL: gpu.func @gather_f32(
// NVVM-SAME: %[[TABLE:[^:]*]]: !llvm.ptr<1>, %[[OUT:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i32)
// NVVM-NOT: scf.if
// NVVM-NOT: llvm.inline_asm
// NVVM: %[[W0:.*]] = arith.extsi %{{.*}} : i32 to i64
// NVVM-NEXT: %[[P0:.*]] = llvm.getelementptr %[[TABLE]][%[[W0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V0:.*]] = llvm.load %[[P0]] : !llvm.ptr<1> -> f32
// NVVM-NEXT: %[[W1:.*]] = arith.extsi %{{.*}} : i32 to i64
// NVVM-NEXT: %[[P1:.*]] = llvm.getelementptr %[[TABLE]][%[[W1]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V1:.*]] = llvm.load %[[P1]] : !llvm.ptr<1> -> f32
// NVVM-NEXT: %[[W2:.*]] = arith.extsi %{{.*}} : i32 to i64
// NVVM-NEXT: %[[P2:.*]] = llvm.getelementptr %[[TABLE]][%[[W2]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V2:.*]] = llvm.load %[[P2]] : !llvm.ptr<1> -> f32
// NVVM-NEXT: %[[W3:.*]] = arith.extsi %{{.*}} : i32 to i64
// NVVM-NEXT: %[[P3:.*]] = llvm.getelementptr %[[TABLE]][%[[W3]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V3:.*]] = llvm.load %[[P3]] : !llvm.ptr<1> -> f32
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// The gathered registers are stored as they are, in the same layout (no conversion in between).
// NVVM: llvm.store %[[V0]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM: llvm.store %[[V1]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM: llvm.store %[[V2]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM: llvm.store %[[V3]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM-NOT: llvm.load
// NVVM: gpu.return
func.func @gather_f32(%table: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.range 0, 128 : tensor<128xi32>
  %g = tile.gather %table[%r] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %v = tile.make_view %out, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  tile.store %g, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// 2-D gather of bf16 at loaded, data-dependent offsets clamped into [0, len - 1] (the pattern of the
// attention kernels): 16 x 16 on one warp is 8 registers per thread, so 8 address computations and 8
// loads on the bf16 table, each from one clamped offset.
// CHECK-LABEL: func.func @gather_bf16_2d
// CHECK: %[[IDX:.*]] = arith.maxsi %{{.*}}, %{{.*}} : tensor<16x16xi32>
// CHECK-NEXT: %{{.*}} = tile.gather %{{.*}}[%[[IDX]]] : !tile.ptr<bf16>, tensor<16x16xi32> -> tensor<16x16xbf16>
// NVVM-LABEL: gpu.func @gather_bf16_2d(
// NVVM-SAME: %[[TABLE:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: i32)
// NVVM: %[[C0:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i32
// NVVM-COUNT-6: arith.maxsi %{{.*}}, %{{.*}} : i32
// NVVM-NEXT: %[[C7:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i32
// NVVM-NEXT: %[[W0:.*]] = arith.extsi %[[C0]] : i32 to i64
// NVVM-NEXT: %[[P0:.*]] = llvm.getelementptr %[[TABLE]][%[[W0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// NVVM-NEXT: llvm.load %[[P0]] : !llvm.ptr<1> -> bf16
// NVVM-COUNT-6: llvm.load %{{.*}} : !llvm.ptr<1> -> bf16
// NVVM: %[[W7:.*]] = arith.extsi %[[C7]] : i32 to i64
// NVVM-NEXT: %[[P7:.*]] = llvm.getelementptr %[[TABLE]][%[[W7]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// NVVM-NEXT: llvm.load %[[P7]] : !llvm.ptr<1> -> bf16
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// NVVM: gpu.return
func.func @gather_bf16_2d(%table: !tile.ptr<bf16>, %idx: !tile.ptr<i32>, %out: !tile.ptr<bf16>, %len: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %iv = tile.make_view %idx, [%c16, %c16], [%c16, %c1] : !tile.ptr<i32> -> !tile.view<i32, 2>
  %i = tile.load %iv[%c0, %c0] : !tile.view<i32, 2> -> tensor<16x16xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<16x16xi32>
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %lo = arith.minsi %i, %lastt : tensor<16x16xi32>
  %cl = arith.maxsi %lo, %zero : tensor<16x16xi32>
  %g = tile.gather %table[%cl] : !tile.ptr<bf16>, tensor<16x16xi32> -> tensor<16x16xbf16>
  %ov = tile.make_view %out, [%c16, %c16], [%c16, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  tile.store %g, %ov[%c0, %c0] : tensor<16x16xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Offsets are i32 element counts: i64 offsets are rejected.
func.func @offsets_i64(%t: !tile.ptr<f32>, %i: tensor<64xi64>) {
  // expected-error @+1 {{'tile.gather' op offsets must be i32, got 'i64'}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi64> -> tensor<64xf32>
  return
}

// -----

// ...and so are 16-bit ones.
func.func @offsets_i16(%t: !tile.ptr<i32>, %i: tensor<8x8xi16>) {
  // expected-error @+1 {{'tile.gather' op offsets must be i32, got 'i16'}}
  %g = tile.gather %t[%i] : !tile.ptr<i32>, tensor<8x8xi16> -> tensor<8x8xi32>
  return
}

// -----

// One element per offset: 64 offsets cannot give 128 elements.
func.func @shape_size(%t: !tile.ptr<f32>, %i: tensor<64xi32>) {
  // expected-error @+1 {{'tile.gather' op result must have the offsets' shape}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi32> -> tensor<128xf32>
  return
}

// -----

// ...nor a tile of another rank with as many elements.
func.func @shape_rank(%t: !tile.ptr<f32>, %i: tensor<64xi32>) {
  // expected-error @+1 {{'tile.gather' op result must have the offsets' shape}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi32> -> tensor<8x8xf32>
  return
}

// -----

// The elements are read as the pointer's element type: no conversion on the way.
func.func @element_type(%t: !tile.ptr<f32>, %i: tensor<64xi32>) {
  // expected-error @+1 {{'tile.gather' op result elements must be the pointer's element type}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi32> -> tensor<64xf16>
  return
}
