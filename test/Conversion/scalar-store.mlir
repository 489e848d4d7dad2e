// tile.scalar_store: one scalar written to global memory at an offset in elements, once per program
// instance (the lists of the generated `<name>_block_mask` kernels: counts and key block indices).
//   - round trip of the custom form and of the generic form, with i32 and i64 offsets and i32, i64
//     and f32 values (the verifier errors are in test/Dialect/Tile/invalid.mlir);
//   - lowering: one thread of the instance writes, lane 0 of warp 0: under an scf.if on
//     (lane | warp) == 0, one llvm.getelementptr on the base (typed with the element, an i32 offset
//     sign-extended to i64, an i64 one used as it is) and one plain llvm.store; each store of an
//     instance has its own guard, in program order; a value computed by a reduction over the whole
//     tile (the same in every thread) is stored after the reduction's last barrier;
//   - in the PTX, the store is a st.global that threads with a non-zero (lane | warp) branch over.
// RUN: flare-opt %s -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=NVVM
// RUN: flarec %s --arch=sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX

// A count written at an i32 offset by a kernel of four warps.
// CHECK-LABEL: func.func @store_count
// CHECK-SAME: (%[[OUT:[^:]*]]: !tile.ptr<i32>, %[[I:[^:]*]]: i32, %[[N:[^:]*]]: i32)
// CHECK-NEXT: tile.scalar_store %[[N]], %[[OUT]][%[[I]]] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: return
// GENERIC-LABEL: sym_name = "store_count"
// GENERIC: "tile.scalar_store"(%arg2, %arg0, %arg1) : (i32, !tile.ptr<i32>, i32) -> ()
// The writer is the thread whose lane and warp are both 0 (tid.x & 31, tid.x >> 5).
// NVVM-LABEL: gpu.func @store_count(
// NVVM-SAME: %[[OUT:[^:]*]]: !llvm.ptr<1>, %[[I:[^:]*]]: i32, %[[N:[^:]*]]: i32)
// NVVM: %[[TID:.*]] = arith.index_castui %{{.*}} : index to i32
// NVVM: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// NVVM: %[[WARP:.*]] = arith.shrui %[[TID]], %c5_i32 : i32
// NVVM-NOT: llvm.store
// NVVM: %[[FIRST:.*]] = arith.ori %[[LANE]], %[[WARP]] : i32
// NVVM: %[[WRITER:.*]] = arith.cmpi eq, %[[FIRST]], %{{.*}} : i32
// NVVM-NEXT: scf.if %[[WRITER]] {
// NVVM-NEXT: %[[W:.*]] = arith.extsi %[[I]] : i32 to i64
// NVVM-NEXT: %[[P:.*]] = llvm.getelementptr %[[OUT]][%[[W]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// NVVM-NEXT: llvm.store %[[N]], %[[P]] : i32, !llvm.ptr<1>
// NVVM-NEXT: }
// NVVM-NEXT: gpu.return
// PTX-LABEL: .visible .entry store_count(
// PTX: mov.u32 [[TID:%r[0-9]+]], %tid.x;
// PTX-DAG: and.b32 [[LANE:%r[0-9]+]], [[TID]], 31;
// PTX-DAG: shr.u32 [[WARP:%r[0-9]+]], [[TID]], 5;
// PTX: or.b32 [[FIRST:%r[0-9]+]], [[LANE]], [[WARP]];
// PTX: setp.ne.b32 [[SKIP:%p[0-9]+]], [[FIRST]], 0;
// PTX-NEXT: @[[SKIP]] bra [[END:\$L__BB[0-9_]+]];
// PTX: st.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// PTX-NEXT: [[END]]:
// PTX-NEXT: ret;
func.func @store_count(%out: !tile.ptr<i32>, %i: i32, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  tile.scalar_store %n, %out[%i] : i32, !tile.ptr<i32>, i32
  return
}

// -----

// An f32 at an i64 offset: the offset needs no extension, the GEP is typed f32.
// CHECK-LABEL: func.func @store_f32
// CHECK: tile.scalar_store %{{.*}}, %{{.*}}[%{{.*}}] : f32, !tile.ptr<f32>, i64
// GENERIC-LABEL: sym_name = "store_f32"
// GENERIC: "tile.scalar_store"(%arg2, %arg0, %arg1) : (f32, !tile.ptr<f32>, i64) -> ()
// NVVM-LABEL: gpu.func @store_f32(
// NVVM-SAME: %[[OUT:[^:]*]]: !llvm.ptr<1>, %[[I:[^:]*]]: i64, %[[X:[^:]*]]: f32)
// NVVM: scf.if %{{.*}} {
// NVVM-NOT: arith.extsi
// NVVM-NEXT: %[[P:.*]] = llvm.getelementptr %[[OUT]][%[[I]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: llvm.store %[[X]], %[[P]] : f32, !llvm.ptr<1>
// NVVM-NEXT: }
// PTX-LABEL: .visible .entry store_f32(
// PTX: bra
// PTX: st.global.b32
// PTX: ret;
func.func @store_f32(%out: !tile.ptr<f32>, %i: i64, %x: f32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  tile.scalar_store %x, %out[%i] : f32, !tile.ptr<f32>, i64
  return
}

// -----

// i64 values into an i64 table.
// CHECK-LABEL: func.func @store_i64
// CHECK: tile.scalar_store %{{.*}}, %{{.*}}[%{{.*}}] : i64, !tile.ptr<i64>, i32
// GENERIC-LABEL: sym_name = "store_i64"
// GENERIC: "tile.scalar_store"(%arg2, %arg0, %arg1) : (i64, !tile.ptr<i64>, i32) -> ()
// NVVM-LABEL: gpu.func @store_i64(
// NVVM: scf.if
// NVVM: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i64
// NVVM-NEXT: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr<1>
// PTX-LABEL: .visible .entry store_i64(
// PTX: bra
// PTX: st.global
func.func @store_i64(%out: !tile.ptr<i64>, %i: i32, %x: i64)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  tile.scalar_store %x, %out[%i] : i64, !tile.ptr<i64>, i32
  return
}

// -----

// The sum of a whole tile (the same in every thread after the reduction) and a second value: each
// store has its own guard, after the reduction's barrier, in program order (offset 0, then 1).
// CHECK-LABEL: func.func @store_sum
// CHECK: %[[S:.*]] = tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<256xi32> -> i32
// CHECK-NEXT: tile.scalar_store %[[S]], %{{.*}}[%{{.*}}] : i32, !tile.ptr<i32>, i32
// CHECK-NEXT: tile.scalar_store %{{.*}}, %{{.*}}[%{{.*}}] : i32, !tile.ptr<i32>, i32
// NVVM-LABEL: gpu.func @store_sum(
// NVVM-SAME: %{{[^:]*}}: !llvm.ptr<1>, %[[OUT:[^:]*]]: !llvm.ptr<1>, %[[N:[^:]*]]: i32)
// NVVM: nvvm.shfl.sync bfly
// NVVM: gpu.barrier
// NVVM: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// NVVM: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// NVVM-NEXT: %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// NVVM-NEXT: gpu.barrier
// NVVM: scf.if %{{.*}} {
// NVVM: %[[P0:.*]] = llvm.getelementptr %[[OUT]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// NVVM-NEXT: llvm.store %[[SUM]], %[[P0]] : i32, !llvm.ptr<1>
// NVVM-NEXT: }
// NVVM: scf.if %{{.*}} {
// NVVM: %[[P1:.*]] = llvm.getelementptr %[[OUT]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// NVVM-NEXT: llvm.store %[[N]], %[[P1]] : i32, !llvm.ptr<1>
// NVVM-NEXT: }
// NVVM-NEXT: gpu.return
func.func @store_sum(%src: !tile.ptr<i32>, %out: !tile.ptr<i32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %sv = tile.make_view %src, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %t = tile.load %sv[%c0] : !tile.view<i32, 1> -> tensor<256xi32>
  %s = tile.reduce sum %t {axis = 0 : i32} : tensor<256xi32> -> i32
  tile.scalar_store %s, %out[%c0] : i32, !tile.ptr<i32>, i32
  tile.scalar_store %n, %out[%c1] : i32, !tile.ptr<i32>, i32
  return
}
