// Naive attention, the memory-hungry baseline: the full score matrix goes through global memory.
// Q: [B * H, Sq, 64], K, V: [B * H, Skv, 64], O: [B * H, Sq, 64] in bf16, contiguous; the scratch
// tensors S: [B * H, Sq, Skv] (f32) and P: [B * H, Sq, Skv] (bf16) take O(Sq * Skv) memory each.
//   1. @naive_scores  S = scale * Q K^T            grid = (ceil(Sq / 64), ceil(Skv / 64), B * H)
//   2. @naive_softmax P = softmax(S) along rows     grid = (Sq, B * H)
//   3. @naive_pv      O = P V                       grid = (ceil(Sq / 64), B * H)

func.func @naive_scores(%q: !tile.ptr<bf16>, %k: !tile.ptr<bf16>, %s: !tile.ptr<f32>, %sq: i32, %skv: i32,
                        %scale: f32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %mb = tile.program_id x
  %nb = tile.program_id y
  %bh = tile.program_id z
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %row0 = arith.muli %mb, %c64 : i32
  %col0 = arith.muli %nb, %c64 : i32
  %bh64 = arith.extsi %bh : i32 to i64
  %sq64 = arith.extsi %sq : i32 to i64
  %skv64 = arith.extsi %skv : i32 to i64
  %d64 = arith.constant 64 : i64
  %q_rows = arith.muli %bh64, %sq64 : i64
  %q_off = arith.muli %q_rows, %d64 : i64
  %k_rows = arith.muli %bh64, %skv64 : i64
  %k_off = arith.muli %k_rows, %d64 : i64
  %s_off = arith.muli %q_rows, %skv64 : i64
  %qh = tile.addptr %q, %q_off : !tile.ptr<bf16>, i64
  %kh = tile.addptr %k, %k_off : !tile.ptr<bf16>, i64
  %sh = tile.addptr %s, %s_off : !tile.ptr<f32>, i64
  %qv = tile.make_view %qh, [%sq, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %kv = tile.make_view %kh, [%skv, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %sv = tile.make_view %sh, [%sq, %skv], [%skv, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %qt = tile.load %qv[%row0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %kt = tile.load %kv[%col0, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
  %ktt = tile.trans %kt : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %qk = tile.dot %qt, %ktt, %zero : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  %scale_b = tile.splat %scale : f32 -> tensor<64x64xf32>
  %st = arith.mulf %qk, %scale_b : tensor<64x64xf32>
  tile.store %st, %sv[%row0, %col0] : tensor<64x64xf32>, !tile.view<f32, 2>
  return
}

// One row per program instance, in chunks of 1024 columns: a pass for the max, one for the sum of
// exponentials, one writing p = exp(s - max) / sum.
func.func @naive_softmax(%s: !tile.ptr<f32>, %p: !tile.ptr<bf16>, %sq: i32, %skv: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %row = tile.program_id x
  %bh = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %chunk = arith.constant 1024 : i32
  %bh64 = arith.extsi %bh : i32 to i64
  %sq64 = arith.extsi %sq : i32 to i64
  %skv64 = arith.extsi %skv : i32 to i64
  %row64 = arith.extsi %row : i32 to i64
  %rows = arith.muli %bh64, %sq64 : i64
  %r = arith.addi %rows, %row64 : i64
  %off = arith.muli %r, %skv64 : i64
  %sh = tile.addptr %s, %off : !tile.ptr<f32>, i64
  %ph = tile.addptr %p, %off : !tile.ptr<bf16>, i64
  %sv = tile.make_view %sh, [%skv], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %pv = tile.make_view %ph, [%skv], [%c1] : !tile.ptr<bf16> -> !tile.view<bf16, 1>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %m = scf.for %j = %c0 to %skv step %chunk iter_args(%m_i = %ninf) -> (f32) : i32 {
    %x = tile.load %sv[%j] {padding = 0xFF800000 : f32} : !tile.view<f32, 1> -> tensor<1024xf32>
    %cm = tile.reduce max %x {axis = 0 : i32} : tensor<1024xf32> -> f32
    %m_next = arith.maximumf %m_i, %cm : f32
    scf.yield %m_next : f32
  }
  %m_b = tile.splat %m : f32 -> tensor<1024xf32>
  %l = scf.for %j = %c0 to %skv step %chunk iter_args(%l_i = %zero) -> (f32) : i32 {
    %x = tile.load %sv[%j] {padding = 0xFF800000 : f32} : !tile.view<f32, 1> -> tensor<1024xf32>
    %d = arith.subf %x, %m_b : tensor<1024xf32>
    %e = math.exp %d : tensor<1024xf32>
    %cs = tile.reduce sum %e {axis = 0 : i32} : tensor<1024xf32> -> f32
    %l_next = arith.addf %l_i, %cs : f32
    scf.yield %l_next : f32
  }
  %one = arith.constant 1.0 : f32
  %inv_l = arith.divf %one, %l : f32
  %inv_b = tile.splat %inv_l : f32 -> tensor<1024xf32>
  scf.for %j = %c0 to %skv step %chunk : i32 {
    %x = tile.load %sv[%j] {padding = 0xFF800000 : f32} : !tile.view<f32, 1> -> tensor<1024xf32>
    %d = arith.subf %x, %m_b : tensor<1024xf32>
    %e = math.exp %d : tensor<1024xf32>
    %pr = arith.mulf %e, %inv_b : tensor<1024xf32>
    %pb = arith.truncf %pr : tensor<1024xf32> to tensor<1024xbf16>
    tile.store %pb, %pv[%j] : tensor<1024xbf16>, !tile.view<bf16, 1>
  }
  return
}

func.func @naive_pv(%p: !tile.ptr<bf16>, %v: !tile.ptr<bf16>, %o: !tile.ptr<bf16>, %sq: i32, %skv: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %mb = tile.program_id x
  %bh = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %row0 = arith.muli %mb, %c64 : i32
  %bh64 = arith.extsi %bh : i32 to i64
  %sq64 = arith.extsi %sq : i32 to i64
  %skv64 = arith.extsi %skv : i32 to i64
  %d64 = arith.constant 64 : i64
  %q_rows = arith.muli %bh64, %sq64 : i64
  %p_off = arith.muli %q_rows, %skv64 : i64
  %o_off = arith.muli %q_rows, %d64 : i64
  %v_rows = arith.muli %bh64, %skv64 : i64
  %v_off = arith.muli %v_rows, %d64 : i64
  %ph = tile.addptr %p, %p_off : !tile.ptr<bf16>, i64
  %vh = tile.addptr %v, %v_off : !tile.ptr<bf16>, i64
  %oh = tile.addptr %o, %o_off : !tile.ptr<bf16>, i64
  %pv = tile.make_view %ph, [%sq, %skv], [%skv, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %vv = tile.make_view %vh, [%skv, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %oh, [%sq, %c64], [%c64, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %j = %c0 to %skv step %c64 iter_args(%acc_i = %zero) -> (tensor<64x64xf32>) : i32 {
    %pt = tile.load %pv[%row0, %j] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %vt = tile.load %vv[%j, %c0] : !tile.view<bf16, 2> -> tensor<64x64xbf16>
    %next = tile.dot %pt, %vt, %acc_i : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out, %ov[%row0, %c0] : tensor<64x64xbf16>, !tile.view<bf16, 2>
  return
}
