// Tiles of `index` pass the tile verifiers (tile.splat accepts an index scalar), but a register layout
// needs the element's bit width, which `index` does not have: tgpu-assign-layouts rejects them with a
// diagnostic at the op that makes the tile. (Regression test: the pass used to crash in
// Type::getIntOrFloatBitWidth().)
//
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts -verify-diagnostics

func.func @index_splat(%n: i32) attributes {tile.kernel} {
  %i = arith.index_cast %n : i32 to index
  // expected-error @+1 {{'tile.splat' op tiles of 'index' are not supported; use i32 or i64}}
  %t = tile.splat %i : index -> tensor<8xindex>
  return
}

// -----

// An index tile from a constant, used by a store: the first op that makes one is reported.
func.func @index_constant(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  // expected-error @+1 {{'arith.constant' op tiles of 'index' are not supported; use i32 or i64}}
  %c = arith.constant dense<3> : tensor<16xindex>
  %t = arith.index_cast %c : tensor<16xindex> to tensor<16xi32>
  tile.store %t, %v[%n] : tensor<16xi32>, !tile.view<i32, 1>
  return
}
