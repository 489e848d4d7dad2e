//===- AttnDialect.cpp - The attention dialect: ops and verifiers ---------===//
#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/ModifierRanges.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace flare::attn;

#include "Attn/AttnDialect.cpp.inc"

#define GET_OP_CLASSES
#include "Attn/AttnOps.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Attn/AttnOps.cpp.inc"
      >();
  registerAttributes();
}

// Checks one dimension of two shapes for equality where both are static.
static bool compatible(int64_t a, int64_t b) { return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b; }

int64_t AttentionOp::getKeyCount() {
  auto k = cast<RankedTensorType>(getKey().getType());
  if (!isPaged())
    return k.getDimSize(2);
  int64_t pages = cast<RankedTensorType>(getPageTable().getType()).getDimSize(1);
  return ShapedType::isDynamic(pages) ? ShapedType::kDynamic : pages * k.getDimSize(2);
}

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(), v = getValue().getType();
  for (auto [name, t] : {std::pair<const char *, RankedTensorType>{"query", q}, {"key", k}, {"value", v}}) {
    if (t.getRank() != 4)
      return emitOpError() << name << " must be rank 4 [batch, heads, seq, head_dim], got rank " << t.getRank();
    Type e = t.getElementType();
    if (!e.isBF16() && !e.isF16())
      return emitOpError() << name << " elements must be bf16 or f16, got " << e;
  }
  // Static sizes are checked against what a launch can have: a generated kernel's grid covers
  // Hq x B with at most 65535 each, and its index arithmetic holds sequences of kMaxSeqLen.
  static constexpr const char *kDimNames[] = {"batch size", "head count", "sequence length", "head dimension"};
  for (auto [name, t] : {std::pair<const char *, RankedTensorType>{"query", q}, {"key", k}, {"value", v}})
    for (int i = 0; i < 4; ++i) {
      int64_t n = t.getDimSize(i);
      if (ShapedType::isDynamic(n))
        continue;
      if (n <= 0)
        return emitOpError() << name << "'s " << kDimNames[i] << " is " << n << " (every dimension must be at least 1)";
      int64_t max = i == 2 ? kMaxSeqLen : i < 2 ? kMaxBatchOrHeads : n;
      if (n > max)
        return emitOpError() << name << "'s " << kDimNames[i] << " " << n << " exceeds " << max
                             << ", the largest a generated kernel supports";
    }
  if (k.getElementType() != q.getElementType() || v.getElementType() != q.getElementType())
    return emitOpError("query, key and value must share one element type");
  int64_t d = q.getDimSize(3);
  if (ShapedType::isDynamic(d))
    return emitOpError("the head dimension of the query must be static");
  int64_t dv = v.getDimSize(3);
  if (ShapedType::isDynamic(dv))
    return emitOpError("the head dimension of the value must be static");
  // Tiles are powers of two; a head dim in between is padded inside the kernel, in steps of the
  // MMA's K (16).
  for (auto [what, dim] : {std::pair{"query and key", d}, std::pair{"value", dv}})
    if (dim % 16 != 0 || dim < 32 || dim > 256)
      return emitOpError() << "the head dimension of the " << what << " is " << dim
                           << "; supported: a multiple of 16 from 32 to 256";
  if (!compatible(k.getDimSize(3), d))
    return emitOpError("the key's head dimension must equal the query's");
  if (isPaged()) {
    if (!compatible(k.getDimSize(0), v.getDimSize(0)))
      return emitOpError("key and value must have the same number of pages");
    if (!compatible(k.getDimSize(1), v.getDimSize(1)) || k.getDimSize(2) != v.getDimSize(2))
      return emitOpError("key and value must have the same number of heads and page size");
    int64_t page = k.getDimSize(2);
    if (ShapedType::isDynamic(page) || page % 16 != 0 || page > 256)
      return emitOpError() << "the page size (dimension 2 of key and value) must be static, a multiple of 16 and "
                              "at most 256, got "
                           << (ShapedType::isDynamic(page) ? std::string("?") : std::to_string(page));
    auto table = cast<RankedTensorType>(getPageTable().getType());
    if (table.getRank() != 2 || !compatible(table.getDimSize(0), q.getDimSize(0)))
      return emitOpError("the page table must be i32 [batch, max_pages] with the query's batch size");
    if (!getKvLens())
      return emitOpError("a paged cache needs kv_lens (the number of keys of each sequence)");
    if (int64_t n = getKeyCount(); !ShapedType::isDynamic(n) && n > kMaxSeqLen)
      return emitOpError() << "the page table holds " << n << " keys per sequence, more than " << kMaxSeqLen;
  } else {
    if (!compatible(q.getDimSize(0), k.getDimSize(0)) || !compatible(k.getDimSize(0), v.getDimSize(0)))
      return emitOpError("query, key and value must have the same batch size");
    if (!compatible(k.getDimSize(1), v.getDimSize(1)) || !compatible(k.getDimSize(2), v.getDimSize(2)))
      return emitOpError("key and value must have the same number of heads and sequence length");
  }
  if (isVarlen()) {
    for (auto [name, t] : {std::pair<const char *, RankedTensorType>{"query", q}, {"key", k}, {"value", v}})
      if (!compatible(t.getDimSize(0), 1))
        return emitOpError() << "with cu_seqlens the " << name
                             << " holds the sequences packed along dimension 2: its dimension 0 must be 1";
    for (Value offsets : {getCuSeqlensQ(), getCuSeqlensK()})
      if (cast<RankedTensorType>(offsets.getType()).getRank() != 1)
        return emitOpError("cu_seqlens must be i32 [batch + 1] offsets");
    int64_t nq = cast<RankedTensorType>(getCuSeqlensQ().getType()).getDimSize(0),
            nk = cast<RankedTensorType>(getCuSeqlensK().getType()).getDimSize(0);
    if (!compatible(nq, nk) || (!ShapedType::isDynamic(nq) && nq < 1))
      return emitOpError("cu_seqlens of queries and keys must have the same length, batch + 1");
    if (getKvLens() || isPaged())
      return emitOpError("cu_seqlens cannot be combined with kv_lens or page_table");
  }
  if (Value lens = getKvLens()) {
    auto t = cast<RankedTensorType>(lens.getType());
    if (t.getRank() != 1 || !compatible(t.getDimSize(0), q.getDimSize(0)))
      return emitOpError("kv_lens must be i32 [batch] with the query's batch size");
  }
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && (hkv == 0 || hq % hkv != 0))
    return emitOpError() << "query heads (" << hq << ") must be a multiple of key/value heads (" << hkv << ")";
  auto out = getOutput().getType();
  if (out.getShape().take_front(3) != q.getShape().take_front(3) || out.getDimSize(3) != dv ||
      out.getElementType() != q.getElementType())
    return emitOpError("the output must have the query's shape with the value's head dimension, and the query's "
                       "element type");
  if (Value lse = getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (l.getRank() != 3 || !l.getElementType().isF32() || l.getShape() != q.getShape().take_front(3))
      return emitOpError("the log-sum-exp result must be f32 [batch, heads, seq_q]");
  }
  if (auto scale = getScaleAttr())
    if (!(scale.getValueAsDouble() > 0.0) || !std::isfinite(scale.getValueAsDouble()))
      return emitOpError() << "scale must be positive and finite, got "
                           << (std::isnan(scale.getValueAsDouble()) ? "nan" : std::isinf(scale.getValueAsDouble()) ? "inf" : std::to_string(scale.getValueAsDouble()));
  for (auto [i, aux] : llvm::enumerate(getAux())) {
    auto t = cast<RankedTensorType>(aux.getType());
    Type e = t.getElementType();
    if (t.getRank() != 1 || !(e.isInteger(32) || e.isInteger(64) || e.isF32() || e.isF16() || e.isBF16()))
      return emitOpError() << "aux operand #" << i << " must be a 1-D tensor of i32, i64, f32, f16 or bf16, got "
                           << t;
  }
  return success();
}

LogicalResult AuxLoadOp::verify() {
  auto arg = dyn_cast<BlockArgument>(getTensor());
  auto parent = dyn_cast_or_null<AttentionOp>((*this)->getParentOp());
  if (!arg || !parent || arg.getOwner() != (*this)->getBlock())
    return emitOpError("reads an aux tensor: its operand must be an aux argument of the enclosing modifier region");
  unsigned first = arg.getOwner()->getNumArguments() - parent.getAux().size();
  if (arg.getArgNumber() < first)
    return emitOpError("reads an aux tensor: its operand must be an aux argument of the enclosing modifier region");
  if (getResult().getType() != getTensor().getType().getElementType())
    return emitOpError("result type must be the aux tensor's element type");
  return success();
}

// The scalar types of modifier regions: what both the NVPTX backend and the float64 reference
// compute in. Wider integers (i128) and other float formats have no lowering there.
static bool isModifierScalarType(Type t) {
  if (t.isIndex())
    return true;
  if (auto i = dyn_cast<IntegerType>(t))
    return i.getWidth() >= 1 && i.getWidth() <= 64;
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
}

// Checks a modifier region: its block arguments, that it yields one value of `resultType`, and that
// every op inside is free of memory effects (modifiers are pure functions of their indices).
static LogicalResult verifyModifier(AttentionOp op, Region &region, StringRef name, ArrayRef<Type> argTypes,
                                    Type resultType) {
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return op.emitOpError() << name << " must have a single block";
  Block &block = region.front();
  if (block.getArgumentTypes() != argTypes) {
    InFlightDiagnostic diag = op.emitOpError() << name << " takes (";
    llvm::interleaveComma(argTypes, diag);
    return diag << ") arguments";
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValue().getType() != resultType)
    return op.emitOpError() << name << " must yield one " << resultType;
  for (Operation &inner : block.without_terminator()) {
    if (!isMemoryEffectFree(&inner))
      return inner.emitOpError() << "is not allowed in " << name << ": modifiers must be pure";
    if (!isa<arith::ArithDialect, math::MathDialect, AttnDialect>(inner.getDialect()) ||
        inner.getNumRegions() != 0)
      return inner.emitOpError() << "is not allowed in " << name
                                 << ": modifiers are arith and math ops on scalars, attn.aux_load, attn.q_len "
                                    "and attn.kv_len";
    for (Type t : inner.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return inner.emitOpError() << "is not allowed in " << name << ": modifiers compute on scalars, not " << t;
    for (Type t : llvm::concat<const Type>(inner.getOperandTypes(), inner.getResultTypes()))
      if (!isa<RankedTensorType>(t) && !isModifierScalarType(t))
        return inner.emitOpError() << "is not allowed in " << name << ": " << t
                                   << " is not a type generated kernels compute in (integers of 1 to 64 bits, "
                                      "index, f16, bf16, f32, f64)";
  }
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  Builder b(getContext());
  Type idx = b.getIndexType();
  SmallVector<Type> scoreArgs = {b.getF32Type(), idx, idx, idx, idx};
  SmallVector<Type> maskArgs = {idx, idx, idx, idx};
  for (Value aux : getAux()) {
    scoreArgs.push_back(aux.getType());
    maskArgs.push_back(aux.getType());
  }
  if (failed(verifyModifier(*this, getScoreMod(), "score_mod", scoreArgs, b.getF32Type())) ||
      failed(verifyModifier(*this, getMaskMod(), "mask_mod", maskArgs, b.getI1Type())))
    return failure();
  // Every integer operation must have a defined result for every index the op can see.
  ModifierRanges ranges(*this);
  if (Operation *bad = ranges.undefinedOp())
    return bad->emitOpError() << ranges.undefinedReason();
  return success();
}
