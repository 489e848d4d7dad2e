// attn-overlap's errors: in a kernel configured to overlap, a loop with a softmax that is not a
// canonical step, and a loop continuing another's state whose bounds are computed after it.
// RUN: flare-opt %s -split-input-file -verify-diagnostics --attn-overlap

// A loop that already rescales after its P V.
func.func @rescaled_after(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, pair_instances>} {
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
  // expected-error @+1 {{attn-overlap: not a canonical attention step: no yielded accumulator of the form P V + acc * rows(alpha)}}
  %a:3 = scf.for %j = %flo to %fhi step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %kv0 = arith.muli %j, %c32 : i32
    %k = tile.load %kv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %kt = tile.trans %k : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %s = tile.dot %q, %kt, %s0 : tensor<16x64xbf16>, tensor<64x32xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<16x32xf32>, tensor<16xf32>
    %e = tile.expand_dims %alpha {axis = 1 : i32} : tensor<16xf32> -> tensor<16x1xf32>
    %bc = tile.broadcast %e : tensor<16x1xf32> -> tensor<16x64xf32>
    %v = tile.load %vv[%kv0, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv0 = tile.dot %pb, %v, %acc : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    %pv = arith.mulf %pv0, %bc : tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}

// -----

// Rows that are not a block index times block_n (32 keys per block, 64 per step).
func.func @no_key_offset(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, pair_instances>} {
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
  // expected-error @+1 {{attn-overlap: not a canonical attention step: no key offset (block index * block_n) in the V block's rows}}
  %a:3 = scf.for %j = %flo to %fhi step %c1 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
      -> (tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>) : i32 {
    %kv0 = arith.muli %j, %c64 : i32
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

// -----

// V rows that are not the K block's.
func.func @other_rows(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, pair_instances>} {
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
  // expected-error @+1 {{attn-overlap: not a canonical attention step: no S = Q K^T product on a K block of the V block's rows}}
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
    %vrow = arith.addi %kv0, %c1 : i32
    %v = tile.load %vv[%vrow, %c0] : !tile.view<bf16, 2> -> tensor<32x64xbf16>
    %pb = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
    %pv = tile.dot %pb, %v, %r : tensor<16x32xbf16>, tensor<32x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %m_new, %l_new, %pv : tensor<16xf32>, tensor<16xf32>, tensor<16x64xf32>
  }
  return %a#2 : tensor<16x64xf32>
}

// -----

// The partial loop's count is computed after the full loop: its first P V could not be known
// before the first loop.
func.func @bound_between_loops(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32, %lo: i32)
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
  %cnt = arith.subi %fhi, %flo : i32
  // expected-error @+1 {{attn-overlap: the loop's bounds or key offsets are not known before the first loop of its chain}}
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

// A loop over block indices that steps by 64.
func.func @other_step(%q: tensor<16x64xbf16>, %kp: !tile.ptr<bf16>, %vp: !tile.ptr<bf16>, %n: i32, %flo: i32, %fhi: i32)
    -> tensor<16x64xf32> attributes {flare.attention_config = #attn.config<block_m = 16, block_n = 32, warps = 4, overlap, pair_instances>} {
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
  // expected-error @+1 {{attn-overlap: not a canonical attention step: the loop steps neither by 1 (over block indices) nor by block_n (over keys)}}
  %a:3 = scf.for %j = %flo to %fhi step %c64 iter_args(%m = %m0, %l = %l0, %acc = %acc0)
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
