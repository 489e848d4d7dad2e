// flare-archs: sm_90a
// examples/tile/matmul_hopper.mlir with 256x128 tiles of C (16 warps) in launch order, for
// flare-bench-matmul --file (bench/NOTES.md v8, v9). With TMA it no longer spills (126 registers), but
// four warpgroups of 64 x 128 are slower than two of 64 x 256 (bench/NOTES.md v9).
func.func @matmul_bf16(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %m: i32, %n: i32, %k: i32,
                       %lda: i32, %ldb: i32, %ldc: i32) attributes {tile.kernel, tile.num_warps = 16 : i32,
                                                   flare.block_m = 256 : i32, flare.block_n = 128 : i32} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 64 : i32
  %bm = arith.constant 256 : i32
  %bn = arith.constant 128 : i32
  %row0 = arith.muli %pid_m, %bm : i32
  %col0 = arith.muli %pid_n, %bn : i32
  %av = tile.make_view %a, [%m, %k], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%ldc, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<256x128xf32>
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<256x128xf32>) : i32 {
    %at = tile.load %av[%row0, %kk] : !tile.view<bf16, 2> -> tensor<256x64xbf16>
    %bt = tile.load %bv[%kk, %col0] : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    %next = tile.dot %at, %bt, %acc_i : tensor<256x64xbf16>, tensor<64x128xbf16>, tensor<256x128xf32> -> tensor<256x128xf32>
    scf.yield %next : tensor<256x128xf32>
  }
  %out = arith.truncf %acc : tensor<256x128xf32> to tensor<256x128xbf16>
  tile.store %out, %cv[%row0, %col0] : tensor<256x128xbf16>, !tile.view<bf16, 2>
  return
}
