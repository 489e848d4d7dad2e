// tile.split_range, tile.split_store and tile.split_load (stream-K in a persistent kernel) print and
// parse back, and every verifier error of theirs, one case each.
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A persistent kernel whose instances run blocks [lo, hi) of ceil(n / 64): the piece that ends an
// instance hands (m, l, acc) over, the one that began it takes them back.
// CHECK-LABEL: func.func @pieces(
// CHECK: %[[LO:.*]], %[[HI:.*]] = tile.split_range %{{.*}} : i32
// CHECK: tile.split_store %{{.*}}, %{{.*}} : tensor<128xf32>, tensor<128x64xf32>
// CHECK: tile.split_load : tensor<128xf32>, tensor<128x64xf32>
func.func @pieces(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %c6 = arith.constant 6 : i32
  %c63 = arith.constant 63 : i32
  %c0 = arith.constant 0 : i32
  %r = arith.addi %n, %c63 : i32
  %steps = arith.shrsi %r, %c6 : i32
  %lo, %hi = tile.split_range %steps : i32
  %m = arith.constant dense<1.0> : tensor<128xf32>
  %acc = arith.constant dense<2.0> : tensor<128x64xf32>
  %ends = arith.cmpi ne, %lo, %c0 : i32
  scf.if %ends {
    tile.split_store %m, %acc : tensor<128xf32>, tensor<128x64xf32>
  } else {
    %m2, %acc2 = tile.split_load : tensor<128xf32>, tensor<128x64xf32>
  }
  return
}

// -----

func.func @not_persistent(%n: i32) attributes {tile.kernel} {
  // expected-error @+1 {{'tile.split_range' op is only valid in a persistent tile kernel (#tile.schedule<persistent = true>): only its schedule splits program instances}}
  %lo, %hi = tile.split_range %n : i32
  return
}

// -----

func.func @from_program_id() attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %x = tile.program_id x
  // expected-error @+1 {{'tile.split_range' op steps must be computed from the kernel's arguments alone (the same for every program instance): arith ops on them, no program ids or loads}}
  %lo, %hi = tile.split_range %x : i32
  return
}

// -----

func.func @nested(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %c0 = arith.constant 0 : i32
  %c = arith.cmpi ne, %n, %c0 : i32
  scf.if %c {
    // expected-error @+1 {{'tile.split_range' op must sit at the top level of the kernel's body}}
    %lo, %hi = tile.split_range %n : i32
  }
  return
}

// -----

func.func @twice(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  // expected-error @+1 {{'tile.split_range' op appears 2 times in kernel 'twice'; at most once}}
  %lo, %hi = tile.split_range %n : i32
  %lo2, %hi2 = tile.split_range %n : i32
  return
}

// -----

func.func @no_range(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %m = arith.constant dense<1.0> : tensor<128xf32>
  // expected-error @+1 {{'tile.split_store' op needs the kernel's tile.split_range (which instances are split)}}
  tile.split_store %m : tensor<128xf32>
  return
}

// -----

func.func @not_f32(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %lo, %hi = tile.split_range %n : i32
  // expected-error @+1 {{'tile.split_load' op carries f32 tiles only, not 'tensor<128xf16>'}}
  %m = tile.split_load : tensor<128xf16>
  return
}

// -----

func.func @mismatch(%n: i32) attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true>} {
  %lo, %hi = tile.split_range %n : i32
  %m = arith.constant dense<1.0> : tensor<128xf32>
  // expected-error @+1 {{'tile.split_store' op carries other tiles than the tile.split_load at}}
  tile.split_store %m : tensor<128xf32>
  %m2 = tile.split_load : tensor<64xf32>
  return
}
