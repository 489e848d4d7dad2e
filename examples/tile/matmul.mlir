// Matrix product on tensor cores: C = A * B with A [M, K] and B [K, N] in bf16, row-major with
// leading dimensions lda and ldb. Each program instance computes one 128x128 block of C, walking K
// 32 at a time and accumulating in f32. Launch with grid = (ceil(M / 128), ceil(N / 128)).
//   @matmul      writes C in f32;
//   @matmul_bf16 rounds C to bf16.
func.func @matmul(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<f32>, %m: i32, %n: i32, %k: i32,
                  %lda: i32, %ldb: i32, %ldc: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 32 : i32
  %bm = arith.constant 128 : i32
  %row0 = arith.muli %pid_m, %bm : i32
  %col0 = arith.muli %pid_n, %bm : i32
  %av = tile.make_view %a, [%m, %k], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%ldc, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  // acc += A[row0 : row0 + 128, kk : kk + 32] * B[kk : kk + 32, col0 : col0 + 128]; out-of-range
  // elements load as zero and add nothing.
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<128x128xf32>) : i32 {
    %at = tile.load %av[%row0, %kk] : !tile.view<bf16, 2> -> tensor<128x32xbf16>
    %bt = tile.load %bv[%kk, %col0] : !tile.view<bf16, 2> -> tensor<32x128xbf16>
    %next = tile.dot %at, %bt, %acc_i : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %cv[%row0, %col0] : tensor<128x128xf32>, !tile.view<f32, 2>
  return
}

func.func @matmul_bf16(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %m: i32, %n: i32, %k: i32,
                       %lda: i32, %ldb: i32, %ldc: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 32 : i32
  %bm = arith.constant 128 : i32
  %row0 = arith.muli %pid_m, %bm : i32
  %col0 = arith.muli %pid_n, %bm : i32
  %av = tile.make_view %a, [%m, %k], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%ldc, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<128x128xf32>) : i32 {
    %at = tile.load %av[%row0, %kk] : !tile.view<bf16, 2> -> tensor<128x32xbf16>
    %bt = tile.load %bv[%kk, %col0] : !tile.view<bf16, 2> -> tensor<32x128xbf16>
    %next = tile.dot %at, %bt, %acc_i : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %cv[%row0, %col0] : tensor<128x128xbf16>, !tile.view<bf16, 2>
  return
}
