// convert-attn-to-tile grad=true with V's head dim apart from Q's and K's (multi-head latent
// attention: D = 192 for Q.K, Dv = 128 for V): every tile is as wide as the wider head dim's tiles
// (256), the views of Q, K, dQ (and its f32 sums) and dK are 192 wide, those of V, O, dO and dV 128
// wide, so loads fill the columns past each with zeros and stores skip them.
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config --convert-attn-to-tile="grad=true arch=sm_80" | FileCheck %s
// RUN: flarec --grad %s -o %t.ptx --meta-o=%t.json && FileCheck %s --check-prefix=META < %t.json

// The preprocess: D = rowsum(dO * O) over O's and dO's 128 columns, in 256-wide tiles.
// CHECK-LABEL: func.func @mla_bwd_preprocess(
// CHECK-DAG: %[[D:[0-9a-z_]+]] = arith.constant 192 : i32
// CHECK-DAG: %[[DV:[0-9a-z_]+]] = arith.constant 128 : i32
// CHECK: %[[O:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%{{.*}}, %[[DV]]]
// CHECK: tile.load %[[O]][%{{.*}}] : !tile.view<bf16, 2> -> tensor<16x256xbf16>
// CHECK: %[[DO:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%{{.*}}, %[[DV]]]
// CHECK: tile.load %[[DO]][%{{.*}}] : !tile.view<bf16, 2> -> tensor<16x256xbf16>
// dQ's f32 sums: [B, Hq, Sq, 192].
// CHECK: tile.make_view %{{.*}}, [%{{.*}}, %[[D]]], [%[[D]], %{{.*}}] : !tile.ptr<f32> -> !tile.view<f32, 2>

// dQ in the input dtype, 192 wide.
// CHECK-LABEL: func.func @mla_bwd_dq(
// CHECK-DAG: %[[D2:[0-9a-z_]+]] = arith.constant 192 : i32
// CHECK: %[[DQ:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%{{.*}}, %[[D2]]], [%{{.*}}, %{{.*}}] : !tile.ptr<bf16>
// CHECK: tile.store %{{.*}}, %[[DQ]][%{{.*}}] : tensor<16x256xbf16>, !tile.view<bf16, 2>

// The main kernel: K 192 wide and V 128 wide in 256-wide tiles; dK stored 192 wide, dV 128 wide.
// CHECK-LABEL: func.func @mla_bwd(
// CHECK-DAG: %[[D3:[0-9a-z_]+]] = arith.constant 192 : i32
// CHECK-DAG: %[[DV3:[0-9a-z_]+]] = arith.constant 128 : i32
// CHECK: %[[K:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%{{.*}}, %[[D3]]]
// CHECK: %[[V:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%{{.*}}, %[[DV3]]]
// CHECK: tile.load %[[K]][%{{.*}}] : !tile.view<bf16, 2> -> tensor<32x256xbf16>
// CHECK: tile.load %[[V]][%{{.*}}] : !tile.view<bf16, 2> -> tensor<32x256xbf16>
// Past the loops over query rows (seq_q, %arg13), the key rows' views (seq_kv, %arg14):
// CHECK: %[[DK:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%arg14, %[[D3]]]
// CHECK: tile.store %{{.*}}, %[[DK]][%{{.*}}] : tensor<32x256xbf16>, !tile.view<bf16, 2>
// CHECK: %[[DVV:[0-9a-z_]+]] = tile.make_view %{{.*}}, [%arg14, %[[DV3]]]
// CHECK: tile.store %{{.*}}, %[[DVV]][%{{.*}}] : tensor<32x256xbf16>, !tile.view<bf16, 2>

// On sm_90a: the preprocess, dK's and dV's kernels of their own (tiles of 256), and dQ's.
// META-COUNT-4: "sharedBytes"
func.func @mla(%q: tensor<?x?x?x192xbf16>, %k: tensor<?x?x?x192xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<?x?x?x192xbf16>, tensor<?x?x?x192xbf16>, tensor<?x?x?x128xbf16> -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
