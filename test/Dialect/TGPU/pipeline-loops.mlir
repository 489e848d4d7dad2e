// tgpu-pipeline-loops: which loops stream their wgmma dot operands through rings of shared-memory
// stages (#tgpu.pipeline<...> on the loop, tgpu.streamed on its streamed loads); convert-tgpu-to-nvvm
// expands the marks (tgpu-to-nvvm-streamed.mlir, pipelined-dot-loop.mlir). Hand-written marks that
// cannot be honoured: pipeline-loops-errors.mlir.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot --tgpu-pipeline-loops | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --tgpu-accelerate-dot=arch=sm_80 --tgpu-pipeline-loops | FileCheck %s --check-prefix=SM80

// The K loop of one dot, both operands loaded in the body: the dot_loop form (its loads are the
// form's, not marked one by one). On sm_80 the dot runs on mma.sync and nothing streams.
// CHECK-LABEL: func.func @k_loop
// CHECK-NOT: tgpu.streamed
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<dot_loop>}
// SM80-LABEL: func.func @k_loop
// SM80-NOT: tgpu.pipeline
// SM80-NOT: tgpu.streamed
// SM80: return
func.func @k_loop(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %m: i32, %n: i32, %k: i32)
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

// -----

// An attention-like step: A (Q) loaded before the loop, K read transposed as S's B operand, V as the
// B operand of P V, the rows of both at a computed block (an indirection table read per step). K and
// V stream; the rows' statistics, loaded in the same body but read by elementwise ops, do not; nor
// does Q, loaded outside.
// CHECK-LABEL: func.func @attention_step
// CHECK: tile.load %{{.*}} : !tile.view<bf16, 2> -> tensor<64x64xbf16
// CHECK-NOT: tgpu.streamed
// CHECK: scf.for
// CHECK: tile.scalar_load
// CHECK: tile.load {{.*}} {tgpu.streamed} : !tile.view<bf16, 2> -> tensor<64x64xbf16
// CHECK: tile.load {{.*}} {tgpu.streamed} : !tile.view<bf16, 2> -> tensor<64x64xbf16
// CHECK: tile.load %{{.*}} : !tile.view<f32, 1> -> tensor<64xf32
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<streamed>}
// SM80-LABEL: func.func @attention_step
// SM80-NOT: tgpu.streamed
// SM80-NOT: tgpu.pipeline
// SM80: return
func.func @attention_step(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %s: !tile.ptr<f32>,
                          %table: !tile.ptr<i32>, %o: !tile.ptr<f32>, %n: i32, %blocks: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %qv = tile.make_view %q, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %k, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %v, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %s, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %ov = tile.make_view %o, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %j = %c0 to %blocks step %c1 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %block = tile.scalar_load %table[%j] : !tile.ptr<i32>, i32 -> i32
    %row = arith.muli %block, %c64 : i32
    %kt = tile.load %kv[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %vt = tile.load %vv[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %stat = tile.load %sv[%row] : !tile.view<f32, 1> -> tensor<64xf32>
    %ktt = tile.trans %kt : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %scores = tile.dot %qt, %ktt, %zero : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %col = tile.expand_dims %stat {axis = 0 : i32} : tensor<64xf32> -> tensor<1x64xf32>
    %wide = tile.broadcast %col : tensor<1x64xf32> -> tensor<64x64xf32>
    %shifted = arith.subf %scores, %wide : tensor<64x64xf32>
    %p = math.exp %shifted : tensor<64x64xf32>
    %pb = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %pv = tile.dot %pb, %vt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %pv : tensor<64x64xf32>
  }
  tile.store %acc, %ov[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Loads that cannot stream: a padding other than zero (the copies zero-fill), a block also read by an
// elementwise op, a column offset that moves with the step (checked for alignment once, before the
// loop), a view made inside the loop. None is marked, so the loop is not either.
// CHECK-LABEL: func.func @cannot_stream
// CHECK-NOT: tgpu.streamed
// CHECK-NOT: tgpu.pipeline
// CHECK: return
func.func @cannot_stream(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %padded = tile.load %bv[%j, %c0] {padding = 1.0 : bf16} : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d0 = tile.dot %at, %padded, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %shared = tile.load %bv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d1 = tile.dot %at, %shared, %d0 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %sum = arith.extf %shared : tensor<64x64xbf16> to tensor<64x64xf32>
    %d2 = arith.addf %d1, %sum : tensor<64x64xf32>
    %moving = tile.load %bv[%c0, %j] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d3 = tile.dot %at, %moving, %d2 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %inner = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
    %local = tile.load %inner[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d4 = tile.dot %at, %local, %d3 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d4 : tensor<64x64xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// One block, two B operands: read along K (after tile.trans) by one dot and along N by the other, both
// from the same swizzled panels (rows of 64 elements: whole 128-byte panels): one stream. A loop nested
// in a streamed loop does not stream (one ring at a time), though its own load would qualify.
// CHECK-LABEL: func.func @twin_and_nested
// CHECK: scf.for
// CHECK: tile.load {{.*}} {tgpu.streamed} : !tile.view<bf16, 2> -> tensor<64x64xbf16
// CHECK: scf.for
// CHECK-NOT: tgpu.streamed
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<streamed>}
func.func @twin_and_nested(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %bt = tile.load %bv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %btt = tile.trans %bt : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %d0 = tile.dot %at, %btt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %d1 = tile.dot %at, %bt, %d0 : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %inner = scf.for %i = %c0 to %c64 step %c64 iter_args(%x = %d1) -> (tensor<64x64xf32>) : i32 {
      %it = tile.load %bv[%i, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
      %d2 = tile.dot %at, %it, %x : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
      %e = math.exp %d2 : tensor<64x64xf32>
      scf.yield %e : tensor<64x64xf32>
    }
    scf.yield %inner : tensor<64x64xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A hand-written #tgpu.pipeline<none> keeps a loop out of any pipeline: its dots store their
// operands as written. A loop with an i64 induction variable does not stream either (the ring
// indexes stages in i32).
// CHECK-LABEL: func.func @kept_out
// CHECK-NOT: tgpu.streamed
// CHECK: } {tgpu.pipeline = #tgpu.pipeline<none>}
// CHECK-NOT: tgpu.streamed
// CHECK-NOT: tgpu.pipeline
// CHECK: return
func.func @kept_out(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %n: i32, %n64: i64)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %z64 = arith.constant 0 : i64
  %s64 = arith.constant 64 : i64
  %av = tile.make_view %a, [%c64, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %bt = tile.load %bv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %e = math.exp %d : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  } {tgpu.pipeline = #tgpu.pipeline<none>}
  %wide = scf.for %j = %z64 to %n64 step %s64 iter_args(%acc_i = %acc) -> (tensor<64x64xf32>) : i64 {
    %row = arith.trunci %j : i64 to i32
    %bt = tile.load %bv[%row, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %d = tile.dot %at, %bt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %e = math.exp %d : tensor<64x64xf32>
    scf.yield %e : tensor<64x64xf32>
  }
  tile.store %wide, %cv[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}
