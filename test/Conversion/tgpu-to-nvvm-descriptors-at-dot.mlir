// convert-tgpu-to-nvvm with wgmma: where a loop holds two or more dots whose A operand is defined
// outside it (resident in shared memory, as K and V in the backward's steps; tgpu-accelerate-dot
// marks them tgpu.descriptors_at_dot, accelerate-dot.mlir), each dot takes an opaque copy of its
// first K step's descriptor and adds the later steps' offsets after it, so that LICM cannot hoist
// every K step's 64-bit descriptor out of the loop (registers held across it: the backward's
// spills). With one such dot (the forward's Q) the descriptors stay loop-invariant.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s

// CHECK-LABEL: gpu.func @two_resident(
// CHECK-NOT: llvm.inline_asm {{.*}}"mov.b64 $0, $1;"
// CHECK: scf.for
// CHECK: %[[A1:.*]] = llvm.inline_asm has_side_effects "mov.b64 $0, $1;", "=l,l" %{{.*}} : (i64) -> i64
// CHECK: tgpu.wgmma_fence
// CHECK-NEXT: = tgpu.wgmma %{{.*}}, a_desc %[[A1]], b_desc
// CHECK: %[[A1K:.*]] = arith.addi %[[A1]], %c16_i64 : i64
// CHECK-NEXT: = tgpu.wgmma %{{.*}}, a_desc %[[A1K]], b_desc
// CHECK: tgpu.wgmma_commit
// CHECK: %[[A2:.*]] = llvm.inline_asm has_side_effects "mov.b64 $0, $1;", "=l,l" %{{.*}} : (i64) -> i64
// CHECK: tgpu.wgmma_fence
// CHECK-NEXT: = tgpu.wgmma %{{.*}}, a_desc %[[A2]], b_desc
// CHECK: tgpu.wgmma_commit
// CHECK: scf.yield
// CHECK-NOT: llvm.inline_asm {{.*}}"mov.b64 $0, $1;"
// CHECK: gpu.return
func.func @two_resident(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %va = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %a1 = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %a2 = tile.load %vb[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc:2 = scf.for %i = %c0 to %nb step %c1 iter_args(%x0 = %zero, %y0 = %zero) -> (tensor<64x64xf32>, tensor<64x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %x = tile.dot %a1, %bt, %x0 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %y = tile.dot %a2, %bt, %y0 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %x, %y : tensor<64x64xf32>, tensor<64x64xf32>
  }
  %sum = arith.addf %acc#0, %acc#1 : tensor<64x64xf32>
  tile.store %sum, %vc[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// CHECK-LABEL: gpu.func @one_resident(
// CHECK-NOT: llvm.inline_asm {{.*}}"mov.b64 $0, $1;"
// CHECK: gpu.return
func.func @one_resident(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %va = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %a1 = tile.load %va[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%x0 = %zero) -> (tensor<64x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %x = tile.dot %a1, %bt, %x0 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %x : tensor<64x64xf32>
  }
  tile.store %acc, %vc[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
