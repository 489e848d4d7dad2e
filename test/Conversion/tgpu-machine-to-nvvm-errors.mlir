// convert-tgpu-machine-to-nvvm expands a tgpu.tile_instance with the values its tgpu.tile_schedule
// (or tgpu.tile_split) computed; one whose schedule no such op made (here a function argument) is an
// error at the instance, not a crash.
// RUN: not flare-opt %s --convert-tgpu-machine-to-nvvm 2>&1 | FileCheck %s
// CHECK: error: 'tgpu.tile_instance' op reads a schedule that no tgpu.tile_schedule made
func.func @orphan(%s: !tgpu.tile_schedule, %turn: i32) -> i32 {
  %x, %y, %z = tgpu.tile_instance %s[%turn] : !tgpu.tile_schedule
  return %x : i32
}
