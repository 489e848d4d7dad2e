// convert-tgpu-to-nvvm after tgpu-assign-layouts: tile kernels become gpu.func kernels in
// gpu.module @flare_kernels, with one SSA value per register of each tile's layout.
// RUN: flare-opt %s -split-input-file --tgpu-assign-layouts --convert-tgpu-to-nvvm --tgpu-allocate-shared-memory | FileCheck %s
//
// Constants are emitted where they are used and not yet folded, so their SSA names carry a numeric
// suffix (%c4_i32_21): the checks match them as %c4_i32{{...}}.

// Elementwise: z = exp(x) on 64 elements, one warp (32 threads). Blocked layout with vec 4:
//   reg 1, 2; lane 4, 8, 16, 32, 0; no warp bits.
// So each thread holds 4 registers, the elements c = T ^ r for r = 0..3 with
//   T = 4*lane[0] ^ 8*lane[1] ^ 16*lane[2] ^ 32*lane[3]       (lane[i] = bit i of the lane id),
// and lanes 16..31 hold the same elements as lanes 0..15 (lane bit 4 has a zero basis).
// CHECK-LABEL: module attributes {gpu.container_module}
// The tile function is gone (the gpu.module is appended after whatever else the module holds).
// CHECK-NOT: func.func
// CHECK: gpu.module @flare_kernels {
// The one dynamic shared-memory buffer of the module: `.extern .shared .align 1024 .b8 __flare_smem[]`.
// CHECK-NEXT: llvm.mlir.global external @__flare_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// Kernel ABI: !tile.ptr<f32> -> !llvm.ptr<1> (global), i32 stays; 1 warp -> 32 threads.
// CHECK-NEXT: gpu.func @exp_kernel(%[[X:.*]]: !llvm.ptr<1>, %[[Z:.*]]: !llvm.ptr<1>, %[[N:.*]]: i32) kernel
// The block size is only recorded as known_block_size; the later convert-gpu-to-nvvm derives the one
// nvvm.maxntid (.maxntid in PTX) from it, so the kernel carries no nvvm.maxntid of its own (two would
// make the --emit=llvm output unparseable, see flarec-emit-llvm-reparse.test). No shared memory is
// needed. The whole attribute dictionary:
// CHECK-SAME: attributes {known_block_size = array<i32: 32, 1, 1>, tgpu.shared_bytes = 0 : i32} {
// Lane id = tid.x & 31, warp id = tid.x >> 5.
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[TID32:.*]] = arith.index_castui %[[TID]] : index to i32
// CHECK: %[[LANE:.*]] = arith.andi %[[TID32]], %c31_i32{{[_0-9]*}} : i32
// CHECK: arith.shrui %[[TID32]], %c5_i32{{[_0-9]*}} : i32
// CHECK: llvm.mlir.addressof @__flare_smem : !llvm.ptr<3>
// program_id x reads the block id.
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK-NEXT: %[[PID:.*]] = arith.index_castui %[[BID]] : index to i32
// CHECK: %[[START:.*]] = arith.muli %[[PID]], %c64_i32{{[_0-9]*}} : i32
// The view's stride is widened to 64 bits once.
// CHECK: %[[STRIDE:.*]] = arith.extsi %c1_i32{{[_0-9]*}} : i32 to i64
// Registers 0..3 hold 4 consecutive elements, g = start + T .. g + 3, and the innermost stride is the
// constant 1, so they are one group with one address (64-bit offset g * stride). Global loads are
// predicated PTX instructions (inline asm: the destinations are first set to the padding, 0.0 by
// default, then `@p ld.global` overwrites them), so no load sits behind a branch. A group of 32-bit
// elements is one asm statement whose loads write the same four registers:
//   - one 16-byte vector load (ld.global.v4.b32), predicated on the whole group lying inside the view
//     (0 <= g and g + 4 <= n, signed) and the address being 16-byte aligned;
//   - otherwise each element i under its own bounds, g + i < limit (unsigned: 0 <= g + i < n), the
//     limit n on that path and 0 (nothing loads) on the vector path.
// No select merges the two paths, so nothing reads the loaded registers before their use.
// CHECK: %[[G0:.*]] = arith.addi %[[START]], %[[T:.*]] : i32
// CHECK-NEXT: %[[G0W:.*]] = arith.extsi %[[G0]] : i32 to i64
// CHECK-NEXT: %[[OFF0:.*]] = arith.muli %[[G0W]], %[[STRIDE]] : i64
// CHECK-NEXT: %[[ADDR0:.*]] = arith.addi %c0_i64{{[_0-9]*}}, %[[OFF0]] : i64
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[X]][%[[ADDR0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[END:.*]] = arith.addi %[[G0]], %c4_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[N]] : i32
// CHECK: %[[NONNEG:.*]] = arith.cmpi sge, %[[G0]], %c0_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[WHOLE:.*]] = arith.andi %[[NONNEG]], %[[FITS]] : i1
// CHECK-NEXT: %[[BITS:.*]] = llvm.ptrtoint %[[P0]] : !llvm.ptr<1> to i64
// CHECK: %[[MIS:.*]] = arith.andi %[[BITS]], %c15_i64{{[_0-9]*}} : i64
// CHECK-NEXT: %[[ALIGNED:.*]] = arith.cmpi eq, %[[MIS]], %c0_i64{{[_0-9]*}} : i64
// CHECK-NEXT: %[[VOK:.*]] = arith.andi %[[WHOLE]], %[[ALIGNED]] : i1
// CHECK: %[[NOVEC:.*]] = arith.xori %[[VOK]], %true{{[_0-9]*}} : i1
// CHECK: %[[LIMIT:.*]] = arith.select %[[NOVEC]], %[[N]], %c0_i32{{[_0-9]*}} : i32
// The predicate as an i32, the padding 0.0 as a 32-bit word.
// CHECK-NEXT: %[[VPRED:.*]] = arith.extui %[[VOK]] : i1 to i32
// CHECK-NEXT: %[[PADW:.*]] = llvm.bitcast %cst : f32 to i32
// CHECK-NEXT: %[[V:.*]] = llvm.inline_asm has_side_effects "{{.*}}setp.ne.b32 p, $5, 0;{{.*}}mov.b32 $0, $6;{{.*}}mov.b32 $3, $6;{{.*}}@p ld.global.v4.b32 {$0, $1, $2, $3}, [$4];{{.*}}add.s32 c, $7, 0;{{.*}}setp.lt.u32 p, c, $8;{{.*}}@p ld.global.b32 $0, [$4];{{.*}}add.s32 c, $7, 3;{{.*}}setp.lt.u32 p, c, $8;{{.*}}@p ld.global.b32 $3, [$4+12];{{.*}}", "=r,=r,=r,=r,l,r,r,r,r" %[[P0]], %[[VPRED]], %[[PADW]], %[[G0]], %[[LIMIT]] : (!llvm.ptr<1>, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT: %[[V0W:.*]] = llvm.extractvalue %[[V]][0] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT: %[[R0:.*]] = llvm.bitcast %[[V0W]] : i32 to f32
// CHECK-COUNT-3: llvm.extractvalue %[[V]]
// CHECK-NOT: arith.select %[[VOK]]
// One group per thread: no second vector load, and no branch around any load.
// CHECK-NOT: ld.global.v4
// CHECK-NOT: scf.if
// exp(x) = ex2.approx(x * log2(e)), once per register.
// CHECK: %[[E0:.*]] = arith.mulf %[[R0]], %[[LOG2E:.*]] : f32
// CHECK-NEXT: %[[Y0:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[E0]]) : (f32) -> f32
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// The store: only lanes 0..15 own elements, (lane & 16) == 0, and each register is bounds-checked.
// CHECK: %[[DUP:.*]] = arith.andi %[[LANE]], %c16_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[OWNER:.*]] = arith.cmpi eq, %[[DUP]], %c0_i32{{[_0-9]*}} : i32
// CHECK: %[[SG0:.*]] = arith.addi %[[START]], %[[T]] : i32
// CHECK-NEXT: %[[SOK0:.*]] = arith.cmpi ult, %[[SG0]], %[[N]] : i32
// CHECK-NEXT: %[[PRED0:.*]] = arith.andi %[[OWNER]], %[[SOK0]] : i1
// CHECK: scf.if %[[PRED0]] {
// CHECK-NEXT:   %[[SP0:.*]] = llvm.getelementptr %[[Z]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT:   llvm.store %[[Y0]], %[[SP0]] : f32, !llvm.ptr<1>
// CHECK-NEXT: }
// CHECK-COUNT-3: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @exp_kernel(%x: !tile.ptr<f32>, %z: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %pid = tile.program_id x
  %one = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %start = arith.muli %pid, %c64 : i32
  %xv = tile.make_view %x, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %zv = tile.make_view %z, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %a = tile.load %xv[%start] : !tile.view<f32, 1> -> tensor<64xf32>
  %e = math.exp %a : tensor<64xf32>
  tile.store %e, %zv[%start] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// -----

// With a stride that is not the constant 1 (here a kernel parameter) consecutive registers are not
// consecutive addresses: every register loads on its own, at coordinate T ^ r, with a predicated scalar
// load under its own unsigned bounds check and the padding outside. No vector load appears.
// CHECK-LABEL: gpu.func @strided_copy
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1>, %[[Z:.*]]: !llvm.ptr<1>, %[[N:.*]]: i32, %[[S:.*]]: i32)
// CHECK-NOT: ld.global.v
// CHECK: %[[STRIDE:.*]] = arith.extsi %[[S]] : i32 to i64
// Register 0: g = 0 + T.
// CHECK: %[[G0:.*]] = arith.addi %c0_i32{{[_0-9]*}}, %[[T:.*]] : i32
// CHECK-NEXT: %[[G0W:.*]] = arith.extsi %[[G0]] : i32 to i64
// CHECK-NEXT: %[[OFF0:.*]] = arith.muli %[[G0W]], %[[STRIDE]] : i64
// CHECK-NEXT: %[[ADDR0:.*]] = arith.addi %c0_i64{{[_0-9]*}}, %[[OFF0]] : i64
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[X]][%[[ADDR0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[OK0:.*]] = arith.cmpi ult, %[[G0]], %[[N]] : i32
// CHECK-NEXT: %[[PRED0:.*]] = arith.extui %[[OK0]] : i1 to i32
// CHECK-NEXT: %[[PADW:.*]] = llvm.bitcast %cst : f32 to i32
// CHECK-NEXT: %[[W0:.*]] = llvm.inline_asm has_side_effects "{{.*}}@p ld.global.b32 $0, [$1];{{.*}}", "=r,l,r,r" %[[P0]], %[[PRED0]], %[[PADW]] : (!llvm.ptr<1>, i32, i32) -> i32
// CHECK-NEXT: %[[R0:.*]] = llvm.bitcast %[[W0]] : i32 to f32
// Registers 1..3: coordinates T ^ 1, T ^ 2, T ^ 3, each with its own address and check.
// CHECK: arith.xori %[[T]], %c1_i32{{[_0-9]*}} : i32
// CHECK: llvm.getelementptr %[[X]]
// CHECK: ld.global.b32
// CHECK: arith.xori %[[T]], %c2_i32{{[_0-9]*}} : i32
// CHECK: llvm.getelementptr %[[X]]
// CHECK: ld.global.b32
// CHECK: arith.xori %[[T]], %c3_i32{{[_0-9]*}} : i32
// CHECK: llvm.getelementptr %[[X]]
// CHECK: ld.global.b32
// The store of register 0 writes the loaded value.
// CHECK: llvm.getelementptr %[[Z]]
// CHECK-NEXT: llvm.store %[[R0]], %{{.*}} : f32, !llvm.ptr<1>
// CHECK-NOT: ld.global.v
// CHECK: gpu.return
func.func @strided_copy(%x: !tile.ptr<f32>, %z: !tile.ptr<f32>, %n: i32, %stride: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %xv = tile.make_view %x, [%n], [%stride] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %zv = tile.make_view %z, [%n], [%stride] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %a = tile.load %xv[%c0] : !tile.view<f32, 1> -> tensor<64xf32>
  tile.store %a, %zv[%c0] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// -----

// Kernel parameters of every ABI kind and the other grid queries (whose sum is stored, so that they stay).
// CHECK-LABEL: gpu.func @abi(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i64, %{{.*}}: f32) kernel
// 8 warps -> 256 threads.
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: gpu.block_id y
// CHECK: gpu.block_id z
// CHECK: gpu.grid_dim x
// CHECK: gpu.grid_dim y
func.func @abi(%p: !tile.ptr<i32>, %a: i32, %b: i64, %c: f32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %0 = tile.program_id y
  %1 = tile.program_id z
  %2 = tile.num_programs x
  %3 = tile.num_programs y
  %s0 = arith.addi %0, %1 : i32
  %s1 = arith.addi %2, %3 : i32
  %s = arith.addi %s0, %s1 : i32
  %t = tile.splat %s : i32 -> tensor<256xi32>
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%a], [%c1] : !tile.ptr<i32> -> !tile.view<i32, 1>
  tile.store %t, %v[%a] : tensor<256xi32>, !tile.view<i32, 1>
  return
}

// -----

// A row sum inside one warp: 4x32 f32, 1 warp. Blocked layout:
//   reg (0,1), (0,2); lane (0,4), (0,8), (0,16), (1,0), (2,0).
// (a) In the thread, the 4 registers (same row, columns T..T+3) are added in register order.
// (b) Lane bits 0-2 move along the columns (axis 1): butterfly shuffles with lane masks 1, 2, 4 finish the
//     row sum in every lane of the row; lane bits 3-4 move along the rows and are left alone.
// (c) No warp bit moves along the axis: no shared memory, no barrier.
// The 2-D load computes (row0 + r) * stride0 + (col0 + c) * stride1 in 64 bits. The 4 registers are 4
// consecutive columns of one row and the column stride is the constant 1: one group, whose row is
// checked once (unsigned, 0 <= row < rows); the vector load also needs the whole column range inside
// and a 16-byte aligned address, the element-wise fallback checks row and column per element.
// CHECK-LABEL: gpu.func @row_sum_one_warp
// CHECK-SAME: tgpu.shared_bytes = 0 : i32
// CHECK: %[[ROK:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK: %[[P:.*]] = llvm.getelementptr %{{.*}} : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: %[[COLS:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[WHOLE:.*]] = arith.andi %[[COLS]], %[[ROK]] : i1
// CHECK: %[[VOK:.*]] = arith.andi %[[WHOLE]], %{{.*}} : i1
// The element-wise path: no vector load and the row in bounds, then each column against the limit.
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[NOVEC:.*]] = arith.xori %[[VOK]], %[[TRUE]] : i1
// CHECK-NEXT: %[[INROWS:.*]] = arith.andi %[[NOVEC]], %[[ROK]] : i1
// CHECK: %[[LIMIT:.*]] = arith.select %[[INROWS]], %{{.*}}, %c0_i32{{[_0-9]*}} : i32
// CHECK-NEXT: %[[VPRED:.*]] = arith.extui %[[VOK]] : i1 to i32
// CHECK-NEXT: %[[PADW:.*]] = llvm.bitcast %cst : f32 to i32
// CHECK-NEXT: %[[V:.*]] = llvm.inline_asm has_side_effects "{{.*}}@p ld.global.v4.b32 {$0, $1, $2, $3}, [$4];{{.*}}setp.lt.u32 p, c, $8;{{.*}}@p ld.global.b32 $0, [$4];{{.*}}", "=r,=r,=r,=r,l,r,r,r,r" %[[P]], %[[VPRED]], %[[PADW]], %{{.*}}, %[[LIMIT]]
// CHECK: %[[L0:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK: %[[L1:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK: %[[L2:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK: %[[L3:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// (a) The row's 4 registers, in register order.
// CHECK-NEXT: %[[S01:.*]] = arith.addf %[[L0]], %[[L1]] : f32
// CHECK-NEXT: %[[S012:.*]] = arith.addf %[[S01]], %[[L2]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[S012]], %[[L3]] : f32
// CHECK: %[[SH1:.*]] = nvvm.shfl.sync bfly %c-1_i32, %[[S]], %c1_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}} : f32 -> f32
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[S]], %[[SH1]] : f32
// CHECK: %[[SH2:.*]] = nvvm.shfl.sync bfly %c-1_i32, %[[A1]], %c2_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}} : f32 -> f32
// CHECK-NEXT: %[[A2:.*]] = arith.addf %[[A1]], %[[SH2]] : f32
// CHECK: %[[SH4:.*]] = nvvm.shfl.sync bfly %c-1_i32, %[[A2]], %c4_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}} : f32 -> f32
// CHECK-NEXT: %[[A4:.*]] = arith.addf %[[A2]], %[[SH4]] : f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// The [4] result (lane 0 x 3, then rows 1, 2): only lanes with (lane & 7) == 0 store.
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %c7_i32{{[_0-9]*}} : i32
// CHECK-NEXT: arith.cmpi eq, %[[LOW]], %c0_i32{{[_0-9]*}} : i32
// CHECK: llvm.store %[[A4]], %{{.*}} : f32, !llvm.ptr<1>
func.func @row_sum_one_warp(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %q, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x32xf32>
  %s = tile.reduce sum %x {axis = 1 : i32} : tensor<4x32xf32> -> tensor<4xf32>
  tile.store %s, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// Row max across warps, then x - max broadcast back (the first half of a softmax): 4x256 f32, 4 warps.
// Blocked layout: reg (0,1), (0,2), (2,0); lane (0,4) .. (0,64); warp (0,128), (1,0).
// (a) registers 0-3 (row r) and 4-7 (row r+2) combine into 2 partial maxima;
// (b) all 5 lane bits move along the columns: shuffles with masks 1, 2, 4, 8, 16 for each partial;
// (c) warp bit 0 moves along the columns too: the warps exchange partials through shared memory laid
//     out as [warp][row] = 4 warps x 4 rows x 4 bytes = 64 bytes, between two barriers, and each thread
//     combines warps w & ~1 and w | 1. The padding -inf (0xFF800000) never wins a max.
// The broadcast back is free (a register permutation): no barrier beyond the reduction's two.
// CHECK-LABEL: gpu.func @row_max_warps
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: tgpu.shared_bytes = 64 : i32
// CHECK: %[[SMEM:.*]] = llvm.mlir.addressof @__flare_smem : !llvm.ptr<3>
// The loads pad with -inf: the padding word the predicated loads start from.
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: llvm.bitcast %[[NINF]] : f32 to i32
// CHECK-COUNT-6: arith.maximumf
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c1_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c1_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c2_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c2_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c4_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c4_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c8_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c8_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c16_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: %[[M0:.*]] = arith.maximumf
// CHECK: nvvm.shfl.sync bfly %c-1_i32, %{{.*}}, %c16_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}}
// CHECK: %[[M1:.*]] = arith.maximumf
// CHECK-NOT: nvvm.shfl.sync
// CHECK: %[[ST0:.*]] = llvm.getelementptr %[[SMEM]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.store %[[M0]], %[[ST0]] : f32, !llvm.ptr<3>
// CHECK: llvm.store %[[M1]], %{{.*}} : f32, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// CHECK: %[[BASE:.*]] = arith.andi %{{.*}}, %c-2_i32 : i32
// CHECK: arith.ori %[[BASE]], %c0_i32{{[_0-9]*}} : i32
// CHECK: %[[W0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.ori %[[BASE]], %c1_i32{{[_0-9]*}} : i32
// CHECK: %[[W1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NEXT: %[[ROW0:.*]] = arith.maximumf %[[W0]], %[[W1]] : f32
// CHECK: %[[ROW2:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: arith.subf %{{.*}}, %[[ROW0]] fastmath<contract> : f32
// CHECK-COUNT-3: arith.subf %{{.*}}, %[[ROW0]] fastmath<contract> : f32
// CHECK-COUNT-4: arith.subf %{{.*}}, %[[ROW2]] fastmath<contract> : f32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @row_max_warps(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %v[%c0, %c0] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<4x256xf32>
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x256xf32> -> tensor<4xf32>
  %m1 = tile.expand_dims %m {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %mb = tile.broadcast %m1 : tensor<4x1xf32> -> tensor<4x256xf32>
  %d = arith.subf %x, %mb : tensor<4x256xf32>
  tile.store %d, %v[%c0, %c0] : tensor<4x256xf32>, !tile.view<f32, 2>
  return
}

// -----

// A layout conversion that no register permutation can do, inside one warp, moves by shuffles. The row
// sums of a 4x32 tile (sliced layout: lane bits 3, 4 -> rows; lanes 0-2 repeat) are added to a loaded
// 4-vector (blocked: 4 registers, every lane holds all 4 rows): after the butterfly sums, each of the 4
// registers is read from a lane holding its row. No shared memory, no barrier (the conversion through
// shared memory, between warps: tgpu-to-nvvm-convert-shuffle.mlir).
// CHECK-LABEL: gpu.func @convert_in_one_warp
// CHECK-SAME: tgpu.shared_bytes = 0 : i32
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-3: nvvm.shfl.sync  bfly
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: nvvm.shfl.sync  idx
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: arith.addf
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @convert_in_one_warp(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n, %n], [%n, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %o = tile.make_view %q, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %b = tile.load %o[%c0] : !tile.view<f32, 1> -> tensor<4xf32>
  %x = tile.load %v[%c0, %c0] : !tile.view<f32, 2> -> tensor<4x32xf32>
  %s = tile.reduce sum %x {axis = 1 : i32} : tensor<4x32xf32> -> tensor<4xf32>
  %y = arith.addf %b, %s : tensor<4xf32>
  tile.store %y, %o[%c0] : tensor<4xf32>, !tile.view<f32, 1>
  return
}

// -----

// Transcendentals use the approximate NVVM instructions: exp2 -> ex2.approx, log2 -> lg2.approx,
// log(x) = lg2(x) * ln(2), rsqrt -> rsqrt.approx, tanh -> inline tanh.approx.f32. 32 f32 on one warp
// with vec 4: 4 registers per thread, lanes 0..7 cover the tile and lanes 8..31 repeat it.
// A 16-bit input computes in f32: extf, ex2, truncf. (Both views have unit stride: each tile loads as one
// group of 16 bytes per thread, 4 f32 or 8 bf16: the f32 registers are the group load's results.)
// CHECK-LABEL: gpu.func @math_ops
// CHECK: ld.global.v4.b32
// CHECK: %[[X:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// Each op is replayed over all 4 registers before the next op; follow register 0.
// CHECK: %[[A:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[X]]) : (f32) -> f32
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: %[[B:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[A]]) : (f32) -> f32
// CHECK: %[[C:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[B]]) : (f32) -> f32
// ln(2) = 0.693147182 in f32.
// CHECK-NEXT: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[C]], %[[LN2]] : f32
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%[[D]]) : (f32) -> f32
// CHECK: llvm.inline_asm "tanh.approx.f32 $0, $1;", "=f,f" %[[E]] : (f32) -> f32
// The 8 bf16 arrive as 4 words of 2, then element by element: 8 selects.
// CHECK: ld.global.v4.b32
// CHECK: %[[H:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : bf16
// CHECK-COUNT-7: arith.select %{{.*}}, %{{.*}}, %{{.*}} : bf16
// CHECK: %[[HW:.*]] = arith.extf %[[H]] : bf16 to f32
// log2(e) = 1.44269502 in f32.
// CHECK-NEXT: %[[L2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[HS:.*]] = arith.mulf %[[HW]], %[[L2E]] : f32
// CHECK-NEXT: %[[HE:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[HS]]) : (f32) -> f32
// CHECK-NEXT: arith.truncf %[[HE]] : f32 to bf16
func.func @math_ops(%p: !tile.ptr<f32>, %q: !tile.ptr<bf16>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %w = tile.make_view %q, [%n], [%c1] : !tile.ptr<bf16> -> !tile.view<bf16, 1>
  %x = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<32xf32>
  %a = math.exp2 %x : tensor<32xf32>
  %b = math.log2 %a : tensor<32xf32>
  %c = math.log %b : tensor<32xf32>
  %e = math.rsqrt %c : tensor<32xf32>
  %f = math.tanh %e : tensor<32xf32>
  tile.store %f, %v[%c0] : tensor<32xf32>, !tile.view<f32, 1>
  %y = tile.load %w[%c0] : !tile.view<bf16, 1> -> tensor<32xbf16>
  %z = math.exp %y : tensor<32xbf16>
  tile.store %z, %w[%c0] : tensor<32xbf16>, !tile.view<bf16, 1>
  return
}

// -----

// scf.for carrying a tile carries each of its registers: 64 f32 on one warp is 4 registers per thread,
// so the loop has 4 f32 iteration arguments and yields 4 values.
// CHECK-LABEL: gpu.func @loop_carries_registers
// CHECK: %[[R:.*]]:4 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A0:.*]] = %[[Z:.*]], %[[A1:.*]] = %[[Z]], %[[A2:.*]] = %[[Z]], %[[A3:.*]] = %[[Z]]) -> (f32, f32, f32, f32)  : i32 {
// The body's load gives 4 registers (one group load), added to the carried ones.
// CHECK-COUNT-4: llvm.bitcast %{{.*}} : i32 to f32
// CHECK: %[[N0:.*]] = arith.addf %[[A0]], %{{.*}} : f32
// CHECK-NEXT: %[[N1:.*]] = arith.addf %[[A1]], %{{.*}} : f32
// CHECK-NEXT: %[[N2:.*]] = arith.addf %[[A2]], %{{.*}} : f32
// CHECK-NEXT: %[[N3:.*]] = arith.addf %[[A3]], %{{.*}} : f32
// CHECK-NEXT: scf.yield %[[N0]], %[[N1]], %[[N2]], %[[N3]] : f32, f32, f32, f32
// CHECK: llvm.store %[[R]]#0
// CHECK: llvm.store %[[R]]#1
// CHECK: llvm.store %[[R]]#2
// CHECK: llvm.store %[[R]]#3
func.func @loop_carries_registers(%p: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant 0.0 : f32
  %v = tile.make_view %p, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %init = tile.splat %zero : f32 -> tensor<64xf32>
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%a = %init) -> (tensor<64xf32>) : i32 {
    %x = tile.load %v[%j] : !tile.view<f32, 1> -> tensor<64xf32>
    %s = arith.addf %a, %x : tensor<64xf32>
    scf.yield %s : tensor<64xf32>
  }
  tile.store %acc, %v[%c0] : tensor<64xf32>, !tile.view<f32, 1>
  return
}

// -----

// Functions that are not tile kernels stay where they are; with no kernel at all there is no
// gpu.module either.
// CHECK-LABEL: module {
// CHECK-NOT: gpu.module
// CHECK: func.func @plain_function
func.func @plain_function(%a: i32) -> i32 {
  return %a : i32
}
