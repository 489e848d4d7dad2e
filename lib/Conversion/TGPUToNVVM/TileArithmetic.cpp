//===- TileArithmetic.cpp - reductions, element-wise ops, conversions --===//
//
// tile.reduce (registers, then lanes by butterfly shuffles, then warps through shared memory),
// element-wise arith and math ops on every register of a tile (with the lazy rescale's skippable
// multiplies), the scalar op each register computes, and layout conversions.
//
//===----------------------------------------------------------------------===//
#include "TileArithmetic.h"

#include "llvm/ADT/SetVector.h"

#include <functional>

namespace flare::tgpu::lowering {

static Value combine(OpBuilder &b, Location loc, tile::ReduceKind kind, Value x, Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case tile::ReduceKind::sum:
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult() : arith::AddIOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::max:
    return isFloat ? arith::MaximumFOp::create(b, loc, x, y).getResult()
                   : arith::MaxSIOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::min:
    return isFloat ? arith::MinimumFOp::create(b, loc, x, y).getResult()
                   : arith::MinSIOp::create(b, loc, x, y).getResult();
  }
  llvm_unreachable("unknown reduction");
}

LogicalResult TileArithmetic::lowerReduce(tile::ReduceOp op) {
  auto srcType = op.getSrc().getType();
  Type elem = srcType.getElementType();
  if (elem.getIntOrFloatBitWidth() != 32)
    return op.emitOpError() << "reductions of " << elem << " are not supported yet; extend to 32 bits first";
  const int axis = op.getAxis();
  LinearLayout src = layoutOf(op.getSrc());
  std::optional<LinearLayout> sliced = src.sliceReduced(axis);
  if (!sliced)
    return op.emitOpError("source layout mixes the reduced axis with other dimensions");
  auto project = [&](LinearLayout::Coord c) {
    c.erase(c.begin() + axis);
    return c;
  };
  ArrayRef<Value> in = regs[op.getSrc()];

  // (a) Inside the thread: registers with the same projected coordinate combine, in register order.
  SmallVector<Value> partial;
  for (int j = 0; j < sliced->numRegs(); ++j) {
    LinearLayout::Coord want = sliced->applyInput(LayoutInput::Reg, j);
    Value acc;
    for (int r = 0; r < src.numRegs(); ++r)
      if (project(src.applyInput(LayoutInput::Reg, r)) == want)
        acc = acc ? combine(b, loc, op.getKind(), acc, in[r]) : in[r];
    if (!acc)
      return op.emitOpError("internal error: reduced register without a source");
    partial.push_back(acc);
  }

  // (b) Across lanes: butterfly shuffles over the lane bits that move along the axis.
  const auto &laneBases = src.bases(LayoutInput::Lane);
  Value fullMask = i32(-1), clamp = i32(kWarpSize - 1);
  for (size_t bit = 0; bit < laneBases.size(); ++bit) {
    if (laneBases[bit][axis] == 0)
      continue;
    for (Value &v : partial) {
      Value other = NVVM::ShflOp::create(b, loc, elem, fullMask, v, i32(1 << bit), clamp, NVVM::ShflKind::bfly,
                                         UnitAttr());
      v = combine(b, loc, op.getKind(), v, other);
    }
  }

  // (c) Across warps, through shared memory laid out as [warp][row-major output element].
  const auto &warpBases = src.bases(LayoutInput::Warp);
  int axisWarpMask = 0;
  for (size_t bit = 0; bit < warpBases.size(); ++bit)
    if (warpBases[bit][axis] != 0)
      axisWarpMask |= 1 << bit;
  if (axisWarpMask) {
    LinearLayout::Coord outShape = project(src.shape());
    int64_t outElems = 1;
    for (int64_t s : outShape)
      outElems *= s;
    needShared(static_cast<int64_t>(src.numWarps()) * outElems * 4);
    Attribute slicedAttr = LinearLayoutAttr::get(b.getContext(), *sliced);
    SmallVector<Value> outIndex;
    for (int j = 0; j < sliced->numRegs(); ++j)
      outIndex.push_back(sliced->rank() ? linearIndex(regCoord(slicedAttr, *sliced, j), sliced->shape()) : i32(0));
    Value warpRow = arith::MulIOp::create(b, loc, warpId, i32(outElems));
    for (int j = 0; j < sliced->numRegs(); ++j)
      LLVM::StoreOp::create(b, loc, partial[j], smemAddress(arith::AddIOp::create(b, loc, warpRow, outIndex[j]), elem));
    barrier();
    Value baseWarp = arith::AndIOp::create(b, loc, warpId, i32(~axisWarpMask));
    for (int j = 0; j < sliced->numRegs(); ++j) {
      Value acc;
      for (int combo = 0; combo < src.numWarps(); ++combo) {
        if ((combo & ~axisWarpMask) != 0)
          continue;
        Value w = arith::OrIOp::create(b, loc, baseWarp, i32(combo));
        Value idx = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, w, i32(outElems)), outIndex[j]);
        Value v = LLVM::LoadOp::create(b, loc, elem, smemAddress(idx, elem));
        acc = acc ? combine(b, loc, op.getKind(), acc, v) : v;
      }
      partial[j] = acc;
    }
    barrier();
  }

  if (isa<RankedTensorType>(op.getResult().getType()))
    regs[op.getResult()] = partial;
  else
    scalars.map(op.getResult(), partial.front());
  return success();
}

bool TileArithmetic::lowerSkippableMul(arith::MulFOp op) {
  if (!op->hasAttr(tile::TileDialect::kSkipUnitFactorAttrName) || !isa<RankedTensorType>(op.getType()))
    return false;
  Value factor = op.getRhs(), other = op.getLhs();
  if (!factor.getDefiningOp<tile::BroadcastOp>())
    std::swap(factor, other);
  if (!factor.getDefiningOp<tile::BroadcastOp>() || !regs.count(factor) || !regs.count(other))
    return false;
  // The factor's registers repeat a few values (a row's alpha in every column of it): compare those.
  constexpr size_t kMaxDistinct = 8;
  llvm::SetVector<Value> distinct(regs[factor].begin(), regs[factor].end());
  if (distinct.size() > kMaxDistinct)
    return false;
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(getElementTypeOrSelf(op.getType()), 1.0));
  Value anyNotOne;
  for (Value f : distinct) {
    Value ne = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, f, one);
    anyNotOne = anyNotOne ? arith::OrIOp::create(b, loc, anyNotOne, ne).getResult() : ne;
  }
  SmallVector<Value> lhs = regs[other], rhs = regs[factor];
  SmallVector<Type> types(lhs.size(), getElementTypeOrSelf(op.getType()));
  auto ifOp = scf::IfOp::create(b, loc, types, anyNotOne, /*withElseRegion=*/true);
  for (bool multiply : {true, false}) {
    OpBuilder::InsertionGuard guard(b);
    Block *block = multiply ? ifOp.thenBlock() : ifOp.elseBlock();
    if (!block->empty() && isa<scf::YieldOp>(block->back()))
      block->back().erase();
    b.setInsertionPointToEnd(block);
    SmallVector<Value> out = lhs;
    if (multiply)
      for (auto [i, x] : llvm::enumerate(lhs))
        out[i] = arith::MulFOp::create(b, loc, x, rhs[i]);
    scf::YieldOp::create(b, loc, out);
  }
  regs[op.getResult()] = SmallVector<Value>(ifOp.getResults());
  return true;
}

LogicalResult TileArithmetic::lowerElementwise(Operation *op) {
  if (op->getNumRegions() != 0)
    return op->emitOpError("ops with regions are not supported in tile kernels");
  if (auto mul = dyn_cast<arith::MulFOp>(op); mul && lowerSkippableMul(mul))
    return success();
  int numRegs = 1;
  for (Value r : op->getResults())
    if (isa<RankedTensorType>(r.getType()))
      numRegs = layoutOf(r).numRegs();
  // f32 -> 16-bit narrowing in register pairs: one paired conversion (cvt.rn.bf16x2.f32) per two.
  if (auto trunc = dyn_cast<arith::TruncFOp>(op); trunc && numRegs % 2 == 0 && regs.count(trunc.getIn()) &&
                                                  getElementTypeOrSelf(trunc.getIn().getType()).isF32()) {
    Type narrow = getElementTypeOrSelf(trunc.getType());
    ArrayRef<Value> in = regs[trunc.getIn()];
    SmallVector<Value> out;
    for (int i = 0; i < numRegs; i += 2) {
      Value v = LLVM::UndefOp::create(b, loc, VectorType::get({2}, b.getF32Type()));
      v = LLVM::InsertElementOp::create(b, loc, v, in[i], i32(0));
      v = LLVM::InsertElementOp::create(b, loc, v, in[i + 1], i32(1));
      Value pair = arith::TruncFOp::create(b, loc, VectorType::get({2}, narrow), v);
      out.push_back(LLVM::ExtractElementOp::create(b, loc, pair, i32(0)));
      out.push_back(LLVM::ExtractElementOp::create(b, loc, pair, i32(1)));
    }
    regs[trunc.getResult()] = out;
    return success();
  }
  SmallVector<SmallVector<Value>> results(op->getNumResults());
  for (int i = 0; i < numRegs; ++i) {
    SmallVector<Value> operands;
    for (auto [pos, v] : llvm::enumerate(op->getOperands())) {
      Value lowered = isa<RankedTensorType>(v.getType()) ? (regs.count(v) ? regs[v][i] : Value())
                                                         : scalars.lookupOrNull(v);
      if (!lowered)
        return op->emitOpError() << "operand #" << pos
                                 << " has not been lowered (an unsupported producer or a value from outside the kernel)";
      operands.push_back(lowered);
    }
    if (op->getNumResults() != 1)
      return op->emitOpError("expected one result");
    Type resultType = getElementTypeOrSelf(op->getResult(0).getType());
    FailureOr<Value> r = emitScalar(op, operands, resultType);
    if (failed(r))
      return failure();
    results[0].push_back(*r);
  }
  Value res = op->getResult(0);
  if (isa<RankedTensorType>(res.getType()))
    regs[res] = results[0];
  else
    scalars.map(res, results[0][0]);
  return success();
}

/// Emits one scalar instance of an elementwise op. Transcendentals use the approximate NVVM
/// instructions (what the fast path of every attention kernel uses); 16-bit inputs compute in f32.
FailureOr<Value> TileArithmetic::emitScalar(Operation *op, ValueRange operands, Type resultType) {
  // Float division as Triton's `/`: div.full.f32 (2 ulp), never IEEE div.rn / rcp.rn. Those expand
  // to a subroutine call in the driver's relocatable (cuLink) compilation, and one call anywhere in a
  // kernel makes ptxas serialize every wgmma of it (warning C7509).
  if (isa<arith::DivFOp>(op) && resultType.getIntOrFloatBitWidth() <= 32) {
    Type f32 = b.getF32Type();
    SmallVector<Value> args;
    for (Value v : operands)
      args.push_back(v.getType() == f32 ? v : arith::ExtFOp::create(b, loc, f32, v).getResult());
    Value q = LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr("llvm.nvvm.div.full"), args).getResult(0);
    return resultType == f32 ? q : arith::TruncFOp::create(b, loc, resultType, q).getResult();
  }
  if (!isa<math::MathDialect>(op->getDialect())) {
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultType);
    state.addAttributes(op->getAttrs());
    Operation *scalar = b.create(state);
    // Multiplies may fuse with the adds that consume them (one FMA, as CUDA compiles a * b + c):
    // the online softmax's scale and max subtraction become one instruction per score.
    if (auto fm = dyn_cast<arith::ArithFastMathInterface>(scalar))
      if (isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(scalar))
        scalar->setAttr(fm.getFastMathAttrName(),
                        arith::FastMathFlagsAttr::get(b.getContext(), fm.getFastMathFlagsAttr().getValue() |
                                                                          arith::FastMathFlags::contract));
    return scalar->getResult(0);
  }
  if (!isa<FloatType>(resultType) || operands.size() != 1)
    return op->emitOpError("is not supported in tile kernels yet"), failure();
  Type f32 = b.getF32Type();
  Value x = operands[0];
  if (resultType != f32)
    x = arith::ExtFOp::create(b, loc, f32, x);
  auto intrinsic = [&](StringRef name, Value arg) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, f32, b.getStringAttr(name), ValueRange{arg}).getResult(0);
  };
  auto mulConst = [&](Value v, double c) -> Value {
    return arith::MulFOp::create(b, loc, v, arith::ConstantOp::create(b, loc, b.getF32FloatAttr(c)));
  };
  Value y;
  // exp2 flushes results below 2^-126 to zero (ex2.approx.ftz.f32, as CUDA's exp2f under fast math):
  // without .ftz ptxas wraps every MUFU.EX2 in a range check and two predicated multiplies to produce
  // denormals, three more instructions per softmax element.
  if (isa<math::Exp2Op>(op))
    y = intrinsic("llvm.nvvm.ex2.approx.ftz.f", x);
  else if (isa<math::ExpOp>(op))
    y = intrinsic("llvm.nvvm.ex2.approx.ftz.f", mulConst(x, kLog2E));
  else if (isa<math::Log2Op>(op))
    y = intrinsic("llvm.nvvm.lg2.approx.f", x);
  else if (isa<math::LogOp>(op))
    y = mulConst(intrinsic("llvm.nvvm.lg2.approx.f", x), kLn2);
  else if (isa<math::RsqrtOp>(op))
    y = intrinsic("llvm.nvvm.rsqrt.approx.f", x);
  else if (isa<math::SqrtOp>(op))
    y = intrinsic("llvm.nvvm.sqrt.approx.f", x); // as Triton's sqrt; sqrt.rn would serialize wgmma (above)
  else if (isa<math::AbsFOp>(op))
    y = intrinsic("llvm.fabs.f32", x);
  else if (isa<math::TanhOp>(op))
    // tanh.approx.f32 (sm_75+) has no LLVM intrinsic: one inline PTX instruction.
    y = LLVM::InlineAsmOp::create(b, loc, f32, ValueRange{x}, "tanh.approx.f32 $0, $1;", "=f,f",
                                  /*has_side_effects=*/false, /*is_align_stack=*/false, LLVM::TailCallKind::None,
                                  LLVM::AsmDialectAttr(), ArrayAttr())
            .getResult(0);
  else
    return op->emitOpError("is not supported in tile kernels yet"), failure();
  if (resultType != f32)
    y = arith::TruncFOp::create(b, loc, resultType, y);
  return y;
}

LogicalResult TileArithmetic::lowerConvert(Value src, Value dst, ArrayRef<Value> srcRegs, SmallVectorImpl<Value> &out) {
  LinearLayout from = layoutOf(src), to = layoutOf(dst);
  if (std::optional<std::vector<int>> perm = to.registerPermutationFrom(from)) {
    for (int r : *perm)
      out.push_back(srcRegs[r]);
    return success();
  }
  if (from.shape() != to.shape())
    return emitError(loc) << "broadcast source layout " << from.str() << " cannot feed " << to.str();
  Type elem = cast<RankedTensorType>(src.getType()).getElementType();
  if (elem.getIntOrFloatBitWidth() <= 32)
    if (std::optional<LinearLayout::WarpShuffle> plan = to.warpShuffleFrom(from)) {
      shuffleConvert(*plan, elem, srcRegs, out);
      return success();
    }
  // Through shared memory: every thread writes what it holds at the row-major index, then reads.
  Type st = scratchType(elem);
  needShared(from.numElements() * std::max(4u, st.getIntOrFloatBitWidth() / 8));
  Attribute fromAttr = getLayoutAttr(src.getType()), toAttr = getLayoutAttr(dst.getType());
  barrier(); // earlier readers of the scratch buffer are done
  for (int r = 0; r < from.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(fromAttr, from, r), from.shape());
    LLVM::StoreOp::create(b, loc, toScratch(srcRegs[r]), smemAddress(idx, st));
  }
  barrier();
  for (int r = 0; r < to.numRegs(); ++r) {
    Value idx = linearIndex(regCoord(toAttr, to, r), to.shape());
    out.push_back(fromScratch(LLVM::LoadOp::create(b, loc, st, smemAddress(idx, st)), elem));
  }
  barrier();
  return success();
}

void TileArithmetic::shuffleConvert(const LinearLayout::WarpShuffle &plan, Type elem, ArrayRef<Value> srcRegs,
                                    SmallVectorImpl<Value> &out) {
  // Shuffles move 32-bit words: narrower values travel zero-extended (floats as their bits).
  unsigned bits = elem.getIntOrFloatBitWidth();
  Type word = bits == 32 ? elem : b.getI32Type();
  Type bitsType = b.getIntegerType(bits);
  auto toWord = [&](Value v) -> Value {
    if (bits == 32)
      return v;
    if (isa<FloatType>(elem))
      v = arith::BitcastOp::create(b, loc, bitsType, v);
    return arith::ExtUIOp::create(b, loc, word, v);
  };
  auto fromWord = [&](Value v) -> Value {
    if (bits == 32)
      return v;
    v = arith::TruncIOp::create(b, loc, bitsType, v);
    return isa<FloatType>(elem) ? arith::BitcastOp::create(b, loc, elem, v).getResult() : v;
  };
  auto laneBit = [&](int bit) -> Value {
    Value masked = arith::AndIOp::create(b, loc, laneId, i32(1 << bit));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, masked, i32(0));
  };
  // The lane read: sourceLane[r] ^ (the laneXor of this lane's set bits).
  Value laneTerm = i32(0);
  for (int bit = 0; bit < LinearLayout::kLaneBits; ++bit)
    if (plan.laneXor[bit])
      laneTerm = arith::XOrIOp::create(b, loc, laneTerm,
                                       arith::SelectOp::create(b, loc, laneBit(bit), i32(plan.laneXor[bit]), i32(0)));
  // The lane bits that choose the register a lane offers, each with its predicate (computed once).
  SmallVector<std::pair<int, Value>> choosing;
  for (int bit = 0; bit < LinearLayout::kLaneBits; ++bit)
    if (plan.regXor[bit])
      choosing.push_back({plan.regXor[bit], laneBit(bit)});
  Value fullMask = i32(-1), clamp = i32(kWarpSize - 1);
  for (size_t r = 0; r < plan.sourceLane.size(); ++r) {
    // The register offered: offeredReg[r] ^ (the regXor of this lane's set bits), chosen by selects.
    std::function<Value(size_t, int)> offer = [&](size_t i, int reg) -> Value {
      if (i == choosing.size())
        return srcRegs[reg];
      auto [regXor, set] = choosing[i];
      return arith::SelectOp::create(b, loc, set, offer(i + 1, reg ^ regXor), offer(i + 1, reg));
    };
    Value offered = toWord(offer(0, plan.offeredReg[r]));
    Value lane = arith::XOrIOp::create(b, loc, laneTerm, i32(plan.sourceLane[r]));
    Value got = NVVM::ShflOp::create(b, loc, word, fullMask, offered, lane, clamp, NVVM::ShflKind::idx, UnitAttr());
    out.push_back(fromWord(got));
  }
}

} // namespace flare::tgpu::lowering
