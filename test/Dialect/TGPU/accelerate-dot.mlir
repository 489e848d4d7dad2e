// tgpu-accelerate-dot marks every tile.dot of a tile kernel with the tensor-core instruction it runs
// on: #tgpu.mma<wgmma> on sm_90a where the kernel's warps all stack along M, 16 rows each (M = 16 x
// warps, warps a multiple of 4, N a multiple of 8 up to 256), else #tgpu.mma<mma_sync>. A mark already
// there is kept (a wgmma mark that cannot be honoured: accelerate-dot-errors.mlir). It also marks the
// wgmma dots whose resident A operands get their descriptors at the dot (tgpu.descriptors_at_dot).
// RUN: flare-opt %s -split-input-file --tgpu-accelerate-dot -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-accelerate-dot=arch=sm_80 -verify-diagnostics | FileCheck %s --check-prefix=SM80
// RUN: not flare-opt %s --tgpu-accelerate-dot=arch=sm_70 2>&1 | FileCheck %s --check-prefix=ARCH

// ARCH: tgpu-accelerate-dot: unknown architecture 'sm_70'

// 4 warps: M = 64 fits one warpgroup (N = 64, then N = 256); M = 128 puts two warps' rows in one warp
// (32 rows each, not 16); N = 264 is over wgmma's 256; N = 12 is not a multiple of 8.
// CHECK-LABEL: func.func @four_warps
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<wgmma>} : tensor<64x32xbf16>, tensor<32x64xbf16>
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<wgmma>} : tensor<64x32xbf16>, tensor<32x256xbf16>
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<mma_sync>} : tensor<128x32xbf16>, tensor<32x64xbf16>
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<mma_sync>} : tensor<64x32xbf16>, tensor<32x264xbf16>
// SM80-LABEL: func.func @four_warps
// SM80-COUNT-4: {tgpu.mma = #tgpu.mma<mma_sync>}
// SM80-NOT: wgmma
func.func @four_warps() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = arith.constant dense<1.0> : tensor<64x32xbf16>
  %a2 = arith.constant dense<1.0> : tensor<128x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %b2 = arith.constant dense<1.0> : tensor<32x256xbf16>
  %b3 = arith.constant dense<1.0> : tensor<32x264xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  %c2 = arith.constant dense<0.0> : tensor<64x256xf32>
  %c3 = arith.constant dense<0.0> : tensor<128x64xf32>
  %c4 = arith.constant dense<0.0> : tensor<64x264xf32>
  %0 = tile.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %1 = tile.dot %a, %b2, %c2 : tensor<64x32xbf16>, tensor<32x256xbf16>, tensor<64x256xf32> -> tensor<64x256xf32>
  %2 = tile.dot %a2, %b, %c3 : tensor<128x32xbf16>, tensor<32x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
  %3 = tile.dot %a, %b3, %c4 : tensor<64x32xbf16>, tensor<32x264xbf16>, tensor<64x264xf32> -> tensor<64x264xf32>
  return
}

// -----

// 8 warps (two warpgroups) take M = 128; 2 warps never make a warpgroup. Dots in loops are marked too.
// CHECK-LABEL: func.func @eight_warps
// CHECK: scf.for
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<wgmma>}
// CHECK-LABEL: func.func @two_warps
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<mma_sync>}
func.func @eight_warps(%n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = arith.constant dense<1.0> : tensor<128x64xbf16>
  %b = arith.constant dense<1.0> : tensor<64x128xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %d = tile.dot %a, %b, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return
}
func.func @two_warps() attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %a = arith.constant dense<1.0> : tensor<32x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<32x64xf32>
  %0 = tile.dot %a, %b, %c : tensor<32x32xbf16>, tensor<32x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
  return
}

// -----

// A hand-written mark is kept: mma.sync where wgmma would fit.
// CHECK-LABEL: func.func @kept
// CHECK: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<mma_sync>}
// SM80-LABEL: func.func @kept
// SM80: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<mma_sync>}
func.func @kept() attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %a = arith.constant dense<1.0> : tensor<64x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  %0 = tile.dot %a, %b, %c {tgpu.mma = #tgpu.mma<mma_sync>} : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

// Resident A operands (defined outside the loop): where a loop holds two or more wgmma dots with one,
// those dots get tgpu.descriptors_at_dot (their descriptors made at the dot, not hoisted out of the
// loop); the dot whose A the loop makes does not. A loop with one such dot keeps them hoisted, and
// mma.sync dots have no descriptors.
// CHECK-LABEL: func.func @two_resident
// CHECK: scf.for
// CHECK-NEXT: tile.dot {{.*}} {tgpu.descriptors_at_dot, tgpu.mma = #tgpu.mma<wgmma>}
// CHECK-NEXT: tile.dot {{.*}} {tgpu.descriptors_at_dot, tgpu.mma = #tgpu.mma<wgmma>}
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: tile.dot {{.*}} {tgpu.mma = #tgpu.mma<wgmma>}
// CHECK-LABEL: func.func @one_resident
// CHECK-NOT: tgpu.descriptors_at_dot
// CHECK: return
// SM80-LABEL: func.func @two_resident
// SM80-NOT: tgpu.descriptors_at_dot
// SM80: return
func.func @two_resident(%n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k = arith.constant dense<1.0> : tensor<64x64xbf16>
  %v = arith.constant dense<2.0> : tensor<64x64xbf16>
  %q = arith.constant dense<3.0> : tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %s = tile.dot %k, %q, %zero : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %p = tile.dot %v, %q, %zero : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %sb = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
    %d = tile.dot %sb, %q, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  return
}
func.func @one_resident(%n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k = arith.constant dense<1.0> : tensor<64x64xbf16>
  %q = arith.constant dense<3.0> : tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %s = tile.dot %k, %q, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  }
  return
}
