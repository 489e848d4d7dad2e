// math.sqrt and math.absf on tiles compile all the way to PTX. convert-tgpu-to-nvvm calls the
// llvm.nvvm.sqrt.rn.f (IEEE square root, round to nearest) and llvm.fabs.f32 intrinsics, which the NVPTX
// backend turns into sqrt.rn.f32 and abs.f32. (Regression test: they used to be lowered to
// llvm.intr.sqrt / llvm.intr.fabs, which the later convert-gpu-to-nvvm stage marks illegal, so flarec
// stopped with "failed to legalize operation 'llvm.intr.sqrt' that was explicitly marked illegal".)
//
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: flarec %s -o - | FileCheck %s
// RUN: flarec %s --arch=sm_80 -o - | FileCheck %s

// One warp, 32 f32 with vec 4: 4 registers per thread, each through sqrt then fabs.
// NVVM-LABEL: gpu.func @sqrt_abs
// NVVM-COUNT-4: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%{{.*}}) : (f32) -> f32
// NVVM-COUNT-4: llvm.call_intrinsic "llvm.fabs.f32"(%{{.*}}) : (f32) -> f32
// NVVM-NOT: llvm.intr.sqrt
// NVVM-NOT: llvm.intr.fabs
// NVVM-NOT: sqrt.approx

// CHECK: .visible .entry sqrt_abs(
// CHECK: sqrt.rn.f32
// CHECK: abs.f32
// CHECK-NOT: sqrt.approx
// CHECK: ret;

func.func @sqrt_abs(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<32xf32>
  %r = math.sqrt %x : tensor<32xf32>
  %a = math.absf %r : tensor<32xf32>
  tile.store %a, %v[%c0] : tensor<32xf32>, !tile.view<f32, 1>
  return
}
