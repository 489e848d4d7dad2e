// The pipeline sets convert-tgpu-to-nvvm's shared-memory limit from the target architecture, the
// dynamic shared memory one CTA may opt into: 227 KiB on sm_90/sm_90a, 163 KiB on sm_80, 99 KiB on
// sm_86/sm_89. A kernel needing 128 KiB compiles for sm_80 and sm_90a and is rejected, at the op that
// needs the memory, for sm_86 and sm_89.
// RUN: flarec %s --arch=sm_90a --emit=gpu | FileCheck %s --check-prefix=FITS
// RUN: flarec %s --arch=sm_90 --emit=gpu | FileCheck %s --check-prefix=FITS
// RUN: flarec %s --arch=sm_80 --emit=gpu | FileCheck %s --check-prefix=FITS
// RUN: not flarec %s --arch=sm_86 --emit=gpu 2>&1 | FileCheck %s --check-prefix=TOO-BIG
// RUN: not flarec %s --arch=sm_89 --emit=gpu 2>&1 | FileCheck %s --check-prefix=TOO-BIG

// FITS: gpu.func @big_conversion
// FITS-SAME: tgpu.shared_bytes = 131072 : i32
// TOO-BIG-NOT: gpu.module

// 16 warps (512 threads). Adding the transpose of a [128, 256] tile to a [256, 128] tile converts the
// transpose to the blocked layout through shared memory: 256 x 128 x 4 bytes = 131072 = 128 KiB, more
// than 99 KiB = 101376 bytes. (The conversion is reported at the value it converts, the tile.trans.)
func.func @big_conversion(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 16 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %q, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<256x128xf32>
  %y = tile.load %o[%c0, %c0] : !tile.view<f32, 2> -> tensor<128x256xf32>
  // TOO-BIG: shared-memory-per-arch.mlir:[[@LINE+1]]:9: error: kernel 'big_conversion' needs 131072 bytes of shared memory (131072 for this op), more than the 101376 a CTA may use: use smaller tiles or fewer warps
  %yt = tile.trans %y : tensor<128x256xf32> -> tensor<256x128xf32>
  %s = arith.addf %x, %yt : tensor<256x128xf32>
  tile.store %s, %o[%c0, %c0] : tensor<256x128xf32>, !tile.view<f32, 2>
  return
}
