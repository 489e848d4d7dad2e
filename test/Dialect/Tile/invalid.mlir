// Every verifier error of the tile dialect (ops and the tile.* function attributes), one case each.
// RUN: flare-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// tile.range
//===----------------------------------------------------------------------===//

// [0, 64) has 64 elements, not 128.
func.func @range_size(%n: i32) {
  // expected-error @+1 {{'tile.range' op range [0, 64) has 64 elements but the result tile has 128}}
  %r = tile.range 0, 64 : tensor<128xi32>
  return
}

// -----

// A reversed range has a negative size: [8, 0) has -8 elements.
func.func @range_reversed() {
  // expected-error @+1 {{range [8, 0) has -8 elements but the result tile has 8}}
  %r = tile.range 8, 0 : tensor<8xi32>
  return
}

// -----

func.func @range_not_i32() {
  // expected-error @+1 {{'tile.range' op result must be a 1-D tile of i32}}
  %r = tile.range 0, 64 : tensor<64xi64>
  return
}

// -----

func.func @range_2d() {
  // expected-error @+1 {{'tile.range' op result must be a 1-D tile of i32}}
  %r = tile.range 0, 64 : tensor<8x8xi32>
  return
}

// -----

// Tiles are statically shaped (the type constraint, before the custom verifier).
func.func @range_dynamic() {
  // expected-error @+1 {{'tile.range' op result #0 must be statically shaped tile}}
  %r = tile.range 0, 64 : tensor<?xi32>
  return
}

//===----------------------------------------------------------------------===//
// tile.splat
//===----------------------------------------------------------------------===//

// -----

func.func @splat_type(%x: i32) {
  // expected-error @+1 {{'tile.splat' op element type 'f32' differs from the scalar's type 'i32'}}
  %t = tile.splat %x : i32 -> tensor<16xf32>
  return
}

// -----

func.func @splat_width(%x: i64) {
  // expected-error @+1 {{element type 'i32' differs from the scalar's type 'i64'}}
  %t = tile.splat %x : i64 -> tensor<4x4xi32>
  return
}

//===----------------------------------------------------------------------===//
// tile.expand_dims
//===----------------------------------------------------------------------===//

// -----

// A rank-1 tile has insertion points 0 and 1 only.
func.func @expand_axis_high(%t: tensor<4xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op axis 2 is out of range for a rank-1 tile}}
  %e = tile.expand_dims %t {axis = 2 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  return
}

// -----

// The axis is read as a signed value: -1 is out of range and printed as -1 (not as 4294967295, as when
// the verifier read it back unsigned).
func.func @expand_axis_negative(%t: tensor<4xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op axis -1 is out of range for a rank-1 tile}}
  %e = tile.expand_dims %t {axis = -1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  return
}

// -----

// Inserting at axis 0 gives [1, 4], not [4, 1].
func.func @expand_wrong_place(%t: tensor<4xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op result shape [4, 1] should be [1, 4]}}
  %e = tile.expand_dims %t {axis = 0 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  return
}

// -----

// The inserted dimension has size 1.
func.func @expand_not_one(%t: tensor<4xf32>) {
  // expected-error @+1 {{result shape [4, 2] should be [4, 1]}}
  %e = tile.expand_dims %t {axis = 1 : i32} : tensor<4xf32> -> tensor<4x2xf32>
  return
}

// -----

// The element type is kept.
func.func @expand_elem(%t: tensor<4xf32>) {
  // expected-error @+1 {{result shape [4, 1] should be [4, 1]}}
  %e = tile.expand_dims %t {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf16>
  return
}

//===----------------------------------------------------------------------===//
// tile.broadcast
//===----------------------------------------------------------------------===//

// -----

// Only size-1 dimensions grow: 4 -> 8 along dimension 0 is not a broadcast.
func.func @broadcast_non_one(%t: tensor<4x1xf32>) {
  // expected-error @+1 {{'tile.broadcast' op dimension 0 cannot broadcast from 4 to 8 (only size-1 dimensions broadcast)}}
  %b = tile.broadcast %t : tensor<4x1xf32> -> tensor<8x16xf32>
  return
}

// -----

// Shrinking is not broadcasting either.
func.func @broadcast_shrink(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1 cannot broadcast from 8 to 1}}
  %b = tile.broadcast %t : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// Broadcast does not add dimensions (that is expand_dims).
func.func @broadcast_rank(%t: tensor<4xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source and result must have the same rank and element type}}
  %b = tile.broadcast %t : tensor<4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_elem(%t: tensor<4x1xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source and result must have the same rank and element type}}
  %b = tile.broadcast %t : tensor<4x1xf32> -> tensor<4x8xi32>
  return
}

//===----------------------------------------------------------------------===//
// tile.reduce
//===----------------------------------------------------------------------===//

// -----

// A rank-2 tile has axes 0 and 1.
func.func @reduce_axis_high(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis 2 is out of range for a rank-2 tile}}
  %r = tile.reduce sum %t {axis = 2 : i32} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Signed, as for expand_dims.
func.func @reduce_axis_negative(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis -1 is out of range for a rank-2 tile}}
  %r = tile.reduce max %t {axis = -1 : i32} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Reducing axis 1 of [4, 8] gives [4], not [8].
func.func @reduce_shape(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op result must be a tile of shape [4] and type 'f32'}}
  %r = tile.reduce sum %t {axis = 1 : i32} : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

// The reduced dimension is removed, not kept with size 1.
func.func @reduce_keepdim(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be a tile of shape [4] and type 'f32'}}
  %r = tile.reduce sum %t {axis = 1 : i32} : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @reduce_elem(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be a tile of shape [8] and type 'f32'}}
  %r = tile.reduce min %t {axis = 0 : i32} : tensor<4x8xf32> -> tensor<8xf16>
  return
}

// -----

// A 2-D reduction gives a tile, not a scalar.
func.func @reduce_2d_to_scalar(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be a tile of shape [4] and type 'f32'}}
  %r = tile.reduce sum %t {axis = 1 : i32} : tensor<4x8xf32> -> f32
  return
}

// -----

// A 1-D reduction gives a scalar of the element type...
func.func @reduce_1d_scalar_type(%t: tensor<8xi32>) {
  // expected-error @+1 {{'tile.reduce' op reducing a 1-D tile gives a scalar of type 'i32'}}
  %r = tile.reduce sum %t {axis = 0 : i32} : tensor<8xi32> -> i64
  return
}

// -----

// ...not a tile.
func.func @reduce_1d_tile(%t: tensor<8xf32>) {
  // expected-error @+1 {{reducing a 1-D tile gives a scalar of type 'f32'}}
  %r = tile.reduce sum %t {axis = 0 : i32} : tensor<8xf32> -> tensor<1xf32>
  return
}

// -----

// Index elements have no reduction (only floats and signless integers).
func.func @reduce_index(%t: tensor<8xindex>) {
  // expected-error @+1 {{'tile.reduce' op cannot reduce elements of type 'index'}}
  %r = tile.reduce sum %t {axis = 0 : i32} : tensor<8xindex> -> index
  return
}

// -----

func.func @reduce_unsigned(%t: tensor<8xui32>) {
  // expected-error @+1 {{cannot reduce elements of type 'ui32'}}
  %r = tile.reduce max %t {axis = 0 : i32} : tensor<8xui32> -> ui32
  return
}

// -----

func.func @reduce_kind(%t: tensor<8xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min]}}
  %r = tile.reduce prod %t {axis = 0 : i32} : tensor<8xf32> -> f32
  return
}

//===----------------------------------------------------------------------===//
// tile.make_view
//===----------------------------------------------------------------------===//

// -----

// A rank-2 view needs two sizes and two strides.
func.func @view_sizes(%p: !tile.ptr<f32>, %n: i32) {
  // expected-error @+1 {{'tile.make_view' op a rank-2 view needs 2 sizes and strides, got 1 and 2}}
  %v = tile.make_view %p, [%n], [%n, %n] : !tile.ptr<f32> -> !tile.view<f32, 2>
  return
}

// -----

func.func @view_strides(%p: !tile.ptr<f32>, %n: i32) {
  // expected-error @+1 {{'tile.make_view' op a rank-2 view needs 2 sizes and strides, got 2 and 3}}
  %v = tile.make_view %p, [%n, %n], [%n, %n, %n] : !tile.ptr<f32> -> !tile.view<f32, 2>
  return
}

// -----

func.func @view_elem(%p: !tile.ptr<f32>, %n: i32) {
  // expected-error @+1 {{'tile.make_view' op pointer and view element types differ}}
  %v = tile.make_view %p, [%n], [%n] : !tile.ptr<f32> -> !tile.view<f16, 1>
  return
}

// -----

// Sizes and strides are i32.
func.func @view_i64(%p: !tile.ptr<f32>, %n: i64) {
  // expected-error @+1 {{'tile.make_view' op operand #1 must be variadic of 32-bit signless integer}}
  %v = "tile.make_view"(%p, %n, %n) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!tile.ptr<f32>, i64, i64) -> !tile.view<f32, 1>
  return
}

//===----------------------------------------------------------------------===//
// tile.load
//===----------------------------------------------------------------------===//

// -----

func.func @load_offsets(%v: !tile.view<f32, 2>, %i: i32) {
  // expected-error @+1 {{'tile.load' op a rank-2 view needs 2 offsets, got 1}}
  %t = tile.load %v[%i] : !tile.view<f32, 2> -> tensor<4x8xf32>
  return
}

// -----

func.func @load_rank(%v: !tile.view<f32, 2>, %i: i32) {
  // expected-error @+1 {{'tile.load' op tile rank 1 differs from view rank 2}}
  %t = tile.load %v[%i, %i] : !tile.view<f32, 2> -> tensor<32xf32>
  return
}

// -----

func.func @load_elem(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.load' op tile element type 'bf16' differs from view element type 'f32'}}
  %t = tile.load %v[%i] : !tile.view<f32, 1> -> tensor<32xbf16>
  return
}

// -----

// Row pieces: a rank-2 block whose rows they divide, one offset per piece and then the column.
func.func @load_pieces_rank(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.load' op row_pieces needs a rank-2 block, got rank 1}}
  %t = tile.load %v[%i, %i] {row_pieces = 2} : !tile.view<f32, 1> -> tensor<32xf32>
  return
}

// -----

func.func @load_pieces_divide(%v: !tile.view<f32, 2>, %i: i32) {
  // expected-error @+1 {{'tile.load' op row_pieces = 3 must divide the block's 64 rows}}
  %t = tile.load %v[%i, %i, %i, %i] {row_pieces = 3} : !tile.view<f32, 2> -> tensor<64x8xf32>
  return
}

// -----

func.func @load_pieces_offsets(%v: !tile.view<f32, 2>, %i: i32) {
  // expected-error @+1 {{'tile.load' op row_pieces = 4 needs 5 offsets (each piece's first row, then the column), got 2}}
  %t = tile.load %v[%i, %i] {row_pieces = 4} : !tile.view<f32, 2> -> tensor<64x8xf32>
  return
}

// -----

func.func @load_pieces_one(%v: !tile.view<f32, 2>, %i: i32) {
  // expected-error @+1 {{'tile.load' op attribute 'row_pieces' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %t = tile.load %v[%i, %i] {row_pieces = 1} : !tile.view<f32, 2> -> tensor<64x8xf32>
  return
}

// -----

// The padding has the element type: an f16 -inf cannot pad f32 elements.
func.func @load_padding(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.load' op padding of type 'f16' for elements of type 'f32'}}
  %t = tile.load %v[%i] {padding = 0xFC00 : f16} : !tile.view<f32, 1> -> tensor<32xf32>
  return
}

// -----

func.func @load_padding_int(%v: !tile.view<i32, 1>, %i: i32) {
  // expected-error @+1 {{padding of type 'i64' for elements of type 'i32'}}
  %t = tile.load %v[%i] {padding = 7 : i64} : !tile.view<i32, 1> -> tensor<32xi32>
  return
}

// -----

// A string is a typed attribute of type none, which is not the element type either.
func.func @load_padding_string(%v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.load' op padding of type 'none' for elements of type 'f32'}}
  %t = tile.load %v[%i] {padding = "zero"} : !tile.view<f32, 1> -> tensor<32xf32>
  return
}

//===----------------------------------------------------------------------===//
// tile.store
//===----------------------------------------------------------------------===//

// -----

func.func @store_offsets(%t: tensor<4xf32>, %v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.store' op a rank-1 view needs 1 offsets, got 2}}
  tile.store %t, %v[%i, %i] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

func.func @store_rank(%t: tensor<4x4xf32>, %v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.store' op tile rank 2 differs from view rank 1}}
  tile.store %t, %v[%i] : tensor<4x4xf32>, !tile.view<f32, 1>
  return
}

// -----

// Storing f16 values into an f32 view (no implicit conversion).
func.func @store_elem(%t: tensor<64xf16>, %v: !tile.view<f32, 1>, %i: i32) {
  // expected-error @+1 {{'tile.store' op tile element type 'f16' differs from view element type 'f32'}}
  tile.store %t, %v[%i] : tensor<64xf16>, !tile.view<f32, 1>
  return
}

//===----------------------------------------------------------------------===//
// tile.scalar_store (round trip and lowering: test/Conversion/scalar-store.mlir)
//===----------------------------------------------------------------------===//

// -----

// The value is stored as it is: an i32 value does not go into an i64 table...
func.func @scalar_store_i32_into_i64(%p: !tile.ptr<i64>, %x: i32, %i: i32) {
  // expected-error @+1 {{'tile.scalar_store' op value type 'i32' must be the pointer's element type 'i64'}}
  tile.scalar_store %x, %p[%i] : i32, !tile.ptr<i64>, i32
  return
}

// -----

// ...nor an f32 into an i32 one (no conversion on the way).
func.func @scalar_store_f32_into_i32(%p: !tile.ptr<i32>, %x: f32, %i: i64) {
  // expected-error @+1 {{'tile.scalar_store' op value type 'f32' must be the pointer's element type 'i32'}}
  tile.scalar_store %x, %p[%i] : f32, !tile.ptr<i32>, i64
  return
}

// -----

// Values are i32, i64 or f32: a bf16 element cannot be stored as a scalar.
func.func @scalar_store_bf16(%p: !tile.ptr<bf16>, %x: bf16, %i: i32) {
  // expected-error @+1 {{'tile.scalar_store' op operand #0 must be 32-bit signless integer or 64-bit signless integer or 32-bit float, but got 'bf16'}}
  tile.scalar_store %x, %p[%i] : bf16, !tile.ptr<bf16>, i32
  return
}

// -----

// Offsets are i32 or i64 element counts.
func.func @scalar_store_offset_i16(%p: !tile.ptr<i32>, %x: i32, %i: i16) {
  // expected-error @+1 {{'tile.scalar_store' op operand #2 must be 32-bit signless integer or 64-bit signless integer, but got 'i16'}}
  tile.scalar_store %x, %p[%i] : i32, !tile.ptr<i32>, i16
  return
}

//===----------------------------------------------------------------------===//
// tile.kernel / tile.num_warps / other tile.* attributes
//===----------------------------------------------------------------------===//

// -----

// A kernel writes its results through views.
// expected-error @+1 {{a tile kernel returns nothing; write results through views}}
func.func @kernel_results(%n: i32) -> i32 attributes {tile.kernel} {
  return %n : i32
}

// -----

// Parameters are !tile.ptr, i32, i64 or f32: f64 is not.
// expected-error @+1 {{tile kernel parameter #1 has type 'f64'; expected !tile.ptr<...>, i32, i64 or f32}}
func.func @kernel_f64(%p: !tile.ptr<f32>, %x: f64) attributes {tile.kernel} {
  return
}

// -----

// Nor is a tile, a view or an index.
// expected-error @+1 {{tile kernel parameter #0 has type 'tensor<4xf32>'}}
func.func @kernel_tile_param(%t: tensor<4xf32>) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{tile kernel parameter #2 has type '!tile.view<f32, 1>'}}
func.func @kernel_view_param(%a: i32, %b: i64, %v: !tile.view<f32, 1>) attributes {tile.kernel} {
  return
}

// -----

// expected-error @+1 {{tile kernel parameter #0 has type 'index'}}
func.func @kernel_index_param(%i: index) attributes {tile.kernel} {
  return
}

// -----

// tile.kernel belongs on a func.func.
// expected-error @+1 {{'tile.kernel' is only valid on a func.func}}
module attributes {tile.kernel} {
}

// -----

// num_warps is a power of two from 1 to 16: not 3...
// expected-error @+1 {{'tile.num_warps' must be a power of two from 1 to 16}}
func.func @warps_3() attributes {tile.kernel, tile.num_warps = 3 : i32} {
  return
}

// -----

// ...not 32...
// expected-error @+1 {{'tile.num_warps' must be a power of two from 1 to 16}}
func.func @warps_32() attributes {tile.kernel, tile.num_warps = 32 : i32} {
  return
}

// -----

// expected-error @+1 {{min_blocks_per_sm must be from 0 (ptxas decides) to 8, got 9}}
func.func @min_blocks_9() attributes {tile.kernel, tile.schedule = #tile.schedule<min_blocks_per_sm = 9>} {
  return
}

// -----

// expected-error @+1 {{'tile.schedule' is a #tile.schedule on a tile kernel's func.func}}
func.func @schedule_int() attributes {tile.kernel, tile.schedule = 1 : i32} {
  return
}

// -----

// The schedule's fields are not attributes of their own.
// expected-error @+1 {{'tile.ping_pong' is a field of the kernel's #tile.schedule (tile.schedule = #tile.schedule<ping_pong = ...>)}}
func.func @ping_pong_alone() attributes {tile.kernel, tile.ping_pong = false} {
  return
}

// -----

// expected-error @+1 {{'tile.persistent' is a field of the kernel's #tile.schedule (tile.schedule = #tile.schedule<persistent = ...>)}}
func.func @persistent_alone() attributes {tile.kernel, tile.persistent = true} {
  return
}

// -----

// A field the lowering would not honour is an error, not a silent no-op.
// expected-error @+1 {{producer_warpgroup needs one CTA per SM (min_blocks_per_sm 0 or 1)}}
func.func @producer_two_ctas() attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<min_blocks_per_sm = 2, producer_warpgroup = true>} {
  return
}

// -----

// expected-error @+1 {{a producer warpgroup (#tile.schedule's producer_warpgroup) needs a kernel of 4 or 8 warps, not 2}}
func.func @producer_two_warps() attributes {tile.kernel, tile.num_warps = 2 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>} {
  return
}

// -----

// expected-error @+1 {{pair_instances = false needs persistent}}
func.func @single_instances_not_persistent() attributes {tile.kernel, tile.schedule = #tile.schedule<pair_instances = false>} {
  return
}

// -----

// expected-error @+1 {{operands_after_first_stage needs persistent and producer_warpgroup}}
func.func @operands_late_without_producer() attributes {tile.kernel, tile.schedule = #tile.schedule<persistent = true, operands_after_first_stage = true>} {
  return
}

// -----

// expected-error @+1 {{dynamic_instances needs persistent, producer_warpgroup and pair_instances = false}}
func.func @dynamic_in_pairs() attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, dynamic_instances = true>} {
  return
}

// -----

// expected-error @+1 {{prefetch_next_instance needs persistent without producer_warpgroup}}
func.func @prefetch_with_producer() attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, prefetch_next_instance = true>} {
  return
}

// -----

// expected-error @+1 {{invariant_a_in_registers needs persistent}}
func.func @registers_not_persistent() attributes {tile.kernel, tile.schedule = #tile.schedule<invariant_a_in_registers = true>} {
  return
}

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: turns}}
func.func @unknown_field() attributes {tile.kernel, tile.schedule = #tile.schedule<turns = true>} {
  return
}

// -----

// ...not 0...
// expected-error @+1 {{'tile.num_warps' must be a power of two from 1 to 16}}
func.func @warps_0() attributes {tile.kernel, tile.num_warps = 0 : i32} {
  return
}

// -----

// ...not negative...
// expected-error @+1 {{'tile.num_warps' must be a power of two from 1 to 16}}
func.func @warps_negative() attributes {tile.kernel, tile.num_warps = -4 : i32} {
  return
}

// -----

// ...and an integer.
// expected-error @+1 {{'tile.num_warps' must be a power of two from 1 to 16}}
func.func @warps_string() attributes {tile.kernel, tile.num_warps = "four"} {
  return
}

// -----

// The dialect knows tile.kernel and tile.num_warps only. The name is printed bare inside the single
// quotes (it used to be printed as a string attribute, in double quotes too).
// expected-error-re @+1 {{{{^}}unknown tile attribute 'tile.num_threads'{{$}}}}
func.func @unknown_attr() attributes {tile.kernel, tile.num_threads = 128 : i32} {
  return
}

// -----

// Also on an op that is not a function.
func.func @unknown_attr_on_op() {
  // expected-error-re @+1 {{{{^}}unknown tile attribute 'tile.hint'{{$}}}}
  %c = arith.constant {tile.hint} 0 : i32
  return
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{expected ','}}
func.func private @view_without_rank(!tile.view<f32>)

// -----

// expected-error @+1 {{type `tensor` in dialect `tile`}}
func.func private @unknown_type(!tile.tensor<f32>)

// -----

func.func @skip_unit_factor_on_scalar(%a: f32, %b: f32) -> f32 {
  // expected-error @+1 {{'tile.skip_unit_factor' is a unit attribute of an arith.mulf on tiles}}
  %c = arith.mulf %a, %b {tile.skip_unit_factor} : f32
  return %c : f32
}

// -----

func.func @skip_unit_factor_on_addf(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tile.skip_unit_factor' is a unit attribute of an arith.mulf on tiles}}
  %c = arith.addf %a, %b {tile.skip_unit_factor} : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----


// -----


// -----


// -----


// -----


// -----


// -----


// -----


//===----------------------------------------------------------------------===//
// What a tile kernel's body may hold
//===----------------------------------------------------------------------===//

// -----

// A loop with a constant step of 0 never ends: on a GPU it would spin until the driver kills the
// context. (A step known only at run time is guarded by tile-guard-loop-steps.)
func.func @loop_step_zero(%n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'scf.for' op has step 0: a loop of a tile kernel needs a positive step}}
  scf.for %i = %c0 to %n step %c0 : i32 {
  }
  return
}

// -----

// A 1024 x 1024 f32 tile needs 8192 registers per thread on 4 warps: rejected before the lowering
// unrolls it (which would take minutes and gigabytes).
func.func @tile_too_large(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %one = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %v = tile.make_view %x, [%n, %n], [%n, %one] : !tile.ptr<f32> -> !tile.view<f32, 2>
  // expected-error @+1 {{'tile.load' op has a tile 'tensor<1024x1024xf32>' of 1048576 elements: 8192 registers per thread across the kernel's 128 threads, more than the 512 a tile may hold; use smaller tiles or more warps}}
  %a = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<1024x1024xf32>
  return
}

// -----

// So is a dot's accumulator of 2^20 elements (a 2^20-element dot used to crash the process).
func.func @dot_too_large(%x: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  // expected-error @+1 {{'arith.constant' op has a tile 'tensor<64x16384xf32>' of 1048576 elements: 4096 registers per thread}}
  %z = arith.constant dense<0.0> : tensor<64x16384xf32>
  return
}

// -----

// 128-bit integers have no lowering to PTX here (the NVPTX backend would end the process).
func.func @i128_scalar(%n: i64) attributes {tile.kernel} {
  // expected-error @+1 {{'arith.extsi' op computes in 'i128', which tile kernels do not support (integers of up to 64 bits, index, f16, bf16, f32, f64)}}
  %w = arith.extsi %n : i64 to i128
  return
}

// -----

func.func @dot_k_extent(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op k_extent = 40 must be a multiple of 16 from 16 to K = 64}}
  %d = tile.dot %a, %b, %c {k_extent = 40} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @dot_n_extent(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{'tile.dot' op n_extent = 72 must be a multiple of 8 from 8 to N = 64}}
  %d = tile.dot %a, %b, %c {n_extent = 72} : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}
