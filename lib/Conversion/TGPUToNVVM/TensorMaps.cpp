//===- TensorMaps.cpp - Streamed blocks copied by TMA through host-encoded tensor maps ===//
//
// On sm_90a a streamed block (StreamedLoop.cpp) whose view the host can describe is copied by the
// Tensor Memory Accelerator: one thread issues one `cp.async.bulk.tensor` per 64-column panel and
// the stage's `full` mbarrier counts the bytes, instead of every thread computing addresses and
// issuing 16-byte cp.async copies.
//
// A tensor map describes a tensor in global memory (base address, sizes and byte strides of up to
// five dimensions, the box one copy moves, the swizzle it lands in). Kernels compute their views'
// bases per program instance, so the map is built over the kernel's pointer argument and the view's
// per-instance offset becomes coordinates: a view
//
//     base = addptr(%arg_ptr, x_1 * s_1 + ... + x_n * s_n),   sizes [R, C], strides [S, 1]
//
// with R, C, S and every s_i kernel arguments or constants is the map
//
//     dims (innermost first) [C, R, 2^31, ...],  strides [1, S, s_1, ..., s_n],  box [64, rows, 1, ...]
//
// read at coordinates (col + 64 p, row, x_1, ..., x_n); which views qualify and the map's description
// are an analysis of the IR (flare::tgpu::planTensorMap, TensorMapPlan.h). The outer dimensions are
// unbounded (the kernel's own arithmetic keeps x_i in range, as it did for the addresses); rows and
// columns past R and C are zero-filled by the hardware, like the cp.async path's padding.
//
// The runtime encodes the maps at launch from the argument values (cuTensorMapEncodeTiled) and passes
// each as a 128-byte grid-constant parameter after the kernel's own, preceded by an i32 that is 1
// when every map could be encoded (16-byte aligned base and strides, a driver with TMA). When it is
// 0 the kernel takes the cp.async path, chosen at run time like the unaligned-rows fallback.
// With `tma-fallback=0` that path is left out (about a fifth of an attention kernel's code and
// compile time): the kernel is marked tgpu.tma_required and the runtime refuses launches whose maps
// do not encode, which launchers that check their views first (flare::attention) never make.
//
// Stores and sums through TMA, the other way: OutputStores.h.
//
//===----------------------------------------------------------------------===//
#include "BlockCopies.h"

namespace flare::tgpu::lowering {

std::optional<TensorMapPlan> BlockCopies::planTensorMap(Value viewValue, RankedTensorType type, bool sums) {
  return tmaEnabled ? tgpu::planTensorMap(viewValue, type, func, sums) : std::nullopt;
}

Value BlockCopies::tensorMapsUsable() {
  Value flag = params.tmaFlag(tmaFallback);
  if (!flag) // reported by run(); the kernel is not emitted
    return arith::ConstantIntOp::create(b, loc, 0, 1);
  // Without the fallback the flag is taken as set: the canonicalizer removes the other paths.
  if (!tmaFallback)
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, flag, i32(0));
}

std::optional<TensorMapPlan> BlockCopies::planTensorMap(tile::LoadOp load) {
  return tmaEnabled ? tgpu::planTensorMap(load, func) : std::nullopt;
}

TensorMapRead BlockCopies::tensorMapFor(const TensorMapPlan &plan) {
  RankedTensorType type = plan.block;
  TensorMapRead read;
  read.boxCols = tmaPanelCols(type);
  read.pieces = plan.pieces;
  read.boxRows = type.getDimSize(0) / plan.pieces;
  read.panels = type.getDimSize(1) / read.boxCols;
  // Outer coordinates: the terms' values, as i32 (their i32 source when sign-extended).
  for (Value x : plan.outerValues) {
    if (auto ext = x.getDefiningOp<arith::ExtSIOp>(); ext && ext.getIn().getType().isInteger(32))
      read.outerCoords.push_back(scalars.lookup(ext.getIn()));
    else if (x.getType().isInteger(32))
      read.outerCoords.push_back(scalars.lookup(x));
    else
      read.outerCoords.push_back(arith::TruncIOp::create(b, loc, b.getI32Type(), scalars.lookup(x)));
  }
  MLIRContext *ctx = b.getContext();
  auto describe = [&] {
    auto encoded = [&](ArrayRef<std::array<int64_t, 2>> list) {
      SmallVector<Attribute> out;
      for (const std::array<int64_t, 2> &s : list)
        out.push_back(DenseI64ArrayAttr::get(ctx, s));
      return ArrayAttr::get(ctx, out);
    };
    SmallVector<int32_t> box{static_cast<int32_t>(read.boxCols), static_cast<int32_t>(read.boxRows)};
    box.append(plan.outerValues.size(), 1);
    NamedAttrList desc;
    desc.append("pointer", b.getI32IntegerAttr(static_cast<int32_t>(plan.pointerArg)));
    desc.append("elem_bytes", b.getI32IntegerAttr(static_cast<int32_t>(type.getElementTypeBitWidth() / 8)));
    if (type.getElementType().isF32())
      desc.append("float", b.getUnitAttr()); // a reduce adds the elements as f32
    desc.append("sizes", encoded(plan.sizes));
    desc.append("strides", encoded(plan.strides));
    desc.append("box", DenseI32ArrayAttr::get(ctx, box));
    desc.append("swizzle", b.getI32IntegerAttr(128));
    return desc.getDictionary(ctx);
  };
  Value param = params.tensorMap(plan.view, read.boxRows, tmaFallback, describe);
  if (!param) { // reported by run(); the kernel is not emitted
    Value none = LLVM::ZeroOp::create(b, loc, LLVM::LLVMPointerType::get(ctx));
    read.map = TensorMapOp::create(b, loc, TensorMapType::get(ctx), none);
    return read;
  }
  read.map = param;
  return read;
}

void BlockCopies::copyBlockTma(const TensorMapRead &read, ArrayRef<Value> offsets, Value dstBase, Value mbarrier) {
  assert(offsets.size() == static_cast<size_t>(read.pieces + 1) && "a row offset per piece, then the column");
  const int64_t pieceBytes = read.boxRows * read.boxCols * 2; // a piece's rows of one panel
  for (int64_t i = 0; i < read.pieces; ++i)
    copyTileTma(read, offsets[i], offsets.back(), i ? arith::AddIOp::create(b, loc, dstBase, i32(i * pieceBytes)) : dstBase,
                mbarrier);
}

void BlockCopies::copyTileTma(const TensorMapRead &read, Value row, Value col, Value dstBase, Value mbarrier) {
  MLIRContext *ctx = b.getContext();
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3), clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
  const int64_t panelBytes = read.boxRows * read.pieces * read.boxCols * 2;
  for (int64_t p = 0; p < read.panels; ++p) {
    Value at = arith::AddIOp::create(b, loc, dstBase, i32(p * panelBytes));
    Value dst = LLVM::GEPOp::create(b, loc, sharedPtr, b.getI8Type(), smemBase, ValueRange{at});
    // A CTA's own shared memory is its cluster's (a cluster of one).
    dst = LLVM::AddrSpaceCastOp::create(b, loc, clusterPtr, dst);
    SmallVector<Value> coords{p ? arith::AddIOp::create(b, loc, col, i32(p * read.boxCols)).getResult() : col, row};
    llvm::append_range(coords, read.outerCoords);
    TmaLoadOp::create(b, loc, dst, read.map, coords, mbarrier);
  }
}

bool BlockCopies::panelsSplitByWarpgroup(Value value, int64_t panelCols) {
  LinearLayout layout = layoutOf(value);
  const int64_t half = layout.shape()[1] / 2;
  if (numWarps != 8 || half % panelCols != 0)
    return false;
  auto below = [&](const LinearLayout::Coord &c) { return c[1] < half; };
  const auto &warps = layout.bases(LayoutInput::Warp);
  // Every column below `half` from registers, lanes and the first two warp bits; the warpgroup bit
  // adds `half` columns.
  return warps.size() == 3 && warps[2] == LinearLayout::Coord{0, half} && below(warps[0]) && below(warps[1]) &&
         llvm::all_of(layout.bases(LayoutInput::Lane), below) && llvm::all_of(layout.bases(LayoutInput::Reg), below);
}

void BlockCopies::storePanelsByTma(Value value, const TensorMapRead &map, Value base, ArrayRef<Value> offsets,
                                      bool deferWait, StagingSplit split, bool add) {
  auto type = cast<RankedTensorType>(value.getType());
  // Rows: each consumer warpgroup writes its 64 rows of every panel and its first thread stores them
  // as 64-row boxes; Panels: each writes and copies its own panels. Either way the warpgroup's own
  // named barrier is around the staging.
  const bool perWarpgroup = split != StagingSplit::None, byPanels = split == StagingSplit::Panels;
  constexpr int64_t kRowBytes = 128;
  Value group = perWarpgroup ? warpgroupId() : Value();
  Value leader = perWarpgroup ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                                      arith::AndIOp::create(b, loc, threadId, i32(127)), i32(0))
                              : isThreadZero();
  auto sync = [&] {
    if (!perWarpgroup)
      return (void)barrier();
    NamedBarrierSyncOp::create(b, loc, arith::AddIOp::create(b, loc, group, i32(kWarpgroupBarrier)),
                            i32(128));
  };
  // The previous instance of a persistent kernel left its store in flight (or an earlier step its
  // reduce): its issuing thread waits until the copy has read the panels, before the barrier that
  // lets the others write them again.
  if (deferWait || reducesInFlight)
    ifThen(leader, [&] { TmaStoreWaitOp::create(b, loc, 0); });
  sync(); // the area's earlier readers are done (a loop's MMAs, an earlier store's copy)
  const int64_t rows = type.getDimSize(0);
  // 16-byte chunks of 8 16-bit elements or 4 f32.
  const int64_t elemBytes = type.getElementTypeBitWidth() / 8, perChunk = 16 / elemBytes;
  storeTile(
      value, base,
      [&](ArrayRef<Value> c) -> Value {
        Value chunk = arith::ShRUIOp::create(b, loc, c[1], i32(llvm::Log2_64(perChunk)));
        Value inChunk =
            arith::MulIOp::create(b, loc, arith::AndIOp::create(b, loc, c[1], i32(perChunk - 1)), i32(elemBytes));
        return arith::AddIOp::create(b, loc, swizzledChunkOffset(c[0], chunk, rows), inChunk);
      },
      /*vectorDim=*/1,
      // The sums' scalar stores (registers along rows, dQ^T's transposed product): rows 8 apart
      // keep their swizzle, whole panels apart too, so those steps are immediate offsets.
      add ? [&](const LinearLayout::Coord &step) -> std::optional<int64_t> {
        if (step[1] == 0 && step[0] % 8 == 0)
          return step[0] * kRowBytes;
        if (step[0] == 0 && step[1] % (perChunk * 8) == 0)
          return step[1] / (perChunk * 8) * rows * kRowBytes;
        return std::nullopt;
      } : std::function<std::optional<int64_t>(const LinearLayout::Coord &)>());
  fenceAsyncProxy(); // the panels, visible to the TMA unit (async proxy)
  sync();
  ifThen(leader, [&] {
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    const int64_t panelBytes = rows * kRowBytes;
    // This warpgroup's rows: from row 64 g of every panel (Rows); its panels: from panel g P/2 (Panels).
    const bool byRows = perWarpgroup && !byPanels;
    Value firstRow = byRows ? arith::MulIOp::create(b, loc, group, i32(map.boxRows)).getResult() : i32(0);
    Value rowBase = arith::AddIOp::create(b, loc, base, arith::MulIOp::create(b, loc, firstRow, i32(kRowBytes)));
    Value row = arith::AddIOp::create(b, loc, offsets[0], firstRow);
    const int64_t panels = byPanels ? map.panels / 2 : map.panels;
    Value firstPanel = byPanels ? arith::MulIOp::create(b, loc, group, i32(panels)).getResult() : Value();
    for (int64_t p = 0; p < panels; ++p) {
      // (constants where every thread copies the same panels)
      Value panel = byPanels ? arith::AddIOp::create(b, loc, firstPanel, i32(p)).getResult() : Value();
      auto times = [&](int64_t n) {
        return panel ? arith::MulIOp::create(b, loc, panel, i32(n)).getResult() : i32(p * n);
      };
      Value at = arith::AddIOp::create(b, loc, rowBase, times(panelBytes));
      Value src = LLVM::GEPOp::create(b, loc, sharedPtr, b.getI8Type(), smemBase, ValueRange{at});
      SmallVector<Value> coords{arith::AddIOp::create(b, loc, offsets[1], times(map.boxCols)), row};
      llvm::append_range(coords, map.outerCoords);
      if (add)
        TmaReduceAddOp::create(b, loc, map.map, coords, src);
      else
        TmaStoreOp::create(b, loc, map.map, coords, src);
    }
    TmaStoreCommitOp::create(b, loc);
    // The panels must stay until the copies have read them: before the CTA exits or a later loop or
    // store (each starting with a CTA barrier) reuses the area. With `deferWait` it waits only then
    // (the next instance's store into the same area, a copy into the ring's used stages, the end of
    // the tile loop).
    if (!deferWait)
      TmaStoreWaitOp::create(b, loc, 0);
  });
  tmaStoresInFlight |= deferWait && !add;
}

} // namespace flare::tgpu::lowering
