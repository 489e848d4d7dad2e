// attn-choose-config, the choices made where a persistent kernel's instances start often.
// operands-after-first-stage: a persistent kernel with a producer warpgroup (head dim 128) has the
// producer copy each query block's Q after the block's first K/V stage
// (#tile.schedule<operands_after_first_stage = true>) where instances start often against their work: with a
// mask (instances of unequal work) and when the CTAs take one query block per turn. The kernel of
// pairs without a mask keeps Q first; the option overrides the choice either way. Kernels without
// a producer (head dim 256) or not persistent (head dim 64) are never marked.
// prefetch-next-instance: a persistent kernel without a producer (head dim 256) issues the next
// query block's first K/V copy after this block's loops (#tile.schedule<prefetch_next_instance = true>) where
// its CTAs take one query block per turn; pairs (the default, and every masked kernel) keep the ring
// per instance unless the option asks for it. Head dims 64 (not persistent) and 128 (a producer)
// are never marked.
// invariant-a-in-registers: a persistent kernel with a producer warpgroup (head dim 128) reads each
// query block's Q into wgmma's register fragments once, before its loops, and releases Q's buffer
// right then (#tile.schedule<invariant_a_in_registers = true>) where its CTAs take one query block per turn
// (no mask, pair-instances=0); pairs (the default, and every masked kernel) keep reading Q from
// shared memory unless the option asks for it. Head dims 64 (not persistent) and 256 (no producer)
// are not marked by default.
// dynamic-instances: only on request (dynamic-instances=1, flare::attention's tile.persistent = 2),
// and only in a persistent kernel with a producer warpgroup; it turns the pairs off and leaves every
// other switch as the kernel of every G-th query block had it (the document mask's lists kernel at
// head dim 128: operands_after_first_stage stays, invariant_a_in_registers stays off). Head dim 256
// (no producer) ignores it.
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s --check-prefix=LATE
// RUN: flare-opt %flare_src/examples/attention/document.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1 dynamic-instances=1" | FileCheck %s --check-prefix=DYN
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/document.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1 dynamic-instances=1" | FileCheck %s --check-prefix=NO-DYN
// RUN: flare-opt %flare_src/examples/attention/document.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a block-lists=1" | FileCheck %s --check-prefix=NO-DYN
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=LATE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=1" | FileCheck %s --check-prefix=LATE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s --check-prefix=FIRST
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=0" | FileCheck %s --check-prefix=FIRST
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=1" | FileCheck %s --check-prefix=FIRST
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=1" | FileCheck %s --check-prefix=FIRST
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=PREFETCH
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a prefetch-next-instance=1" | FileCheck %s --check-prefix=PREFETCH
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0 prefetch-next-instance=0" | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0 prefetch-next-instance=1" | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a prefetch-next-instance=1" | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=REGS
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a invariant-a-in-registers=1" | FileCheck %s --check-prefix=REGS
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" | FileCheck %s --check-prefix=NO-REGS
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=NO-REGS
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=NO-REGS
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" | FileCheck %s --check-prefix=NO-REGS
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0 invariant-a-in-registers=0" | FileCheck %s --check-prefix=NO-REGS

// The switches in the chosen configuration (convert-attn-to-tile turns each into the kernel's tile
// attribute of the same name: test/Conversion/attn-to-tile-switches.mlir).
// LATE: config = #attn.config<{{.*}} producer,{{.*}} operands_after_first_stage

// FIRST: config = #attn.config<
// FIRST-NOT: operands_after_first_stage
// FIRST-SAME: >

// PREFETCH: config = #attn.config<{{.*}} prefetch_next_instance

// PER-INSTANCE: config = #attn.config<
// PER-INSTANCE-NOT: prefetch_next_instance
// PER-INSTANCE-SAME: >

// REGS: config = #attn.config<{{.*}} producer,{{.*}} persistent,{{.*}} invariant_a_in_registers

// NO-REGS: config = #attn.config<
// NO-REGS-NOT: invariant_a_in_registers
// NO-REGS-SAME: >

// DYN: config = #attn.config<block_m = 128, block_n = 128, warps = 8, min_blocks_per_sm = 0, partial_row_sums = 0, overlap, ping_pong, producer, last_pv_after_loops, persistent, operands_after_first_stage, uniform_warpgroup, block_lists, dynamic_instances>

// NO-DYN: config = #attn.config<
// NO-DYN-NOT: dynamic_instances
// NO-DYN-SAME: >
