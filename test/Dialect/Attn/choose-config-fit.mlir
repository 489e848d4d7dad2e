// Configurations that always fit: attn-choose-config's last step estimates the shared memory of its
// choice (layout conversions' scratch, 4 bytes an element; Q and two K/V stages with wgmma, one K or
// V tile on mma.sync) and, while it exceeds what a CTA of the target may use, takes fewer keys per
// step (down to 32), then 64 query rows on four warps (no ping-pong), then fewer keys again.
//
// sm_86 and sm_89 (99 KiB a CTA) from head dim 144 (tiles of 256): 32 keys, then 64 rows on four
// warps; 128 rows needed 163840 bytes (Q's 128 x 256 tile converted through 128 KiB of scratch, one
// 64-key K tile).
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-choose-config="arch=sm_86" | FileCheck %s --check-prefix=SM86-256
// RUN: sed 's/x128x/x144x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-choose-config="arch=sm_89" | FileCheck %s --check-prefix=SM86-256
// SM86-256: config = #attn.config<block_m = 64, block_n = 32, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 4, pair_instances, rows_grow>
// A mask evaluated per element keeps its 32 keys per step.
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/document.mlir | flare-opt --attn-choose-config="arch=sm_86" | FileCheck %s --check-prefix=SM86-DOC
// SM86-DOC: config = #attn.config<block_m = 64, block_n = 32, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 0, pair_instances>
//
// Where the choice fits it is kept: head dim 128 on sm_86 (81920 bytes), 256 on sm_80 (163840 of
// 166912), every choice on sm_90a (choose-config.mlir).
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-choose-config="arch=sm_86" | FileCheck %s --check-prefix=SM86-128
// SM86-128: config = #attn.config<block_m = 128, block_n = 64, warps = 8,
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-choose-config="arch=sm_80" | FileCheck %s --check-prefix=SM80-256
// SM80-256: config = #attn.config<block_m = 128, block_n = 64, warps = 8,
//
// The chosen kernels compile (the shared-memory allocator's check) within the limit:
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir > %t.mlir
// RUN: flarec %t.mlir --arch=sm_86 --emit=meta | FileCheck %s --check-prefix=META
// META: "sharedBytes": 81920
// A configuration given by hand is not changed: one that cannot fit is the allocator's located error.
// RUN: not flarec %t.mlir --arch=sm_86 --emit=meta --attention-config="#attn.config<block_m=128,block_n=64,warps=8,min_blocks_per_sm=0,partial_row_sums=4,pair_instances,rows_grow>" 2>&1 | FileCheck %s --check-prefix=GIVEN
// GIVEN: error: kernel 'causal' needs 163840 bytes of shared memory (131072 for this op), more than the 101376 a CTA may use
//
//
// Each step of the ladder, shown with a smaller limit (max-shared-bytes) on sm_90a's head dim 128
// choice (128 rows, 128 keys; estimated 163840 bytes: Q 32 KiB, two stages of K and V 128 KiB):
// 150000 takes 64 keys per step, 90000 32; 60000 then 64 query rows on four warps (no ping-pong);
// 40000 then 16 keys per step.
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="max-shared-bytes=150000" | FileCheck %s --check-prefix=KEYS
// KEYS: config = #attn.config<block_m = 128, block_n = 64, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer,
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="max-shared-bytes=90000" | FileCheck %s --check-prefix=KEYS32
// KEYS32: config = #attn.config<block_m = 128, block_n = 32, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, ping_pong, producer,
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="max-shared-bytes=60000" | FileCheck %s --check-prefix=ROWS
// ROWS: config = #attn.config<block_m = 64, block_n = 32, warps = 4, min_blocks_per_sm = 0, partial_row_sums = 4, overlap, producer,
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="max-shared-bytes=40000" | FileCheck %s --check-prefix=NARROW
// NARROW: config = #attn.config<block_m = 64, block_n = 16, warps = 4,
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-choose-config="max-shared-bytes=200000" | FileCheck %s --check-prefix=KEPT
// KEPT: config = #attn.config<block_m = 128, block_n = 128, warps = 8,
//
// Every example at every head dim on every target: examples-fit-*.test.
