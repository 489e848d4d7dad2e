// Dependent launches: tile.wait_prior_grids and tile.allow_dependent_launch.
//   - round trip, and the verifier: both at a tile.kernel's top level; the wait at most once and after
//     no op that touches memory (what the kernel reads or writes follows it);
//   - lowering on sm_90a: the wait is griddepcontrol.wait at the kernel's very start (before the exit
//     conditions, which may read memory) and marks the kernel tgpu.dependent_launch, which the
//     runtime reads as KernelInfo::dependentLaunch; the allow is griddepcontrol.launch_dependents
//     where it stands;
//   - on sm_80, which has no grid dependencies, both lower to nothing and the kernel is not marked.
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=SM90
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --convert-tgpu-to-nvvm="arch=sm_80" --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @combine
// CHECK: tile.program_id x
// CHECK-NEXT: tile.wait_prior_grids
// SM90-LABEL: gpu.func @combine(
// SM90-SAME: tgpu.dependent_launch
// SM90: gpu.thread_id x
// SM90-NOT: llvm.load
// SM90: nvvm.griddepcontrol wait
// The exit condition reads memory: after the wait.
// SM90: llvm.load
// SM90: nvvm.exit
// SM80-LABEL: gpu.func @combine(
// SM80-NOT: tgpu.dependent_launch
// SM80-NOT: nvvm.griddepcontrol
// SM80: gpu.return
func.func @combine(%lens: !tile.ptr<i32>, %out: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %x = tile.program_id x
  tile.wait_prior_grids
  %len = tile.scalar_load %lens[%x] : !tile.ptr<i32>, i32 -> i32
  %row = arith.muli %x, %c32 : i32
  %done = arith.cmpi sge, %row, %len : i32
  tile.exit_if %done
  %ov = tile.make_view %out, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %r = tile.range 0, 32 : tensor<32xi32>
  %f = arith.sitofp %r : tensor<32xi32> to tensor<32xf32>
  tile.store %f, %ov[%row] : tensor<32xf32>, !tile.view<f32, 1>
  return
}

// -----

// CHECK-LABEL: func.func @parts
// CHECK: tile.allow_dependent_launch
// SM90-LABEL: gpu.func @parts(
// SM90-NOT: tgpu.dependent_launch
// SM90: nvvm.griddepcontrol launch_dependents
// SM90: llvm.store
// SM80-LABEL: gpu.func @parts(
// SM80-NOT: nvvm.griddepcontrol
// SM80: gpu.return
func.func @parts(%out: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c1 = arith.constant 1 : i32
  %x = tile.program_id x
  tile.allow_dependent_launch
  %ov = tile.make_view %out, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %r = tile.range 0, 32 : tensor<32xi32>
  %f = arith.sitofp %r : tensor<32xi32> to tensor<32xf32>
  tile.store %f, %ov[%x] : tensor<32xf32>, !tile.view<f32, 1>
  return
}

// -----

func.func @read_before_wait(%in: !tile.ptr<i32>) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  // expected-note @+1 {{this op comes before it}}
  %v = tile.scalar_load %in[%c0] : !tile.ptr<i32>, i32 -> i32
  // expected-error @+1 {{'tile.wait_prior_grids' op must come before every op that touches memory}}
  tile.wait_prior_grids
  return
}

// -----

func.func @twice() attributes {tile.kernel, tile.num_warps = 1 : i32} {
  tile.wait_prior_grids
  // expected-error @+1 {{'tile.wait_prior_grids' op may appear only once in a kernel}}
  tile.wait_prior_grids
  return
}

// -----

func.func @nested(%n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c = arith.cmpi sgt, %n, %c0 : i32
  scf.if %c {
    // expected-error @+1 {{'tile.wait_prior_grids' op must sit at the top level of a tile.kernel function}}
    tile.wait_prior_grids
  }
  return
}

// -----

func.func @not_a_kernel() {
  // expected-error @+1 {{'tile.allow_dependent_launch' op must sit at the top level of a tile.kernel function}}
  tile.allow_dependent_launch
  return
}
