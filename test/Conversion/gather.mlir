// tile.gather: one element per tile element, read at its own offset (in elements) from a global
// pointer; the aux-tensor reads of generated attention kernels (ALiBi slopes, document ids, a
// relative-position bias).
//   - round trip of the custom form and of the generic form;
//   - verifier errors: offsets must be i32, the result has the offsets' shape and the pointer's
//     element type (the invalid cases print nothing and are checked by -verify-diagnostics);
//   - lowering: the result takes the offsets' layout. Offsets affine in the tile's coordinates
//     (flare/Dialect/Tile/AffineTile.h) are one per-thread base plus a constant per register: one
//     llvm.getelementptr of the base, then one load per distinct constant at that constant; a clamp
//     of affine offsets marked bounds_crossing (tile-version-gathers' else-branch) with more than 8
//     distinct elements predicates a load at each constant; any other offsets take one
//     llvm.getelementptr on the table (offset sign-extended to i64) and one plain llvm.load per
//     register.
// RUN: flare-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic | flare-opt -split-input-file | FileCheck %s
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s --check-prefix=NVVM

// 1-D gather of f32 at offsets 0..127 on one warp: the range's blocked layout (4 consecutive elements
// per thread, registers r = 0..3 at elements T + r) carries over to the gathered tile, so each thread
// takes its address once and issues 4 loads at element offsets 0..3 from it.
// CHECK-LABEL: func.func @gather_f32
// CHECK: %[[R:.*]] = tile.range 0, 128 : tensor<128xi32>
// CHECK-NEXT: %[[G:.*]] = tile.gather %{{.*}}[%[[R]]] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
// CHECK: tile.store %[[G]], %{{.*}}[%{{.*}}] : tensor<128xf32>, !tile.view<f32, 1>
// NVVM-LABEL: gpu.func @gather_f32(
// NVVM-SAME: %[[TABLE:[^:]*]]: !llvm.ptr<1>, %[[OUT:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: i32)
// NVVM-NOT: scf.if
// NVVM-NOT: llvm.inline_asm
// NVVM: %[[W:.*]] = arith.extsi %{{.*}} : i32 to i64
// NVVM-NEXT: %[[T:.*]] = llvm.getelementptr %[[TABLE]][%[[W]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM: %[[P0:.*]] = llvm.getelementptr %[[T]][%c0_i64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V0:.*]] = llvm.load %[[P0]] : !llvm.ptr<1> -> f32
// NVVM: %[[P1:.*]] = llvm.getelementptr %[[T]][%c1_i64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V1:.*]] = llvm.load %[[P1]] : !llvm.ptr<1> -> f32
// NVVM: %[[P2:.*]] = llvm.getelementptr %[[T]][%c2_i64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V2:.*]] = llvm.load %[[P2]] : !llvm.ptr<1> -> f32
// NVVM: %[[P3:.*]] = llvm.getelementptr %[[T]][%c3_i64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-NEXT: %[[V3:.*]] = llvm.load %[[P3]] : !llvm.ptr<1> -> f32
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// The gathered registers are stored as they are, in the same layout (no conversion in between).
// NVVM: llvm.store %[[V0]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM: llvm.store %[[V1]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM: llvm.store %[[V2]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM: llvm.store %[[V3]], %{{.*}} : f32, !llvm.ptr<1>
// NVVM-NOT: llvm.load
// NVVM: gpu.return
func.func @gather_f32(%table: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.range 0, 128 : tensor<128xi32>
  %g = tile.gather %table[%r] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %v = tile.make_view %out, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  tile.store %g, %v[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}

// -----

// 2-D gather of bf16 at loaded, data-dependent offsets clamped into [0, len - 1]: not affine, so 16 x
// 16 on one warp is 8 registers per thread, 8 address computations and 8 loads on the bf16 table,
// each from one clamped offset.
// CHECK-LABEL: func.func @gather_bf16_2d
// CHECK: %[[IDX:.*]] = arith.maxsi %{{.*}}, %{{.*}} : tensor<16x16xi32>
// CHECK-NEXT: %{{.*}} = tile.gather %{{.*}}[%[[IDX]]] : !tile.ptr<bf16>, tensor<16x16xi32> -> tensor<16x16xbf16>
// NVVM-LABEL: gpu.func @gather_bf16_2d(
// NVVM-SAME: %[[TABLE:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: i32)
// NVVM: %[[C0:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i32
// NVVM-COUNT-6: arith.maxsi %{{.*}}, %{{.*}} : i32
// NVVM-NEXT: %[[C7:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i32
// NVVM-NEXT: %[[W0:.*]] = arith.extsi %[[C0]] : i32 to i64
// NVVM-NEXT: %[[P0:.*]] = llvm.getelementptr %[[TABLE]][%[[W0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// NVVM-NEXT: llvm.load %[[P0]] : !llvm.ptr<1> -> bf16
// NVVM-COUNT-6: llvm.load %{{.*}} : !llvm.ptr<1> -> bf16
// NVVM: %[[W7:.*]] = arith.extsi %[[C7]] : i32 to i64
// NVVM-NEXT: %[[P7:.*]] = llvm.getelementptr %[[TABLE]][%[[W7]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// NVVM-NEXT: llvm.load %[[P7]] : !llvm.ptr<1> -> bf16
// NVVM-NOT: llvm.getelementptr %[[TABLE]]
// NVVM: gpu.return
func.func @gather_bf16_2d(%table: !tile.ptr<bf16>, %idx: !tile.ptr<i32>, %out: !tile.ptr<bf16>, %len: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %iv = tile.make_view %idx, [%c16, %c16], [%c16, %c1] : !tile.ptr<i32> -> !tile.view<i32, 2>
  %i = tile.load %iv[%c0, %c0] : !tile.view<i32, 2> -> tensor<16x16xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<16x16xi32>
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %lo = arith.minsi %i, %lastt : tensor<16x16xi32>
  %cl = arith.maxsi %lo, %zero : tensor<16x16xi32>
  %g = tile.gather %table[%cl] : !tile.ptr<bf16>, tensor<16x16xi32> -> tensor<16x16xbf16>
  %ov = tile.make_view %out, [%c16, %c16], [%c16, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  tile.store %g, %ov[%c0, %c0] : tensor<16x16xbf16>, !tile.view<bf16, 2>
  return
}

// -----

// A relative-position index kv - q + 64 over the 64 x 64 scores of a dot on 4 warps, laid out as
// mma.sync's accumulator (the layout of the scores it meets, as tgpu-assign-layouts gives it in
// attention kernels): per warp 16 rows x 64 columns, each thread rows l/4 + {0, 8} and columns
// 2(l%4) + {0, 1} + 8j. Its 32 registers hold kv - q at 18 distinct offsets from the thread's (row
// + 8 and column + 8 cancel), so 18 loads at immediate element offsets from one address; no clamp.
// NVVM-LABEL: gpu.func @toeplitz
// NVVM-NOT: arith.minsi
// NVVM: %[[T:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM-COUNT-18: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// NVVM-NOT: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// NVVM: gpu.return
func.func @toeplitz(%table: !tile.ptr<f32>, %a: !tile.ptr<bf16>, %out: !tile.ptr<f32>, %q0: i32, %kv0: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c32], [%c32, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %x = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %y = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %yt = tile.trans %y : tensor<64x32xbf16> -> tensor<32x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %s64 = tile.dot %x, %yt, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %rows = tile.range 0, 64 : tensor<64xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<64xi32>
  %q = arith.addi %rows, %q0s : tensor<64xi32>
  %cols = tile.range 0, 64 : tensor<64xi32>
  %kv0s = tile.splat %kv0 : i32 -> tensor<64xi32>
  %kv = arith.addi %cols, %kv0s : tensor<64xi32>
  %qe = tile.expand_dims %q {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %qb = tile.broadcast %qe : tensor<64x1xi32> -> tensor<64x64xi32>
  %ke = tile.expand_dims %kv {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %kb = tile.broadcast %ke : tensor<1x64xi32> -> tensor<64x64xi32>
  %d = arith.subi %kb, %qb : tensor<64x64xi32>
  %c = arith.constant dense<64> : tensor<64x64xi32>
  %i = arith.addi %d, %c : tensor<64x64xi32>
  %g = tile.gather %table[%i] : !tile.ptr<f32>, tensor<64x64xi32> -> tensor<64x64xf32>
  %r = arith.addf %s64, %g : tensor<64x64xf32>
  %ov = tile.make_view %out, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  tile.store %r, %ov[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// The same index clamped into [0, len - 1], as the attention generator clamps every aux read: each
// of the 32 registers clamps its own offset and loads from its own address. Marked bounds_crossing
// (as in tile-version-gathers' else-branch; the second gather), each of the 18 distinct elements is a
// load predicated on base + k lying in [0, len - 1], at its immediate offset from the thread's
// address (one address register for all 18), with the element at 0 or at len - 1 in its place
// otherwise; those two are read once, each only if some offset of the tile reaches its side.
// CHECK-LABEL: func.func @toeplitz_clamped
// CHECK: tile.gather %{{.*}}[%{{.*}}] : !tile.ptr<f32>
// CHECK: tile.gather %{{.*}}[%{{.*}}] bounds_crossing : !tile.ptr<f32>
// NVVM-LABEL: gpu.func @toeplitz_clamped
// NVVM-NOT: llvm.inline_asm {{.*}}ld.global.b32
// NVVM-COUNT-32: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// NVVM-NOT: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// NVVM-COUNT-2: llvm.inline_asm has_side_effects {{.*}}@p ld.global.b32
// NVVM: %[[T:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// NVVM: llvm.inline_asm has_side_effects {{.*}}@p ld.global.b32 $0, [$1{{(\+-?[0-9]+)?}}];{{.*}} %[[T]],
// NVVM-COUNT-17: llvm.inline_asm has_side_effects {{.*}}@p ld.global.b32 $0, [$1{{\+-?[0-9]+}}];{{.*}} %[[T]],
// NVVM-NOT: llvm.inline_asm has_side_effects {{.*}}@p ld.global.b32
// NVVM-NOT: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// NVVM: gpu.return
func.func @toeplitz_clamped(%table: !tile.ptr<f32>, %a: !tile.ptr<bf16>, %out: !tile.ptr<f32>, %q0: i32, %kv0: i32,
                            %len: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %av = tile.make_view %a, [%c64, %c32], [%c32, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %x = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %y = tile.load %av[%c0, %c0] : !tile.view<bf16, 2> -> tensor<64x32xbf16>
  %yt = tile.trans %y : tensor<64x32xbf16> -> tensor<32x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %s64 = tile.dot %x, %yt, %zero : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %rows = tile.range 0, 64 : tensor<64xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<64xi32>
  %q = arith.addi %rows, %q0s : tensor<64xi32>
  %cols = tile.range 0, 64 : tensor<64xi32>
  %kv0s = tile.splat %kv0 : i32 -> tensor<64xi32>
  %kv = arith.addi %cols, %kv0s : tensor<64xi32>
  %qe = tile.expand_dims %q {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %qb = tile.broadcast %qe : tensor<64x1xi32> -> tensor<64x64xi32>
  %ke = tile.expand_dims %kv {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %kb = tile.broadcast %ke : tensor<1x64xi32> -> tensor<64x64xi32>
  %d = arith.subi %kb, %qb : tensor<64x64xi32>
  %c = arith.constant dense<64> : tensor<64x64xi32>
  %i = arith.addi %d, %c : tensor<64x64xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<64x64xi32>
  %zeros = arith.constant dense<0> : tensor<64x64xi32>
  %lo = arith.minsi %i, %lastt : tensor<64x64xi32>
  %cl = arith.maxsi %lo, %zeros : tensor<64x64xi32>
  %g = tile.gather %table[%cl] : !tile.ptr<f32>, tensor<64x64xi32> -> tensor<64x64xf32>
  %r = arith.addf %s64, %g : tensor<64x64xf32>
  %g2 = tile.gather %table[%cl] bounds_crossing : !tile.ptr<f32>, tensor<64x64xi32> -> tensor<64x64xf32>
  %r2 = arith.addf %r, %g2 : tensor<64x64xf32>
  %ov = tile.make_view %out, [%c64, %c64], [%c64, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  tile.store %r2, %ov[%c0, %c0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// -----

// A row's id: q0 + i over 128 rows on one warp (blocked, 4 consecutive rows per thread), clamped:
// 4 distinct elements, each clamped and read from its own address, one per register.
// NVVM-LABEL: gpu.func @row_ids_clamped
// NVVM-NOT: llvm.inline_asm
// NVVM-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// NVVM-NOT: llvm.load
// NVVM: gpu.return
func.func @row_ids_clamped(%ids: !tile.ptr<i32>, %out: !tile.ptr<i32>, %q0: i32, %len: i32)
    attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %rows = tile.range 0, 128 : tensor<128xi32>
  %q0s = tile.splat %q0 : i32 -> tensor<128xi32>
  %q = arith.addi %rows, %q0s : tensor<128xi32>
  %last = arith.subi %len, %c1 : i32
  %lastt = tile.splat %last : i32 -> tensor<128xi32>
  %zeros = arith.constant dense<0> : tensor<128xi32>
  %lo = arith.minsi %q, %lastt : tensor<128xi32>
  %cl = arith.maxsi %lo, %zeros : tensor<128xi32>
  %g = tile.gather %ids[%cl] : !tile.ptr<i32>, tensor<128xi32> -> tensor<128xi32>
  %v = tile.make_view %out, [%len], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  tile.store %g, %v[%c0] : tensor<128xi32>, !tile.view<i32, 1>
  return
}

// -----

// Offsets are i32 element counts: i64 offsets are rejected.
func.func @offsets_i64(%t: !tile.ptr<f32>, %i: tensor<64xi64>) {
  // expected-error @+1 {{'tile.gather' op offsets must be i32, got 'i64'}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi64> -> tensor<64xf32>
  return
}

// -----

// ...and so are 16-bit ones.
func.func @offsets_i16(%t: !tile.ptr<i32>, %i: tensor<8x8xi16>) {
  // expected-error @+1 {{'tile.gather' op offsets must be i32, got 'i16'}}
  %g = tile.gather %t[%i] : !tile.ptr<i32>, tensor<8x8xi16> -> tensor<8x8xi32>
  return
}

// -----

// One element per offset: 64 offsets cannot give 128 elements.
func.func @shape_size(%t: !tile.ptr<f32>, %i: tensor<64xi32>) {
  // expected-error @+1 {{'tile.gather' op result must have the offsets' shape}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi32> -> tensor<128xf32>
  return
}

// -----

// ...nor a tile of another rank with as many elements.
func.func @shape_rank(%t: !tile.ptr<f32>, %i: tensor<64xi32>) {
  // expected-error @+1 {{'tile.gather' op result must have the offsets' shape}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi32> -> tensor<8x8xf32>
  return
}

// -----

// The elements are read as the pointer's element type: no conversion on the way.
func.func @element_type(%t: !tile.ptr<f32>, %i: tensor<64xi32>) {
  // expected-error @+1 {{'tile.gather' op result elements must be the pointer's element type}}
  %g = tile.gather %t[%i] : !tile.ptr<f32>, tensor<64xi32> -> tensor<64xf16>
  return
}
