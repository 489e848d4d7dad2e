//===- Passes.td - Passes of the tile dialect -----------------------------===//
#ifndef FLARE_TILE_PASSES
#define FLARE_TILE_PASSES

include "mlir/Pass/PassBase.td"

def TileDecomposeOnlineSoftmax : Pass<"tile-decompose-online-softmax", "::mlir::ModuleOp"> {
  let summary = "rewrite tile.online_softmax into reductions and elementwise ops";
  let description = [{
    Implements the equations of tile.online_softmax (see the op) with tile.reduce max/sum,
    tile.expand_dims/broadcast and arith/math ops, before layouts are assigned.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def TilePrefetchLoads : Pass<"tile-prefetch-loads", "::mlir::ModuleOp"> {
  let summary = "load the next iteration's tiles of an scf.for while the current one computes";
  let description = [{
    For every tile.load in an scf.for body whose view and offsets depend only on the induction
    variable and values from outside the loop:
    1. the load of the first iteration (iv = lower bound) is placed before the loop;
    2. the loop carries the loaded tile as an extra iteration argument, which replaces the load;
    3. the body starts by loading the tile of the next iteration (iv + step) and yields it.
    So the global-memory latency of step k+1 overlaps the work of step k (double buffering in
    registers). A load past the end reads nothing (its bounds mask it) and is never used.
    Prefetched tiles stay live across the whole body, so loads are taken in body order only while
    their bytes per thread stay within `max-bytes-per-thread`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
  let options = [
    Option<"maxBytesPerThread", "max-bytes-per-thread", "int", /*default=*/"64",
           "register bytes per thread that prefetched tiles of one loop may take">
  ];
}

def TileGuardLoopSteps : Pass<"tile-guard-loop-steps", "::mlir::ModuleOp"> {
  let summary = "give loops whose step is a run-time value a defined end when that step is not positive";
  let description = [{
    An `scf.for` whose step is zero or negative never reaches its upper bound: on a GPU the kernel
    would spin until the driver kills the context. In tile kernels such a loop runs no iterations
    instead: the upper bound of every loop whose step is not a constant becomes

        ub' = step > 0 ? ub : lb

    (one compare and select before the loop). A constant step of zero or less is rejected by the
    tile kernel verifier; loops with a constant positive step are left as they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

def TileVersionGathers : Pass<"tile-version-gathers", "::mlir::ModuleOp"> {
  let summary = "read clamped affine gathers without their clamp where the whole tile is in range";
  let description = [{
    The attention generator clamps every aux table index into the table (padding rows and keys
    are evaluated too), and a clamp per element costs as much as the load. For a `tile.gather`
    whose offsets are `clamp(x, lo, hi)` with `x` affine in the tile's coordinates (kv - q + C,
    q0 + i; flare/Dialect/Tile/AffineTile.h) and uniform bounds, and whose one use is an
    elementwise op `u` in the same block, this pass computes the smallest and largest `x` of the
    tile from uniform scalars (exact, in i64) and versions the gather and `u`:

        %r = scf.if (min x >= lo && max x <= hi) {
          yield u(tile.gather %table[x])            // every offset already in range
        } else {
          yield u(tile.gather %table[clamp(x)])     // as before; the clamp moves in here
        }

    Both branches read the same elements. The lowering gives the unclamped gather one address per
    thread and immediate offsets, and the else-branch's gather, marked `bounds_crossing`, loads
    predicated at those offsets (few registers in a branch that rarely runs). `u` goes into the
    branches so that the gathered values are consumed before the join (the join carries u's result,
    which replaces a value live there anyway). A gather without such a use that runs on every step
    of a loop in a kernel with a producer warpgroup (a document mask's key ids, which meet the
    scores through a broadcast) is versioned alone and moved up its step, right after what it reads
    (no product is in flight in its branches, and its loads travel during the step's copies and
    products): the join carries the gathered tile, and tgpu-assign-layouts reads both branches'
    gathers in the layout of the scores they meet. A gather is left alone when an op between it and
    `u` may write memory, and kernels whose consumer warpgroups do not take turns
    (`#tile.schedule`'s `ping_pong` false) are left alone: measured, the per-step branch paid there
    from +13% to -7% against +17% to +38% with ping_pong (bench/NOTES.md, "Gathers at affine
    offsets"). A gather alone in a kernel without a producer warpgroup is left alone too (the
    kernel that evaluates a document mask on every step was 13-18% slower with it; bench/NOTES.md,
    "The key ids of a partial step").
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

#endif // FLARE_TILE_PASSES
