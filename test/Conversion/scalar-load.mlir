// tile.scalar_load: one element of global memory read as a scalar (the same for every thread), at an
// offset in elements; the indirection reads of generated attention kernels (per-sequence key counts,
// page tables of paged KV caches).
//   - round trip of the custom form and of the generic form, with i32 and i64 offsets and i32, f32
//     and i64 results;
//   - verifier errors: the result is the pointer's element type; offsets are i32 or i64, results
//     i32, i64 or f32 (the invalid cases print nothing and are checked by -verify-diagnostics);
//   - lowering: one llvm.getelementptr on the base (typed with the element, an i32 offset
//     sign-extended to i64, an i64 one used as it is) and one plain llvm.load, no bounds check and no
//     predicate; the loaded value steers a tile.load's rows or is stored as a splat;
//   - inside a loop whose B operand streams through shared memory (wgmma on sm_90a), a row computed
//     from a scalar_load of the induction variable is read again for the next iteration's copy: the
//     prologue reads entry 0, the loop body entry i + 1, and each feeds the copy's row (TMA
//     coordinate or cp.async address).
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=NVVM
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --tgpu-accelerate-dot="arch=sm_90a" --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="arch=sm_90a tma=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=TMA
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --tgpu-accelerate-dot="arch=sm_90a" --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="arch=sm_90a tma=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=CPASYNC

// A 16-row block whose first row is read from a table: table[i] is the row offset of the tile.load.
// CHECK-LABEL: func.func @row_from_table
// CHECK-SAME: (%[[TABLE:[^:]*]]: !tile.ptr<i32>, %[[SRC:[^:]*]]: !tile.ptr<f32>, %{{[^:]*}}: !tile.ptr<f32>, %[[I:[^:]*]]: i32, %{{[^:]*}}: i32)
// CHECK: %[[ROW:.*]] = tile.scalar_load %[[TABLE]][%[[I]]] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[V:.*]] = tile.make_view %[[SRC]]
// CHECK: tile.load %[[V]][%[[ROW]], %{{.*}}] : !tile.view<f32, 2> -> tensor<16x32xf32>
// GENERIC-LABEL: sym_name = "row_from_table"
// GENERIC: "tile.scalar_load"(%arg0, %arg3) : (!tile.ptr<i32>, i32) -> i32
// The table entry is read once, unpredicated, by every thread; each thread's rows of the block are
// that entry plus its own row in the layout, checked against the view's row count n.
// NVVM-LABEL: gpu.func @row_from_table(
// NVVM-SAME: %[[TABLE:[^:]*]]: !llvm.ptr<1>, %[[SRC:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[I:[^:]*]]: i32, %[[N:[^:]*]]: i32)
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// NVVM: %[[W:.*]] = arith.extsi %[[I]] : i32 to i64
// NVVM-NEXT: %[[P:.*]] = llvm.getelementptr %[[TABLE]][%[[W]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// NVVM-NEXT: %[[ROW:.*]] = llvm.load %[[P]] : !llvm.ptr<1> -> i32
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// NVVM: %[[R0:.*]] = arith.addi %[[ROW]], %{{.*}} : i32
// NVVM-NEXT: arith.cmpi ult, %[[R0]], %[[N]] : i32
// NVVM: llvm.getelementptr %[[SRC]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// NVVM: gpu.return
func.func @row_from_table(%table: !tile.ptr<i32>, %src: !tile.ptr<f32>, %out: !tile.ptr<f32>, %i: i32, %n: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %row = tile.scalar_load %table[%i] : !tile.ptr<i32>, i32 -> i32
  %sv = tile.make_view %src, [%n, %c32], [%c32, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %t = tile.load %sv[%row, %c0] : !tile.view<f32, 2> -> tensor<16x32xf32>
  %ov = tile.make_view %out, [%c32, %c32], [%c32, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  tile.store %t, %ov[%c0, %c0] : tensor<16x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// An f32 read at an i64 offset, broadcast and stored: the offset needs no extension, and the loaded
// value itself is what every store writes.
// CHECK-LABEL: func.func @splat_scalar
// CHECK: %[[X:.*]] = tile.scalar_load %{{.*}}[%{{.*}}] : !tile.ptr<f32>, i64 -> f32
// CHECK-NEXT: tile.splat %[[X]] : f32 -> tensor<32xf32>
// GENERIC-LABEL: sym_name = "splat_scalar"
// GENERIC: "tile.scalar_load"(%arg0, %arg2) : (!tile.ptr<f32>, i64) -> f32
// NVVM-LABEL: gpu.func @splat_scalar(
// NVVM-SAME: %[[SRC:[^:]*]]: !llvm.ptr<1>, %[[OUT:[^:]*]]: !llvm.ptr<1>, %[[I:[^:]*]]: i64)
// NVVM-NOT: arith.extsi %[[I]]
// NVVM: %[[P:.*]] = llvm.getelementptr %[[SRC]][%[[I]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[X:.*]] = llvm.load %[[P]] : !llvm.ptr<1> -> f32
// NVVM-NOT: llvm.load
// NVVM: llvm.getelementptr %[[OUT]]
// NVVM-NEXT: llvm.store %[[X]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM-NOT: llvm.load
// NVVM: gpu.return
func.func @splat_scalar(%src: !tile.ptr<f32>, %out: !tile.ptr<f32>, %i: i64)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %x = tile.scalar_load %src[%i] : !tile.ptr<f32>, i64 -> f32
  %t = tile.splat %x : f32 -> tensor<32xf32>
  %ov = tile.make_view %out, [%c32], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  tile.store %t, %ov[%c0] : tensor<32xf32>, !tile.view<f32, 1>
  return
}

// -----

// i64 elements are read as i64.
// CHECK-LABEL: func.func @i64_entry
// CHECK: tile.scalar_load %{{.*}}[%{{.*}}] : !tile.ptr<i64>, i32 -> i64
// GENERIC-LABEL: sym_name = "i64_entry"
// GENERIC: "tile.scalar_load"(%arg0, %arg1) : (!tile.ptr<i64>, i32) -> i64
func.func @i64_entry(%t: !tile.ptr<i64>, %i: i32) -> i64 {
  %x = tile.scalar_load %t[%i] : !tile.ptr<i64>, i32 -> i64
  return %x : i64
}

// -----

// A page-table walk in a loop whose B operand streams through shared memory: block i of B starts at row
// table[i] * 64. The copy of block i + 1, issued by iteration i, reads table[i + 1] again where it is
// issued; the prologue's copy of block 0 reads table[0] (the offset folds away).
// CHECK-LABEL: func.func @streamed_pages
// CHECK: scf.for %[[IT:[^ ]*]] = {{.*}} : i32 {
// CHECK-NEXT: %[[PAGE:.*]] = tile.scalar_load %{{.*}}[%[[IT]]] : !tile.ptr<i32>, i32 -> i32
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[PAGE]], %{{.*}} : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[ROW]], %{{.*}}] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
// TMA-LABEL: gpu.func @streamed_pages(
// TMA-SAME: %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[TABLE:[^:]*]]: !llvm.ptr<1>,
// TMA-SAME: %[[AMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64}, %[[BMAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64})
// TMA-DAG: %[[AMAPV:.*]] = tgpu.tensor_map %[[AMAP]] : !llvm.ptr
// TMA-DAG: %[[BMAPV:.*]] = tgpu.tensor_map %[[BMAP]] : !llvm.ptr
// A is copied at (0, 0); then the prologue's copy of block 0 into stage 0 of B's ring, whose row is
// table[0] * 64.
// TMA: tgpu.tma_load %{{.*}}, %[[AMAPV]][%c0_i32, %c0_i32]
// TMA: tgpu.ring_barrier full %{{.*}}[%c0_i32] : !tgpu.ring<3>
// TMA: tgpu.mbarrier_arrive_expect_tx
// TMA-NEXT: %[[E0:.*]] = llvm.load %[[TABLE]] : !llvm.ptr<1> -> i32
// TMA-NEXT: %[[R0:.*]] = arith.muli %[[E0]], %c64_i32 : i32
// TMA: tgpu.tma_load %{{.*}}, %[[BMAPV]][%c0_i32, %[[R0]]], %{{.*}} : !llvm.ptr<7>
// In the loop: table[i + 1] for the next block's copy.
// TMA: scf.for %[[IV:[^ ]*]] = %c0_i32 to
// TMA: %[[NEXT:.*]] = arith.addi %[[IV]], %c1_i32 : i32
// TMA: tgpu.mbarrier_arrive_expect_tx
// TMA-NEXT: %[[W:.*]] = arith.extsi %[[NEXT]] : i32 to i64
// TMA-NEXT: %[[P:.*]] = llvm.getelementptr %[[TABLE]][%[[W]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// TMA-NEXT: %[[E:.*]] = llvm.load %[[P]] : !llvm.ptr<1> -> i32
// TMA-NEXT: %[[R:.*]] = arith.muli %[[E]], %c64_i32 : i32
// TMA: tgpu.tma_load %{{.*}}, %[[BMAPV]][%c0_i32, %[[R]]], %{{.*}} : !llvm.ptr<7>
// TMA: tgpu.wgmma
// TMA: scf.yield
// TMA: gpu.return
// Without TMA the same rows address the cp.async copies (each thread's row: entry * 64 + its row).
// CPASYNC-LABEL: gpu.func @streamed_pages(
// CPASYNC-SAME: %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[TABLE:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %[[N:[^:]*]]: i32)
// CPASYNC: tgpu.mbarrier_init
// CPASYNC: gpu.barrier
// CPASYNC: %[[E0:.*]] = llvm.load %[[TABLE]] : !llvm.ptr<1> -> i32
// CPASYNC-NEXT: %[[R0:.*]] = arith.muli %[[E0]], %c64_i32 : i32
// CPASYNC: %[[T0:.*]] = arith.addi %[[R0]], %{{.*}} : i32
// CPASYNC-NEXT: arith.cmpi ult, %[[T0]], %[[N]] : i32
// CPASYNC: tgpu.cp_async
// CPASYNC: scf.for %[[IV:[^ ]*]] = %c0_i32 to
// CPASYNC: %[[NEXT:.*]] = arith.addi %[[IV]], %c1_i32 : i32
// CPASYNC: tgpu.ring_wait
// CPASYNC: %[[W:.*]] = arith.extsi %[[NEXT]] : i32 to i64
// CPASYNC-NEXT: %[[P:.*]] = llvm.getelementptr %[[TABLE]][%[[W]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CPASYNC-NEXT: %[[E:.*]] = llvm.load %[[P]] : !llvm.ptr<1> -> i32
// CPASYNC-NEXT: %[[R:.*]] = arith.muli %[[E]], %c64_i32 : i32
// CPASYNC: %[[T:.*]] = arith.addi %[[R]], %{{.*}} : i32
// CPASYNC-NEXT: arith.cmpi ult, %[[T]], %[[N]] : i32
// The table is read nowhere else: the body's own copy of the read is gone with the streamed load.
// CPASYNC: tgpu.cp_async
// CPASYNC-NOT: llvm.getelementptr %[[TABLE]]
// CPASYNC: tgpu.wgmma
// CPASYNC-NOT: llvm.getelementptr %[[TABLE]]
// CPASYNC: scf.yield
// CPASYNC-NOT: llvm.getelementptr %[[TABLE]]
// CPASYNC: gpu.return
func.func @streamed_pages(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %table: !tile.ptr<i32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %va = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<64x64xf32>) : i32 {
    %page = tile.scalar_load %table[%i] : !tile.ptr<i32>, i32 -> i32
    %row = arith.muli %page, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// The element is read as it is: an i32 table cannot give an i64.
func.func @result_i64(%t: !tile.ptr<i32>, %i: i32) {
  // expected-error @+1 {{'tile.scalar_load' op result type 'i64' must be the pointer's element type 'i32'}}
  %x = tile.scalar_load %t[%i] : !tile.ptr<i32>, i32 -> i64
  return
}

// -----

// ...nor an f32 (no conversion on the way).
func.func @result_f32(%t: !tile.ptr<i32>, %i: i32) {
  // expected-error @+1 {{'tile.scalar_load' op result type 'f32' must be the pointer's element type 'i32'}}
  %x = tile.scalar_load %t[%i] : !tile.ptr<i32>, i32 -> f32
  return
}

// -----

// Offsets are i32 or i64 element counts.
func.func @offset_i16(%t: !tile.ptr<i32>, %i: i16) {
  // expected-error @+1 {{'tile.scalar_load' op operand #1 must be 32-bit signless integer or 64-bit signless integer, but got 'i16'}}
  %x = tile.scalar_load %t[%i] : !tile.ptr<i32>, i16 -> i32
  return
}

// -----

// Results are i32, i64 or f32: a bf16 element cannot be read as a scalar.
func.func @result_bf16(%t: !tile.ptr<bf16>, %i: i32) {
  // expected-error @+1 {{'tile.scalar_load' op result #0 must be 32-bit signless integer or 64-bit signless integer or 32-bit float, but got 'bf16'}}
  %x = tile.scalar_load %t[%i] : !tile.ptr<bf16>, i32 -> bf16
  return
}
