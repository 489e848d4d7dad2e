// math.sqrt and math.absf on tiles must compile all the way to PTX (sqrt.rn.f32 / abs.f32).
//
// XFAIL: *
// Known bug: convert-tgpu-to-nvvm lowers them to llvm.intr.sqrt / llvm.intr.fabs, which the later
// convert-gpu-to-nvvm stage marks illegal (it expects math ops, to call libdevice), so flarec stops with
// "failed to legalize operation 'llvm.intr.sqrt' that was explicitly marked illegal" (and the same for
// 'llvm.intr.fabs'). Remove the XFAIL once both reach PTX.
//
// RUN: flarec %s -o - | FileCheck %s
// CHECK: .visible .entry sqrt_abs(
// CHECK: sqrt.{{.*}}f32
// CHECK: abs.f32

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
