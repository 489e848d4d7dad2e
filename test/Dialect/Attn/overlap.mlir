// attn-overlap: the canonical step (S = Q K^T on the K block at key offset kv0 = block * block_n,
// the online softmax, acc' = P V + acc * alpha on the V block of the same rows) software-pipelined
// by one stage in kernels whose configuration has `overlap`: step j issues block j - 1's P V right
// behind its S product, on the P the loop now carries (zeros before the first step) and the V rows
// recomputed from the key offset one iteration earlier (the first iteration: the block the loop
// before left pending, or far away). The last block's P V runs after the loops on a V block loaded
// before them (`last_pv_after_loops`), or in one more step of the last loop whose K block lies far
// away and whose softmax keeps m and l and does not rescale.
// RUN: flare-opt %s -split-input-file --attn-overlap | FileCheck %s
// A loop it overlapped already is left alone.
// RUN: flare-opt %s -split-input-file --attn-overlap --attn-overlap | FileCheck %s
// RUN: flare-opt %s -split-input-file --attn-overlap="all=true pv-after-loops=true" | FileCheck %s --check-prefix=ALL
// What it makes of the generated kernels: overlap-generated.mlir. The hand-written flash attention
// example (loops over keys) overlapped, and compiled on through the pipeline:
// RUN: flare-opt %flare_src/examples/tile/flash_attention.mlir --attn-overlap="all=true" | FileCheck %s --check-prefix=EXAMPLE
// RUN: flare-opt %flare_src/examples/tile/flash_attention.mlir --attn-overlap="all=true" | flarec --arch=sm_90a --emit=ptx - | FileCheck %s --check-prefix=EXAMPLE-PTX
// EXAMPLE-LABEL: func.func @flash_fwd_d64(
// EXAMPLE: scf.for {{.*}} -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>)
// EXAMPLE-LABEL: func.func @flash_fwd_d128(
// EXAMPLE: scf.for {{.*}} -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x64xbf16>)
// EXAMPLE-PTX: .entry flash_fwd_d64(
// EXAMPLE-PTX: .entry flash_fwd_d128(

// Two loops (full blocks, then partial ones from %lo), the last P V after them.
// CHECK-LABEL: func.func @after_loops(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<16x64xbf16>, %{{.*}}: i32, %[[FLO:[^:]*]]: i32, %[[FHI:[^:]*]]: i32, %[[LO:[^:]*]]: i32, %[[CNT:[^:]*]]: i32)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : i32
// CHECK-DAG: %[[KV:.*]] = tile.make_view %arg1
// CHECK-DAG: %[[VV:.*]] = tile.make_view %arg2
// CHECK-DAG: %[[FAR:.*]] = arith.constant -1073741824 : i32
// CHECK-DAG: %[[PZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<16x32xbf16>
// Before the first loop: the block the full loop visits last, pending for the partial loop.
// CHECK: %[[T:.*]] = arith.subi %[[FHI]], %[[C1]] : i32
// CHECK-NEXT: %[[TKV:.*]] = arith.muli %[[T]], %[[C32]] : i32
// CHECK-NEXT: %[[RAN:.*]] = arith.cmpi slt, %[[FLO]], %[[FHI]] : i32
// CHECK-NEXT: %[[PENDING:.*]] = arith.select %[[RAN]], %[[TKV]], %[[FAR]] : i32
// And the V block the partial loop visits last (else the pending one), loaded before the loops.
// CHECK-NEXT: %[[U:.*]] = arith.subi %[[CNT]], %[[C1]] : i32
// CHECK-NEXT: %[[UB:.*]] = arith.addi %[[LO]], %[[U]] : i32
// CHECK-NEXT: %[[UKV:.*]] = arith.muli %[[UB]], %[[C32]] : i32
// CHECK-NEXT: %[[URAN:.*]] = arith.cmpi slt, %{{.*}}, %[[CNT]] : i32
// CHECK-NEXT: %[[LASTKV:.*]] = arith.select %[[URAN]], %[[UKV]], %[[PENDING]] : i32
// CHECK-NEXT: %[[VLAST:.*]] = tile.load %[[VV]][%[[LASTKV]], %{{.*}}]
// The full loop carries P; its first P V is on zeros, far away.
// CHECK-NEXT: %[[A:.*]]:4 = scf.for %[[J:.*]] = %[[FLO]] to %[[FHI]] step %[[C1]] iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}, %[[P:.*]] = %[[PZERO]]) -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16x32xbf16>)
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %[[FLO]] : i32
// CHECK-NEXT: %[[JM1:.*]] = arith.subi %[[J]], %[[C1]] : i32
// CHECK-NEXT: %[[PREVKV:.*]] = arith.muli %[[JM1]], %[[C32]] : i32
// CHECK-NEXT: %[[PREV:.*]] = arith.select %[[FIRST]], %[[FAR]], %[[PREVKV]] : i32
// CHECK-NEXT: %[[KV0:.*]] = arith.muli %[[J]], %[[C32]] : i32
// CHECK-NEXT: %[[K:.*]] = tile.load %[[KV]][%[[KV0]], %{{.*}}]
// CHECK-NEXT: %[[KT:.*]] = tile.trans %[[K]]
// CHECK-NEXT: %[[S:.*]] = tile.dot %[[Q]], %[[KT]], %{{.*}}
// CHECK-NEXT: %[[V:.*]] = tile.load %[[VV]][%[[PREV]], %{{.*}}]
// CHECK-NEXT: %[[PV:.*]] = tile.dot %[[P]], %[[V]], %[[ACC]]
// CHECK-NEXT: %[[PN:.*]], %[[MN:.*]], %[[LN:.*]], %[[ALPHA:.*]] = tile.online_softmax %[[S]], %[[M]], %[[L]]
// CHECK-NEXT: %[[E:.*]] = tile.expand_dims %[[ALPHA]]
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[E]]
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[PV]], %[[B]]
// CHECK-NEXT: %[[PB:.*]] = arith.truncf %[[PN]]
// CHECK-NEXT: scf.yield %[[MN]], %[[LN]], %[[R]], %[[PB]]
// The partial loop continues the full loop's state and P; its first P V is the pending block's.
// CHECK: %[[B2:.*]]:4 = scf.for %[[T2:.*]] = %{{.*}} to %[[CNT]] step %[[C1]] iter_args(%{{.*}} = %[[A]]#0, %{{.*}} = %[[A]]#1, %{{.*}} = %[[A]]#2, %{{.*}} = %[[A]]#3)
// CHECK-NEXT: %[[FIRST2:.*]] = arith.cmpi eq, %[[T2]], %{{.*}} : i32
// CHECK-NEXT: %[[T2M1:.*]] = arith.subi %[[T2]], %[[C1]] : i32
// CHECK-NEXT: %[[BLK:.*]] = arith.addi %[[LO]], %[[T2M1]] : i32
// CHECK-NEXT: %[[PREVKV2:.*]] = arith.muli %[[BLK]], %[[C32]] : i32
// CHECK-NEXT: arith.select %[[FIRST2]], %[[PENDING]], %[[PREVKV2]] : i32
// After the loops: the last block's P V on the V loaded before them.
// CHECK: %[[LASTPV:.*]] = tile.dot %[[B2]]#3, %[[VLAST]], %[[B2]]#2
// CHECK-NEXT: return %[[LASTPV]]
// ALL-LABEL: func.func @after_loops(
// ALL: tile.dot %{{.*}}#3, %{{.*}}, %{{.*}}#2
func.func @after_loops(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32,
                       %lo: i32, %cnt: i32) -> tensor<16x64xf32>
    attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, last_pv_after_loops, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %kv = tile.make_view %kp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %s0 = arith.constant dense<0.0> : tensor<16x32xf32>
  %a:3 = scf.for %j = %flo to %fhi step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %kv0 = arith.muli %j, %c32 : i32
    %k = tile.load %kv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %v = tile.load %vv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  %b:3 = scf.for %t = %c0 to %cnt step %c1 iter_args(%m = %a#0, %l = %a#1, %acc = %a#2)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %blk = arith.addi %lo, %t : i32
    %kv0 = arith.muli %blk, %c32 : i32
    %k = tile.load %kv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %v = tile.load %vv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %b#2 : tensor<16x64xf32>
}

// -----

// One loop whose rows are computed from the key offset (keys of a packed sequence: those past it
// land far away), the last P V in one more step: the loop runs to %cnt + 1, that step's K block lies
// far away, and its softmax keeps m and l and does not rescale. The previous block's rows are
// recomputed from the previous key offset.
// CHECK-LABEL: func.func @extra_step(
// CHECK-SAME: %{{[^:]*}}: i32, %[[START:[^:]*]]: i32, %[[SEQ:[^:]*]]: i32, %[[CNT:[^:]*]]: i32)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : i32
// CHECK: %[[END:.*]] = arith.addi %[[CNT]], %[[C1]] : i32
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %[[END]] step %[[C1]] iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK-NEXT: %[[VALID:.*]] = arith.cmpi slt, %[[J]], %[[CNT]] : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %{{.*}} : i32
// CHECK-NEXT: %[[JM1:.*]] = arith.subi %[[J]], %[[C1]] : i32
// CHECK-NEXT: %[[PREVKV:.*]] = arith.muli %[[JM1]], %[[C32]] : i32
// CHECK-NEXT: %[[PREV:.*]] = arith.select %[[FIRST]], %[[FAR:.*]], %[[PREVKV]] : i32
// CHECK-NEXT: %[[KV0:.*]] = arith.muli %[[J]], %[[C32]] : i32
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[KV0]], %[[SEQ]] : i32
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[START]], %[[KV0]] : i32
// CHECK-NEXT: %[[ROW:.*]] = arith.select %[[IN]], %[[AT]], %{{.*}} : i32
// CHECK-NEXT: %[[KROW:.*]] = arith.select %[[VALID]], %[[ROW]], %[[FAR]] : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[KROW]], %{{.*}}]
// CHECK: tile.dot
// CHECK-NEXT: %[[VIN:.*]] = arith.cmpi ult, %[[PREV]], %[[SEQ]] : i32
// CHECK-NEXT: %[[VAT:.*]] = arith.addi %[[START]], %[[PREV]] : i32
// CHECK-NEXT: %[[VROW:.*]] = arith.select %[[VIN]], %[[VAT]], %{{.*}} : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[VROW]], %{{.*}}]
// CHECK-NEXT: %[[PV:.*]] = tile.dot
// CHECK-NEXT: %{{.*}}, %[[MN:.*]], %[[LN:.*]], %[[ALPHA:.*]] = tile.online_softmax
// CHECK-NEXT: %[[KEEP:.*]] = tile.splat %[[VALID]] : i1 -> tensor<16xi1>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<16xf32>
// CHECK-NEXT: %[[KA:.*]] = arith.select %[[KEEP]], %[[ALPHA]], %[[ONE]]
// CHECK-NEXT: %[[KM:.*]] = arith.select %[[KEEP]], %[[MN]], %[[M]]
// CHECK-NEXT: %[[KEEPL:.*]] = tile.splat %[[VALID]] : i1 -> tensor<16xi1>
// CHECK-NEXT: %[[KL:.*]] = arith.select %[[KEEPL]], %[[LN]], %[[L]]
// CHECK-NEXT: %[[E:.*]] = tile.expand_dims %[[KA]]
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[E]]
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[PV]], %[[B]]
// CHECK-NEXT: %[[PB:.*]] = arith.truncf
// CHECK-NEXT: scf.yield %[[KM]], %[[KL]], %[[R]], %[[PB]]
func.func @extra_step(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %start: i32, %seq: i32, %cnt: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %far = arith.constant -1073741824 : i32
  %kv = tile.make_view %kp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %s0 = arith.constant dense<0.0> : tensor<16x32xf32>
  %a:3 = scf.for %j = %c0 to %cnt step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %kv0 = arith.muli %j, %c32 : i32
    %in = arith.cmpi ult, %kv0, %seq : i32
    %at = arith.addi %start, %kv0 : i32
    %row = arith.select %in, %at, %far : i32
    %k = tile.load %kv[%row, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %v = tile.load %vv[%row, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}


// -----

// A loop over keys (step block_n, as tile programs are often written): the key offset is the
// induction variable, the previous block's is iv - 32, and the last block visited is
// lo + (hi - lo - 1) / 32 * 32.
// CHECK-LABEL: func.func @over_keys(
// CHECK-SAME: %[[FLO:[^:]*]]: i32, %[[FHI:[^:]*]]: i32)
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : i32
// CHECK-DAG: %[[VV:.*]] = tile.make_view %arg2
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[SPAN:.*]] = arith.subi %[[FHI]], %[[FLO]] : i32
// CHECK-NEXT: %[[SPAN1:.*]] = arith.subi %[[SPAN]], %[[ONE]] : i32
// CHECK-NEXT: %[[STEPS:.*]] = arith.divsi %[[SPAN1]], %[[C32]] : i32
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[STEPS]], %[[C32]] : i32
// CHECK-NEXT: %[[LASTKEY:.*]] = arith.addi %[[FLO]], %[[OFF]] : i32
// CHECK-NEXT: %[[RAN:.*]] = arith.cmpi slt, %[[FLO]], %[[FHI]] : i32
// CHECK-NEXT: %[[LAST:.*]] = arith.select %[[RAN]], %[[LASTKEY]], %{{.*}} : i32
// CHECK-NEXT: %[[VLAST:.*]] = tile.load %[[VV]][%[[LAST]], %{{.*}}]
// CHECK-NEXT: %[[LOOP:.*]]:4 = scf.for %[[J:.*]] = %[[FLO]] to %[[FHI]] step %[[C32]]
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %[[FLO]] : i32
// CHECK-NEXT: %[[PREVKEY:.*]] = arith.subi %[[J]], %[[C32]] : i32
// CHECK-NEXT: %[[PREV:.*]] = arith.select %[[FIRST]], %{{.*}}, %[[PREVKEY]] : i32
// CHECK-NEXT: tile.load %{{.*}}[%[[J]], %{{.*}}]
// CHECK: tile.load %[[VV]][%[[PREV]], %{{.*}}]
// CHECK: tile.dot %[[LOOP]]#3, %[[VLAST]], %[[LOOP]]#2
func.func @over_keys(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, last_pv_after_loops, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %kv = tile.make_view %kp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %s0 = arith.constant dense<0.0> : tensor<16x32xf32>
  %a:3 = scf.for %j = %flo to %fhi step %c32 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %k = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %v = tile.load %vv[%j, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}

// -----

// A function without a configuration is left alone, unless all=true (the P V after the loops with
// pv-after-loops=true); so is a configured one without `overlap`.
// CHECK-LABEL: func.func @unconfigured(
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>)
// CHECK-LABEL: func.func @not_overlapped(
// CHECK: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>)
// ALL-LABEL: func.func @unconfigured(
// ALL: %[[LOOP:.*]]:4 = scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16x32xbf16>)
// ALL: tile.dot %[[LOOP]]#3, %{{.*}}, %[[LOOP]]#2
// ALL-LABEL: func.func @not_overlapped(
// ALL: scf.for {{.*}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>, tensor<16x32xbf16>)
func.func @unconfigured(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %kv = tile.make_view %kp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %s0 = arith.constant dense<0.0> : tensor<16x32xf32>
  %a:3 = scf.for %j = %flo to %fhi step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %kv0 = arith.muli %j, %c32 : i32
    %k = tile.load %kv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %v = tile.load %vv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}

func.func @not_overlapped(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, pair_instances>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %kv = tile.make_view %kp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vp, [%n, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %m0 = arith.constant dense<0xFF800000> : tensor<16xf32>
  %l0 = arith.constant dense<0.0> : tensor<16xf32>
  %acc0 = arith.constant dense<0.0> : tensor<16x64xf32>
  %s0 = arith.constant dense<0.0> : tensor<16x32xf32>
  %a:3 = scf.for %j = %flo to %fhi step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %kv0 = arith.muli %j, %c32 : i32
    %k = tile.load %kv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %r = arith.mulf %acc, %bc : tensor<16x64xf32>
    %v = tile.load %vv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}
