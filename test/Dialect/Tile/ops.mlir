// Round trip of every tile op and both tile types: the custom form printed by flare-opt must parse
// back to the same IR, and so must the generic form.
// RUN: flare-opt %s -split-input-file | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Both types, as kernel parameters, values and a plain function signature.
// CHECK-LABEL: func.func private @types
// CHECK-SAME: (!tile.ptr<f32>, !tile.ptr<bf16>, !tile.view<f16, 3>) -> !tile.view<i32, 1>
func.func private @types(!tile.ptr<f32>, !tile.ptr<bf16>, !tile.view<f16, 3>) -> !tile.view<i32, 1>

// GENERIC-LABEL: "func.func"
// GENERIC-SAME: function_type = (!tile.ptr<f32>, !tile.ptr<bf16>, !tile.view<f16, 3>) -> !tile.view<i32, 1>

// -----

// Program instance: every grid axis, for program_id and num_programs.
// CHECK-LABEL: func.func @program
// CHECK-SAME: attributes {tile.kernel}
// CHECK: tile.program_id x
// CHECK: tile.program_id y
// CHECK: tile.program_id z
// CHECK: tile.num_programs x
// CHECK: tile.num_programs y
// CHECK: tile.num_programs z
// GENERIC-LABEL: sym_name = "program"
// GENERIC: "tile.program_id"() <{axis = 0 : i32}> : () -> i32
// GENERIC: "tile.program_id"() <{axis = 1 : i32}> : () -> i32
// GENERIC: "tile.program_id"() <{axis = 2 : i32}> : () -> i32
// GENERIC: "tile.num_programs"() <{axis = 0 : i32}> : () -> i32
// GENERIC: "tile.num_programs"() <{axis = 1 : i32}> : () -> i32
// GENERIC: "tile.num_programs"() <{axis = 2 : i32}> : () -> i32
func.func @program() attributes {tile.kernel} {
  %0 = tile.program_id x
  %1 = tile.program_id y
  %2 = tile.program_id z
  %3 = tile.num_programs x
  %4 = tile.num_programs y
  %5 = tile.num_programs z
  return
}

// -----

// Making tiles: range (end - start = size, also from a non-zero start), splat of an integer and a
// float scalar, expand_dims at the front and at the back, broadcast of one and of two size-1 dims.
// CHECK-LABEL: func.func @make_tiles
// CHECK-SAME: (%[[N:.*]]: i32, %[[X:.*]]: f32)
// CHECK-SAME: attributes {tile.kernel, tile.num_warps = 8 : i32}
// CHECK: %[[R:.*]] = tile.range 0, 128 : tensor<128xi32>
// CHECK: tile.range 16, 48 : tensor<32xi32>
// CHECK: tile.splat %[[N]] : i32 -> tensor<128xi32>
// CHECK: %[[S:.*]] = tile.splat %[[X]] : f32 -> tensor<4x8xf32>
// CHECK: %[[ROW:.*]] = tile.expand_dims %[[R]] {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
// CHECK: %[[COL:.*]] = tile.expand_dims %[[R]] {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
// CHECK: tile.broadcast %[[ROW]] : tensor<1x128xi32> -> tensor<64x128xi32>
// CHECK: tile.broadcast %[[COL]] : tensor<128x1xi32> -> tensor<128x128xi32>
// CHECK: tile.broadcast %{{.*}} : tensor<1x1xf32> -> tensor<4x8xf32>
// GENERIC-LABEL: sym_name = "make_tiles"
// GENERIC: "tile.range"() <{end = 128 : i32, start = 0 : i32}> : () -> tensor<128xi32>
// GENERIC: "tile.splat"(%{{.*}}) : (i32) -> tensor<128xi32>
// GENERIC: "tile.expand_dims"(%{{.*}}) <{axis = 0 : i32}> : (tensor<128xi32>) -> tensor<1x128xi32>
// GENERIC: "tile.broadcast"(%{{.*}}) : (tensor<1x128xi32>) -> tensor<64x128xi32>
func.func @make_tiles(%n: i32, %x: f32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %r = tile.range 0, 128 : tensor<128xi32>
  %r2 = tile.range 16, 48 : tensor<32xi32>
  %s = tile.splat %n : i32 -> tensor<128xi32>
  %f = tile.splat %x : f32 -> tensor<4x8xf32>
  %row = tile.expand_dims %r {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %col = tile.expand_dims %r {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %rows = tile.broadcast %row : tensor<1x128xi32> -> tensor<64x128xi32>
  %cols = tile.broadcast %col : tensor<128x1xi32> -> tensor<128x128xi32>
  %one = tile.splat %x : f32 -> tensor<1x1xf32>
  %all = tile.broadcast %one : tensor<1x1xf32> -> tensor<4x8xf32>
  return
}

// -----

// Reductions: all three kinds, a 2-D tile along either axis (the result drops that axis) and a 1-D
// tile to a scalar.
// CHECK-LABEL: func.func @reduce
// CHECK: tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: tile.reduce min %{{.*}} {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<16xi32> -> i32
// CHECK: tile.reduce max %{{.*}} {axis = 0 : i32} : tensor<2x4x8xf16> -> tensor<4x8xf16>
// GENERIC-LABEL: sym_name = "reduce"
// GENERIC: "tile.reduce"(%{{.*}}) <{axis = 0 : i32, kind = 0 : i32}> : (tensor<4x8xf32>) -> tensor<8xf32>
// GENERIC: "tile.reduce"(%{{.*}}) <{axis = 1 : i32, kind = 1 : i32}> : (tensor<4x8xf32>) -> tensor<4xf32>
// GENERIC: "tile.reduce"(%{{.*}}) <{axis = 1 : i32, kind = 2 : i32}> : (tensor<4x8xf32>) -> tensor<4xf32>
// GENERIC: "tile.reduce"(%{{.*}}) <{axis = 0 : i32, kind = 0 : i32}> : (tensor<16xi32>) -> i32
func.func @reduce(%t: tensor<4x8xf32>, %i: tensor<16xi32>, %h: tensor<2x4x8xf16>) {
  %0 = tile.reduce sum %t {axis = 0 : i32} : tensor<4x8xf32> -> tensor<8xf32>
  %1 = tile.reduce max %t {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
  %2 = tile.reduce min %t {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
  %3 = tile.reduce sum %i {axis = 0 : i32} : tensor<16xi32> -> i32
  %4 = tile.reduce max %h {axis = 0 : i32} : tensor<2x4x8xf16> -> tensor<4x8xf16>
  return
}

// -----

// Global memory: views of rank 1 and 2, a load with the default (zero) padding and one with an
// explicit -inf padding (0xFF800000 is the f32 bit pattern of -inf), a bf16 load with a bf16 padding,
// a bf16 block in two row pieces starting at rows %n and %ld, and stores.
// CHECK-LABEL: func.func @memory
// CHECK-SAME: (%[[P:.*]]: !tile.ptr<f32>, %[[Q:.*]]: !tile.ptr<bf16>, %[[N:.*]]: i32, %[[LD:.*]]: i32)
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[V1:.*]] = tile.make_view %[[P]], [%[[N]]], [%[[C1]]] : !tile.ptr<f32> -> !tile.view<f32, 1>
// CHECK: %[[V2:.*]] = tile.make_view %[[P]], [%[[N]], %[[N]]], [%[[LD]], %[[C1]]] : !tile.ptr<f32> -> !tile.view<f32, 2>
// CHECK: %[[VB:.*]] = tile.make_view %[[Q]], [%[[N]], %[[N]]], [%[[LD]], %[[C1]]] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
// CHECK: %[[A:.*]] = tile.load %[[V1]][%[[N]]] : !tile.view<f32, 1> -> tensor<256xf32>
// CHECK-NOT: padding
// CHECK: %[[B:.*]] = tile.load %[[V2]][%[[N]], %[[C1]]] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<16x64xf32>
// CHECK: %[[H:.*]] = tile.load %[[VB]][%[[N]], %[[N]]] {padding = 1.000000e+00 : bf16} : !tile.view<bf16, 2> -> tensor<32x64xbf16>
// CHECK: tile.load %[[VB]][%[[N]], %[[LD]], %[[C1]]] {row_pieces = 2 : i64} : !tile.view<bf16, 2> -> tensor<32x64xbf16>
// CHECK: tile.store %[[A]], %[[V1]][%[[N]]] : tensor<256xf32>, !tile.view<f32, 1>
// CHECK: tile.store %[[B]], %[[V2]][%[[C1]], %[[N]]] : tensor<16x64xf32>, !tile.view<f32, 2>
// CHECK: tile.store %[[H]], %[[VB]][%[[N]], %[[N]]] : tensor<32x64xbf16>, !tile.view<bf16, 2>
// GENERIC-LABEL: sym_name = "memory"
// GENERIC: "tile.make_view"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!tile.ptr<f32>, i32, i32) -> !tile.view<f32, 1>
// GENERIC: "tile.make_view"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 2, 2>}> : (!tile.ptr<f32>, i32, i32, i32, i32) -> !tile.view<f32, 2>
// GENERIC: "tile.load"(%{{.*}}, %{{.*}}) : (!tile.view<f32, 1>, i32) -> tensor<256xf32>
// GENERIC: "tile.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{padding = 0xFF800000 : f32}> : (!tile.view<f32, 2>, i32, i32) -> tensor<16x64xf32>
// GENERIC: "tile.store"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<256xf32>, !tile.view<f32, 1>, i32) -> ()
func.func @memory(%p: !tile.ptr<f32>, %q: !tile.ptr<bf16>, %n: i32, %ld: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v1 = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %v2 = tile.make_view %p, [%n, %n], [%ld, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %vb = tile.make_view %q, [%n, %n], [%ld, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %a = tile.load %v1[%n] : !tile.view<f32, 1> -> tensor<256xf32>
  %b = tile.load %v2[%n, %c1] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<16x64xf32>
  %h = tile.load %vb[%n, %n] {padding = 1.0 : bf16} : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  %g = tile.load %vb[%n, %ld, %c1] {row_pieces = 2} : !tile.view<bf16, 2> -> tensor<32x64xbf16>
  tile.store %a, %v1[%n] : tensor<256xf32>, !tile.view<f32, 1>
  tile.store %b, %v2[%c1, %n] : tensor<16x64xf32>, !tile.view<f32, 2>
  tile.store %h, %vb[%n, %n] : tensor<32x64xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Every kernel parameter type the ABI accepts: pointers, i32, i64 and f32; num_warps at both ends of
// its range.
// CHECK-LABEL: func.func @abi
// CHECK-SAME: (%{{.*}}: !tile.ptr<i8>, %{{.*}}: i32, %{{.*}}: i64, %{{.*}}: f32) attributes {tile.kernel, tile.num_warps = 1 : i32}
// CHECK-LABEL: func.func @sixteen_warps
// CHECK-SAME: attributes {tile.kernel, tile.num_warps = 16 : i32}
func.func @abi(%p: !tile.ptr<i8>, %a: i32, %b: i64, %c: f32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  return
}
func.func @sixteen_warps() attributes {tile.kernel, tile.num_warps = 16 : i32} {
  return
}

// -----

// A whole kernel in the style of the examples: tiles flow through arith/math and an scf.for that
// carries a tile.
// CHECK-LABEL: func.func @loop
// CHECK: %[[INIT:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[IT:.*]] = %[[INIT]]) -> (tensor<64xf32>) : i32 {
// CHECK:   %[[T:.*]] = tile.load %{{.*}}[%{{.*}}] : !tile.view<f32, 1> -> tensor<64xf32>
// CHECK:   %[[E:.*]] = math.exp %[[T]] : tensor<64xf32>
// CHECK:   %[[S:.*]] = arith.addf %[[IT]], %[[E]] : tensor<64xf32>
// CHECK:   scf.yield %[[S]] : tensor<64xf32>
// CHECK: tile.reduce sum %[[ACC]] {axis = 0 : i32} : tensor<64xf32> -> f32
func.func @loop(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %acc = scf.for %i = %c0 to %n step %c64 iter_args(%it = %init) -> (tensor<64xf32>) : i32 {
    %t = tile.load %v[%i] : !tile.view<f32, 1> -> tensor<64xf32>
    %e = math.exp %t : tensor<64xf32>
    %s = arith.addf %it, %e : tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  %total = tile.reduce sum %acc {axis = 0 : i32} : tensor<64xf32> -> f32
  return
}

// -----

// The kernel's schedule: fields in any order, the defaults left out when printed (ping_pong and
// uniform_warpgroup true, pair_instances true, min_blocks_per_sm 0), the others in declaration order.
// CHECK-LABEL: func.func @scheduled()
// CHECK-SAME: tile.schedule = #tile.schedule<ping_pong = false, min_blocks_per_sm = 1, producer_warpgroup = true, persistent = true, pair_instances = false, operands_after_first_stage = true, invariant_a_in_registers = true, uniform_warpgroup = false, peel_zero_first = true>
// CHECK-LABEL: func.func @defaults()
// CHECK-SAME: tile.schedule = #tile.schedule<>
func.func @scheduled() attributes {tile.kernel, tile.num_warps = 8 : i32,
    tile.schedule = #tile.schedule<persistent = true, producer_warpgroup = true, ping_pong = false,
                                   pair_instances = false, operands_after_first_stage = true,
                                   invariant_a_in_registers = true, uniform_warpgroup = false,
                                   peel_zero_first = true, min_blocks_per_sm = 1>} {
  return
}
func.func @defaults() attributes {tile.kernel,
    tile.schedule = #tile.schedule<ping_pong = true, pair_instances = true, uniform_warpgroup = true>} {
  return
}
