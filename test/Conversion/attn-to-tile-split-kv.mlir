// convert-attn-to-tile, split_kv (flash-decoding): grid z runs over (batch, part), the number of parts
// a launch argument after the forward's ABI (with the parts' f32 outputs and LSEs); each instance
// runs the next ceil((hi - lo) / splits) of the key blocks its rows keep and stores its normalised
// output and LSE in f32 into the parts' buffers, not into O. `<name>_combine` (the same ABI, one query
// row per instance) merges the parts, 16 a step, with a running maximum and writes O and the LSE. The parts start with
// tile.allow_dependent_launch, the combine with tile.wait_prior_grids (dependent-launch.mlir).
// RUN: flare-opt %flare_src/examples/attention/sliding_window.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a split-kv=1 block-m=64 num-warps=4 producer=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s
// RUN: flare-opt %flare_src/examples/attention/causal_bottom_right.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a split-kv=1" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=LSE
// split-kv=1 turns the persistent schedule off; a given configuration cannot have both.
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a split-kv=1" | FileCheck %s --check-prefix=CONFIG
// RUN: not flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="config=#attn.config<persistent,pair_instances,split_kv>" 2>&1 | FileCheck %s --check-prefix=BOTH

// CHECK-LABEL: func.func @sliding_window(
// CHECK-SAME: %{{[^:]*}}: i64, %[[PO:[^:]*]]: !tile.ptr<f32>, %[[PL:[^:]*]]: !tile.ptr<f32>, %[[SPLITS:[^:]*]]: i32)
// CHECK-SAME: flare.attention.block_m = 64
// CHECK-SAME: split_kv
// CHECK-NOT: persistent = true
// The parts let <name>_combine start its CTAs while they end (a dependent launch), before any load.
// CHECK-NOT: tile.load
// CHECK: tile.allow_dependent_launch
// CHECK: %[[Z:.*]] = tile.program_id z
// CHECK: %[[PART:.*]] = arith.remui %[[Z]], %[[SPLITS]] : i32
// CHECK: %[[BATCH:.*]] = arith.divui %[[Z]], %[[SPLITS]] : i32
// The part's share of the kept blocks [lo, hi): ceil((hi - lo) / splits) blocks from lo + part x share.
// CHECK: %[[SPLITS1:.*]] = arith.subi %[[SPLITS]], %c1_i32 : i32
// CHECK: %[[N:.*]] = arith.subi %[[HI:.*]], %[[LO:.*]] : i32
// CHECK: %[[N1:.*]] = arith.addi %[[N]], %[[SPLITS1]] : i32
// CHECK: %[[SHARE:.*]] = arith.divui %[[N1]], %[[SPLITS]] : i32
// CHECK: %[[OFF:.*]] = arith.muli %[[PART]], %[[SHARE]] : i32
// CHECK: %[[FROM:.*]] = arith.addi %[[LO]], %[[OFF]] : i32
// CHECK: %[[START:.*]] = arith.minsi %[[FROM]], %[[HI]] : i32
// CHECK: %[[TO:.*]] = arith.addi %[[START]], %[[SHARE]] : i32
// CHECK: arith.minsi %[[TO]], %[[HI]] : i32
// CHECK: scf.for
// CHECK: scf.for
// The part's output stays f32 (no truncation) and goes to the parts' buffer, its LSE beside it.
// CHECK: tile.addptr %[[PO]]
// CHECK: tile.addptr %[[PL]]
// CHECK-NOT: arith.truncf
// CHECK: tile.store %{{.*}} : tensor<64x128xf32>
// CHECK: tile.store %{{.*}} : tensor<64xf32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @sliding_window_combine(
// CHECK-SAME: %[[PO2:[^:]*]]: !tile.ptr<f32>, %{{[^:]*}}: !tile.ptr<f32>, %[[SPLITS2:[^:]*]]: i32)
// CHECK-SAME: flare.attention.block_m = 1 :
// It waits for the parts before any load.
// CHECK-NOT: tile.load
// CHECK: tile.wait_prior_grids
// A step's 16 parts: their outputs as one [16, D] load and their LSEs as one [16] load (-inf past
// the last part), the maximum over the parts, the weights, and the weighted rows summed over the parts.
// CHECK: %[[ROWSTRIDE:.*]] = arith.muli %{{.*}}, %c128_i32 : i32
// CHECK: %[[OV:.*]] = tile.make_view %{{.*}}, [%[[SPLITS2]], %c128_i32], [%[[ROWSTRIDE]], %c1_i32]
// CHECK: %[[LV:.*]] = tile.make_view %{{.*}}, [%[[SPLITS2]]]
// CHECK: scf.for %[[S:.*]] = %c0_i32 to %[[SPLITS2]] step %c16_i32 iter_args({{.*}}) -> (f32, f32, tensor<128xf32>)
// CHECK: tile.load %[[OV]][%[[S]], %c0_i32] {padding = 0.000000e+00 : f32} : !tile.view<f32, 2> -> tensor<16x128xf32>
// CHECK: tile.load %[[LV]][%[[S]]] {padding = 0xFF800000 : f32} : !tile.view<f32, 1> -> tensor<16xf32>
// CHECK: tile.reduce max %{{.*}} {axis = 0 : i32} : tensor<16xf32> -> f32
// CHECK: arith.maximumf
// CHECK: math.exp2 %{{.*}} : f32
// CHECK: math.exp2 %{{.*}} : tensor<16xf32>
// CHECK: tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<16xf32> -> f32
// CHECK: tile.reduce sum %{{.*}} {axis = 0 : i32} : tensor<16x128xf32> -> tensor<128xf32>
// CHECK: scf.yield
// The row's output, 1 / L times the sum, at row x of (batch z, head y).
// CHECK: tile.store %{{.*}} : tensor<128xbf16>, !tile.view<bf16, 1>
// CHECK-NEXT: return

// With the op's log-sum-exp, the combine kernel writes it too, -inf where no part kept a key.
// LSE-LABEL: func.func @causal_bottom_right_combine(
// LSE: scf.for
// LSE: tile.store %{{.*}} : tensor<128xbf16>
// LSE: math.log2 %{{.*}} : f32
// LSE: arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f32
// LSE: tile.scalar_store %{{.*}} : f32, !tile.ptr<f32>, i64
// LSE-NEXT: return

// CONFIG: config = #attn.config<
// CONFIG-NOT: persistent
// CONFIG-SAME: split_kv>

// BOTH: split_kv needs persistent off
