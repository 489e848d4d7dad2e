// The registered pipeline flare-tile-to-ptx runs every stage in flare-opt: layouts, per-thread code,
// NVVM with the #nvvm.target attached, and a gpu.binary holding the PTX as its assembly.
// RUN: flare-opt %s --flare-tile-to-ptx | FileCheck %s --check-prefix=SM90A
// RUN: flare-opt %s '--pass-pipeline=builtin.module(flare-tile-to-ptx{arch=sm_80 opt-level=2})' | FileCheck %s --check-prefix=SM80

// The tile function is gone, replaced by the binary of gpu.module @flare_kernels.
// SM90A:      module attributes {gpu.container_module} {
// SM90A-NEXT:   gpu.binary @flare_kernels
// SM90A-SAME:   #gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// SM90A-SAME:   assembly = "
// SM90A-SAME:   .target sm_90a
// SM90A-SAME:   .visible .entry scale(
// SM90A-SAME:   .maxntid 64, 1, 1
// SM90A-SAME:   mul{{(.rn)?}}.f32
// SM90A-NOT:    func.func
// SM90A-NOT:    gpu.module

// SM80:       gpu.binary @flare_kernels
// SM80-SAME:  #gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">, properties = {{[{].*}}O = 2 : i32}
// SM80-SAME:  .target sm_80

// y[i] = a * x[i] on 2 warps.
func.func @scale(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %a: f32, %n: i32) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %pid = tile.program_id x
  %c1 = arith.constant 1 : i32
  %c256 = arith.constant 256 : i32
  %start = arith.muli %pid, %c256 : i32
  %xv = tile.make_view %x, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %yv = tile.make_view %y, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %xv[%start] : !tile.view<f32, 1> -> tensor<256xf32>
  %s = tile.splat %a : f32 -> tensor<256xf32>
  %r = arith.mulf %t, %s : tensor<256xf32>
  tile.store %r, %yv[%start] : tensor<256xf32>, !tile.view<f32, 1>
  return
}
