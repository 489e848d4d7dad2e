// The schedule of a persistent kernel's tile loop (lib/Conversion/TGPUToNVVM/TileSchedule.h), the IR
// convert-tgpu-to-nvvm emits, folded for constant grids: what each CTA runs, turn by turn. The pass
// also checks that every instance (and every step of a split one) runs exactly once, in at most two
// pieces that hand over through one slot, and that the device splits exactly where
// flare::splitsLaunch says so.
//
// Pairs: 7 instances on 3 CTAs are 4 chunks of two (the last one short); CTA c takes chunks c, c + 3.
// RUN: flare-opt %s --tgpu-test-tile-schedule="instances=7 ctas=3" | FileCheck %s --check-prefix=PAIRS
// PAIRS:      cta 0: 0 1 6{{$}}
// PAIRS-NEXT: cta 1: 2 3{{$}}
// PAIRS-NEXT: cta 2: 4 5{{$}}
//
// Single instances (#tile.schedule<pair_instances = false>), and pairs where there are fewer than
// two per CTA.
// RUN: flare-opt %s --tgpu-test-tile-schedule="instances=7 ctas=3 pairs=false" | FileCheck %s --check-prefix=SINGLE
// RUN: flare-opt %s --tgpu-test-tile-schedule="instances=5 ctas=3" | FileCheck %s --check-prefix=FEW
// SINGLE:      cta 0: 0 3 6{{$}}
// SINGLE-NEXT: cta 1: 1 4{{$}}
// SINGLE-NEXT: cta 2: 2 5{{$}}
// FEW:      cta 0: 0 3{{$}}
// FEW-NEXT: cta 1: 1 4{{$}}
// FEW-NEXT: cta 2: 2{{$}}
//
// Stream-K: 10 instances of 16 steps on 4 CTAs run one whole round (instances 0-3), then the other
// 6 instances' 96 steps in 4 ranges of 24. A piece that ends an instance (lo > 0) hands its state
// over through its own CTA's slot, the piece that begins it takes it from there (the next CTA's).
// RUN: flare-opt %s --tgpu-test-tile-schedule="instances=10 ctas=4 steps=16" | FileCheck %s --check-prefix=SPLIT
// SPLIT:      split
// SPLIT-NEXT: cta 0: 0[0,16)@1 4[0,16)@1 5[0,8)@1{{$}}
// SPLIT-NEXT: cta 1: 1[0,16)@2 5[8,16)@1 6[0,16)@2{{$}}
// SPLIT-NEXT: cta 2: 2[0,16)@3 7[0,16)@3 8[0,8)@3{{$}}
// SPLIT-NEXT: cta 3: 3[0,16)@4 8[8,16)@3 9[0,16)@4{{$}}
//
// Fewer steps than kSplitMinSteps (16), or a grid that is a multiple of the CTAs: no split, the
// chunks of two instead, each instance whole.
// RUN: flare-opt %s --tgpu-test-tile-schedule="instances=10 ctas=4 steps=15" | FileCheck %s --check-prefix=SHORT
// RUN: flare-opt %s --tgpu-test-tile-schedule="instances=8 ctas=4 steps=64" | FileCheck %s --check-prefix=EVEN
// SHORT:      no split
// SHORT-NEXT: cta 0: 0[0,15)@1 1[0,15)@1 8[0,15)@1 9[0,15)@1{{$}}
// SHORT-NEXT: cta 1: 2[0,15)@2 3[0,15)@2{{$}}
// EVEN:      no split
// EVEN-NEXT: cta 0: 0[0,64)@1 1[0,64)@1{{$}}
// EVEN:      cta 3: 6[0,64)@4 7[0,64)@4{{$}}
//
// Many schedules, each checked (pairs and single, with and without a split range).
// RUN: flare-opt %s --tgpu-test-tile-schedule="sweep=true" | FileCheck %s --check-prefix=SWEEP
// SWEEP: tile schedules checked: [[N:[0-9]+]]
//
// RUN: not flare-opt %s --tgpu-test-tile-schedule="instances=0" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: tgpu-test-tile-schedule: instances and ctas must be positive, steps not negative
module {
}
