// convert-attn-to-tile with cu_seqlens (packed variable-length sequences): two i32 offset pointers
// follow the 12 strides; grid z runs over the sequences, whose query and key rows are read from the
// offsets at z and z + 1 (lengths clamped at 0). Q is loaded through the view of every packed row
// (the packed total, a host-known extent) at the sequence's first row plus the block's; the LSE
// through a view of the sequence's own rows only, O too for the sequence's last, partial block, its
// whole blocks through the view of every packed row; K and V through one view of a head's packed rows,
// each block at the sequence's first key row plus its own (far away outside the sequence). The
// kernel that is not persistent ends an instance past its sequence's last query block at once
// (tile.exit_if), and it visits no key block. The configured kernel on sm_90a (DYN, beside a producer
// warpgroup) is persistent, its CTAs taking the instances from a shared counter, the heaviest row
// blocks first, and carries the same tile.exit_if: the producer skips such instances. Backward,
// split_kv and packed GQA are located errors; the verifier checks the operand form.
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config="arch=sm_90a persistent=0" --convert-attn-to-tile --canonicalize --cse | FileCheck %s
// RUN: flare-opt %s --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile --canonicalize --cse | FileCheck %s --check-prefix=DYN
// RUN: flarec %s --arch=sm_90a --emit=meta | FileCheck %s --check-prefix=META
// RUN: not flare-opt %s --attn-classify-mask --attn-choose-config="arch=sm_90a" --convert-attn-to-tile=grad=true 2>&1 | FileCheck %s --check-prefix=GRAD
// RUN: not flare-opt %s --attn-classify-mask --attn-choose-config="arch=sm_90a split-kv=1" --convert-attn-to-tile 2>&1 | FileCheck %s --check-prefix=SPLIT

// CHECK-LABEL: func.func @varlen(
// CHECK-SAME: %[[Q:[^:]*]]: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %{{[^:]*}}: !tile.ptr<bf16>, %[[O:[^:]*]]: !tile.ptr<bf16>, %[[LSE:[^:]*]]: !tile.ptr<f32>,
// CHECK-SAME: %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[TOTALQ:[^:]*]]: i32, %[[TOTALK:[^:]*]]: i32,
// CHECK-SAME: %[[OROW:[^:]*]]: i64, %[[CUQ:[^:]*]]: !tile.ptr<i32>, %[[CUK:[^:]*]]: !tile.ptr<i32>)
// CHECK: %[[Z:.*]] = tile.program_id z
// CHECK: %[[NEXT:.*]] = arith.addi %[[Z]], %c1_i32 : i32
// CHECK: %[[Q0:.*]] = tile.scalar_load %[[CUQ]][%[[Z]]] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[Q1:.*]] = tile.scalar_load %[[CUQ]][%[[NEXT]]] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[K0:.*]] = tile.scalar_load %[[CUK]][%[[Z]]] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[K1:.*]] = tile.scalar_load %[[CUK]][%[[NEXT]]] : !tile.ptr<i32>, i32 -> i32
// CHECK: %[[NQ0:.*]] = arith.subi %[[Q1]], %[[Q0]] : i32
// CHECK: %[[NK0:.*]] = arith.subi %[[K1]], %[[K0]] : i32
// CHECK: %[[NQ:.*]] = arith.maxsi %[[NQ0]], %c0_i32 : i32
// CHECK: %[[NK:.*]] = arith.maxsi %[[NK0]], %c0_i32 : i32
// Instances past the sequence's rows end at once (the kernel is not persistent: its CTAs run one
// instance each).
// CHECK: %[[NONE:.*]] = arith.cmpi sge, %[[ROW:.*]], %[[NQ]] : i32
// CHECK-NEXT: tile.exit_if %[[NONE]]
// Q: every packed row of the head; the block at the sequence's first row + its own.
// CHECK: %[[QV:.*]] = tile.make_view %{{.*}}, [%[[TOTALQ]], %c128_i32]
// CHECK: %[[QROW:.*]] = arith.addi %[[Q0]], %[[ROW]] : i32
// K and V: every packed row of the KV head.
// CHECK: tile.make_view %{{.*}}, [%[[TOTALK]], %c128_i32]
// CHECK: tile.make_view %{{.*}}, [%[[TOTALK]], %c128_i32]
// O: the sequence's rows only, from its first row, and every packed row of the head.
// CHECK: %[[FIRST:.*]] = arith.extsi %[[Q0]] : i32 to i64
// CHECK: %[[SKIP:.*]] = arith.muli %[[FIRST]], %[[OROW]] : i64
// CHECK: %[[OHEAD:.*]] = tile.addptr %[[O]], %{{.*}}
// CHECK: %[[OBASE:.*]] = tile.addptr %[[OHEAD]], %[[SKIP]]
// CHECK: %[[OV:.*]] = tile.make_view %[[OBASE]], [%[[NQ]], %c128_i32]
// CHECK: %[[OPACKED:.*]] = tile.make_view %[[OHEAD]], [%[[TOTALQ]], %c128_i32]
// CHECK: tile.make_view %{{.*}}, [%[[NQ]]], [%c1_i32] : !tile.ptr<f32> -> !tile.view<f32, 1>
// CHECK: tile.load %[[QV]][%[[QROW]], %c0_i32]
// No key block for an instance past the sequence's rows.
// CHECK: %[[HAS:.*]] = arith.cmpi slt, %[[ROW]], %[[NQ]] : i32
// CHECK: arith.select %[[HAS]],
// Each key block at the sequence's first key row, far away outside it.
// CHECK: scf.for
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[KV:.*]], %[[NK]] : i32
// CHECK: %[[R:.*]] = arith.addi %[[K0]], %[[KV]] : i32
// CHECK: arith.select %[[IN]], %[[R]], %c-1073741824_i32 : i32
// A block wholly inside its sequence is stored through the view of every packed row (a TMA store),
// the sequence's last, partial block through the view of its own rows (no row of the next sequence
// written).
// CHECK: %[[WHOLE:.*]] = arith.cmpi sle, %{{.*}}, %[[NQ]] : i32
// CHECK: scf.if %[[WHOLE]] {
// CHECK-NEXT: tile.store %[[OUT:.*]], %[[OPACKED]][%[[QROW]], %c0_i32]
// CHECK-NEXT: } else {
// CHECK-NEXT: tile.store %[[OUT]], %[[OV]][%[[ROW]], %c0_i32]
// DYN-LABEL: func.func @varlen(
// DYN-SAME: dynamic_instances
// DYN-SAME: tile.schedule = #tile.schedule<producer_warpgroup = true, persistent = true, pair_instances = false, operands_after_first_stage = true, dynamic_instances = true>
// The row block and the sequence of the instance: the counter's order, heaviest first in each group
// of 16 (head, sequence) units.
// DYN: tile.num_programs z
// DYN: arith.minsi %{{.*}}, %c16_i32 : i32
// DYN-NEXT: arith.divui
// DYN-NEXT: arith.remui
// DYN-NEXT: %[[UNIT:.*]] = arith.addi
// DYN-NEXT: %[[HEAD:.*]] = arith.remui %[[UNIT]], %[[NY:.*]] : i32
// DYN-NEXT: %[[SEQ:.*]] = arith.divui %[[UNIT]], %[[NY]] : i32
// DYN-NEXT: %[[MB:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
// DYN: %[[Q0:.*]] = tile.scalar_load %{{.*}}[%[[SEQ]]] : !tile.ptr<i32>, i32 -> i32
// DYN: %[[NQ:.*]] = arith.maxsi %{{.*}}, %c0_i32 : i32
// DYN: %[[ROW:.*]] = arith.muli %[[MB]], %c128_i32 : i32
// DYN: %[[NONE:.*]] = arith.cmpi sge, %[[ROW]], %[[NQ]] : i32
// DYN-NEXT: tile.exit_if %[[NONE]]
// Q, K and V copied by TMA, and O's whole blocks stored by it (tensor maps over pointers 0 to 3);
// the partial blocks, whose view is the sequence's own rows (an extent the host does not know),
// without one.
// META: "name": "varlen"
// META: "tensorMaps": [
// META-NEXT: {
// META-NEXT: "pointer": 0,
// META: "pointer": 2,
// META: "pointer": 3,
// META: "pointer": 1,
// GRAD: error: 'attn.attention' op convert-attn-to-tile: the backward pass of packed variable-length sequences (cu_seqlens) is not generated yet
// SPLIT: error: 'attn.attention' op convert-attn-to-tile: split_kv and pack_gqa are not generated for packed variable-length sequences (cu_seqlens)
func.func @varlen(%q: tensor<1x?x?x128xbf16>, %k: tensor<1x?x?x128xbf16>, %v: tensor<1x?x?x128xbf16>,
                  %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %keep = arith.cmpi sle, %kv, %qi : index
      attn.yield %keep : i1
    }
    : tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16>, tensor<1x?x?x128xbf16> -> tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>
  return %o, %lse : tensor<1x?x?x128xbf16>, tensor<1x?x?xf32>
}
