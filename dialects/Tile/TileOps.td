//===- TileOps.td - Operations of the tile dialect ------------------------===//
#ifndef FLARE_TILE_OPS
#define FLARE_TILE_OPS

include "TileDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Tile_Op<string mnemonic, list<Trait> traits = []> : Op<Tile_Dialect, mnemonic, traits>;

// A tile: a statically shaped tensor (its encoding, once assigned, is a tgpu layout).
def Tile_Tile : Type<And<[AnyRankedTensor.predicate, HasStaticShapePred]>, "statically shaped tile",
                     "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// Program instance.
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "index of this program instance (CTA) along a grid axis";
  let arguments = (ins Tile_Axis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "number of program instances along a grid axis";
  let arguments = (ins Tile_Axis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_SplitRangeOp : Tile_Op<"split_range", [Pure]> {
  let summary = "the reduction steps [lo, hi) of [0, steps) this program instance runs";
  let description = [{
    `%lo, %hi = tile.split_range %steps : i32` in a persistent kernel (`#tile.schedule<persistent = true>`) lets
    the lowering split the last program instances' reductions between CTAs (stream-K), so that the
    grid ends evenly: an instance runs [lo, hi) of its `steps` steps, [0, steps) unless it was
    split. A split instance has one piece that starts at step 0 (its owner: `lo == 0`,
    `hi < steps`) and one that ends at `steps` (`lo > 0`); the latter hands its partial state to
    the owner with `tile.split_store`, the owner takes it with `tile.split_load`. `steps` must be
    the same for every instance: computed from the kernel's arguments alone. At most one per kernel,
    at the top level of its body.
  }];
  let arguments = (ins I32:$steps);
  let results = (outs I32:$lo, I32:$hi);
  let assemblyFormat = "$steps attr-dict `:` type($steps)";
  let hasVerifier = 1;
}

def Tile_SplitStoreOp : Tile_Op<"split_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "hand a split instance's partial state to the piece that owns the instance";
  let description = [{
    `tile.split_store %m, %l, %acc : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>` in the
    piece of a split instance that ends at its last step (`lo > 0` from `tile.split_range`) stores
    the tiles to a workspace of the launch and signals the instance's owner, whose
    `tile.split_load` of the same types returns them. In every other program instance it must not
    run (the kernel guards it).
  }];
  let arguments = (ins Variadic<Tile_Tile>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

def Tile_SplitLoadOp : Tile_Op<"split_load", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for and take the partial state of the other piece of this split instance";
  let description = [{
    `%m, %l, %acc = tile.split_load : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>` in the
    owner of a split instance (`lo == 0`, `hi < steps`) waits until the instance's other piece has
    run its `tile.split_store` of the same types and returns those tiles. In every other program
    instance it must not run (the kernel guards it).
  }];
  let results = (outs Variadic<Tile_Tile>:$values);
  let assemblyFormat = "attr-dict `:` type($values)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Making tiles.
//===----------------------------------------------------------------------===//

def Tile_RangeOp : Tile_Op<"range", [Pure]> {
  let summary = "the integers [start, end) as a 1-D tile";
  let description = [{
    `%r = tile.range 0, 128 : tensor<128xi32>`. `end - start` must equal the tile size.
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$start `,` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "a tile with every element equal to a scalar";
  let arguments = (ins AnyTypeOf<[AnySignlessInteger, AnyFloat, Index]>:$value);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure]> {
  let summary = "insert a dimension of size 1";
  let description = [{
    `%t = tile.expand_dims %x {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>`.
  }];
  let arguments = (ins Tile_Tile:$src, I32Attr:$axis);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "repeat a tile along its dimensions of size 1";
  let description = [{
    `%t = tile.broadcast %x : tensor<4x1xf32> -> tensor<4x8xf32>`: same rank; every dimension keeps its
    size or grows from 1.
  }];
  let arguments = (ins Tile_Tile:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure]> {
  let summary = "transpose a 2-D tile";
  let description = [{
    `%kt = tile.trans %k : tensor<64x128xbf16> -> tensor<128x64xbf16>`: `kt[i, j] = k[j, i]`. Free in
    registers (the layout's dimensions swap); the compiler moves data only where a user needs it.
  }];
  let arguments = (ins Tile_Tile:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tile's elements in another shape (row-major order kept)";
  let description = [{
    `%r = tile.reshape %x : tensor<4x64xf32> -> tensor<256xf32>`: element i of the row-major order stays
    element i. Free in registers: with power-of-two sizes the layout is re-expressed, no data moves.
  }];
  let arguments = (ins Tile_Tile:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor cores.
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_Op<"dot", [Pure]> {
  let summary = "matrix product with accumulation: d = a * b + c";
  let description = [{
    ```mlir
    %d = tile.dot %a, %b, %c : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    ```
    `d[i, j] = c[i, j] + sum_k a[i, k] * b[k, j]`, with bf16 or f16 operands (both the same) and an f32
    accumulator; products are exact and sums are in f32. M and K must be at least 16, N at least 8.
    A transposed operand is written with `tile.trans`. Runs on tensor cores (mma.sync on sm_80+).

    Two optional promises about zeros let the lowering skip work on operands padded to a power of
    two (a head dim of 96 held in tiles of 128): `k_extent = K'` says that the products past
    column K' of `a` (row K' of `b`) are zero, so the MMAs over them may be left out (a multiple of
    16); `n_extent = N'` says that the columns of `b` from N' on are zero, so that `d`'s columns
    from N' on are `c`'s and may be left as they are (a multiple of 8). A lowering may ignore both.
  }];
  let arguments = (ins Tile_Tile:$a, Tile_Tile:$b, Tile_Tile:$c, OptionalAttr<I64Attr>:$k_extent,
                       OptionalAttr<I64Attr>:$n_extent);
  let results = (outs Tile_Tile:$result);
  let builders = [OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$a, "::mlir::Value":$b, "::mlir::Value":$c), [{
    build($_builder, $_state, result, a, b, c, ::mlir::IntegerAttr(), ::mlir::IntegerAttr());
  }]>];
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_OnlineSoftmaxOp : Tile_Op<"online_softmax", [Pure, AllTypesMatch<["scores", "p"]>,
                                                     AllTypesMatch<["max", "new_max", "alpha"]>,
                                                     AllTypesMatch<["sum", "new_sum"]>]> {
  let summary = "one step of the online softmax over a block of scores";
  let description = [{
    ```mlir
    %p, %m_new, %l_new, %alpha = tile.online_softmax %s, %m, %l : tensor<64x64xf32>, tensor<64xf32>
    ```
    With the scores `s` of one key block in log2 units (already multiplied by scale * log2(e), masked
    entries -inf), the running row max `m` and normalizer `l` of the blocks before:

        m'    = max(m, max_j s[:, j])
        m_0   = (m' == -inf) ? 0 : m'        a row with no visible key yet: exp2 gives 0, never NaN
        p     = exp2(s - m_0)                the block's unnormalized probabilities
        alpha = exp2(m - m_0)                how much the earlier blocks shrink
        l'    = alpha * l + sum_j p[:, j]

    The caller rescales its output accumulator by alpha and adds p V. `tile-decompose-online-softmax`
    rewrites the op into exactly these reductions and elementwise ops.

    With `lazy`, a row keeps its reference max while the block raises it by at most 8 (log2 units):
    m' = m when max(m, max_j s[:, j]) - m <= 8, so alpha is exactly 1 and p stays below 2^8. Every
    later step and the final O / l use the same reference, so the result is the same up to rounding
    (l and O are sums relative to m' either way, and the log-sum-exp is m' + log2(l)); a row's
    reference only moves when its max grows by more than 8, which after the first blocks is rare, so
    the caller's rescale multiplies by 1 almost always (and can be skipped, `tile.skip_unit_factor`).

    The normalizer may also be kept as G partial sums per row, `l` of type [M, G] (G a power of two,
    N a multiple of 2 G; its type follows the max's after the colon):

        l'[:, g] = alpha * l[:, g] + sum of p[:, j] over the columns j with (j / 2) mod G = g

    The row's normalizer is then the sum of its G partials, taken once after the last block. With
    G = 4 every partial sum stays within one thread of an MMA accumulator layout (a quad's lanes
    hold column pairs in turn), so a step adds without cross-lane shuffles.
  }];
  let arguments = (ins Tile_Tile:$scores, Tile_Tile:$max, Tile_Tile:$sum, UnitAttr:$lazy);
  let results = (outs Tile_Tile:$p, Tile_Tile:$new_max, Tile_Tile:$new_sum, Tile_Tile:$alpha);
  let assemblyFormat = [{
    $scores `,` $max `,` $sum attr-dict `:` type($scores) `,` type($max) `` custom<PartialSums>(type($sum), ref(type($max)))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduce a tile along one axis";
  let description = [{
    `%m = tile.reduce max %x {axis = 1 : i32} : tensor<4x1024xf32> -> tensor<4xf32>`:
    `m[i] = max_j x[i, j]`. Kinds: `sum`, `max`, `min` (max/min of floats ignore no NaN: a NaN input
    gives a NaN result, as `arith.maximumf`). Reducing a 1-D tile gives a scalar.
  }];
  let arguments = (ins Tile_ReduceKind:$kind, Tile_Tile:$src,
                       I32Attr:$axis);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$kind $src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Global memory.
//===----------------------------------------------------------------------===//

def Tile_AddPtrOp : Tile_Op<"addptr", [Pure, AllTypesMatch<["base", "result"]>]> {
  let summary = "advance a global pointer by a number of elements";
  let description = [{
    `%head = tile.addptr %q, %offset : !tile.ptr<bf16>, i64` points `offset` elements past `%q`
    (for example to the start of one (batch, head) slice of a larger tensor).
  }];
  let arguments = (ins Tile_PtrType:$base, AnyTypeOf<[I32, I64]>:$offset);
  let results = (outs Tile_PtrType:$result);
  let assemblyFormat = "$base `,` $offset attr-dict `:` qualified(type($base)) `,` type($offset)";
}

def Tile_MakeViewOp : Tile_Op<"make_view", [Pure, AttrSizedOperandSegments]> {
  let summary = "a strided view of a tensor in global memory";
  let description = [{
    ```mlir
    %v = tile.make_view %ptr, [%rows, %cols], [%row_stride, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
    ```
    Sizes and strides are in elements, one i32 per dimension; addresses are computed in 64 bits.
  }];
  let arguments = (ins Tile_PtrType:$base, Variadic<I32>:$sizes, Variadic<I32>:$strides);
  let results = (outs Tile_ViewType:$result);
  let assemblyFormat = [{
    $base `,` `[` $sizes `]` `,` `[` $strides `]` attr-dict `:` qualified(type($base)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_LoadOp : Tile_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "load a block from a view, padding what lies outside it";
  let description = [{
    ```mlir
    %t = tile.load %v[%i, %j] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<4x1024xf32>
    ```
    `t[a, b] = v[i + a, j + b]` where that element lies inside the view's sizes, else `padding`
    (default zero). Offsets are element coordinates of the block's first element.

    With `row_pieces = P` (rank 2), the block's rows come in P equal pieces from anywhere in the
    view: the first P offsets are the view rows where pieces 0 .. P-1 start, the last the column.

    ```mlir
    %k = tile.load %v[%r0, %r1, %r2, %r3, %c0] {row_pieces = 4} : !tile.view<bf16, 2> -> tensor<64x128xbf16>
    ```
    `k[16 p + a, b] = v[r_p + a, b]`: a block of 64 keys gathered from four pages of 16 of a paged
    KV cache. Streamed by TMA, each piece is one copy into the rows of the block's shared-memory
    stage that one copy of the whole block would fill, so the operand's layout is unchanged.
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<I32>:$offsets, OptionalAttr<TypedAttrInterface>:$padding,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$row_pieces);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $view `[` $offsets `]` attr-dict `:` qualified(type($view)) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$view, "::mlir::ValueRange":$offsets,
                   "::mlir::TypedAttr":$padding), [{
      build($_builder, $_state, result, view, offsets, padding, /*row_pieces=*/::mlir::IntegerAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The number of row pieces (1 without `row_pieces`).
    int64_t getNumRowPieces() { return getRowPieces() ? static_cast<int64_t>(*getRowPieces()) : 1; }
  }];
  let hasVerifier = 1;
}

def Tile_GatherOp : Tile_Op<"gather", [MemoryEffects<[MemRead]>]> {
  let summary = "load one element per tile element at its own offset from a global pointer";
  let description = [{
    ```mlir
    %ids = tile.gather %doc[%rows] : !tile.ptr<i32>, tensor<64xi32> -> tensor<64xi32>
    ```
    `ids[i] = doc[rows[i]]`: offsets are in elements and must lie inside the allocation (no bounds
    check; clamp them first). For small lookup tables read at computed indices, such as the
    auxiliary tensors of attention modifiers (ALiBi slopes, document ids).

    `bounds_crossing` (set by tile-version-gathers on the clamped gather of its else-branch) says
    that the gather runs only where some offset falls outside the clamp's bounds, rarely: the
    lowering then favours few registers over few instructions.
  }];
  let arguments = (ins Tile_PtrType:$base, Tile_Tile:$offsets, UnitAttr:$bounds_crossing);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` (`bounds_crossing` $bounds_crossing^)? attr-dict `:` qualified(type($base)) `,`
    type($offsets) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ExitIfOp : Tile_Op<"exit_if", [MemoryEffects<[MemWrite]>]> {
  let summary = "end the program instance early when a uniform condition holds";
  let description = [{
    `tile.exit_if %done` ends the program instance when `%done` is true. The condition must be the
    same for the whole instance (computed from program ids, kernel arguments and `tile.scalar_load`)
    and the op must sit at the kernel's top level. The lowering evaluates it at the very start of the
    kernel, before any warp takes a role, copies or waits, so that an instance with nothing to do
    (a block of rows past its sequence in a packed variable-length batch) costs only its launch.
    In a persistent kernel whose CTAs take their instances from a shared counter
    (`#tile.schedule<dynamic_instances = true>`) the producer warpgroup that takes them skips an
    instance for which the condition holds (it evaluates the condition for that instance's program
    ids and takes the next), so no warp of the CTA runs it; a persistent kernel of fixed turns, whose
    CTAs would end their later instances too, rejects it.
  }];
  let arguments = (ins I1:$condition);
  let assemblyFormat = "$condition attr-dict";
  let hasVerifier = 1;
}

def Tile_WaitPriorGridsOp : Tile_Op<"wait_prior_grids", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for the grid launched before this one on the stream (dependent launches)";
  let description = [{
    `tile.wait_prior_grids` waits until the grids this kernel's launch depends on (the kernel
    launched before it on the same stream) have completed and their memory writes are visible. A
    kernel that has it may be launched as a programmatic dependent launch (Hopper and later): its CTAs
    may start before the grid before it ends (once that grid's CTAs have all reached
    `tile.allow_dependent_launch` or ended), so that its launch and set-up overlap the other grid's
    last CTAs instead of following them; the runtime launches it that way (KernelInfo::
    dependentLaunch) and an ordinary launch makes the wait return at once. No op before it may touch
    memory (loads, stores, atomics, whatever a region of theirs does): what the kernel reads or
    writes comes after it, so no hazard with the grid before is possible. At most one per kernel, at
    the top level of its body. On targets without grid dependencies (before sm_90) it lowers to
    nothing and the kernel is launched as usual.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_AllowDependentLaunchOp : Tile_Op<"allow_dependent_launch", [MemoryEffects<[MemWrite]>]> {
  let summary = "let the grid launched after this one start its CTAs early";
  let description = [{
    `tile.allow_dependent_launch`: once every CTA of this grid has run it (or ended), the kernel
    launched after it on the stream, when that kernel starts with `tile.wait_prior_grids` (and is
    launched as a dependent launch), may start its CTAs, which then wait there until this grid has
    completed. It moves no data and orders nothing: it only lets the next kernel's launch overlap
    this grid's end. Placed early in a kernel whose CTAs all fit on the device at once (one wave), the
    next kernel's CTAs are ready when the last of this grid's end. At the top level of a kernel's
    body; a no-op before sm_90.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Tile_ScalarLoadOp : Tile_Op<"scalar_load", [MemoryEffects<[MemRead]>]> {
  let summary = "load one element of global memory as a scalar, the same for every thread";
  let description = [{
    ```mlir
    %page = tile.scalar_load %table[%i] : !tile.ptr<i32>, i32 -> i32
    ```
    `page = table[i]`: the offset is in elements and must lie inside the allocation (no bounds
    check). For indirection tables that steer a kernel's addressing, such as the page table of a
    paged KV cache or per-sequence lengths. The memory must not change while the kernel runs: the
    lowering may read it again at another point of the kernel (for example where a software
    pipeline issues a later iteration's copies).
  }];
  let arguments = (ins Tile_PtrType:$base, AnyTypeOf<[I32, I64]>:$offset);
  let results = (outs AnyTypeOf<[I32, I64, F32]>:$result);
  let assemblyFormat = [{
    $base `[` $offset `]` attr-dict `:` qualified(type($base)) `,` type($offset) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScalarStoreOp : Tile_Op<"scalar_store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store one scalar into global memory, once per program instance";
  let description = [{
    ```mlir
    tile.scalar_store %count, %lists[%i] : i32, !tile.ptr<i32>, i32
    ```
    `lists[i] = count`, written by one thread of the program instance (the value must be the same
    for all of them: computed from scalars, such as a reduction of a whole tile). The offset is in
    elements and must lie inside the allocation (no bounds check). For small results a kernel
    computes per program instance, such as the counts and block indices of attention's block lists.
    Stores of one instance happen in program order. Not in a kernel with a producer warpgroup.
  }];
  let arguments = (ins AnyTypeOf<[I32, I64, F32]>:$value, Tile_PtrType:$base, AnyTypeOf<[I32, I64]>:$offset);
  let assemblyFormat = [{
    $value `,` $base `[` $offset `]` attr-dict `:` type($value) `,` qualified(type($base)) `,` type($offset)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store a block into a view, skipping what lies outside it";
  let description = [{
    `tile.store %t, %v[%i, %j] : tensor<4x1024xf32>, !tile.view<f32, 2>` writes `v[i + a, j + b] = t[a, b]`
    for the elements inside the view's sizes only.
  }];
  let arguments = (ins Tile_Tile:$value, Tile_ViewType:$view, Variadic<I32>:$offsets);
  let assemblyFormat = [{
    $value `,` $view `[` $offsets `]` attr-dict `:` type($value) `,` qualified(type($view))
  }];
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "atomically add a block into a view, skipping what lies outside it";
  let description = [{
    `tile.atomic_add %t, %v[%i, %j] : tensor<64x64xf32>, !tile.view<f32, 2>` performs
    `v[i + a, j + b] += t[a, b]` atomically for the elements inside the view's sizes (f32 or i32).
  }];
  let arguments = (ins Tile_Tile:$value, Tile_ViewType:$view, Variadic<I32>:$offsets);
  let assemblyFormat = [{
    $value `,` $view `[` $offsets `]` attr-dict `:` type($value) `,` qualified(type($view))
  }];
  let hasVerifier = 1;
}

#endif // FLARE_TILE_OPS
