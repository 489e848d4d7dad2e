// convert-attn-to-tile, split-tail (the sm_90a default at head dim 128 without a mask: a persistent
// kernel with the producer warpgroup): the kernel asks the schedule which of its ceil(Skv / 128) KV
// blocks to run (tile.split_range: [0, steps) unless the last wave's instances are split between
// CTAs) and visits only those, in the same two loops as always. After the last P V:
//   - the piece that ends a split instance (lo > 0) hands its row max, row sum and accumulator over
//     (tile.split_store) and stores nothing;
//   - the piece that began it (hi < steps) takes them back (tile.split_load), merges them with its
//     own (both rescaled to the larger max; rows that kept no key in either piece stay 0), and
//     stores O and the LSE;
//   - an unsplit instance stores as always, in a branch of its own (no merged values through a join).
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --attn-partial-row-sums --canonicalize --cse | FileCheck %s
// Off: split-tail=0, a causal mask (instances differ in work), head dim 64 (no producer warpgroup,
// not persistent).
// The kernel's configuration names split_tail exactly where it splits.
// RUN: flare-opt %flare_src/examples/attention/plain.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a split-tail=0" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=OFF
// RUN: flare-opt %flare_src/examples/attention/causal.mlir --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=OFF
// RUN: sed 's/x128x/x64x/g' %flare_src/examples/attention/plain.mlir | flare-opt --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --attn-overlap --canonicalize --cse | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[SKV:[^:]*]]: i32, %{{[^:]*}}: i64,
// CHECK-SAME: flare.attention_config = #attn.config<{{[^>]*}}, split_tail{{[^>]*}}>
// CHECK-SAME: tile.schedule = #tile.schedule<{{[^>]*}}persistent = true
// CHECK: %[[R:.*]] = arith.addi %[[SKV]], %c127_i32 : i32
// CHECK: %[[STEPS:.*]] = arith.shrsi %[[R]], %c7_i32 : i32
// CHECK: %[[LO:.*]], %[[HI:.*]] = tile.split_range %[[STEPS]] : i32
// CHECK: %[[END:.*]] = arith.minsi %[[HI]], %{{.*}} : i32
// CHECK: %[[START:.*]] = arith.minsi %[[LO]], %[[END]] : i32
// The full-block loop starts at the piece's first block.
// CHECK: %[[FLO0:.*]] = arith.maxsi %[[START]], %c0_i32 : i32
// CHECK: %[[FLO:.*]] = arith.minsi %[[FLO0]], %[[END]] : i32
// CHECK: scf.for %{{.*}} = %[[FLO]] to
// CHECK: scf.for
// CHECK: %[[ACC:.*]] = tile.dot %{{[0-9]+}}#3,
// CHECK: %[[WRITER:.*]] = arith.cmpi ne, %[[LO]], %c0_i32 : i32
// CHECK: %[[OWNER:.*]] = arith.cmpi ne, %[[HI]], %[[STEPS]] : i32
// The row sum of the 4 partials per row (attn-partial-row-sums), once for both paths.
// CHECK: %[[L:.*]] = tile.reduce sum
// CHECK: scf.if %[[WRITER]] {
// CHECK-NEXT: tile.split_store %[[M:.*]], %[[L]], %[[ACC]] : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.if %[[OWNER]] {
// CHECK-NEXT: %[[THEIRS:.*]]:3 = tile.split_load : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[M]], %[[THEIRS]]#0 : tensor<128xf32>
// CHECK: math.exp2
// CHECK: math.exp2
// CHECK: tile.store
// CHECK: tile.store
// CHECK: } else {
// CHECK-NOT: tile.split
// CHECK: tile.store
// CHECK: tile.store
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: return

// OFF-LABEL: func.func @
// OFF-NOT: split
// OFF: tile.kernel
// OFF-NOT: tile.split
// OFF: return
