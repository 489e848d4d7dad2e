// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s

// A K loop that is exactly acc = dot(load(iv), load(iv), acc) on the wgmma path streams its operands
// through a 3-slot shared-memory ring filled by cp.async (16-byte copies, zero-filled past the view):
//   prologue: iterations 0 and 1 are issued, one commit group each;
//   iteration i: wait until at most 1 copy group is pending (so iteration i's copies are done), fence
//   the async proxy, barrier, issue the MMAs of slot i % 3 and commit them, wait until at most 1 MMA
//   group is pending (iteration i - 1's), barrier, then refill that slot, (i + 2) % 3, with iteration
//   i + 2. The accumulator is carried as wgmma's struct, so its registers are never touched while an
//   MMA group is in flight; after the loop every group is waited for.
// Sources that are not 16-byte aligned take the unpipelined loop instead (the scf.if's else branch).
func.func @mm(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %m: i32, %n: i32, %k: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 32 : i32
  %av = tile.make_view %a, [%m, %k], [%k, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %at = tile.load %av[%c0, %kk] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
    %bt = tile.load %bv[%kk, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
// 3 slots of (64 x 32 + 32 x 64) x 2 bytes = 8 KiB each.
// CHECK-LABEL: gpu.func @mm
// CHECK-SAME:  tgpu.shared_bytes = 24576
// CHECK:       scf.if
// Prologue: two commit groups before the loop.
// CHECK:       tgpu.cp_async {{.*}}
// CHECK:       tgpu.cp_async_commit
// CHECK:       tgpu.cp_async {{.*}}
// CHECK:       tgpu.cp_async_commit
// CHECK:       scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (!llvm.struct<(f32,
// CHECK:         tgpu.cp_async_wait 1
// CHECK-NEXT:    tgpu.fence_async_shared
// CHECK-NEXT:    gpu.barrier
// CHECK:         tgpu.wgmma_fence
// CHECK-COUNT-2: = tgpu.wgmma 
// CHECK-NEXT:    tgpu.wgmma_commit
// CHECK-NEXT:    tgpu.wgmma_wait 1
// CHECK-NEXT:    gpu.barrier
// CHECK:         tgpu.cp_async {{.*}}
// CHECK:         tgpu.cp_async_commit
// CHECK:       tgpu.wgmma_wait 0
// CHECK-NEXT:  tgpu.cp_async_wait 0
// CHECK:       } else {
// CHECK:         scf.for
// CHECK-NOT:       tgpu.cp_async
// CHECK:           tgpu.wgmma
