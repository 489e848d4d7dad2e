// convert-attn-to-tile, pair-instances: a persistent kernel's CTAs take pairs of consecutive query
// blocks per turn unless the option turns that off, which only a kernel without a mask (its
// instances of equal work) honours: it is then marked #tile.schedule<pair_instances = false>. Where the option
// cannot apply, attn-choose-config leaves pair_instances on: one configuration, one kernel.
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=SINGLE
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile | FileCheck %s --check-prefix=PAIRED
// RUN: sed 's/x128x/x256x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=SINGLE
// A causal mask keeps its pairs (heavy and light query blocks of a head); head dim 64 is not
// persistent.
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=KEPT
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a pair-instances=0" --convert-attn-to-tile | FileCheck %s --check-prefix=KEPT

// SINGLE-LABEL: func.func @plain(
// SINGLE-SAME: tile.schedule = #tile.schedule<{{[^>]*}}persistent = true, pair_instances = false

// PAIRED-LABEL: func.func @plain(
// PAIRED-SAME: flare.attention_config = #attn.config<{{[^>]*}}, pair_instances{{[^>]*}}>
// PAIRED-NOT: pair_instances
// PAIRED: return

// KEPT-LABEL: func.func @
// KEPT-SAME: flare.attention_config = #attn.config<{{[^>]*}}, pair_instances{{[^>]*}}>
// KEPT-NOT: pair_instances
// KEPT: return
