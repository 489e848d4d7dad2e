// tgpu-assign-layouts moves a conversion back to where its values are read: a tile.load of one
// dimension (a per-row statistic such as the dQ kernel's LSE and D) or a tile.gather whose every use
// reaches a tgpu.convert_layout to one layout, through elementwise ops with splat or constant
// partners and tile.expand_dims, is read in that layout instead, where it is read less often than it
// would be converted (outside the loop whose every step converts it). A root read in the loop body
// that converts it, or with a use that takes it as it is, keeps its layout and the conversion.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts | FileCheck %s

// The dQ kernel's step in miniature: scores (a dot's accumulator, [64, 32] on 4 warps) minus a
// column statistic read once before the loop, scaled, expanded and broadcast along the rows in every
// step. The statistic is loaded in the broadcast's source layout (each thread the columns it holds in
// the accumulator); nothing but the dot's bf16 operands is converted.
// CHECK-LABEL: func.func @invariant_statistic
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xf32
// CHECK: %[[L:.*]] = tile.load {{.*}} -> tensor<32xf32, #tgpu.linear<shape = [32], reg = {{\[\[1\], \[8\], \[16\]\]}}, lane = {{\[\[2\], \[4\], \[0\], \[0\], \[0\]\]}}, warp = {{\[\[0\], \[0\]\]}}>>
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xf32
// CHECK: %[[M:.*]] = arith.mulf %[[L]]
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xf32
// CHECK: scf.for
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xf32
// CHECK: tile.expand_dims %[[M]]
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xf32
// CHECK: scf.yield
func.func @invariant_statistic(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %stat: !tile.ptr<f32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %stat, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %l = tile.load %sv[%c0] : !tile.view<f32, 1> -> tensor<32xf32>
  %log2e = arith.constant dense<1.44269502> : tensor<32xf32>
  %m = arith.mulf %l, %log2e : tensor<32xf32>
  %acc = scf.for %j = %c0 to %n step %c32 iter_args(%sum = %z) -> (tensor<64x32xf32>) : i32 {
    %bt = tile.load %bv[%c0, %j] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
    %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
    %m2 = tile.expand_dims %m {axis = 0 : i32} : tensor<32xf32> -> tensor<1x32xf32>
    %mb = tile.broadcast %m2 : tensor<1x32xf32> -> tensor<64x32xf32>
    %d = arith.subf %s, %mb : tensor<64x32xf32>
    %p = math.exp2 %d : tensor<64x32xf32>
    %next = arith.addf %sum, %p : tensor<64x32xf32>
    scf.yield %next : tensor<64x32xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// The same statistic read on every step, in the loop that converts it (the backward's dK/dV step):
// it keeps its own layout and is converted. Read in the replicated layout instead, each thread would
// issue eight loads a step where it issues one (NOTES b9).
// CHECK-LABEL: func.func @statistic_per_step
// CHECK: scf.for
// CHECK: %[[L:.*]] = tile.load {{.*}} -> tensor<32xf32, #tgpu.linear<shape = [32], reg = {{\[\[1\], \[2\]\]}}, lane = {{\[\[4\]}}
// CHECK: tgpu.convert_layout {{.*}} : tensor<1x32xf32
func.func @statistic_per_step(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %stat: !tile.ptr<f32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %stat, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %acc = scf.for %j = %c0 to %n step %c32 iter_args(%sum = %z) -> (tensor<64x32xf32>) : i32 {
    %bt = tile.load %bv[%c0, %j] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
    %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
    %l = tile.load %sv[%j] : !tile.view<f32, 1> -> tensor<32xf32>
    %l2 = tile.expand_dims %l {axis = 0 : i32} : tensor<32xf32> -> tensor<1x32xf32>
    %lb = tile.broadcast %l2 : tensor<1x32xf32> -> tensor<64x32xf32>
    %d = arith.subf %s, %lb : tensor<64x32xf32>
    %next = arith.addf %sum, %d : tensor<64x32xf32>
    scf.yield %next : tensor<64x32xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// Document ids gathered per key, compared with the rows' ids: both gathers are read in the layouts
// their broadcasts take from the mask they meet (the scores' rows and columns); no id is converted.
// CHECK-LABEL: func.func @document_ids
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: tile.gather {{.*}} -> tensor<64xi32, #tgpu.linear<shape = [64], reg = {{\[\[8\]\]}}, lane = {{\[\[0\], \[0\], \[1\], \[2\], \[4\]\]}}, warp = {{\[\[16\], \[32\]\]}}>>
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: tile.gather {{.*}} -> tensor<32xi32, #tgpu.linear<shape = [32], reg = {{\[\[1\], \[8\], \[16\]\]}}, lane = {{\[\[2\], \[4\], \[0\], \[0\], \[0\]\]}}, warp = {{\[\[0\], \[0\]\]}}>>
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: tile.store
func.func @document_ids(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %doc: !tile.ptr<i32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  %q = tile.range 0, 64 : tensor<64xi32>
  %kv = tile.range 0, 32 : tensor<32xi32>
  %qid = tile.gather %doc[%q] : !tile.ptr<i32>, tensor<64xi32> -> tensor<64xi32>
  %kid = tile.gather %doc[%kv] : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
  %qid2 = tile.expand_dims %qid {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %kid2 = tile.expand_dims %kid {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %qb = tile.broadcast %qid2 : tensor<64x1xi32> -> tensor<64x32xi32>
  %kb = tile.broadcast %kid2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %same = arith.cmpi eq, %qb, %kb : tensor<64x32xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x32xf32>
  %y = arith.select %same, %s, %ninf : tensor<64x32xi1>, tensor<64x32xf32>
  tile.store %y, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// The statistic is also stored as it is: that use takes the load's own layout, so the load keeps it
// and the broadcast's operand is converted.
// CHECK-LABEL: func.func @statistic_also_stored
// CHECK: tile.load {{.*}} -> tensor<32xf32, #tgpu.linear<shape = [32], reg = {{\[\[1\], \[2\]\]}}, lane = {{\[\[4\]}}
// CHECK: tgpu.convert_layout {{.*}} : tensor<1x32xf32
func.func @statistic_also_stored(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %stat: !tile.ptr<f32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %stat, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %bt = tile.load %bv[%c0, %c0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  %l = tile.load %sv[%c0] : !tile.view<f32, 1> -> tensor<32xf32>
  tile.store %l, %sv[%n] : tensor<32xf32>, !tile.view<f32, 1>
  %l2 = tile.expand_dims %l {axis = 0 : i32} : tensor<32xf32> -> tensor<1x32xf32>
  %lb = tile.broadcast %l2 : tensor<1x32xf32> -> tensor<64x32xf32>
  %d = arith.subf %s, %lb : tensor<64x32xf32>
  tile.store %d, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// A document mask's key ids gathered on every step, versioned by tile-version-gathers (unclamped
// offsets in range, the clamp and a bounds_crossing gather otherwise): both gathers are read at one
// address per thread, so they move into the layout the scores' columns take, through the scf.if's
// yields, although the loop converts on every step; the step converts no id (a conversion's
// barriers would join the warpgroups on every step).
// CHECK-LABEL: func.func @versioned_key_ids
// CHECK: scf.for
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: scf.if
// CHECK-NEXT: tile.gather {{.*}} -> tensor<32xi32, #tgpu.linear<shape = [32], reg = {{\[\[1\], \[8\], \[16\]\]}}, lane = {{\[\[2\], \[4\], \[0\], \[0\], \[0\]\]}}, warp = {{\[\[0\], \[0\]\]}}>>
// CHECK: } else {
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: tile.gather {{.*}} bounds_crossing {{.*}} -> tensor<32xi32, #tgpu.linear<shape = [32], reg = {{\[\[1\], \[8\], \[16\]\]}}, lane = {{\[\[2\], \[4\], \[0\], \[0\], \[0\]\]}}, warp = {{\[\[0\], \[0\]\]}}>>
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: scf.yield
// CHECK-NOT: tgpu.convert_layout {{.*}} : tensor<{{[0-9x]+}}xi32
// CHECK: tile.store
func.func @versioned_key_ids(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %doc: !tile.ptr<i32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %av = tile.make_view %a, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%n, %n], [%n, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %at = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x16xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x32xf32>
  %q = tile.range 0, 64 : tensor<64xi32>
  %qid = tile.gather %doc[%q] : !tile.ptr<i32>, tensor<64xi32> -> tensor<64xi32>
  %qid2 = tile.expand_dims %qid {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %qb = tile.broadcast %qid2 : tensor<64x1xi32> -> tensor<64x32xi32>
  %cols = tile.range 0, 32 : tensor<32xi32>
  %last = arith.subi %n, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<32xi32>
  %zeros = arith.constant dense<0> : tensor<32xi32>
  %steps = arith.divsi %n, %c32 : i32
  %acc = scf.for %j = %c0 to %steps step %c1 iter_args(%sum = %z) -> (tensor<64x32xf32>) : i32 {
    %kv0 = arith.muli %j, %c32 : i32
    %kv0s = tile.splat %kv0 : i32 -> tensor<32xi32>
    %kv = arith.addi %cols, %kv0s : tensor<32xi32>
    %inside = arith.cmpi sle, %kv0, %last : i32
    %kid = scf.if %inside -> (tensor<32xi32>) {
      %g = tile.gather %doc[%kv] : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
      scf.yield %g : tensor<32xi32>
    } else {
      %lo = arith.minsi %kv, %lastt : tensor<32xi32>
      %cl = arith.maxsi %lo, %zeros : tensor<32xi32>
      %g2 = tile.gather %doc[%cl] bounds_crossing : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
      scf.yield %g2 : tensor<32xi32>
    }
    %bt = tile.load %bv[%c0, %kv0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
    %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
    %kid2 = tile.expand_dims %kid {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %kb = tile.broadcast %kid2 : tensor<1x32xi32> -> tensor<64x32xi32>
    %same = arith.cmpi eq, %qb, %kb : tensor<64x32xi32>
    %y = arith.select %same, %s, %ninf : tensor<64x32xi1>, tensor<64x32xf32>
    %next = arith.addf %sum, %y : tensor<64x32xf32>
    scf.yield %next : tensor<64x32xf32>
  }
  tile.store %acc, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}
