// A #tgpu.mma<wgmma> mark that cannot be honoured is an error at the dot, in tgpu-accelerate-dot and
// again in convert-tgpu-to-nvvm (which may run on hand-marked IR); `tgpu.mma` belongs on tile.dot only,
// and so does `tgpu.descriptors_at_dot`, a unit attribute.
// RUN: flare-opt %s -split-input-file --tgpu-accelerate-dot -verify-diagnostics
// RUN: not flare-opt %s -split-input-file --tgpu-accelerate-dot=arch=sm_80 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: not flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm=arch=sm_80 2>&1 | FileCheck %s --check-prefix=LOWER

// SM80: error: 'tile.dot' op is marked #tgpu.mma<wgmma> but the target has no wgmma: 128x64 result, 4 warps, sm_80
// SM80: error: 'tile.dot' op is marked #tgpu.mma<wgmma> but the target has no wgmma: 64x64 result, 4 warps, sm_80
// LOWER: error: 'tile.dot' op is marked #tgpu.mma<wgmma> but the target has no wgmma: 128x64 result, 4 warps, sm_80
// LOWER: error: 'tile.dot' op is marked #tgpu.mma<wgmma> but the target has no wgmma: 64x64 result, 4 warps, sm_80

// 4 warps and M = 128: each warp would hold 32 rows, wgmma gives it 16.
func.func @warps_do_not_stack(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %v = tile.make_view %p, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %a = arith.constant dense<1.0> : tensor<128x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<128x64xf32>
  // expected-error @+1 {{is marked #tgpu.mma<wgmma> but its warps do not stack along M as wgmma needs (M = 16 x the kernel's warps, a multiple of 4; N a multiple of 8 up to 256): 128x64 result, 4 warps, sm_90a}}
  %0 = tile.dot %a, %b, %c {tgpu.mma = #tgpu.mma<wgmma>} : tensor<128x32xbf16>, tensor<32x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
  tile.store %0, %v[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Fits on sm_90a (no diagnostic there); sm_80 has no wgmma.
func.func @needs_sm90a(%p: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %v = tile.make_view %p, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %a = arith.constant dense<1.0> : tensor<64x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  %0 = tile.dot %a, %b, %c {tgpu.mma = #tgpu.mma<wgmma>} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %0, %v[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

func.func @not_a_dot() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  // expected-error @+1 {{'tgpu.mma' is #tgpu.mma<mma_sync> or #tgpu.mma<wgmma> of a tile.dot}}
  %a = arith.constant {tgpu.mma = #tgpu.mma<wgmma>} dense<1.0> : tensor<64x32xbf16>
  return
}

// -----

func.func @not_an_engine() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = arith.constant dense<1.0> : tensor<64x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tgpu.mma' is #tgpu.mma<mma_sync> or #tgpu.mma<wgmma> of a tile.dot}}
  %0 = tile.dot %a, %b, %c {tgpu.mma = "wgmma"} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @descriptors_not_on_a_dot() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  // expected-error @+1 {{'tgpu.descriptors_at_dot' is a unit attribute of a tile.dot}}
  %a = arith.constant {tgpu.descriptors_at_dot} dense<1.0> : tensor<64x32xbf16>
  return
}

// -----

func.func @descriptors_not_unit() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = arith.constant dense<1.0> : tensor<64x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tgpu.descriptors_at_dot' is a unit attribute of a tile.dot}}
  %0 = tile.dot %a, %b, %c {tgpu.descriptors_at_dot = 1 : i32} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}
