// tgpu-assign-layouts for tile.gather: the gathered tile takes the layout of the laid-out tile its
// values meet (a bias added to the scores, a mask selecting among them), and its offsets, computed from
// ranges, are computed in that layout; no tgpu.convert_layout of a gathered tile or of what is computed
// from it (which would go through shared memory). With no such tile the gather keeps its offsets'
// layout.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts | FileCheck %s

// A relative-position bias: scores (a dot's accumulator, 4 warps, [64, 32]) plus table[kv - q + 64].
// CHECK-LABEL: func.func @bias
// CHECK: %[[S:.*]] = tile.dot {{.*}} -> tensor<64x32xf32, [[C:#tgpu.linear<shape = \[64, 32\], reg = \[\[0, 1\], \[8, 0\], \[0, 8\], \[0, 16\]\], lane = \[\[0, 2\], \[0, 4\], \[1, 0\], \[2, 0\], \[4, 0\]\], warp = \[\[16, 0\], \[32, 0\]\]>]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: %[[I:.*]] = arith.addi {{.*}} : tensor<64x32xi32, [[C]]>
// CHECK-NEXT: %[[G:.*]] = tile.gather %{{.*}}[%[[I]]] : !tile.ptr<f32>, tensor<64x32xi32, [[C]]> -> tensor<64x32xf32, [[C]]>
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[S]], %[[G]] : tensor<64x32xf32, [[C]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.store %[[Y]]
func.func @bias(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %table: !tile.ptr<f32>, %c: !tile.ptr<f32>, %n: i32)
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
  %q2 = tile.expand_dims %q {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %kv2 = tile.expand_dims %kv {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %qb = tile.broadcast %q2 : tensor<64x1xi32> -> tensor<64x32xi32>
  %kvb = tile.broadcast %kv2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %d = arith.subi %kvb, %qb : tensor<64x32xi32>
  %off = arith.constant dense<64> : tensor<64x32xi32>
  %i = arith.addi %d, %off : tensor<64x32xi32>
  %g = tile.gather %table[%i] : !tile.ptr<f32>, tensor<64x32xi32> -> tensor<64x32xf32>
  %y = arith.addf %s, %g : tensor<64x32xf32>
  tile.store %y, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// A block table read per element as a mask: the gathered flags meet the scores two ops later (a
// compare with a constant, then the select), and the select takes the scores' layout.
// CHECK-LABEL: func.func @table_mask
// CHECK: %[[S:.*]] = tile.dot {{.*}} -> tensor<64x32xf32, [[C:#tgpu.linear<[^>]*>]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: %[[G:.*]] = tile.gather %{{.*}}[%{{.*}}] : !tile.ptr<i32>, tensor<64x32xi32, [[C]]> -> tensor<64x32xi32, [[C]]>
// CHECK: %[[K:.*]] = arith.cmpi ne, %[[G]], %{{.*}} : tensor<64x32xi32, [[C]]>
// CHECK: %[[Y:.*]] = arith.select %[[K]], %[[S]], %{{.*}} : tensor<64x32xi1, [[C]]>, tensor<64x32xf32, [[C]]>
// CHECK-NOT: tgpu.convert_layout
// CHECK: tile.store %[[Y]]
func.func @table_mask(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %table: !tile.ptr<i32>, %c: !tile.ptr<f32>, %n: i32)
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
  %c16 = arith.constant dense<16> : tensor<64xi32>
  %c8 = arith.constant dense<8> : tensor<32xi32>
  %qblk = arith.divui %q, %c16 : tensor<64xi32>
  %kvblk = arith.divui %kv, %c8 : tensor<32xi32>
  %q2 = tile.expand_dims %qblk {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %kv2 = tile.expand_dims %kvblk {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %qb = tile.broadcast %q2 : tensor<64x1xi32> -> tensor<64x32xi32>
  %kvb = tile.broadcast %kv2 : tensor<1x32xi32> -> tensor<64x32xi32>
  %four = arith.constant dense<4> : tensor<64x32xi32>
  %row = arith.muli %qb, %four : tensor<64x32xi32>
  %i = arith.addi %row, %kvb : tensor<64x32xi32>
  %g = tile.gather %table[%i] : !tile.ptr<i32>, tensor<64x32xi32> -> tensor<64x32xi32>
  %zero = arith.constant dense<0> : tensor<64x32xi32>
  %keep = arith.cmpi ne, %g, %zero : tensor<64x32xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x32xf32>
  %y = arith.select %keep, %s, %ninf : tensor<64x32xi1>, tensor<64x32xf32>
  tile.store %y, %cv[%c0, %c0] : tensor<64x32xf32>, !tile.view<f32, 2>
  return
}

// -----

// Nothing laid out to meet: the gather keeps its offsets' layout (blocked: 4 consecutive per thread).
// CHECK-LABEL: func.func @alone
// CHECK: tile.gather %{{.*}}[%{{.*}}] : !tile.ptr<f32>, tensor<128xi32, [[B:#tgpu.linear<shape = \[128\], reg = \[\[1\], \[2\]\][^>]*>]]> -> tensor<128xf32, [[B]]>
func.func @alone(%table: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.range 0, 128 : tensor<128xi32>
  %g = tile.gather %table[%r] : !tile.ptr<f32>, tensor<128xi32> -> tensor<128xf32>
  %ov = tile.make_view %out, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  tile.store %g, %ov[%c0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}
