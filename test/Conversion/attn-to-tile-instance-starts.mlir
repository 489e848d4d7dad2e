// convert-attn-to-tile, the choices made where a persistent kernel's instances start often.
// operands-after-first-stage: a persistent kernel with a producer warpgroup (head dim 128) has the
// producer copy each query block's Q after the block's first K/V stage
// (tile.operands_after_first_stage = true) where instances start often against their work: with a
// mask (instances of unequal work) and when the CTAs take one query block per turn. The kernel of
// pairs without a mask keeps Q first; the option overrides the choice either way. Kernels without
// a producer (head dim 256) or not persistent (head dim 64) are never marked.
// prefetch-next-instance: a persistent kernel without a producer (head dim 256) issues the next
// query block's first K/V copy after this block's loops (tile.prefetch_next_instance = true) where
// its CTAs take one query block per turn; pairs (the default, and every masked kernel) keep the ring
// per instance unless the option asks for it. Head dims 64 (not persistent) and 128 (a producer)
// are never marked.
// invariant-a-in-registers: a persistent kernel with a producer warpgroup (head dim 128) reads each
// query block's Q into wgmma's register fragments once, before its loops, and releases Q's buffer
// right then (tile.invariant_a_in_registers = true) where its CTAs take one query block per turn
// (no mask, pair-instances=0); pairs (the default, and every masked kernel) keep reading Q from
// shared memory unless the option asks for it. Head dims 64 (not persistent) and 256 (no producer)
// are not marked by default.
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile | FileCheck %s --check-prefix=LATE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=LATE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=1" --convert-attn-to-tile | FileCheck %s --check-prefix=LATE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile | FileCheck %s --check-prefix=FIRST
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=0" --convert-attn-to-tile | FileCheck %s --check-prefix=FIRST
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=1" --convert-attn-to-tile | FileCheck %s --check-prefix=FIRST
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a operands-after-first-stage=1" --convert-attn-to-tile | FileCheck %s --check-prefix=FIRST
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=PREFETCH
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a prefetch-next-instance=1" --convert-attn-to-tile | FileCheck %s --check-prefix=PREFETCH
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/causal.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0 prefetch-next-instance=0" --convert-attn-to-tile | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0 prefetch-next-instance=1" --convert-attn-to-tile | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a prefetch-next-instance=1" --convert-attn-to-tile | FileCheck %s --check-prefix=PER-INSTANCE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=REGS
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a invariant-a-in-registers=1" --convert-attn-to-tile | FileCheck %s --check-prefix=REGS
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile | FileCheck %s --check-prefix=NO-REGS
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=NO-REGS
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=NO-REGS
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=NO-REGS
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0 invariant-a-in-registers=0" --convert-attn-to-tile | FileCheck %s --check-prefix=NO-REGS

// LATE-LABEL: func.func @
// LATE-SAME: tile.operands_after_first_stage = true
// LATE-SAME: tile.producer_warpgroup = true

// FIRST-LABEL: func.func @
// FIRST-NOT: tile.operands_after_first_stage
// FIRST: return

// PREFETCH-LABEL: func.func @
// PREFETCH-SAME: tile.prefetch_next_instance = true

// PER-INSTANCE-LABEL: func.func @
// PER-INSTANCE-NOT: tile.prefetch_next_instance
// PER-INSTANCE: return

// REGS-LABEL: func.func @
// REGS-SAME: tile.invariant_a_in_registers = true
// REGS-SAME: tile.persistent = true
// REGS-SAME: tile.producer_warpgroup = true

// NO-REGS-LABEL: func.func @
// NO-REGS-NOT: tile.invariant_a_in_registers
// NO-REGS: return
