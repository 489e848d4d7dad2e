// tile-version-gathers: in a kernel whose consumer warpgroups take turns (#tile.schedule's ping_pong,
// true by default), a gather of clamp(x) with x affine in the tile's coordinates and uniform bounds,
// whose one use is an elementwise op in the same block (or, on every step of a loop, that has no
// such use), becomes an scf.if on whether the tile's smallest and largest x (from uniform scalars,
// in i64) lie inside the bounds; the then-branch gathers x itself, the else-branch keeps the clamp
// (moved in) and the gather, marked bounds_crossing. Both branches apply the use; a gather versioned
// alone moves to the top of its step. Gathers of other offsets, with other uses, or with a write
// between them and their use, and kernels without ping_pong are left alone.
// RUN: flare-opt %s -split-input-file --tile-version-gathers | FileCheck %s

// kv - q + 64 over 64 x 32 (q = q0 + row, kv = kv0 + column), clamped into [0, len - 1]: x ranges
// over kv0 - q0 + 64 + [-63, 31].
// CHECK-LABEL: func.func @toeplitz
// CHECK-SAME: (%[[T:[^:]*]]: !tile.ptr<f32>, %{{[^:]*}}: !tile.ptr<f32>, %[[Q0:[^:]*]]: i32, %[[KV0:[^:]*]]: i32, %[[LEN:[^:]*]]: i32)
// CHECK: %[[S:.*]] = tile.load
// CHECK: %[[X:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64x32xi32>
// CHECK: %[[LAST:.*]] = arith.subi %[[LEN]], %{{.*}} : i32
// CHECK: %[[C64:.*]] = arith.constant 64 : i64
// CHECK-NEXT: %[[KVW:.*]] = arith.extsi %[[KV0]] : i32 to i64
// CHECK-NEXT: %[[U1:.*]] = arith.addi %[[C64]], %[[KVW]] : i64
// CHECK-NEXT: %[[QW:.*]] = arith.extsi %[[Q0]] : i32 to i64
// CHECK: %[[NQ:.*]] = arith.muli %[[QW]], %c-1_i64 : i64
// CHECK-NEXT: %[[U:.*]] = arith.addi %[[U1]], %[[NQ]] : i64
// CHECK: %[[LOWEST:.*]] = arith.addi %[[U]], %c-63_i64 : i64
// CHECK: %[[HIGHEST:.*]] = arith.addi %[[U]], %c31_i64 : i64
// CHECK: %[[ABOVE:.*]] = arith.cmpi sge, %[[LOWEST]], %c0_i64 : i64
// CHECK-NEXT: %[[LASTW:.*]] = arith.extsi %[[LAST]] : i32 to i64
// CHECK-NEXT: %[[BELOW:.*]] = arith.cmpi sle, %[[HIGHEST]], %[[LASTW]] : i64
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[ABOVE]], %[[BELOW]] : i1
// CHECK-NEXT: %[[R:.*]] = scf.if %[[IN]] -> (tensor<64x32xf32>) {
// CHECK-NEXT:   %[[G:.*]] = tile.gather %[[T]][%[[X]]] : !tile.ptr<f32>, tensor<64x32xi32> -> tensor<64x32xf32>
// CHECK-NEXT:   %[[A:.*]] = arith.addf %[[S]], %[[G]] : tensor<64x32xf32>
// CHECK-NEXT:   scf.yield %[[A]] : tensor<64x32xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[MIN:.*]] = arith.minsi %[[X]], %{{.*}} : tensor<64x32xi32>
// CHECK-NEXT:   %[[MAX:.*]] = arith.maxsi %[[MIN]], %{{.*}} : tensor<64x32xi32>
// CHECK-NEXT:   %[[G2:.*]] = tile.gather %[[T]][%[[MAX]]] bounds_crossing : !tile.ptr<f32>, tensor<64x32xi32> -> tensor<64x32xf32>
// CHECK-NEXT:   %[[A2:.*]] = arith.addf %[[S]], %[[G2]] : tensor<64x32xf32>
// CHECK-NEXT:   scf.yield %[[A2]] : tensor<64x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: tile.store %[[R]]
func.func @toeplitz(%table: !tile.ptr<f32>, %out: !tile.ptr<f32>, %q0: i32, %kv0: i32, %len: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %ov = tile.make_view %out, [%c64, %c32], [%c32, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %s = tile.load %ov[%c0, %c0] : !tile.view<f32, 2> -> tensor<64x32xf32>
  %rows = tile.range 0, 64 : tensor<64xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<64xi32>
  %q = arith.addi %rows, %q0s : tensor<64xi32>
  %cols = tile.range 0, 32 : tensor<32xi32>
  %kv0s = tile.splat %kv0 : i32 -> tensor<32xi32>
  %kv = arith.addi %cols, %kv0s : tensor<32xi32>
  %qe = tile.expand_dims %q {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %qb = tile.broadcast %qe : tensor<64x1xi32> -> tensor<64x32xi32>
  %ke = tile.expand_dims %kv {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %kb = tile.broadcast %ke : tensor<1x32xi32> -> tensor<64x32xi32>
  %d = arith.subi %kb, %qb : tensor<64x32xi32>
  %c = arith.constant dense<64> : tensor<64x32xi32>
  %x = arith.addi %d, %c : tensor<64x32xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<64x32xi32>
  %zeros = arith.constant dense<0> : tensor<64x32xi32>
  %lo = arith.minsi %x, %lastt : tensor<64x32xi32>
  %cl = arith.maxsi %lo, %zeros : tensor<64x32xi32>
  %g = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<64x32xi32> -> tensor<64x32xf32>
  %r = arith.addf %s, %g : tensor<64x32xf32>
  tile.store %r, %ov[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// The other order of the clamp, min(max(x, 0), len - 1), and x = 4 * (q0 + row) + 1 (a scaled,
// shifted row index, 1-D): x ranges over 4 q0 + 1 + [0, 508]; the use is a multiplication.
// CHECK-LABEL: func.func @scaled_rows
// CHECK: %[[HIGHEST:.*]] = arith.addi %{{.*}}, %c508_i64 : i64
// CHECK: scf.if
// CHECK: tile.gather %{{.*}}[%{{.*}}] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
// CHECK-NEXT: arith.mulf
// CHECK: } else {
// CHECK-NEXT: arith.maxsi
// CHECK-NEXT: arith.minsi
func.func @scaled_rows(%table: !tile.ptr<f32>, %out: !tile.ptr<f32>, %q0: i32, %len: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %out, [%len], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %s = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<128xf32>
  %rows = tile.range 0, 128 : tensor<128xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<128xi32>
  %q = arith.addi %rows, %q0s : tensor<128xi32>
  %four = arith.constant dense<2> : tensor<128xi32>
  %q4 = arith.shli %q, %four : tensor<128xi32>
  %one = arith.constant dense<1> : tensor<128xi32>
  %x = arith.addi %q4, %one : tensor<128xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<128xi32>
  %zeros = arith.constant dense<0> : tensor<128xi32>
  %hi = arith.maxsi %zeros, %x : tensor<128xi32>
  %cl = arith.minsi %hi, %lastt : tensor<128xi32>
  %g = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %r = arith.mulf %g, %s : tensor<128xf32>
  tile.store %r, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// Left alone: offsets that are not affine (loaded), a gather with two uses, a use that is not
// elementwise, and a store between the gather and its use.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.if
// CHECK: return
// CHECK-NOT: scf.if
func.func @left_alone(%table: !tile.ptr<f32>, %ids: !tile.ptr<i32>, %out: !tile.ptr<f32>, %q0: i32, %len: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %iv = tile.make_view %ids, [%len], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  %idx = tile.load %iv[%c0] : !tile.view<i32, 1> -> tensor<128xi32>
  %v = tile.make_view %out, [%len], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %s = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<128xf32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<128xi32>
  %zeros = arith.constant dense<0> : tensor<128xi32>
  %lo0 = arith.minsi %idx, %lastt : tensor<128xi32>
  %cl0 = arith.maxsi %lo0, %zeros : tensor<128xi32>
  %g0 = tile.gather %table[%cl0] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %r0 = arith.addf %g0, %s : tensor<128xf32>
  %rows = tile.range 0, 128 : tensor<128xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<128xi32>
  %q = arith.addi %rows, %q0s : tensor<128xi32>
  %lo = arith.minsi %q, %lastt : tensor<128xi32>
  %cl = arith.maxsi %lo, %zeros : tensor<128xi32>
  %g1 = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %r1 = arith.addf %g1, %g1 : tensor<128xf32>
  %g2 = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  tile.store %g2, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  %g3 = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  tile.store %s, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  %r3 = arith.addf %g3, %r1 : tensor<128xf32>
  tile.store %r0, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  tile.store %r3, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// Without ping_pong (head dims 192 and 256 in the attention kernels) the step keeps its clamp.
// CHECK-LABEL: func.func @no_ping_pong
// CHECK-NOT: scf.if
// CHECK: tile.gather
// CHECK-NOT: bounds_crossing
// CHECK: return
func.func @no_ping_pong(%table: !tile.ptr<f32>, %out: !tile.ptr<f32>, %q0: i32, %len: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.schedule = #tile.schedule<ping_pong = false>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %out, [%len], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %s = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<128xf32>
  %rows = tile.range 0, 128 : tensor<128xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<128xi32>
  %q = arith.addi %rows, %q0s : tensor<128xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<128xi32>
  %zeros = arith.constant dense<0> : tensor<128xi32>
  %lo = arith.minsi %q, %lastt : tensor<128xi32>
  %cl = arith.maxsi %lo, %zeros : tensor<128xi32>
  %g = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %r = arith.addf %g, %s : tensor<128xf32>
  tile.store %r, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// A document mask's key ids, gathered on every step of a loop at clamp(kv0 + column) and met with the
// rows' ids through a broadcast (not an elementwise use), in a kernel with a producer warpgroup (the
// block lists' kernels at head dims 64 and 128): the gather is versioned alone, its branches
// yielding the ids, and the scf.if moves to the top of the step, right after the step's key offset
// and before the step's load and product, with the range check and the unclamped offsets it reads.
// CHECK-LABEL: func.func @key_ids_per_step
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK: arith.muli %[[J]], %{{.*}} : i32
// CHECK-NOT: tile.load
// CHECK: %[[X:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<32xi32>
// CHECK-NEXT: %[[IDS:.*]] = scf.if %{{.*}} -> (tensor<32xi32>) {
// CHECK-NEXT:   %[[G:.*]] = tile.gather %{{.*}}[%[[X]]] : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
// CHECK-NEXT:   scf.yield %[[G]] : tensor<32xi32>
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[MIN:.*]] = arith.minsi %[[X]], %{{.*}} : tensor<32xi32>
// CHECK-NEXT:   %[[MAX:.*]] = arith.maxsi %[[MIN]], %{{.*}} : tensor<32xi32>
// CHECK-NEXT:   %[[G2:.*]] = tile.gather %{{.*}}[%[[MAX]]] bounds_crossing : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
// CHECK-NEXT:   scf.yield %[[G2]] : tensor<32xi32>
// CHECK-NEXT: }
// CHECK-NEXT: tile.load
// CHECK-NEXT: tile.dot
// CHECK: tile.expand_dims %[[IDS]] {axis = 0 : i32}
func.func @key_ids_per_step(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %doc: !tile.ptr<i32>, %c: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32,
                tile.schedule = #tile.schedule<producer_warpgroup = true>} {
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
    %bt = tile.load %bv[%c0, %kv0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
    %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
    %kv0s = tile.splat %kv0 : i32 -> tensor<32xi32>
    %kv = arith.addi %cols, %kv0s : tensor<32xi32>
    %lo = arith.minsi %kv, %lastt : tensor<32xi32>
    %cl = arith.maxsi %lo, %zeros : tensor<32xi32>
    %kid = tile.gather %doc[%cl] : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
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

// -----

// The same step in a kernel without a producer warpgroup (the kernel that evaluates a document mask
// on every step, measured slower with the branch): left alone.
// CHECK-LABEL: func.func @key_ids_no_producer
// CHECK-NOT: scf.if
// CHECK-NOT: bounds_crossing
// CHECK: return
func.func @key_ids_no_producer(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %doc: !tile.ptr<i32>, %c: !tile.ptr<f32>, %n: i32)
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
    %bt = tile.load %bv[%c0, %kv0] : !tile.view<bf16, 2> -> tensor<16x32xbf16>
    %s = tile.dot %at, %bt, %z : tensor<64x16xbf16>, tensor<16x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
    %kv0s = tile.splat %kv0 : i32 -> tensor<32xi32>
    %kv = arith.addi %cols, %kv0s : tensor<32xi32>
    %lo = arith.minsi %kv, %lastt : tensor<32xi32>
    %cl = arith.maxsi %lo, %zeros : tensor<32xi32>
    %kid = tile.gather %doc[%cl] : !tile.ptr<i32>, tensor<32xi32> -> tensor<32xi32>
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
