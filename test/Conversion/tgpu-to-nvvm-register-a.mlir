// convert-tgpu-to-nvvm with wgmma and TMA (tma-fallback=0) on a persistent kernel with a producer
// warpgroup marked `#tile.schedule<invariant_a_in_registers = true>`: the A operand that the loop's dots share
// and that TMA copies before the loop (a 128 x 64 block, Q in attention) is read once per instance
// into wgmma's register-A fragments. After waiting for the operand's `full` barrier with the parity
// of their turn, the consumers read their fragments from the 128-byte swizzled panels with 32-bit
// loads (`vector<2xbf16>`, 16 a thread for 128 x 64 on 8 warps), then each warp syncs
// (`bar.warp.sync`) and its lane 0 arrives on the operand's `empty` barrier right there, before the
// loop: the operand is released neither in the loop's last iteration nor after the loop. The loop's
// dots then run wgmma with A from registers (inline PTX, four 32-bit A registers and B's
// descriptor) instead of `tgpu.wgmma` with two descriptors.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s
// Without the attribute the dots read the operand from shared memory through descriptors and the
// operand is released after the last product reading it (see tgpu-to-nvvm-persistent.mlir).
// RUN: sed 's/, invariant_a_in_registers = true//' %s | flare-opt --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=0" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=SMEM
// With the element-wise TMA fallback (the default) the attribute is not honoured: the kernel is the
// one lowered without it, byte for byte.
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1 tma-fallback=1" --tgpu-allocate-shared-memory --cse --canonicalize | FileCheck %s --check-prefix=FALLBACK
// RUN: flare-opt %s --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize > %t.registers
// RUN: sed 's/, invariant_a_in_registers = true//' %s | flare-opt --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize --convert-tgpu-to-nvvm="tma=1" --tgpu-allocate-shared-memory --cse --canonicalize > %t.smem
// RUN: diff %t.registers %t.smem

// CHECK-LABEL: gpu.func @persistent(
// CHECK: tgpu.warp_exit
// CHECK: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %{{turns[_0-9]*}} step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// The operand's barriers (`full`, then `empty`: a one-stage ring), and its wait as ring index = the turn.
// CHECK: %[[RING:[0-9]+]] = tgpu.ring %[[BASE:[0-9]+]][%{{.*}}] : !llvm.ptr<3> -> !tgpu.ring<1>
// CHECK-NEXT: %[[FULL:[0-9]+]] = tgpu.ring_barrier full %[[RING]][%c0_i32] : !tgpu.ring<1>
// CHECK-NEXT: %[[EMPTY:[0-9]+]] = tgpu.ring_barrier empty %[[RING]][%c0_i32] : !tgpu.ring<1>
// CHECK: tgpu.ring_wait %[[FULL]], use %[[TURN]] of 1
// The fragments: 16 32-bit reads from the operand's panels, before the loop; the warp syncs and lane 0
// releases the operand right after the last one.
// CHECK-NOT: scf.for
// CHECK: %[[P0:[0-9]+]] = llvm.getelementptr %[[BASE]][%{{[0-9]+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[PAIR0:[0-9]+]] = llvm.load %[[P0]] {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xbf16>
// CHECK-NEXT: %[[A0:[0-9]+]] = llvm.extractelement %[[PAIR0]][%c0_i32 : i32] : vector<2xbf16>
// CHECK-NEXT: %[[A1:[0-9]+]] = llvm.extractelement %[[PAIR0]][%c1_i32 : i32] : vector<2xbf16>
// CHECK-COUNT-15: llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xbf16>
// CHECK-NEXT: llvm.extractelement %{{[0-9]+}}[%c0_i32 : i32] : vector<2xbf16>
// CHECK-NEXT: llvm.extractelement %{{[0-9]+}}[%c1_i32 : i32] : vector<2xbf16>
// CHECK-NEXT: nvvm.bar.warp.sync %c-1_i32 : i32
// CHECK-NEXT: %[[LANE0:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %c0_i32 : i32
// CHECK-NEXT: scf.if %[[LANE0]] {
// CHECK-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
// CHECK-NEXT: }
// CHECK-NEXT: %{{[0-9]+}}:32 = scf.for %{{arg[0-9]+}} = %c0_i32 to %{{[0-9]+}} step %c1_i32 iter_args(
// In the loop: the products take the fragments as four 32-bit registers and B's descriptor; the
// operand is not released again, in the loop or after it.
// CHECK-NOT: tgpu.mbarrier_arrive %[[EMPTY]] :
// CHECK: %[[V0:[0-9]+]] = llvm.insertelement %[[A0]], %{{[0-9]+}}[%c0_i32 : i32] : vector<2xbf16>
// CHECK-NEXT: %[[V1:[0-9]+]] = llvm.insertelement %[[A1]], %[[V0]][%c1_i32 : i32] : vector<2xbf16>
// CHECK-NEXT: %[[R0:[0-9]+]] = llvm.bitcast %[[V1]] : vector<2xbf16> to i32
// CHECK-NOT: = tgpu.wgmma 
// CHECK: tgpu.wgmma_fence
// CHECK-NEXT: tgpu.wgmma {{.*}}, a_regs(%[[R0]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}), b_desc %{{[0-9]+}}{{( b_n_major)?}} n = 64, bf16
// CHECK-COUNT-3: tgpu.wgmma {{.*}}, a_regs({{.*}}){{.*}} n = 64, bf16
// CHECK-NOT: = tgpu.wgmma 
// CHECK-NOT: tgpu.mbarrier_arrive %[[EMPTY]] :
// CHECK: tgpu.wgmma_commit
// CHECK-NOT: tgpu.mbarrier_arrive %[[EMPTY]] :
// CHECK: scf.yield %{{[0-9]+}} : i32
// CHECK-NEXT: }
// CHECK-NEXT: %{{[0-9]+}} = arith.cmpi ult, %{{[0-9]+}}, %c4_i32 : i32
// CHECK: gpu.return

// SMEM-LABEL: gpu.func @persistent(
// SMEM: tgpu.warp_exit
// SMEM: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %{{turns[_0-9]*}} step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// SMEM: %[[RING:[0-9]+]] = tgpu.ring %[[BASE:[0-9]+]][%{{.*}}] : !llvm.ptr<3> -> !tgpu.ring<1>
// SMEM-NEXT: %[[FULL:[0-9]+]] = tgpu.ring_barrier full %[[RING]][%c0_i32] : !tgpu.ring<1>
// SMEM-NEXT: %[[EMPTY:[0-9]+]] = tgpu.ring_barrier empty %[[RING]][%c0_i32] : !tgpu.ring<1>
// SMEM: tgpu.ring_wait %[[FULL]], use %[[TURN]] of 1
// No reads into registers, no early release: the loop follows the wait.
// SMEM-NEXT: %{{[0-9]+}}:32 = scf.for %{{arg[0-9]+}} = %c0_i32 to %{{[0-9]+}} step %c1_i32 iter_args(
// SMEM-NOT: tgpu.wgmma {{.*}}a_regs
// SMEM: tgpu.wgmma_fence
// SMEM-NEXT: tgpu.wgmma %{{[0-9]+}}, a_desc %{{[0-9]+}}, b_desc %{{[0-9]+}} b_n_major n = 64, bf16
// SMEM-NOT: tgpu.wgmma {{.*}}a_regs
// SMEM: tgpu.wgmma_commit
// The release in the loop's last iteration, and after the loop when it ran no iteration.
// SMEM: scf.if %{{[0-9]+}} {
// SMEM-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
// SMEM: scf.yield
// SMEM-NEXT: }
// SMEM: scf.if %{{[0-9]+}} {
// SMEM-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
// SMEM-NOT: llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xbf16>
// SMEM-NOT: nvvm.bar.warp.sync
// SMEM: gpu.return

// FALLBACK-LABEL: gpu.func @persistent(
// FALLBACK-NOT: nvvm.bar.warp.sync
// FALLBACK: tgpu.warp_exit
// FALLBACK-NOT: nvvm.bar.warp.sync
// FALLBACK: scf.for %[[TURN:arg[0-9]+]] = %c0_i32 to %{{turns[_0-9]*}} step %c1_i32 iter_args(%{{arg[0-9]+}} = %c0_i32) -> (i32)  : i32 {
// FALLBACK-NOT: llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xbf16>
// FALLBACK: tgpu.ring_wait %{{[0-9]+}}, use %[[TURN]] of 1
// FALLBACK-NOT: llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xbf16>
// FALLBACK-NOT: nvvm.bar.warp.sync
// FALLBACK: %{{[0-9]+}}:32 = scf.for %{{arg[0-9]+}} = %c0_i32 to %{{[0-9]+}} step %c1_i32 iter_args(
// FALLBACK-NOT: tgpu.wgmma {{.*}}a_regs
// FALLBACK: tgpu.wgmma_fence
// FALLBACK-NEXT: tgpu.wgmma %{{[0-9]+}}, a_desc %{{[0-9]+}}, b_desc %{{[0-9]+}} b_n_major n = 64, bf16
// FALLBACK-NOT: tgpu.wgmma {{.*}}a_regs
// FALLBACK: tgpu.wgmma_commit
// FALLBACK: scf.if %{{[0-9]+}} {
// FALLBACK-NEXT: tgpu.mbarrier_arrive %[[EMPTY:[0-9]+]]
// FALLBACK: scf.yield
// FALLBACK-NEXT: }
// FALLBACK: scf.if %{{[0-9]+}} {
// FALLBACK-NEXT: tgpu.mbarrier_arrive %[[EMPTY]]
// FALLBACK-NOT: nvvm.bar.warp.sync
// FALLBACK: gpu.return

func.func @persistent(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %n: i32, %m: i32) attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, invariant_a_in_registers = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %pid = tile.program_id x
  %row0 = arith.muli %pid, %c128 : i32
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
