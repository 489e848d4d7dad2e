// RUN: flare-opt %s --tile-prefetch-loads | FileCheck %s
// RUN: flare-opt %s --tile-prefetch-loads=max-bytes-per-thread=0 | FileCheck %s --check-prefix=NONE

// acc += A[:, kk : kk + 32] over kk: the loop's load depends only on the induction variable, so the
// first tile (kk = 0) loads before the loop and each iteration loads the tile of kk + 32 first.
// 128 x 32 bf16 over 128 threads is 64 bytes per thread: inside the default budget.
func.func @prefetch(%a: !tile.ptr<bf16>, %out: !tile.ptr<bf16>, %k: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %c128 = arith.constant 128 : i32
  %av = tile.make_view %a, [%c128, %k], [%k, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %ov = tile.make_view %out, [%c128, %c32], [%c32, %c1] : !tile.ptr<bf16> -> !tile.view<bf16, 2>
  %zero = arith.constant dense<0.0> : tensor<128x32xbf16>
  %r = scf.for %kk = %c0 to %k step %c32 iter_args(%acc = %zero) -> (tensor<128x32xbf16>) : i32 {
    %t = tile.load %av[%c0, %kk] : !tile.view<bf16, 2> -> tensor<128x32xbf16>
    %s = arith.addf %acc, %t : tensor<128x32xbf16>
    scf.yield %s : tensor<128x32xbf16>
  }
  tile.store %r, %ov[%c0, %c0] : tensor<128x32xbf16>, !tile.view<bf16, 2>
  return
}
// CHECK-LABEL: func.func @prefetch
// CHECK:       %[[FIRST:.*]] = tile.load %{{.*}}[%{{.*}}, %[[C0:.*]]] :
// CHECK:       scf.for %[[KK:.*]] = %{{.*}} to %{{.*}} step %[[STEP:[^ ]*]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[CUR:.*]] = %[[FIRST]])
// CHECK-NEXT:    %[[NEXT:.*]] = arith.addi %[[KK]], %[[STEP]] : i32
// CHECK-NEXT:    %[[LOADED:.*]] = tile.load %{{.*}}[%{{.*}}, %[[NEXT]]] :
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[ACC]], %[[CUR]]
// CHECK-NEXT:    scf.yield %[[SUM]], %[[LOADED]]

// With no register budget nothing moves.
// NONE-LABEL: func.func @prefetch
// NONE:       scf.for
// NONE-NEXT:    tile.load
