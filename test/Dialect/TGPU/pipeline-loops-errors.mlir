// Hand-written pipeline marks that tgpu-pipeline-loops cannot honour are errors at the marked op, and
// the dialect's attributes belong on their ops: #tgpu.pipeline and tgpu.producer_issued (a unit
// attribute) on an scf.for, tgpu.streamed (a unit attribute) on a tile.load. convert-tgpu-to-nvvm checks the marks it is given the same way (IR
// changed after the pass ran, or marked by hand without it).
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops -verify-diagnostics
// RUN: not flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --convert-tgpu-to-nvvm 2>&1 | FileCheck %s --check-prefix=LOWER

// LOWER: error: 'scf.for' op is marked #tgpu.pipeline<dot_loop> but its body is not `acc = dot(load(iv), load(iv), acc)`
// LOWER: error: 'scf.for' op is marked #tgpu.pipeline<streamed> but no load of its body streams
// LOWER: error: 'tile.load' op is marked tgpu.streamed but is not a load of a #tgpu.pipeline<streamed> loop

// A dot_loop mark on a loop whose body does more than the one dot.
func.func @not_a_dot_loop(%a: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{is marked #tgpu.pipeline<dot_loop> but its body is not `acc = dot(load(iv), load(iv), acc)` on wgmma with contiguous 16-bit blocks}}
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %bt = tile.load %av[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %e = math.exp %d : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  } {tgpu.pipeline = #tgpu.pipeline<dot_loop>}
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A streamed mark on a loop none of whose loads can stream (its block is also read by an
// elementwise op).
func.func @nothing_streams(%a: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{is marked #tgpu.pipeline<streamed> but no load of its body streams}}
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %bt = tile.load %av[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %x = arith.extf %bt : tensor<64x64xbf16> to tensor<64x64xf32>
    %e = arith.addf %d, %x : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  } {tgpu.pipeline = #tgpu.pipeline<streamed>}
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A tgpu.streamed mark on a load that cannot stream (the same block read by an elementwise op).
func.func @load_cannot_stream(%a: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    // expected-error @+1 {{is marked tgpu.streamed but is not a load of a #tgpu.pipeline<streamed> loop whose blocks only feed the loop's wgmma dot operands}}
    %bt = tile.load %av[%j, %c0] {tgpu.streamed} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %x = arith.extf %bt : tensor<64x64xbf16> to tensor<64x64xf32>
    %e = arith.addf %d, %x : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

func.func @pipeline_on_a_load(%a: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  // expected-error @+1 {{'tgpu.pipeline' is a #tgpu.pipeline<...> of an scf.for}}
  %at = tile.load %av[%c0, %c0] {tgpu.pipeline = #tgpu.pipeline<streamed>} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  return
}

// -----

func.func @streamed_not_unit(%a: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  // expected-error @+1 {{'tgpu.streamed' is a unit attribute of a tile.load}}
  %at = tile.load %av[%c0, %c0] {tgpu.streamed = 1 : i32} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  return
}

// -----

func.func @producer_issued_on_a_load(%a: !tile.ptr<bf16>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  // expected-error @+1 {{'tgpu.producer_issued' is a unit attribute of an scf.for}}
  %at = tile.load %av[%c0, %c0] {tgpu.producer_issued} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  return
}
