// Head dims between powers of two, and a V head dim of its own (multi-head latent attention): the
// generated kernel's tiles are the next power of two wide (tiles are powers of two), its views keep
// the tensors' widths, so the loads fill the padding with zeros and the stores skip it; Q K^T
// promises its K past the head dim zero (tile.dot k_extent), P V the columns past V's head dim
// (n_extent), and the lowering issues no MMAs over them (test/Conversion/dot-extents.mlir). The
// configuration is chosen by the padded wider head dim (128 here, 256 for 192 / 128).
// RUN: flare-opt %s -split-input-file --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func @hd96
// CHECK-SAME: block_m = 128, block_n = 128, warps = 8
// CHECK-DAG: %[[D:.*]] = arith.constant 96 : i32
// Q, K, V and O: views 96 wide.
// CHECK-COUNT-4: tile.make_view %{{.*}}, [%{{.*}}, %[[D]]], [%{{.*}}, %{{.*}}] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
// CHECK: tile.load {{.*}} -> tensor<128x128xbf16>
// CHECK: tile.dot {{.*}} {k_extent = 96 : i64} : tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xf32>
// CHECK: tile.dot {{.*}} {n_extent = 96 : i64} : tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xf32>
// CHECK: tile.store {{.*}} : tensor<128x128xbf16>, !tile.view<bf16, 2>
func.func @hd96(%q: tensor<?x?x?x96xbf16>, %k: tensor<?x?x?x96xbf16>, %v: tensor<?x?x?x96xbf16>) -> tensor<?x?x?x96xbf16> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x96xbf16>, tensor<?x?x?x96xbf16>, tensor<?x?x?x96xbf16> -> tensor<?x?x?x96xbf16>
  return %o : tensor<?x?x?x96xbf16>
}

// -----

// Q.K over 192 (tiles of 256, k_extent 192), V and O 128 wide (no padding: no n_extent); the
// accumulator is 128 wide; configured as head dim 256 (64 keys per step).
// CHECK-LABEL: func.func @mla
// CHECK-SAME: block_n = 64
// CHECK-DAG: %[[DQK:.*]] = arith.constant 192 : i32
// CHECK-DAG: %[[DV:.*]] = arith.constant 128 : i32
// CHECK: tile.make_view %{{.*}}, [%{{.*}}, %[[DQK]]]
// CHECK: tile.make_view %{{.*}}, [%{{.*}}, %[[DQK]]]
// CHECK: tile.make_view %{{.*}}, [%{{.*}}, %[[DV]]]
// CHECK: tile.make_view %{{.*}}, [%{{.*}}, %[[DV]]]
// CHECK: tile.load {{.*}} -> tensor<128x256xbf16>
// CHECK: tile.dot {{.*}} {k_extent = 192 : i64} : tensor<128x256xbf16>, tensor<256x64xbf16>, tensor<128x64xf32>
// CHECK-NOT: n_extent
// CHECK: tile.dot {{.*}} : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
func.func @mla(%q: tensor<?x?x?x192xbf16>, %k: tensor<?x?x?x192xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x?x?x192xbf16>, tensor<?x?x?x192xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
