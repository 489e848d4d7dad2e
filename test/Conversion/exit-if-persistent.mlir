// tile.exit_if in a persistent kernel of fixed turns: its CTAs run other program instances too, so
// the lowering rejects it with the op's location (one whose CTAs take their instances from a shared
// counter skips them instead: tgpu-to-nvvm-dynamic-exit.mlir).
// RUN: not flare-opt %s --tgpu-assign-layouts --convert-tgpu-to-nvvm 2>&1 | FileCheck %s
// CHECK: exit-if-persistent.mlir:[[@LINE+6]]:3: error: 'tile.exit_if' op cannot end a persistent kernel's CTA, which runs other program instances too
func.func @persistent(%n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.schedule = #tile.schedule<persistent = true>} {
  %x = tile.program_id x
  %c0 = arith.constant 0 : i32
  %done = arith.cmpi sge, %x, %n : i32
  // The instance would end its CTA's later instances too.
  tile.exit_if %done
  return
}
