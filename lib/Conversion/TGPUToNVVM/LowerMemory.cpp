//===- LowerMemory.cpp - Global loads and stores, shared-memory tile stores ===//
#include "BlockCopies.h"

namespace flare::tgpu::lowering {

// Predicated global loads are single PTX instructions that LLVM has no intrinsic for; a branch around a
// plain load would split the block and make every load wait where it is issued.
Value BlockCopies::predicatedLoad(Value addr, Value pred, Value pad, Type elem, int64_t byteOffset) {
  unsigned bits = elem.getIntOrFloatBitWidth();
  if (bits != 16 && bits != 32) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, pred, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    if (byteOffset)
      addr = LLVM::GEPOp::create(b, loc, addr.getType(), b.getI8Type(), addr, ValueRange{i64(byteOffset)});
    scf::YieldOp::create(b, loc, LLVM::LoadOp::create(b, loc, elem, addr).getResult());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, pad);
    return ifOp.getResult(0);
  }
  Type word = b.getIntegerType(bits);
  const char *reg = bits == 16 ? "h" : "r";
  std::string asmText = std::string("{\n.reg .pred p;\nsetp.ne.b32 p, $2, 0;\nmov.b") + std::to_string(bits) +
                        " $0, $3;\n@p ld.global.b" + std::to_string(bits) + " $0, [$1" +
                        (byteOffset ? "+" + std::to_string(byteOffset) : std::string()) + "];\n}";
  std::string constraints = std::string("=") + reg + ",l,r," + reg;
  Value predWord = arith::ExtUIOp::create(b, loc, b.getI32Type(), pred);
  Value padWord = LLVM::BitcastOp::create(b, loc, word, pad);
  Value loaded = LLVM::InlineAsmOp::create(b, loc, word, ValueRange{addr, predWord, padWord}, asmText, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  return LLVM::BitcastOp::create(b, loc, elem, loaded);
}

SmallVector<Value> BlockCopies::predicatedVectorLoad(Value addr, Value pred, Value pad, Type elem, int vec) {
  unsigned bits = elem.getIntOrFloatBitWidth();
  int words = static_cast<int>(vec * bits / 32);
  int perWord = 32 / static_cast<int>(bits);
  Type i32Type = b.getI32Type();
  // The padding value repeated across one 32-bit word.
  Value padWord;
  if (bits == 32) {
    padWord = LLVM::BitcastOp::create(b, loc, i32Type, pad);
  } else {
    Value v = LLVM::UndefOp::create(b, loc, VectorType::get({perWord}, elem));
    for (int i = 0; i < perWord; ++i)
      v = LLVM::InsertElementOp::create(b, loc, v, pad, i32(i));
    padWord = LLVM::BitcastOp::create(b, loc, i32Type, v);
  }
  std::string outs, movs, constraints;
  for (int w = 0; w < words; ++w) {
    outs += (w ? ", $" : "$") + std::to_string(w);
    movs += "mov.b32 $" + std::to_string(w) + ", $" + std::to_string(words + 2) + ";\n";
    constraints += "=r,";
  }
  std::string asmText = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(words + 1) + ", 0;\n" + movs +
                        "@p ld.global.v" + std::to_string(words) + ".b32 {" + outs + "}, [$" + std::to_string(words) +
                        "];\n}";
  constraints += "l,r,r";
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(words, i32Type));
  Value predWord = arith::ExtUIOp::create(b, loc, i32Type, pred);
  Value loaded = LLVM::InlineAsmOp::create(b, loc, resultType, ValueRange{addr, predWord, padWord}, asmText, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  SmallVector<Value> parts;
  for (int w = 0; w < words; ++w) {
    Value word = LLVM::ExtractValueOp::create(b, loc, loaded, ArrayRef<int64_t>{w});
    if (bits == 32) {
      parts.push_back(LLVM::BitcastOp::create(b, loc, elem, word));
      continue;
    }
    Value pair = LLVM::BitcastOp::create(b, loc, VectorType::get({perWord}, elem), word);
    for (int i = 0; i < perWord; ++i)
      parts.push_back(LLVM::ExtractElementOp::create(b, loc, pair, i32(i)));
  }
  return parts;
}

SmallVector<Value> BlockCopies::predicatedGroupLoad(Value addr, Value whole, Value col, Value limit, Value pad,
                                                    Type elem, int vec) {
  Type i32Type = b.getI32Type();
  // $0.. the words, then the address, the vector predicate, the padding, the column and the limit.
  const int addrArg = vec, wholeArg = vec + 1, padArg = vec + 2, colArg = vec + 3, limitArg = vec + 4;
  auto arg = [](int i) { return "$" + std::to_string(i); };
  std::string outs, constraints;
  std::string text = "{\n.reg .pred p;\n.reg .b32 c;\nsetp.ne.b32 p, " + arg(wholeArg) + ", 0;\n";
  for (int w = 0; w < vec; ++w) {
    outs += (w ? ", " : "") + arg(w);
    text += "mov.b32 " + arg(w) + ", " + arg(padArg) + ";\n";
    constraints += "=r,";
  }
  text += "@p ld.global.v" + std::to_string(vec) + ".b32 {" + outs + "}, [" + arg(addrArg) + "];\n";
  for (int w = 0; w < vec; ++w)
    text += "add.s32 c, " + arg(colArg) + ", " + std::to_string(w) + ";\nsetp.lt.u32 p, c, " + arg(limitArg) +
            ";\n@p ld.global.b32 " + arg(w) + ", [" + arg(addrArg) + (w ? "+" + std::to_string(4 * w) : std::string()) +
            "];\n";
  text += "}";
  constraints += "l,r,r,r,r";
  SmallVector<Value> operands{addr, arith::ExtUIOp::create(b, loc, i32Type, whole),
                              LLVM::BitcastOp::create(b, loc, i32Type, pad), col, limit};
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(vec, i32Type));
  Value loaded = LLVM::InlineAsmOp::create(b, loc, resultType, operands, text, constraints,
                                           /*has_side_effects=*/true, /*is_align_stack=*/false,
                                           LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
                     .getResult(0);
  SmallVector<Value> parts;
  for (int w = 0; w < vec; ++w)
    parts.push_back(
        LLVM::BitcastOp::create(b, loc, elem, LLVM::ExtractValueOp::create(b, loc, loaded, ArrayRef<int64_t>{w})));
  return parts;
}

BlockElement BlockCopies::blockElement(const ViewInfo &view, ArrayRef<Value> offsets, ArrayRef<Value> coord,
                                          Value initial, bool checkLast, int64_t pieceRows) {
  BlockElement e;
  e.offset = i64(0);
  e.inside = initial;
  const size_t rank = coord.size();
  SmallVector<Value> firsts(offsets);
  if (pieceRows) {
    // Row pieces: row r of the block is row r - i x pieceRows of piece i = r / pieceRows, which
    // starts at view row offsets[i]; the first row of the block's coordinates is that of its piece.
    const size_t pieces = offsets.size() - (rank - 1);
    Value first = offsets[0];
    for (size_t i = 1; i < pieces; ++i) {
      const int64_t start = static_cast<int64_t>(i) * pieceRows;
      Value inPiece = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, coord[0], i32(start));
      Value shifted = arith::SubIOp::create(b, loc, offsets[i], i32(start));
      first = arith::SelectOp::create(b, loc, inPiece, shifted, first);
    }
    firsts.erase(firsts.begin(), firsts.begin() + pieces);
    firsts.insert(firsts.begin(), first);
  }
  for (size_t d = 0; d < rank; ++d) {
    Value g = arith::AddIOp::create(b, loc, firsts[d], coord[d]);
    e.coord.push_back(g);
    if (d + 1 < rank || checkLast) {
      // 0 <= g < size as one unsigned compare.
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g, view.sizes[d]);
      e.inside = e.inside ? arith::AndIOp::create(b, loc, e.inside, ok).getResult() : ok;
    }
    Value term = arith::MulIOp::create(b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), g), view.strides[d]);
    e.offset = arith::AddIOp::create(b, loc, e.offset, term);
  }
  return e;
}

LogicalResult BlockCopies::lowerLoad(tile::LoadOp op) {
  ViewInfo &view = views[op.getView()];
  auto type = op.getResult().getType();
  Type elem = type.getElementType();
  Attribute attr = getLayoutAttr(type);
  LinearLayout layout = getLayoutAttr(type).getLayout();
  TypedAttr padAttr = op.getPaddingAttr();
  if (!padAttr)
    padAttr = cast<TypedAttr>(b.getZeroAttr(elem));
  Value pad = arith::ConstantOp::create(b, loc, padAttr);
  SmallVector<Value> offsets;
  for (Value o : op.getOffsets())
    offsets.push_back(scalars.lookup(o));
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  const int rank = layout.rank();
  const int elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
  // Registers come in groups of `vec` consecutive elements of the last dimension; with a unit
  // innermost stride, a group that lies wholly inside the view at an aligned address is one
  // vector load of up to 16 bytes, else its elements load one by one under their own bounds.
  const int vec = view.unitInnerStride && elemBytes <= 4 ? contiguousRegs(layout, kMaxVectorBytes / elemBytes) : 1;
  SmallVector<Value> out;
  for (int first = 0; first < layout.numRegs(); first += vec) {
    BlockElement e =
        blockElement(view, offsets, regCoord(attr, layout, first), Value(), /*checkLast=*/false, pieceRowsOf(op));
    ArrayRef<Value> g = e.coord;
    Value rowsOk = e.inside;
    Value base = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{e.offset});
    // Element i of the group: column g_last + i, address base + i; in bounds when its row and column are.
    auto elementAddress = [&](int i) -> Value {
      return i ? LLVM::GEPOp::create(b, loc, globalPtr, elem, base, ValueRange{i64(i)}).getResult() : base;
    };
    auto elementInBounds = [&](int i) -> Value {
      Value col = i ? arith::AddIOp::create(b, loc, g[rank - 1], i32(i)).getResult() : g[rank - 1];
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, view.sizes[rank - 1]);
      return rowsOk ? arith::AndIOp::create(b, loc, rowsOk, ok).getResult() : ok;
    };
    if (vec == 1) {
      out.push_back(predicatedLoad(elementAddress(0), elementInBounds(0), pad, elem));
      continue;
    }
    // Whole group inside: 0 <= g_last and g_last + vec <= size; aligned: address % (vec * bytes) == 0.
    Value last = g[rank - 1];
    Value whole = arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, last, i32(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, arith::AddIOp::create(b, loc, last, i32(vec)),
                              view.sizes[rank - 1]));
    if (rowsOk)
      whole = arith::AndIOp::create(b, loc, whole, rowsOk);
    Value addrBits = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), base);
    Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          arith::AndIOp::create(b, loc, addrBits, i64(vec * elemBytes - 1)), i64(0));
    Value useVector = arith::AndIOp::create(b, loc, whole, aligned);
    // Both paths are predicated instructions, no branches: the vector load when the group is whole
    // and aligned, else each element under its own bounds.
    Value scalarPath = notI1(useVector);
    if (elem.getIntOrFloatBitWidth() == 32) {
      // The element path's columns are bounded by the view's size, or by 0 (none loads) on the
      // vector path and where the group's rows lie outside.
      Value inRows = rowsOk ? arith::AndIOp::create(b, loc, scalarPath, rowsOk).getResult() : scalarPath;
      Value limit = arith::SelectOp::create(b, loc, inRows, view.sizes[rank - 1], i32(0));
      llvm::append_range(out, predicatedGroupLoad(base, useVector, last, limit, pad, elem, vec));
      continue;
    }
    SmallVector<Value> vecParts = predicatedVectorLoad(base, useVector, pad, elem, vec);
    for (int i = 0; i < vec; ++i) {
      Value scalar = predicatedLoad(elementAddress(i), arith::AndIOp::create(b, loc, scalarPath, elementInBounds(i)),
                                    pad, elem);
      out.push_back(arith::SelectOp::create(b, loc, useVector, vecParts[i], scalar));
    }
  }
  regs[op.getResult()] = out;
  return success();
}

void BlockCopies::storeDirect(Value value, const ViewInfo &view, ArrayRef<Value> offsets, bool atomicAdd) {
  auto type = cast<RankedTensorType>(value.getType());
  Type elem = type.getElementType();
  Attribute attr = getLayoutAttr(type);
  LinearLayout layout = getLayoutAttr(type).getLayout();
  // Threads whose lane/warp ids set a bit with a zero basis duplicate another thread's elements.
  Value owner;
  for (auto [in, id] : {std::pair<LayoutInput, Value>{LayoutInput::Lane, laneId}, {LayoutInput::Warp, warpId}})
    if (int mask = zeroBasisMask(layout, in)) {
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, arith::AndIOp::create(b, loc, id, i32(mask)),
                                       i32(0));
      owner = owner ? arith::AndIOp::create(b, loc, owner, ok).getResult() : ok;
    }
  int dupRegs = zeroBasisMask(layout, LayoutInput::Reg);
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  ArrayRef<Value> values = regs[value];
  for (int r = 0; r < layout.numRegs(); ++r) {
    if (r & dupRegs)
      continue;
    BlockElement e = blockElement(view, offsets, regCoord(attr, layout, r), owner, /*checkLast=*/true);
    Value pred = e.inside, offset = e.offset;
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, pred, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value addr = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{offset});
    if (atomicAdd)
      LLVM::AtomicRMWOp::create(b, loc, isa<FloatType>(elem) ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add, addr,
                                values[r], LLVM::AtomicOrdering::monotonic);
    else
      LLVM::StoreOp::create(b, loc, values[r], addr);
  }
}


Value BlockCopies::cpAsyncAligned(tile::LoadOp load, bool checkLastOffset) {
  ViewInfo &view = views[load.getView()];
  Value ok = lowBitsClear(LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), view.base), 15);
  for (size_t d = 0; d + 1 < view.strides.size(); ++d)
    ok = arith::AndIOp::create(b, loc, ok, lowBitsClear(view.strides[d], 7));
  if (checkLastOffset)
    ok = arith::AndIOp::create(b, loc, ok, lowBitsClear(scalars.lookup(load.getOffsets().back()), 7));
  return ok;
}

Value BlockCopies::swizzledChunkOffset(Value row, Value chunk, int64_t rows) {
  Value panel = arith::DivUIOp::create(b, loc, chunk, i32(8));
  Value position = arith::XOrIOp::create(b, loc, arith::AndIOp::create(b, loc, chunk, i32(7)),
                                         arith::AndIOp::create(b, loc, row, i32(7)));
  Value within = arith::MulIOp::create(b, loc, panel, i32(rows * 128));
  within = arith::AddIOp::create(b, loc, within, arith::MulIOp::create(b, loc, row, i32(128)));
  return arith::AddIOp::create(b, loc, within, arith::MulIOp::create(b, loc, position, i32(16)));
}

Value BlockCopies::loadChunkElementwise(const ViewInfo &view, Value src, Value col, Value rowsOk, Type elem) {
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value pad = arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(elem)));
  Value v = LLVM::UndefOp::create(b, loc, VectorType::get({8}, elem));
  for (int i = 0; i < 8; ++i) {
    Value c = arith::AddIOp::create(b, loc, col, i32(i));
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c, view.sizes.back());
    if (rowsOk)
      ok = arith::AndIOp::create(b, loc, ok, rowsOk);
    Value addr = LLVM::GEPOp::create(b, loc, globalPtr, elem, src, ValueRange{i64(i)});
    v = LLVM::InsertElementOp::create(b, loc, v, predicatedLoad(addr, ok, pad, elem), i32(i));
  }
  return v;
}

void BlockCopies::copyTileAsync(tile::LoadOp load, ArrayRef<Value> offsets, Value valid, Value dstBase,
                                   bool innerIsK, int64_t k, Value aligned, Value mbarrier, bool swizzled) {
  ViewInfo &view = views[load.getView()];
  Type elem = load.getResult().getType().getElementType();
  LinearLayout layout = layoutOf(load.getResult());
  const int rank = layout.rank();
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  // The tile is copied in 16-byte chunks (8 elements of a row), assigned to threads by their place in
  // shared memory, not by the load's register layout: chunk q lands at byte 16 q of the core-matrix
  // layout, so the 32 lanes of a warp write 512 consecutive bytes (no bank conflicts) while reading
  // 8 rows x 64 bytes of global memory. In that layout chunk q is row q % 8 of core matrix q / 8;
  // core matrices run along K ((q / 8) % (K / 8)) and then along the other dimension (q / K).
  const int64_t numChunks = layout.numElements() / 8, numThreads = static_cast<int64_t>(numWarps) * kWarpSize;
  struct Group {
    Value src, rowsOk, col, dst, exists;
  };
  SmallVector<Group> groups;
  // Swizzled (128-byte rows, panels of 64 columns): chunk q is chunk c = q % chunksPerRow of row
  // q / chunksPerRow, in row order, so 8 consecutive lanes read one 128-byte line; it lands at
  // panel (c / 8), row, chunk position (c % 8) ^ (row % 8) (flare::swizzledOffset).
  const int64_t rows = layout.shape()[0], chunksPerRow = layout.shape()[rank - 1] / 8;
  for (int64_t first = 0; first < numChunks; first += numThreads) {
    Value q = arith::AddIOp::create(b, loc, threadId, i32(first));
    SmallVector<Value> c;
    Value row, chunk;
    if (swizzled) {
      row = arith::DivUIOp::create(b, loc, q, i32(chunksPerRow));
      chunk = arith::RemUIOp::create(b, loc, q, i32(chunksPerRow));
      c = {row, arith::MulIOp::create(b, loc, chunk, i32(8))};
    } else {
      Value inCore = arith::AndIOp::create(b, loc, q, i32(7));
      Value kChunk = arith::RemUIOp::create(b, loc, arith::ShRUIOp::create(b, loc, q, i32(3)), i32(k / 8));
      Value other = arith::DivUIOp::create(b, loc, q, i32(k));
      Value kCoord = arith::MulIOp::create(b, loc, kChunk, i32(8));
      Value otherCoord = arith::MulIOp::create(b, loc, other, i32(8));
      c = innerIsK ? SmallVector<Value>{arith::AddIOp::create(b, loc, otherCoord, inCore), kCoord}
                   : SmallVector<Value>{arith::AddIOp::create(b, loc, kCoord, inCore), otherCoord};
    }
    Value exists = first + numThreads > numChunks
                       ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, q, i32(numChunks)).getResult()
                       : Value();
    BlockElement e = blockElement(view, offsets, c, valid, /*checkLast=*/false, pieceRowsOf(load));
    Value src = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{e.offset});
    Value within;
    if (swizzled) {
      within = swizzledChunkOffset(row, chunk, rows);
    } else {
      within = arith::MulIOp::create(b, loc, q, i32(16));
    }
    Value dst = LLVM::GEPOp::create(b, loc, sharedPtr, b.getI8Type(), smemBase,
                                    ValueRange{arith::AddIOp::create(b, loc, dstBase, within)});
    groups.push_back({src, e.inside, e.coord[rank - 1], dst, exists});
  }
  // Chunks past the tile (fewer chunks than threads) are not copied at all.
  auto guarded = [&](Value exists, const std::function<void()> &body) {
    if (exists)
      ifThen(exists, body);
    else
      body();
  };
  auto emitCopies = [&] {
    for (Group &g : groups) guarded(g.exists, [&] {
      // Bytes to read: 2 * (size - column), clamped to [0, 16]; the rest of the 16 is zero-filled.
      Value left = arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, view.sizes[rank - 1], g.col), i32(2));
      Value bytes = arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, left, i32(16)), i32(0));
      if (g.rowsOk)
        bytes = arith::SelectOp::create(b, loc, g.rowsOk, bytes, i32(0));
      Value nonEmpty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, bytes, i32(0));
      Value src = arith::SelectOp::create(b, loc, nonEmpty, g.src, view.base);
      CpAsyncOp::create(b, loc, g.dst, src, bytes);
    });
    // Arrives once the copies above have landed (noinc: the arrival is one of the expected count).
    if (mbarrier)
      CpAsyncMBarrierArriveOp::create(b, loc, mbarrier);
  };
  if (!aligned) {
    emitCopies();
    return;
  }
  ifThen(aligned, emitCopies, [&] {
    // Unaligned rows: element by element through registers, then one 16-byte shared store per group.
    for (Group &g : groups) guarded(g.exists, [&] {
      LLVM::StoreOp::create(b, loc, loadChunkElementwise(view, g.src, g.col, g.rowsOk, elem), g.dst,
                            /*alignment=*/16);
    });
    // The stores are ordinary: a release arrival publishes them.
    if (mbarrier)
      MBarrierArriveOp::create(b, loc, mbarrier);
  });
}

void BlockCopies::copyTileRolled(tile::LoadOp load, ArrayRef<Value> offsets, Value dstBase) {
  ViewInfo &view = views[load.getView()];
  Type elem = load.getResult().getType().getElementType();
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  const int64_t numThreads = static_cast<int64_t>(numWarps) * kWarpSize;
  const int64_t rows = load.getResult().getType().getDimSize(0), cols = load.getResult().getType().getDimSize(1);
  const int64_t chunksPerRow = cols / 8, numChunks = rows * chunksPerRow;
  // One 16-byte chunk (8 elements of a row) per thread and step, loaded element by element.
  auto chunks = scf::ForOp::create(b, loc, i32(0), i32((numChunks + numThreads - 1) / numThreads), i32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(chunks.getBody());
  Value step = arith::MulIOp::create(b, loc, chunks.getInductionVar(), i32(numThreads));
  Value q = arith::AddIOp::create(b, loc, threadId, step);
  ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, q, i32(numChunks)), [&] {
    Value row = arith::DivUIOp::create(b, loc, q, i32(chunksPerRow));
    Value chunk = arith::RemUIOp::create(b, loc, q, i32(chunksPerRow));
    BlockElement e = blockElement(view, offsets, {row, arith::MulIOp::create(b, loc, chunk, i32(8))}, Value(),
                                  /*checkLast=*/false, pieceRowsOf(load));
    Value src = LLVM::GEPOp::create(b, loc, globalPtr, elem, view.base, ValueRange{e.offset});
    Value v = loadChunkElementwise(view, src, e.coord[1], e.inside, elem);
    Value within = swizzledChunkOffset(row, chunk, rows);
    LLVM::StoreOp::create(b, loc, v, smemAddress(arith::AddIOp::create(b, loc, dstBase, within), b.getI8Type()),
                          /*alignment=*/16);
  });
}

} // namespace flare::tgpu::lowering
