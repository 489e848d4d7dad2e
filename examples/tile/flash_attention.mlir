// FlashAttention forward, written by hand in the tile DSL (the attn dialect will generate such kernels).
// Q, O: [B * H, Sq, D] and K, V: [B * H, Skv, D], bf16, contiguous; LSE: [B * H, Sq], f32.
// qk_scale = softmax scale * log2(e): scores are kept in log2 units so that exp2 is the only
// transcendental. causal != 0 masks key j for query i when j > i (top-left aligned).
//
// Per program instance: 64 query rows stay in registers while 64-row blocks of K and V stream by;
// an online softmax (tile.online_softmax) keeps, per row, the running max m, the normalizer l and the
// unnormalized output:
//   m' = max(m, rowmax(s)),  p = exp2(s - m'),  alpha = exp2(m - m'),
//   l' = alpha * l + rowsum(p),  acc' = alpha * acc + p V.
// The 64 x Skv scores never reach global memory.

// Head dim 64: grid = (ceil(Sq / 64), B * H), 4 warps, 64 queries per program instance.
func.func @flash_fwd_d64(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %o: !tile.ptr<bf16>,
                      %lse: !tile.ptr<f32>, %sq: i32, %skv: i32, %qk_scale: f32, %causal: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %mblock = tile.program_id x
  %bh = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bm = arith.constant 64 : i32
  %d = arith.constant 64 : i32
  %row0 = arith.muli %mblock, %bm : i32
  // This (batch, head)'s slices: Q and O start at bh * Sq * D, K and V at bh * Skv * D, LSE at bh * Sq.
  %bh64 = arith.extsi %bh : i32 to i64
  %sq64 = arith.extsi %sq : i32 to i64
  %skv64 = arith.extsi %skv : i32 to i64
  %d64 = arith.constant 64 : i64
  %q_rows = arith.muli %bh64, %sq64 : i64
  %q_off = arith.muli %q_rows, %d64 : i64
  %kv_rows = arith.muli %bh64, %skv64 : i64
  %kv_off = arith.muli %kv_rows, %d64 : i64
  %qh = tile.addptr %q, %q_off : !tile.ptr<bf16>, i64
  %kh = tile.addptr %k, %kv_off : !tile.ptr<bf16>, i64
  %vh = tile.addptr %v, %kv_off : !tile.ptr<bf16>, i64
  %oh = tile.addptr %o, %q_off : !tile.ptr<bf16>, i64
  %lh = tile.addptr %lse, %q_rows : !tile.ptr<f32>, i64
  %qv = tile.make_view %qh, [%sq, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %kh, [%skv, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vh, [%skv, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %oh, [%sq, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %lv = tile.make_view %lh, [%sq], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %qt = tile.load %qv[%row0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>

  // Online-softmax state per query row: running max m (in log2 units), normalizer l, output acc.
  %m0 = arith.constant dense<0xFF800000> : tensor<64xf32>
  %l0 = arith.constant dense<0.0> : tensor<64xf32>
  %acc0 = arith.constant dense<0.0> : tensor<64x64xf32>
  // Causal (top-left aligned): query i sees keys j <= i, so key blocks from row0 + 64 on are empty.
  %row_end = arith.addi %row0, %bm : i32
  %causal_end = arith.minsi %row_end, %skv : i32
  %is_causal = arith.cmpi ne, %causal, %c0 : i32
  %kv_end = arith.select %is_causal, %causal_end, %skv : i32
  %res:3 = scf.for %j = %c0 to %kv_end step %bm
      iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) : i32 {
    %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    // s = (Q K^T) * scale * log2(e)
    %ktt = tile.trans %kt : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %szero = arith.constant dense<0.0> : tensor<64x64xf32>
    %qk = tile.dot %qt, %ktt, %szero : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    %scale_b = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
    %s = arith.mulf %qk, %scale_b : tensor<64x64xf32>
    // Keep key j for query i when j < Skv and (not causal or i >= j); the rest score -inf.
    %qi = tile.range 0, 64 : tensor<64xi32>
    %row0_b = tile.splat %row0 : i32 -> tensor<64xi32>
    %qrow = arith.addi %qi, %row0_b : tensor<64xi32>
    %qrow1 = tile.expand_dims %qrow {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %qrow_b = tile.broadcast %qrow1 : tensor<64x1xi32> -> tensor<64x64xi32>
    %kj = tile.range 0, 64 : tensor<64xi32>
    %j_b = tile.splat %j : i32 -> tensor<64xi32>
    %kcol = arith.addi %kj, %j_b : tensor<64xi32>
    %kcol1 = tile.expand_dims %kcol {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %kcol_b = tile.broadcast %kcol1 : tensor<1x64xi32> -> tensor<64x64xi32>
    %skv_b = tile.splat %skv : i32 -> tensor<64x64xi32>
    %in_range = arith.cmpi slt, %kcol_b, %skv_b : tensor<64x64xi32>
    %visible = arith.cmpi sge, %qrow_b, %kcol_b : tensor<64x64xi32>
    %not_causal = arith.constant dense<true> : tensor<64x64xi1>
    %causal_b = tile.splat %is_causal : i1 -> tensor<64x64xi1>
    %no_mask = arith.xori %causal_b, %not_causal : tensor<64x64xi1>
    %causal_ok = arith.ori %visible, %no_mask : tensor<64x64xi1>
    %keep = arith.andi %in_range, %causal_ok : tensor<64x64xi1>
    %ninf = arith.constant dense<0xFF800000> : tensor<64x64xf32>
    %sm = arith.select %keep, %s, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
    // One online-softmax step (equations at tile.online_softmax): m' = max(m, rowmax(s)),
    // p = exp2(s - m'), alpha = exp2(m - m'), l' = alpha * l + rowsum(p); acc' = alpha * acc + p V.
    %p, %m_new, %l_new, %alpha = tile.online_softmax %sm, %m, %l : tensor<64x64xf32>, tensor<64xf32>
    %alpha1 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha1 : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    // V is loaded late: its registers are not live during the softmax.
    %vt = tile.load %vv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %pb = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %pb, %vt, %acc_scaled : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }

  // O = acc / l and LSE = (m + log2 l) * ln 2; a row that saw no key (l = 0) gives O = 0, LSE = -inf.
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32>
  %ln2 = arith.constant dense<0.693147182> : tensor<64xf32>
  %no_key = arith.cmpf oeq, %res#1, %zero : tensor<64xf32>
  %l_safe = arith.select %no_key, %one, %res#1 : tensor<64xi1>, tensor<64xf32>
  %inv_l = arith.divf %one, %l_safe : tensor<64xf32>
  %inv_l1 = tile.expand_dims %inv_l {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %inv_l_b = tile.broadcast %inv_l1 : tensor<64x1xf32> -> tensor<64x64xf32>
  %out = arith.mulf %res#2, %inv_l_b : tensor<64x64xf32>
  %out16 = arith.truncf %out : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out16, %ov[%row0, %c0] : tensor<64x64xbf16>, !tile.view<bf16, 2>
  %log_l = math.log2 %l_safe : tensor<64xf32>
  %lse2 = arith.addf %res#0, %log_l : tensor<64xf32>
  %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32>
  %lse_out = arith.select %no_key, %ninf_row, %lse_nat : tensor<64xi1>, tensor<64xf32>
  tile.store %lse_out, %lv[%row0] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// Head dim 128: grid = (ceil(Sq / 128), B * H), 8 warps, 128 queries per program instance.
func.func @flash_fwd_d128(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %o: !tile.ptr<bf16>,
                      %lse: !tile.ptr<f32>, %sq: i32, %skv: i32, %qk_scale: f32, %causal: i32)
    attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %mblock = tile.program_id x
  %bh = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bm = arith.constant 128 : i32
  %bn = arith.constant 64 : i32
  %d = arith.constant 128 : i32
  %row0 = arith.muli %mblock, %bm : i32
  // This (batch, head)'s slices: Q and O start at bh * Sq * D, K and V at bh * Skv * D, LSE at bh * Sq.
  %bh64 = arith.extsi %bh : i32 to i64
  %sq64 = arith.extsi %sq : i32 to i64
  %skv64 = arith.extsi %skv : i32 to i64
  %d64 = arith.constant 128 : i64
  %q_rows = arith.muli %bh64, %sq64 : i64
  %q_off = arith.muli %q_rows, %d64 : i64
  %kv_rows = arith.muli %bh64, %skv64 : i64
  %kv_off = arith.muli %kv_rows, %d64 : i64
  %qh = tile.addptr %q, %q_off : !tile.ptr<bf16>, i64
  %kh = tile.addptr %k, %kv_off : !tile.ptr<bf16>, i64
  %vh = tile.addptr %v, %kv_off : !tile.ptr<bf16>, i64
  %oh = tile.addptr %o, %q_off : !tile.ptr<bf16>, i64
  %lh = tile.addptr %lse, %q_rows : !tile.ptr<f32>, i64
  %qv = tile.make_view %qh, [%sq, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %kh, [%skv, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vh, [%skv, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %oh, [%sq, %d], [%d, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %lv = tile.make_view %lh, [%sq], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %qt = tile.load %qv[%row0, %c0] : !tile.view<bf16, 2> -> tensor<128x128xbf16>

  // Online-softmax state per query row: running max m (in log2 units), normalizer l, output acc.
  %m0 = arith.constant dense<0xFF800000> : tensor<128xf32>
  %l0 = arith.constant dense<0.0> : tensor<128xf32>
  %acc0 = arith.constant dense<0.0> : tensor<128x128xf32>
  // Causal (top-left aligned): query i sees keys j <= i, so key blocks from row0 + 128 on are empty.
  %row_end = arith.addi %row0, %bm : i32
  %causal_end = arith.minsi %row_end, %skv : i32
  %is_causal = arith.cmpi ne, %causal, %c0 : i32
  %kv_end = arith.select %is_causal, %causal_end, %skv : i32
  %res:3 = scf.for %j = %c0 to %kv_end step %bn
      iter_args(%m = %m0, %l = %l0, %acc = %acc0) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) : i32 {
    %kt = tile.load %kv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    // s = (Q K^T) * scale * log2(e)
    %ktt = tile.trans %kt : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %szero = arith.constant dense<0.0> : tensor<128x64xf32>
    %qk = tile.dot %qt, %ktt, %szero : tensor<128x128xbf16>, tensor<128x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    %scale_b = tile.splat %qk_scale : f32 -> tensor<128x64xf32>
    %s = arith.mulf %qk, %scale_b : tensor<128x64xf32>
    // Keep key j for query i when j < Skv and (not causal or i >= j); the rest score -inf.
    %qi = tile.range 0, 128 : tensor<128xi32>
    %row0_b = tile.splat %row0 : i32 -> tensor<128xi32>
    %qrow = arith.addi %qi, %row0_b : tensor<128xi32>
    %qrow1 = tile.expand_dims %qrow {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %qrow_b = tile.broadcast %qrow1 : tensor<128x1xi32> -> tensor<128x64xi32>
    %kj = tile.range 0, 64 : tensor<64xi32>
    %j_b = tile.splat %j : i32 -> tensor<64xi32>
    %kcol = arith.addi %kj, %j_b : tensor<64xi32>
    %kcol1 = tile.expand_dims %kcol {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %kcol_b = tile.broadcast %kcol1 : tensor<1x64xi32> -> tensor<128x64xi32>
    %skv_b = tile.splat %skv : i32 -> tensor<128x64xi32>
    %in_range = arith.cmpi slt, %kcol_b, %skv_b : tensor<128x64xi32>
    %visible = arith.cmpi sge, %qrow_b, %kcol_b : tensor<128x64xi32>
    %not_causal = arith.constant dense<true> : tensor<128x64xi1>
    %causal_b = tile.splat %is_causal : i1 -> tensor<128x64xi1>
    %no_mask = arith.xori %causal_b, %not_causal : tensor<128x64xi1>
    %causal_ok = arith.ori %visible, %no_mask : tensor<128x64xi1>
    %keep = arith.andi %in_range, %causal_ok : tensor<128x64xi1>
    %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
    %sm = arith.select %keep, %s, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
    // One online-softmax step (equations at tile.online_softmax): m' = max(m, rowmax(s)),
    // p = exp2(s - m'), alpha = exp2(m - m'), l' = alpha * l + rowsum(p); acc' = alpha * acc + p V.
    %p, %m_new, %l_new, %alpha = tile.online_softmax %sm, %m, %l : tensor<128x64xf32>, tensor<128xf32>
    %alpha1 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha1 : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    // V is loaded late: its registers are not live during the softmax.
    %vt = tile.load %vv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %pb = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %acc_new = tile.dot %pb, %vt, %acc_scaled : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  }

  // O = acc / l and LSE = (m + log2 l) * ln 2; a row that saw no key (l = 0) gives O = 0, LSE = -inf.
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %one = arith.constant dense<1.0> : tensor<128xf32>
  %ninf_row = arith.constant dense<0xFF800000> : tensor<128xf32>
  %ln2 = arith.constant dense<0.693147182> : tensor<128xf32>
  %no_key = arith.cmpf oeq, %res#1, %zero : tensor<128xf32>
  %l_safe = arith.select %no_key, %one, %res#1 : tensor<128xi1>, tensor<128xf32>
  %inv_l = arith.divf %one, %l_safe : tensor<128xf32>
  %inv_l1 = tile.expand_dims %inv_l {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
  %inv_l_b = tile.broadcast %inv_l1 : tensor<128x1xf32> -> tensor<128x128xf32>
  %out = arith.mulf %res#2, %inv_l_b : tensor<128x128xf32>
  %out16 = arith.truncf %out : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out16, %ov[%row0, %c0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  %log_l = math.log2 %l_safe : tensor<128xf32>
  %lse2 = arith.addf %res#0, %log_l : tensor<128xf32>
  %lse_nat = arith.mulf %lse2, %ln2 : tensor<128xf32>
  %lse_out = arith.select %no_key, %ninf_row, %lse_nat : tensor<128xi1>, tensor<128xf32>
  tile.store %lse_out, %lv[%row0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}
