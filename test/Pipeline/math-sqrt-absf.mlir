// math.sqrt, math.absf and arith.divf on tiles compile all the way to PTX. convert-tgpu-to-nvvm calls
// llvm.nvvm.sqrt.approx.f, llvm.fabs.f32 and llvm.nvvm.div.full (Triton's defaults for sqrt and `/`),
// which the NVPTX backend turns into sqrt.approx.f32, abs.f32 and div.full.f32. IEEE sqrt.rn / div.rn /
// rcp.rn must not appear: in the driver's relocatable JIT (cuLink) they become subroutine calls, and a
// call anywhere in a kernel makes ptxas serialize all of its wgmma instructions.
// (Also a regression test: sqrt and fabs used to be lowered to llvm.intr.sqrt / llvm.intr.fabs, which
// the later convert-gpu-to-nvvm stage marks illegal.)
//
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: flarec %s -o - | FileCheck %s
// RUN: flarec %s --arch=sm_80 -o - | FileCheck %s

// One warp, 32 f32 with vec 4: 4 registers per thread, each through sqrt, fabs and a division.
// NVVM-LABEL: gpu.func @sqrt_abs
// NVVM-COUNT-4: llvm.call_intrinsic "llvm.nvvm.sqrt.approx.f"(%{{.*}}) : (f32) -> f32
// NVVM-COUNT-4: llvm.call_intrinsic "llvm.fabs.f32"(%{{.*}}) : (f32) -> f32
// NVVM-COUNT-4: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// NVVM-NOT: llvm.intr.sqrt
// NVVM-NOT: llvm.intr.fabs
// NVVM-NOT: arith.divf

// CHECK: .visible .entry sqrt_abs(
// CHECK: sqrt.approx.f32
// CHECK: abs.f32
// CHECK: div.full.f32
// CHECK-NOT: sqrt.rn
// CHECK-NOT: div.rn
// CHECK-NOT: rcp.rn
// CHECK: ret;

func.func @sqrt_abs(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<32xf32>
  %r = math.sqrt %x : tensor<32xf32>
  %a = math.absf %r : tensor<32xf32>
  %q = arith.divf %a, %x : tensor<32xf32>
  tile.store %q, %v[%c0] : tensor<32xf32>, !tile.view<f32, 1>
  return
}
