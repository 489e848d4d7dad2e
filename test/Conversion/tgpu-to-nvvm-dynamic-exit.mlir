// convert-tgpu-to-nvvm on a persistent kernel whose CTAs take their instances from a shared counter
// (#tile.schedule<dynamic_instances = true>, beside a producer warpgroup) and that ends some instances
// with tile.exit_if (packed sequences' row blocks past their sequence): the instances it ends are
// never handed over. The producer's thread 0 takes an instance, and while it is one of the grid's and
// the exit condition holds for it (lowered anew from the kernel's arguments and that instance's
// program ids: here a length read per instance), takes the next from the counter (any turn but the
// first); only then does it publish the instance. No warp exits the kernel, and the consumers never
// evaluate the condition. tgpu-warp-specialize gives such a producer 48 registers (40 spilled 4
// bytes at head dim 128 in the packed-sequence attention kernel), the consumers 224.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// A persistent kernel of fixed turns cannot skip instances: a located error.
// RUN: sed 's/pair_instances = false, dynamic_instances = true/pair_instances = false/' %s | not flare-opt --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" 2>&1 | FileCheck %s --check-prefix=FIXED
// Nor one that asks for the counter but gets no producer warpgroup (here: no TMA).
// RUN: not flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=0" 2>&1 | FileCheck %s --check-prefix=NOTMA

// CHECK: gpu.func @skips(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %arg2: !llvm.ptr<1>, %[[LENS:arg3]]: !llvm.ptr<1>, %arg4: i32, %arg5: i32, %[[GX:arg6]]: i32, %[[GY:arg7]]: i32, %[[GZ:arg8]]: i32, %[[COUNTERS:arg9]]: !llvm.ptr<1>,
// CHECK-NOT: nvvm.exit
// CHECK: tgpu.warp_specialize({{.*}}) consumers(8 warps, 224 registers) producer(4 warps, 48 registers) {
// CHECK: scf.while (%[[PTURN:arg[0-9]+]] = %c0_i32, %{{arg[0-9]+}} = %c0_i32) : (i32, i32) -> (i32, i32, i32) {
// CHECK: %[[FIRST:[0-9]+]] = tgpu.tile_take %[[COUNTERS]] grid(%[[GX]], %[[GY]], %[[GZ]]) turn(%[[PTURN]]) : !llvm.ptr<1>
// CHECK: %[[XY:[0-9]+]] = arith.muli %[[GX]], %[[GY]] : i32
// CHECK-NEXT: %[[TOTAL:[0-9]+]] = arith.muli %[[XY]], %[[GZ]] : i32
// CHECK-NEXT: %[[TAKEN:[0-9]+]] = scf.while (%[[I:arg[0-9]+]] = %[[FIRST]]) : (i32) -> i32 {
// CHECK-NEXT: %[[IN:[0-9]+]] = arith.cmpi ult, %[[I]], %[[TOTAL]] : i32
// CHECK-NEXT: %[[SKIP:[0-9]+]] = scf.if %[[IN]] -> (i1) {
// The exit condition at instance I: program ids x = I % GX, y = (I / GX) % GY.
// CHECK-NEXT: %[[YZ:[0-9]+]] = arith.divui %[[I]], %[[GX]] : i32
// CHECK-NEXT: %[[X:[0-9]+]] = arith.remui %[[I]], %[[GX]] : i32
// CHECK-NEXT: %[[Y:[0-9]+]] = arith.remui %[[YZ]], %[[GY]] : i32
// CHECK-NEXT: %[[ROW:[0-9]+]] = arith.muli %[[X]], %c128_i32 : i32
// CHECK-NEXT: %[[Y64:[0-9]+]] = arith.extsi %[[Y]] : i32 to i64
// CHECK-NEXT: %[[AT:[0-9]+]] = llvm.getelementptr %[[LENS]][%[[Y64]]]
// CHECK-NEXT: %[[LEN:[0-9]+]] = llvm.load %[[AT]] : !llvm.ptr<1> -> i32
// CHECK-NEXT: %[[NONE:[0-9]+]] = arith.cmpi sge, %[[ROW]], %[[LEN]] : i32
// CHECK-NEXT: scf.yield %[[NONE]] : i1
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %false : i1
// CHECK-NEXT: }
// CHECK-NEXT: scf.condition(%[[SKIP]]) %[[I]] : i32
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%{{arg[0-9]+}}: i32):
// CHECK-NEXT: %[[NEXT:[0-9]+]] = tgpu.tile_take %[[COUNTERS]] grid(%[[GX]], %[[GY]], %[[GZ]]) turn(%c1_i32) : !llvm.ptr<1>
// CHECK-NEXT: scf.yield %[[NEXT]] : i32
// CHECK-NEXT: }
// CHECK: llvm.store %[[TAKEN]], %{{[0-9]+}} : i32, !llvm.ptr<3>
// CHECK: tgpu.warp_exit
// The consumers read the instance from the ring and evaluate no exit condition.
// CHECK: scf.while
// CHECK-NOT: tile_take
// CHECK: llvm.load %{{[0-9]+}} : !llvm.ptr<3> -> i32
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: scf.condition
// NOTMA: tgpu-to-nvvm-dynamic-exit.mlir:[[@LINE+12]]:3: error: 'tile.exit_if' op in a persistent kernel needs the producer warpgroup that takes its instances from a shared counter and skips them, which this kernel does not get (wgmma and TMA, no split range)
// FIXED: error: 'tile.exit_if' op cannot end a persistent kernel's CTA, which runs other program instances too (a kernel whose CTAs take their instances from a shared counter skips them)
func.func @skips(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %lens: !tile.ptr<i32>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, pair_instances = false, dynamic_instances = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %seq = tile.program_id y
  %rows = tile.scalar_load %lens[%seq] : !tile.ptr<i32>, i32 -> i32
  %row0 = arith.muli %pid, %c128 : i32
  %none = arith.cmpi sge, %row0, %rows : i32
  tile.exit_if %none
  %va = tile.make_view %a, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vb = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vc = tile.make_view %c, [%m, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %at = tile.load %va[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %nb = arith.divui %n, %c64 : i32
  %acc = scf.for %i = %c0 to %nb step %c1 iter_args(%acc0 = %zero) -> (tensor<128x64xf32>) : i32 {
    %row = arith.muli %i, %c64 : i32
    %bt = tile.load %vb[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %s = tile.dot %at, %bt, %acc0 : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  %o = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o, %vc[%row0, %c0] : tensor<128x64xbf16>, !tile.view<bf16, 2>
  return
}
