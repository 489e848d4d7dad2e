// flare-archs: sm_90a
// Matrix product tuned for Hopper: C = A * B with A [M, K] and B [K, N] in bf16 (row-major, leading
// dimensions lda and ldb), C in bf16. Each program instance (8 warps: two warpgroups of 64 rows, one
// wgmma m64n256k16 each per K step of 16) computes one 128x256 block of C, walking K 64 at a time.
// Program instances run in groups of 8 row blocks (as Triton's GROUP_SIZE_M), so that the blocks of
// A and B that the instances running together read stay in L2.
// The compiler reads A and B through TMA (tensor maps the runtime encodes from the arguments) into a
// ring of 128-byte swizzled shared-memory stages guarded by mbarriers, which the wgmma descriptors
// read directly; rows that are not 16-byte aligned take an element-by-element fallback.
// Launch with grid = (ceil(M / 128), ceil(N / 256)): the kernel's launch hints flare.block_m /
// flare.block_n.
func.func @matmul_bf16(%a: !tile.ptr<bf16>, %b: !tile.ptr<bf16>, %c: !tile.ptr<bf16>, %m: i32, %n: i32, %k: i32,
                       %lda: i32, %ldb: i32, %ldc: i32) attributes {tile.kernel, tile.num_warps = 8 : i32,
                                                   flare.block_m = 128 : i32, flare.block_n = 256 : i32} {
  %px = tile.program_id x
  %py = tile.program_id y
  %gm = tile.num_programs x
  %gn = tile.num_programs y
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %group = arith.constant 8 : i32
  %pyx = arith.muli %py, %gm : i32
  %pid = arith.addi %pyx, %px : i32
  %in_group = arith.muli %group, %gn : i32
  %group_id = arith.divui %pid, %in_group : i32
  %first_m = arith.muli %group_id, %group : i32
  %left_m = arith.subi %gm, %first_m : i32
  %group_m = arith.minsi %left_m, %group : i32
  %pid_in = arith.remui %pid, %in_group : i32
  %dm = arith.remui %pid_in, %group_m : i32
  %pid_m = arith.addi %first_m, %dm : i32
  %pid_n = arith.divui %pid_in, %group_m : i32
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
