// tgpu-assign-layouts: the blocked layout of loads, how layouts flow through reductions, expand_dims,
// broadcasts, elementwise ops and scf, and where tgpu.convert_layout is (and is not) inserted.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts | FileCheck %s
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts="vector-bytes=4" | FileCheck %s --check-prefix=VEC4
//
// Reading a blocked layout (LinearLayout::blocked): the tile's coordinate bits are listed fastest first
// (the last dimension's bits from low to high, then the dimension before it, ...). The first
// log2(vec) bits go to registers (vec = vector-bytes / element bytes, 16 bytes by default: 4 x f32 or
// 8 x bf16 per thread), the next 5 to the lanes, the next log2(num_warps) to the warps, and whatever is
// left to more registers. Lanes and warps left without a bit get a zero basis (they repeat elements).
//
// Every tile below ends in a tile.store: the pass drops ops whose results are unused.

// 1-D f32, 4 warps (the default), 256 elements = 8 coordinate bits 1, 2, ..., 128:
//   reg  <- 1, 2 (4 contiguous f32 = 16 bytes); lane <- 4 .. 64; warp <- 128, then nothing left: 0.
// With vector-bytes=4 (vec = 1): lane <- 1 .. 16; warp <- 32, 64; the last bit, 128, is a register.
// CHECK-LABEL: func.func @load_1d
// CHECK: tile.load {{.*}} -> tensor<256xf32, #tgpu.linear<shape = [256], reg = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}128], [0]]>>
// The store takes the tile as it is: no conversion.
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.store
// VEC4-LABEL: func.func @load_1d
// VEC4: tile.load {{.*}} -> tensor<256xf32, #tgpu.linear<shape = [256], reg = {{\[\[}}128]], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>>
func.func @load_1d(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<256xf32>
  tile.store %t, %v[%n] : tensor<256xf32>, !tile.view<f32, 1>
  return
}

// -----

// 2-D f32 16x64, 4 warps: bits (0,1) .. (0,32) then (1,0) .. (8,0).
//   reg <- (0,1), (0,2); lane <- (0,4), (0,8), (0,16), (0,32), (1,0); warp <- (2,0), (4,0); reg <- (8,0).
// So a warp covers 2 rows of 64, the 4 warps rows 0-7, and register bit 2 adds 8 rows.
// With vector-bytes=4: lane <- (0,1) .. (0,16); warp <- (0,32), (1,0); reg <- (2,0), (4,0), (8,0).
// CHECK-LABEL: func.func @load_2d
// CHECK: tile.load {{.*}} -> tensor<16x64xf32, #tgpu.linear<shape = [16, 64], reg = {{\[\[}}0, 1], [0, 2], [8, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>>
// VEC4-LABEL: func.func @load_2d
// VEC4: tile.load {{.*}} -> tensor<16x64xf32, #tgpu.linear<shape = [16, 64], reg = {{\[\[}}2, 0], [4, 0], [8, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], warp = {{\[\[}}0, 32], [1, 0]]>>
func.func @load_2d(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %t = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<16x64xf32>
  tile.store %t, %v[%n, %n] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// bf16 is 2 bytes: vec = 16 / 2 = 8 contiguous elements per thread. 8x64 over 2 warps:
//   reg <- (0,1), (0,2), (0,4); lane <- (0,8), (0,16), (0,32), (1,0), (2,0); warp <- (4,0).
// With vector-bytes=4: vec = 4 / 2 = 2: reg <- (0,1); lane <- (0,2) .. (0,32); warp <- (1,0);
// reg <- (2,0), (4,0).
// CHECK-LABEL: func.func @load_bf16
// CHECK: tile.load {{.*}} -> tensor<8x64xbf16, #tgpu.linear<shape = [8, 64], reg = {{\[\[}}0, 1], [0, 2], [0, 4]], lane = {{\[\[}}0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warp = {{\[\[}}4, 0]]>>
// VEC4-LABEL: func.func @load_bf16
// VEC4: tile.load {{.*}} -> tensor<8x64xbf16, #tgpu.linear<shape = [8, 64], reg = {{\[\[}}0, 1], [2, 0], [4, 0]], lane = {{\[\[}}0, 2], [0, 4], [0, 8], [0, 16], [0, 32]], warp = {{\[\[}}1, 0]]>>
func.func @load_bf16(%p: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.num_warps = 2 : i32} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %t = tile.load %v[%n, %n] : !tile.view<bf16, 2> -> tensor<8x64xbf16>
  tile.store %t, %v[%n, %n] : tensor<8x64xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// Tiles made from scalars alone (tile.range, tile.splat, tensor constants and elementwise ops of those)
// are "weak": with no laid-out user to follow they default to the blocked layout of their shape.
// 16 x i32 on one warp: reg <- 1, 2; lane <- 4, 8, then lanes 16..31 repeat lanes 0..15 (zero bases).
// CHECK-LABEL: func.func @weak_default_blocked
// CHECK: %[[R:.*]] = tile.range 0, 16 : tensor<16xi32, [[L:#tgpu.linear<shape = \[16\], reg = \[\[1\], \[2\]\], lane = \[\[4\], \[8\], \[0\], \[0\], \[0\]\], warp = \[\]>]]>
// CHECK: %[[S:.*]] = tile.splat %{{.*}} : i32 -> tensor<16xi32, [[L]]>
// CHECK: %[[C:.*]] = arith.constant dense<3> : tensor<16xi32, [[L]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: %[[A:.*]] = arith.addi %[[R]], %[[S]] : tensor<16xi32, [[L]]>
// CHECK: %[[M:.*]] = arith.muli %[[A]], %[[C]] : tensor<16xi32, [[L]]>
// CHECK: tile.store %[[M]]
func.func @weak_default_blocked(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %r = tile.range 0, 16 : tensor<16xi32>
  %s = tile.splat %n : i32 -> tensor<16xi32>
  %c = arith.constant dense<3> : tensor<16xi32>
  %a = arith.addi %r, %s : tensor<16xi32>
  %m = arith.muli %a, %c : tensor<16xi32>
  tile.store %m, %v[%n] : tensor<16xi32>, !tile.view<i32, 1>
  return
}

// -----

// A weak tile takes the layout of a strong tile it meets in a (transitive) elementwise user: it is
// (re)computed in that layout instead of being converted. Here the indices (range -> sitofp) meet the
// row maxima of a 4x256 tile, whose sliced layout (see @softmax_pattern) is
//   reg [2]; lane 0 x 5; warp 0, 1.
// (The maxima are laid out after the range is visited, so the range is first made blocked and then
// re-created in the sliced layout; the unused blocked original, and its sitofp, are removed by the
// pass's final dead-code sweep, see assign-layouts-dead-chain.mlir: one range and one sitofp are left.)
// CHECK-LABEL: func.func @weak_follows_strong
// CHECK-NOT: tile.range
// CHECK: tile.range 0, 4 : tensor<4xi32, [[SLICED:#tgpu.linear<shape = \[4\], reg = \[\[2\]\], lane = \[\[0\], \[0\], \[0\], \[0\], \[0\]\], warp = \[\[0\], \[1\]\]>]]>
// CHECK-NOT: tile.range
// CHECK-NOT: tgpu.convert_layout
// CHECK: arith.sitofp %{{.*}} : tensor<4xi32, [[SLICED]]> to tensor<4xf32, [[SLICED]]>
// CHECK-NOT: arith.sitofp
// CHECK: tile.reduce max {{.*}} -> tensor<4xf32, [[SLICED]]>
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<4xf32, [[SLICED]]>
func.func @weak_follows_strong(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %r = tile.range 0, 4 : tensor<4xi32>
  %rf = arith.sitofp %r : tensor<4xi32> to tensor<4xf32>
  %x = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  %y = arith.addf %m, %rf : tensor<4xf32>
  tile.store %y, %w[%n] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// A reduction's result gets the source layout with the reduced axis sliced away: the axis is dropped
// from every basis, register bases that become zero are dropped, lane and warp bases stay (zero ones
// mean the threads that reduced together all hold the result).
// Source: the 16x64 layout of @load_2d. Over axis 1: reg (0,1), (0,2) -> 0 (dropped), (8,0) -> 8;
//   lanes (0,4) .. (0,32) -> 0, (1,0) -> 1; warps (2,0), (4,0) -> 2, 4.
// Over axis 0: reg (0,1), (0,2) -> 1, 2, (8,0) -> 0 (dropped); lanes -> 4, 8, 16, 32, 0; warps -> 0, 0.
// A 1-D reduction gives a scalar, which has no layout.
// CHECK-LABEL: func.func @reduce_slices
// CHECK: tile.reduce max %{{.*}} {axis = 1 : i32} : tensor<16x64xf32, #tgpu.linear<{{[^>]*}}>> -> tensor<16xf32, #tgpu.linear<shape = [16], reg = {{\[\[}}8]], lane = {{\[\[}}0], [0], [0], [0], [1]], warp = {{\[\[}}2], [4]]>>
// CHECK: tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<16x64xf32, #tgpu.linear<{{[^>]*}}>> -> tensor<64xf32, #tgpu.linear<shape = [64], reg = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [0]], warp = {{\[\[}}0], [0]]>>
// CHECK: tile.reduce min %{{.*}} {axis = 0 : i32} : tensor<64xf32, #tgpu.linear<{{[^>]*}}>> -> f32
// CHECK-NOT: tgpu.convert_layout
func.func @reduce_slices(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<16x64xf32>
  %rows = tile.reduce max %t {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16xf32>
  %cols = tile.reduce sum %t {axis = 0 : i32} : tensor<16x64xf32> -> tensor<64xf32>
  %all = tile.reduce min %cols {axis = 0 : i32} : tensor<64xf32> -> f32
  %s = tile.splat %all : f32 -> tensor<16xf32>
  %y = arith.addf %rows, %s : tensor<16xf32>
  tile.store %y, %w[%n] : tensor<16xf32>, !tile.view<f32, 1>
  tile.store %cols, %w[%n] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// -----

// The softmax pattern: x - broadcast(expand_dims(max(x, axis 1))). On 4x256 with 4 warps, x is
//   reg (0,1), (0,2), (2,0); lane (0,4) .. (0,64); warp (0,128), (1,0).
// max over axis 1 -> shape [4]: reg [2]; lane 0 x 5; warp 0, 1.
// expand_dims at 1 inserts a zero column entry -> shape [4, 1]: reg (2,0); lane (0,0) x 5; warp (0,0), (1,0).
// The broadcast result takes x's layout (it meets x in the subtraction), and its operand must have
// broadcastSource = that layout with column entries zeroed and the zero register bases dropped:
// again reg (2,0); lane (0,0) x 5; warp (0,0), (1,0) -- exactly the expand_dims result, so every thread
// already holds the row maxima it repeats and no tgpu.convert_layout is needed anywhere.
// CHECK-LABEL: func.func @softmax_pattern
// CHECK: %[[X:.*]] = tile.load {{.*}} -> tensor<4x256xf32, [[BLK:#tgpu.linear<shape = \[4, 256\], reg = \[\[0, 1\], \[0, 2\], \[2, 0\]\], lane = \[\[0, 4\], \[0, 8\], \[0, 16\], \[0, 32\], \[0, 64\]\], warp = \[\[0, 128\], \[1, 0\]\]>]]>
// CHECK: %[[M:.*]] = tile.reduce max %[[X]] {{.*}} -> tensor<4xf32, #tgpu.linear<shape = [4], reg = {{\[\[}}2]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = {{\[\[}}0], [1]]>>
// CHECK: %[[M1:.*]] = tile.expand_dims %[[M]] {{.*}} -> tensor<4x1xf32, [[COL:#tgpu.linear<shape = \[4, 1\], reg = \[\[2, 0\]\], lane = \[\[0, 0\], \[0, 0\], \[0, 0\], \[0, 0\], \[0, 0\]\], warp = \[\[0, 0\], \[1, 0\]\]>]]>
// CHECK: %[[MB:.*]] = tile.broadcast %[[M1]] : tensor<4x1xf32, [[COL]]> -> tensor<4x256xf32, [[BLK]]>
// CHECK: %[[D:.*]] = arith.subf %[[X]], %[[MB]] : tensor<4x256xf32, [[BLK]]>
// CHECK: %[[E:.*]] = math.exp %[[D]] : tensor<4x256xf32, [[BLK]]>
// CHECK: tile.store %[[E]]
// CHECK-NOT: tgpu.convert_layout
func.func @softmax_pattern(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  %m1 = tile.expand_dims %m {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %mb = tile.broadcast %m1 : tensor<4x1xf32> -> tensor<4x256xf32>
  %d = arith.subf %x, %mb : tensor<4x256xf32>
  %e = math.exp %d : tensor<4x256xf32>
  tile.store %e, %v[%n, %n] : tensor<4x256xf32>, !tile.view<f32, 2>
  return
}

// -----

// A strong column broadcast into a layout its source does not have: the row sums of a 16x64 tile
// (sliced over axis 1: reg [8]; lane 0 x 4, 1; warp 2, 4) broadcast back over the rows of a 16x64 tile
// laid out by @load_2d; broadcastSource(dims = {1}) of that layout is
//   reg (8,0); lane (0,0) x 4, (1,0); warp (2,0), (4,0)
// which is the expanded sum already: free. Broadcasting the column *sums* (sliced over axis 0:
// reg 1, 2; lane 4 .. 32, 0; warp 0, 0) over the rows is free for the same reason.
// CHECK-LABEL: func.func @broadcast_back
// CHECK-NOT: tgpu.convert_layout
// CHECK: %[[RS1:.*]] = tile.expand_dims %{{.*}} {axis = 1 : i32}
// CHECK: %[[CS1:.*]] = tile.expand_dims %{{.*}} {axis = 0 : i32}
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.broadcast %[[RS1]] : tensor<16x1xf32, #tgpu.linear<shape = [16, 1], reg = {{\[\[}}8, 0]], lane = {{\[\[}}0, 0], [0, 0], [0, 0], [0, 0], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>> -> tensor<16x64xf32, [[BLK:#tgpu.linear<[^>]*>]]>
// CHECK-NEXT: tile.broadcast %[[CS1]] : tensor<1x64xf32, #tgpu.linear<shape = [1, 64], reg = {{\[\[}}0, 1], [0, 2]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [0, 0]], warp = {{\[\[}}0, 0], [0, 0]]>> -> tensor<16x64xf32, [[BLK]]>
// CHECK-NOT: tgpu.convert_layout
func.func @broadcast_back(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %t = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<16x64xf32>
  %rs = tile.reduce sum %t {axis = 1 : i32} : tensor<16x64xf32> -> tensor<16xf32>
  %cs = tile.reduce sum %t {axis = 0 : i32} : tensor<16x64xf32> -> tensor<64xf32>
  %rs1 = tile.expand_dims %rs {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
  %cs1 = tile.expand_dims %cs {axis = 0 : i32} : tensor<64xf32> -> tensor<1x64xf32>
  %rb = tile.broadcast %rs1 : tensor<16x1xf32> -> tensor<16x64xf32>
  %cb = tile.broadcast %cs1 : tensor<1x64xf32> -> tensor<16x64xf32>
  %a = arith.subf %t, %rb : tensor<16x64xf32>
  %b = arith.subf %a, %cb : tensor<16x64xf32>
  tile.store %b, %v[%n, %n] : tensor<16x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// Elementwise operands of different strong layouts: the row maxima of a 4x256 tile (sliced: reg [2];
// lane 0 x 5; warp 0, 1) and a loaded 4-vector (blocked: reg 1, 2; lane 0 x 5; warp 0, 0). The first
// strong tile operand decides the layout and the other operand is converted to it, right before the op.
// CHECK-LABEL: func.func @elementwise_mismatch
// CHECK-DAG: %[[M:.*]] = tile.reduce max {{.*}} -> tensor<4xf32, [[SLICED:#tgpu.linear<shape = \[4\], reg = \[\[2\]\], lane = \[\[0\], \[0\], \[0\], \[0\], \[0\]\], warp = \[\[0\], \[1\]\]>]]>
// CHECK-DAG: %[[B:.*]] = tile.load {{.*}} -> tensor<4xf32, [[BLOCKED:#tgpu.linear<shape = \[4\], reg = \[\[1\], \[2\]\], lane = \[\[0\], \[0\], \[0\], \[0\], \[0\]\], warp = \[\[0\], \[0\]\]>]]>
// CHECK: %[[BC:.*]] = tgpu.convert_layout %[[B]] : tensor<4xf32, [[BLOCKED]]> -> tensor<4xf32, [[SLICED]]>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M]], %[[BC]] : tensor<4xf32, [[SLICED]]>
// CHECK: %[[MC:.*]] = tgpu.convert_layout %[[M]] : tensor<4xf32, [[SLICED]]> -> tensor<4xf32, [[BLOCKED]]>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[B]], %[[MC]] : tensor<4xf32, [[BLOCKED]]>
// A comparison gives an i1 tile in the layout of its operands; select follows its first strong tile
// operand (the i1 condition), converting the sliced sum.
// CHECK: %[[C:.*]] = arith.cmpf ogt, %[[P]], %[[B]] : tensor<4xf32, [[BLOCKED]]>
// CHECK: %[[SC:.*]] = tgpu.convert_layout %[[S]] : tensor<4xf32, [[SLICED]]> -> tensor<4xf32, [[BLOCKED]]>
// CHECK-NEXT: %[[R:.*]] = arith.select %[[C]], %[[P]], %[[SC]] : tensor<4xi1, [[BLOCKED]]>, tensor<4xf32, [[BLOCKED]]>
// CHECK: tile.store %[[R]]
func.func @elementwise_mismatch(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %w = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%n, %n] : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  %b = tile.load %w[%n] : !tile.view<f32, 1> -> tensor<4xf32>
  %s = arith.addf %m, %b : tensor<4xf32>
  %q = arith.mulf %b, %m : tensor<4xf32>
  %c = arith.cmpf ogt, %q, %b : tensor<4xf32>
  %r = arith.select %c, %q, %s : tensor<4xi1>, tensor<4xf32>
  tile.store %r, %w[%n] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// scf.for with a weak init (a splat accumulator): the iteration argument and the loop result keep the
// init's layout, and the init is pinned to what the loop yields (the row sums' sliced layout), so the
// accumulator stays in the reduction's registers: no conversion inside or around the loop.
// CHECK-LABEL: func.func @for_pins_weak_init
// CHECK: %[[INIT:.*]] = tile.splat %{{.*}} : f32 -> tensor<4xf32, [[SLICED:#tgpu.linear<shape = \[4\], reg = \[\[2\]\], lane = \[\[0\], \[0\], \[0\], \[0\], \[0\]\], warp = \[\[0\], \[1\]\]>]]>
// CHECK: %[[RES:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<4xf32, [[SLICED]]>)
// CHECK:   %[[SUM:.*]] = tile.reduce sum {{.*}} -> tensor<4xf32, [[SLICED]]>
// CHECK:   %[[NEW:.*]] = arith.addf %[[SUM]], %[[ACC]] : tensor<4xf32, [[SLICED]]>
// CHECK:   scf.yield %[[NEW]] : tensor<4xf32, [[SLICED]]>
// CHECK: tile.store %[[RES]], %{{.*}} : tensor<4xf32, [[SLICED]]>
// CHECK-NOT: tgpu.convert_layout
func.func @for_pins_weak_init(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c256 = arith.constant 256 : i32
  %zero = arith.constant 0.0 : f32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %init = tile.splat %zero : f32 -> tensor<4xf32>
  %res = scf.for %j = %c0 to %n step %c256 iter_args(%acc = %init) -> (tensor<4xf32>) : i32 {
    %x = tile.load %v[%c0, %j] : !tile.view<f32, 2> -> tensor<4x256xf32>
    %sum = tile.reduce sum %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
    %new = arith.addf %sum, %acc : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  }
  tile.store %res, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// The same with a tensor constant as the init: the constant's value attribute follows its new type.
// 64 x f32 on 4 warps: reg <- 1, 2; lane <- 4, 8, 16, 32, then 0; warp <- 0, 0.
// CHECK-LABEL: func.func @for_constant_init
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64xf32, [[L:#tgpu.linear<shape = \[64\], reg = \[\[1\], \[2\]\], lane = \[\[4\], \[8\], \[16\], \[32\], \[0\]\], warp = \[\[0\], \[0\]\]>]]>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[Z]]) -> (tensor<64xf32, [[L]]>)
// CHECK-NOT: tgpu.convert_layout
func.func @for_constant_init(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %acc = scf.for %i = %c0 to %n step %c64 iter_args(%a = %zero) -> (tensor<64xf32>) : i32 {
    %t = tile.load %v[%i] : !tile.view<f32, 1> -> tensor<64xf32>
    %s = arith.addf %a, %t : tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  tile.store %acc, %v[%c0] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// -----

// A strong init (a loaded 4-vector, blocked) cannot be re-created in another layout: the loop carries
// the blocked layout, the body's add follows its first strong operand (the sliced row sums) so the
// carried value is converted on the way in, and the yielded value is converted back to the carried
// layout.
// CHECK-LABEL: func.func @for_strong_init
// CHECK: %[[INIT:.*]] = tile.load {{.*}} -> tensor<4xf32, [[BLOCKED:#tgpu.linear<shape = \[4\], reg = \[\[1\], \[2\]\], lane = \[\[0\], \[0\], \[0\], \[0\], \[0\]\], warp = \[\[0\], \[0\]\]>]]>
// CHECK: %[[RES:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<4xf32, [[BLOCKED]]>)
// CHECK:   %[[SUM:.*]] = tile.reduce sum {{.*}} -> tensor<4xf32, [[SLICED:#tgpu.linear<[^>]*>]]>
// CHECK:   %[[ACCC:.*]] = tgpu.convert_layout %[[ACC]] : tensor<4xf32, [[BLOCKED]]> -> tensor<4xf32, [[SLICED]]>
// CHECK:   %[[NEW:.*]] = arith.addf %[[SUM]], %[[ACCC]] : tensor<4xf32, [[SLICED]]>
// CHECK:   %[[BACK:.*]] = tgpu.convert_layout %[[NEW]] : tensor<4xf32, [[SLICED]]> -> tensor<4xf32, [[BLOCKED]]>
// CHECK:   scf.yield %[[BACK]] : tensor<4xf32, [[BLOCKED]]>
// CHECK: tile.store %[[RES]], %{{.*}} : tensor<4xf32, [[BLOCKED]]>
func.func @for_strong_init(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c256 = arith.constant 256 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %init = tile.load %o[%c0] : !tile.view<f32, 1> -> tensor<4xf32>
  %res = scf.for %j = %c0 to %n step %c256 iter_args(%acc = %init) -> (tensor<4xf32>) : i32 {
    %x = tile.load %v[%c0, %j] : !tile.view<f32, 2> -> tensor<4x256xf32>
    %sum = tile.reduce sum %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
    %new = arith.addf %sum, %acc : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  }
  tile.store %res, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// scf.if: the results take the then-branch's layout and the else-branch's yield is converted to it
// (here a reduction of a transposed tile, sliced the other way).
// CHECK-LABEL: func.func @if_follows_then
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<4xf32, [[SLICED:#tgpu.linear<[^>]*>]]>)
// CHECK:   %[[M:.*]] = tile.reduce max {{.*}} -> tensor<4xf32, [[SLICED]]>
// CHECK:   scf.yield %[[M]] : tensor<4xf32, [[SLICED]]>
// CHECK: } else {
// CHECK:   %[[B:.*]] = tile.reduce max {{.*}} -> tensor<4xf32, [[OTHER:#tgpu.linear<[^>]*>]]>
// CHECK:   %[[C:.*]] = tgpu.convert_layout %[[B]] : tensor<4xf32, [[OTHER]]> -> tensor<4xf32, [[SLICED]]>
// CHECK:   scf.yield %[[C]] : tensor<4xf32, [[SLICED]]>
// CHECK: tile.store %[[R]]
func.func @if_follows_then(%p: !tile.ptr<f32>, %n: i32, %flag: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %cond = arith.cmpi ne, %flag, %c0 : i32
  %r = scf.if %cond -> (tensor<4xf32>) {
    %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
    %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  } else {
    %y = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<256x4xf32>
    %b = tile.reduce max %y {axis = 0 : i32} : tensor<256x4xf32> -> tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  tile.store %r, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// A tile.load of one dimension yielded by the else-branch is read in the then-branch's layout
// (tgpu-assign-layouts moves a conversion of a 1-D load or a gather back to the load).
// CHECK-LABEL: func.func @if_else_load_in_then_layout
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<4xf32, [[SLICED:#tgpu.linear<[^>]*>]]>)
// CHECK: } else {
// CHECK-NOT: tgpu.convert_layout
// CHECK:   %[[B:.*]] = tile.load {{.*}} -> tensor<4xf32, [[SLICED]]>
// CHECK-NEXT:   scf.yield %[[B]] : tensor<4xf32, [[SLICED]]>
func.func @if_else_load_in_then_layout(%p: !tile.ptr<f32>, %n: i32, %flag: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %cond = arith.cmpi ne, %flag, %c0 : i32
  %r = scf.if %cond -> (tensor<4xf32>) {
    %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x256xf32>
    %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  } else {
    %b = tile.load %o[%c0] : !tile.view<f32, 1> -> tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  tile.store %r, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// Ops whose results are unused are dropped (they would cost registers, or shared memory once lowered).
// CHECK-LABEL: func.func @drops_dead_tiles
// CHECK-NOT: tile.load
// CHECK: return
func.func @drops_dead_tiles(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%n] : !tile.view<f32, 1> -> tensor<256xf32>
  return
}

// -----

// Functions that are not tile kernels are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<6xf32>{{$}}
func.func @not_a_kernel(%a: tensor<6xf32>) -> tensor<6xf32> {
  %b = arith.addf %a, %a : tensor<6xf32>
  return %b : tensor<6xf32>
}
