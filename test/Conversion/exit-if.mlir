// tile.exit_if: a program instance with nothing to do ends before anything else.
//   - round trip, and the verifier: only at a tile.kernel's top level;
//   - lowering: the condition's scalar chain (program ids, kernel arguments, tile.scalar_load) is
//     evaluated at the kernel's very start, before the producer warpgroup takes its role, and an
//     scf.if ends the threads with nvvm.exit; the body computes its own values again later;
//   - a persistent kernel, whose CTAs run other instances too, rejects it (exit-if-persistent.mlir).
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=NVVM

// CHECK-LABEL: func.func @rows_left
// CHECK: %[[DONE:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: tile.exit_if %[[DONE]]
// NVVM-LABEL: gpu.func @rows_left(
// NVVM-SAME: %[[LENS:[^:]*]]: !llvm.ptr<1>
// The first thing after the thread ids: the length, the comparison and the exit.
// NVVM: gpu.block_id x
// NVVM: gpu.block_id z
// NVVM: %[[P:.*]] = llvm.getelementptr %[[LENS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// NVVM-NEXT: %[[LEN:.*]] = llvm.load %[[P]] : !llvm.ptr<1> -> i32
// NVVM: %[[C:.*]] = arith.cmpi sge, %{{.*}}, %[[LEN]] : i32
// NVVM-NEXT: scf.if %[[C]] {
// NVVM-NEXT: nvvm.exit
// NVVM-NEXT: }
// NVVM: llvm.load
// NVVM: llvm.store
func.func @rows_left(%lens: !tile.ptr<i32>, %out: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %x = tile.program_id x
  %b = tile.program_id z
  %len = tile.scalar_load %lens[%b] : !tile.ptr<i32>, i32 -> i32
  %row = arith.muli %x, %c32 : i32
  %done = arith.cmpi sge, %row, %len : i32
  tile.exit_if %done
  %ov = tile.make_view %out, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %r = tile.range 0, 32 : tensor<32xi32>
  %f = arith.sitofp %r : tensor<32xi32> to tensor<32xf32>
  tile.store %f, %ov[%row] : tensor<32xf32>, !tile.view<f32, 1>
  return
}

// -----

func.func @not_a_kernel(%c: i1) {
  // expected-error @+1 {{'tile.exit_if' op must sit at the top level of a tile.kernel function}}
  tile.exit_if %c
  return
}
