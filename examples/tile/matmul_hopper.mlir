// flare-archs: sm_90a
// Matrix product tuned for Hopper: C = A * B with A [M, K] and B [K, N] in bf16 (row-major, leading
// dimensions lda and ldb), C in bf16. Each program instance (8 warps: two warpgroups of 64 rows, one
// wgmma m64n128k16 each per K step of 16) computes one 128x128 block of C, walking K 64 at a time;
// the compiler pipelines the K loop through a 3-stage cp.async ring and, the rows of both blocks
// being 128 bytes, stores them in 128-byte swizzled panels, so that every copy reads whole lines of
// global memory (L2 bandwidth is what bounds these kernels, bench/NOTES.md). Launch with
// grid = (ceil(M / 128), ceil(N / 128)): the kernel's launch hints flare.block_m / flare.block_n.
// Larger tiles (256x128 or 128x256) are faster still but spill a few registers today (NOTES m8).
func.func @matmul_bf16(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %m: i32, %n: i32, %k: i32,
                       %lda: i32, %ldb: i32, %ldc: i32) attributes {tile.kernel, tile.num_warps = 8 : i32,
                                                   flare.block_m = 128 : i32, flare.block_n = 128 : i32} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 64 : i32
  %bm = arith.constant 128 : i32
  %bn = arith.constant 128 : i32
  %row0 = arith.muli %pid_m, %bm : i32
  %col0 = arith.muli %pid_n, %bn : i32
  %av = tile.make_view %a, [%m, %k], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%ldc, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<128x128xf32>) : i32 {
    %at = tile.load %av[%row0, %kk] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
    %bt = tile.load %bv[%kk, %col0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %next = tile.dot %at, %bt, %acc_i : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %cv[%row0, %col0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  return
}
