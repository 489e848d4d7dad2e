// flare-archs: sm_90a
// examples/tile/matmul_hopper.mlir without the grouped program order (row blocks in launch order), for
// flare-bench-matmul --file: what the grouping is worth (bench/NOTES.md v9).
func.func @matmul_bf16(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %m: i32, %n: i32, %k: i32,
                       %lda: i32, %ldb: i32, %ldc: i32) attributes {tile.kernel, tile.num_warps = 8 : i32,
                                                   flare.block_m = 128 : i32, flare.block_n = 256 : i32} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bk = arith.constant 64 : i32
  %bm = arith.constant 128 : i32
  %bn = arith.constant 256 : i32
  %row0 = arith.muli %pid_m, %bm : i32
  %col0 = arith.muli %pid_n, %bn : i32
  %av = tile.make_view %a, [%m, %k], [%lda, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %bv = tile.make_view %b, [%k, %n], [%ldb, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %cv = tile.make_view %c, [%m, %n], [%ldc, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %kk = %c0 to %k step %bk iter_args(%acc_i = %zero) -> (tensor<128x256xf32>) : i32 {
    %at = tile.load %av[%row0, %kk] : !tile.view<bf16, 2> -> tensor<128x64xbf16>
    %bt = tile.load %bv[%kk, %col0] : !tile.view<bf16, 2> -> tensor<64x256xbf16>
    %next = tile.dot %at, %bt, %acc_i : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %next : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  tile.store %out, %cv[%row0, %col0] : tensor<128x256xbf16>, !tile.view<bf16, 2>
  return
}
