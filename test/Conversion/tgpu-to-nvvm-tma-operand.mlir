// convert-tgpu-to-nvvm with wgmma: a block loaded at the kernel's top level whose only uses are the
// A operands of dots in top-level loops (Q of an attention kernel) is copied by TMA straight into
// 128-byte swizzled panels (TensorMaps.cpp, loadOperandByTma): thread 0 initialises the block's own
// mbarrier, announces its bytes and issues one box per 64-column panel before anything else; before
// each loop the threads pass a CTA barrier (the initialisation, visible) and wait for phase 0. The
// block never occupies registers and is never stored by the threads. Launches whose maps did not
// encode copy it element by element (rolled loop) and fence it for wgmma's async proxy.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot=arch=sm_80 --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm=arch=sm_80 --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=SM80

// A [128 x 128] at rows pid * 128 of a [n, 128] view with row stride lda (argument 4): a 2-D map,
// two 64-column boxes of 128 rows, 32 KiB announced; its barrier after the panels (byte 32768). Two
// loops read it: one copy, one wait (the second loop is dominated by the first wait).
// CHECK-LABEL: gpu.func @two_loops(
// CHECK-SAME: %[[FLAG:[a-z0-9]+]]: i32, %[[MAPA:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64}, %[[MAPB:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64})
// CHECK-SAME: tgpu.tensor_maps = [{box = array<i32: 64, 128>, elem_bytes = 2 : i32, pointer = 0 : i32,
// CHECK-SAME: sizes = [array<i64: 0, 128>, array<i64: 1, 3>], strides = [array<i64: 0, 1>, array<i64: 1, 4>], swizzle = 128 : i32}
// CHECK-DAG: %[[MAPAV:.*]] = tgpu.tensor_map %[[MAPA]] : !llvm.ptr
// CHECK-DAG: %[[MAPBV:.*]] = tgpu.tensor_map %[[MAPB]] : !llvm.ptr
// CHECK: %[[BAR:.*]] = tgpu.ring_barrier full %{{[0-9a-z_]+}}[%c0_i32] : !tgpu.ring<1>
// CHECK: %[[USE:.*]] = arith.cmpi ne, %[[FLAG]], %c0_i32 : i32
// CHECK: scf.if %[[USE]] {
// CHECK: scf.if
// CHECK-NEXT: tgpu.mbarrier_init %[[BAR]], %c1_i32
// CHECK-NEXT: tgpu.fence_async_shared
// CHECK-NEXT: tgpu.mbarrier_arrive_expect_tx %[[BAR]], %c32768_i32
// CHECK: tgpu.tma_load %{{.*}}, %[[MAPAV]][%c0_i32, %[[ROW:[0-9]+]]], %[[BAR]] :
// CHECK: tgpu.tma_load %{{.*}}, %[[MAPAV]][%c64_i32, %[[ROW]]], %[[BAR]] :
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: tgpu.fence_async_shared
// The first loop's ring, then the wait for A, then the loop: no store of A's registers anywhere.
// CHECK: tgpu.tma_load %{{.*}}, %[[MAPBV]]
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if %[[USE]] {
// CHECK-NEXT: tgpu.mbarrier_wait %[[BAR]], %c0_i32
// CHECK-NOT: llvm.store %{{.*}} : vector<{{.*}}>, !llvm.ptr<3>
// CHECK: scf.for
// CHECK: = tgpu.wgmma 
// CHECK: scf.yield
// CHECK-NOT: tgpu.mbarrier_wait %[[BAR]]
// CHECK: scf.for
// CHECK: = tgpu.wgmma 
// CHECK: gpu.return

// Without wgmma A is loaded into registers as before: no map.
// SM80-LABEL: gpu.func @two_loops(
// SM80-NOT: tgpu.tensor_maps
// SM80-NOT: tgpu.tma_
// SM80: gpu.return
func.func @two_loops(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %lda: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
  %va = tile.make_view %a, [%n, %c128], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c128], [%c128, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%n, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x128xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %btt = tile.trans %bt : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %s = tile.dot %at, %btt, %acc0 : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %acc2 = scf.for %i = %nb to %n step %c64 iter_args(%acc0 = %acc) -> (tensor<128x64xf32>) : i32 {
    %bt = tile.load %vb[%i, %c0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %btt = tile.trans %bt : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %s = tile.dot %at, %btt, %acc0 : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  tile.store %acc2, %vc[%row0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A block that is also read in registers (here: added to the result) is loaded as before; only the
// streamed B has a map.
// CHECK-LABEL: gpu.func @also_in_registers(
// CHECK-SAME: tgpu.tensor_maps = [{box = array<i32: 64, 64>, elem_bytes = 2 : i32, pointer = 1 : i32
// CHECK-NOT: pointer = 0 : i32
// CHECK: ld.global.v4.b32
// CHECK: gpu.return
func.func @also_in_registers(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %af = arith.extf %at : tensor<128x64xbf16> to tensor<128x64xf32>
  %sum = arith.addf %acc, %af : tensor<128x64xf32>
  tile.store %sum, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A dot at the top level (no loop) stores its operands itself: A is loaded into registers, no map.
// CHECK-LABEL: gpu.func @top_level_dot(
// CHECK-NOT: tgpu.tensor_maps
// CHECK: ld.global.v4.b32
// CHECK: = tgpu.wgmma 
// CHECK: gpu.return
func.func @top_level_dot(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %va = tile.make_view %a, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %bt = tile.load %vb[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %s = tile.dot %at, %bt, %zero : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
  tile.store %s, %vc[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}
