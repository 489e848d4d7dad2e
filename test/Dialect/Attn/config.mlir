// #attn.config, the one configuration of a generated attention kernel: its text form (integers with
// defaults for omitted ones, then the switches that are on, in a fixed order) and its verifier, which
// admits one spelling per kernel (a switch that cannot apply beside the others is an error).
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics | flare-opt -split-input-file | FileCheck %s

// Printed in full and in canonical switch order, whatever order they were written in.
// CHECK-LABEL: func.func @full
// CHECK: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer, persistent, split_tail, pair_instances>
func.func @full(%q: tensor<1x8x128x128xbf16>, %k: tensor<1x8x128x128xbf16>, %v: tensor<1x8x128x128xbf16>)
    -> tensor<1x8x128x128xbf16> {
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<persistent, partial_row_sums = 4,
      block_n = 128, split_tail, producer, pair_instances, ping_pong, overlap>}
      : tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16>, tensor<1x8x128x128xbf16> -> tensor<1x8x128x128xbf16>
  return %o : tensor<1x8x128x128xbf16>
}

// -----

// Omitted integers take 128, 64, 8, 0, 0; no switch named: all off (pair_instances off needs a
// persistent kernel, so a non-persistent one names it).
// CHECK-LABEL: func.func @defaults
// CHECK: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, pair_instances>
func.func @defaults(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<pair_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @block_size(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{block_m and block_n must be powers of two from 16 to 256, got 96 and 64}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<block_m = 96, pair_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @warps(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{warps must be 1, 2, 4, 8 or 16, got 6}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<warps = 6, pair_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @row_sums(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{partial_row_sums=64 must be 0 or a power of two from 2 whose double divides the 64 keys per step}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<partial_row_sums = 64, pair_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @needs_overlap(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{defer_rescale needs overlap on}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<defer_rescale, pair_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @dynamic_needs_single(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{dynamic_instances needs pair_instances off}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<persistent, producer, pair_instances, dynamic_instances>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @needs_no_producer(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{prefetch_next_instance needs producer off}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<persistent, producer, prefetch_next_instance>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @single_instances(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{pair_instances can be off in a persistent kernel only}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<overlap>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// block_lists is the last switch in the printed order, wherever it was written.
// CHECK-LABEL: func.func @block_lists
// CHECK: config = #attn.config<block_m = 128, block_n = 32, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, pair_instances, uniform_warpgroup, block_lists>
func.func @block_lists(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<block_lists, block_n = 32, overlap,
      ping_pong, pair_instances, uniform_warpgroup>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// Block lists name the key blocks of one block of a head's query rows: they cannot be split among
// instances (split_kv, split_tail) nor packed across heads (pack_gqa).
func.func @block_lists_split_kv(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{block_lists needs split_kv off}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<pair_instances, split_kv, block_lists>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @block_lists_pack_gqa(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{block_lists needs pack_gqa off}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<pair_instances, pack_gqa, block_lists>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @block_lists_split_tail(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{block_lists needs split_tail off}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<persistent, split_tail, pair_instances, block_lists>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// ...while a persistent kernel without split_tail may read lists.
// CHECK-LABEL: func.func @block_lists_persistent
// CHECK: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, persistent, pair_instances, block_lists>
func.func @block_lists_persistent(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<persistent, pair_instances, block_lists>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @unknown_switch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{#attn.config has no switch 'pingpong'}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<pingpong>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @unknown_field(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>)
    -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{#attn.config has no integer field 'stages'}}
  %o = attn.attention %q, %k, %v attributes {config = #attn.config<stages = 2>}
      : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}
