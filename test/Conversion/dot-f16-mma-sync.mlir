// tile.dot with f16 operands must lower to mma.sync m16n8k16 typed f16, like bf16 (the verifier accepts
// both), so that f16 dots compile for sm_80, sm_86, sm_89 and sm_90 -- and on sm_90a for every dot that
// does not fit wgmma.
//
// Regression: f16 pairs used to be packed into i32 as for bf16, which nvvm.mma.sync rejects for f16
// (it takes vector<2xf16>); every f16 dot off the wgmma path failed to compile.
//
// RUN: flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s
// RUN: flarec %s --arch=sm_80 -o - | FileCheck %s --check-prefix=PTX

// One warp, [16, 32] x [32, 8]: two mmas along K.
// CHECK-LABEL: gpu.func @f16_k32
// CHECK-COUNT-2: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK-NOT: nvvm.mma.sync
// PTX: .visible .entry f16_k32(
// PTX-COUNT-2: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @f16_k32(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<f16> -> !tile.view<f16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<f16> -> !tile.view<f16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<f16, 2> -> tensor<16x32xf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<f16, 2> -> tensor<32x8xf16>
  %z = arith.constant dense<0.0> : tensor<16x8xf32>
  %d = tile.dot %at, %bt, %z : tensor<16x32xf16>, tensor<32x8xf16>, tensor<16x8xf32> -> tensor<16x8xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<16x8xf32>, !tile.view<f32, 2>
  return
}
