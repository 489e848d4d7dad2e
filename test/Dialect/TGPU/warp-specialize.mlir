// tgpu-warp-specialize: in a kernel that asks for a producer warpgroup
// (#tile.schedule<producer_warpgroup = true>, 4 or 8 warps, one CTA per SM), the streamed loops whose copies that warpgroup can issue on its own get
// tgpu.producer_issued: top-level, bounds, views and load offsets from the arguments and program ids,
// every streamed block moved by a tensor map into swizzled panels; the kernel gets the two roles'
// register budgets (tgpu.warp_roles). convert-tgpu-to-nvvm builds the warpgroup around them
// (tgpu-to-nvvm-producer.mlir).
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops --tgpu-warp-specialize | FileCheck %s

// The first loop (K and V of a computed block, its bound an argument) is the producer's; the second
// (inside a branch) is not top-level; the third reads a view whose row stride (a product computed in
// the kernel) no tensor map can describe: each keeps its copies with the consumers.
// The kernel's warp roles: the producer keeps 40 registers a thread, the 8 consumer warps share out
// the rest of the 64,512 an SM gives one CTA (232 each).
// CHECK-LABEL: func.func @producer
// CHECK-SAME: tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 232, producer_registers = 40>
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<streamed>, tgpu.producer_issued}
// CHECK: scf.if
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<streamed>}
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<streamed>}
// CHECK-NOT: tgpu.producer_issued
// CHECK: return
func.func @producer(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %o: !tile.ptr<f32>, %n: i32, %m: i32)
    attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %qv = tile.make_view %q, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %wide = arith.muli %c64, %m : i32
  %nv = tile.make_view %k, [%n, %c64], [%wide, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %o, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %pid = tile.program_id x
  %first = arith.muli %pid, %c64 : i32
  %flag = arith.cmpi slt, %first, %m : i32
  %a = scf.for %j = %first to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %qt, %kt, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %e = math.exp %d : tensor<128x64xf32>
    scf.yield %e : tensor<128x64xf32>
  }
  %b = scf.if %flag -> (tensor<128x64xf32>) {
    %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %a) -> (tensor<128x64xf32>) : i32 {
      %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
      %d = tile.dot %qt, %kt, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
      %e = math.exp %d : tensor<128x64xf32>
      scf.yield %e : tensor<128x64xf32>
    }
    scf.yield %r : tensor<128x64xf32>
  } else {
    scf.yield %a : tensor<128x64xf32>
  }
  %c = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %b) -> (tensor<128x64xf32>) : i32 {
    %nt = tile.load %nv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %qt, %nt, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %e = math.exp %d : tensor<128x64xf32>
    scf.yield %e : tensor<128x64xf32>
  }
  tile.store %c, %ov[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// The same loop in a kernel that does not ask for a producer: no mark, no warp roles. (One that asks for a producer
// beside two CTAs per SM, which share the register file setmaxnreg would split, is a verifier error
// of #tile.schedule: test/Dialect/Tile/invalid.mlir.)
// CHECK: func.func @no_producer({{.*}}) attributes {tile.kernel, tile.num_warps = 8 : i32} {
// CHECK-NOT: tgpu.producer_issued
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<streamed>}
func.func @no_producer(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %o: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %qv = tile.make_view %q, [%c128, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %o, [%c128, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %a = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %qt, %kt, %acc : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %e = math.exp %d : tensor<128x64xf32>
    scf.yield %e : tensor<128x64xf32>
  }
  tile.store %a, %ov[%c0, %c0] : tensor<128x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Four consumer warps: 256 registers each (the most a thread may have); a hand-written choice that
// fits is kept.
// CHECK-LABEL: func.func @one_consumer_warpgroup
// CHECK-SAME: tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 256, producer_registers = 40>
// CHECK-LABEL: func.func @chosen_by_hand
// CHECK-SAME: tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 200, producer_registers = 56>
func.func @one_consumer_warpgroup(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %o: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %qv = tile.make_view %q, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %o, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %a = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %qt, %kt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %e = math.exp %d : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  }
  tile.store %a, %ov[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

func.func @chosen_by_hand(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %o: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>, tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 200, producer_registers = 56>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %qv = tile.make_view %q, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %o, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %a = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %qt, %kt, %acc : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %e = math.exp %d : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  }
  tile.store %a, %ov[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
