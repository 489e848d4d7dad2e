//===- AttnDialect.cpp - The attention dialect: ops and verifiers ---------===//
#include "flare/Dialect/Attn/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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
}

// Checks one dimension of two shapes for equality where both are static.
static bool compatible(int64_t a, int64_t b) { return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b; }

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(), v = getValue().getType();
  for (auto [name, t] : {std::pair<const char *, RankedTensorType>{"query", q}, {"key", k}, {"value", v}}) {
    if (t.getRank() != 4)
      return emitOpError() << name << " must be rank 4 [batch, heads, seq, head_dim], got rank " << t.getRank();
    Type e = t.getElementType();
    if (!e.isBF16() && !e.isF16())
      return emitOpError() << name << " elements must be bf16 or f16, got " << e;
  }
  if (k.getElementType() != q.getElementType() || v.getElementType() != q.getElementType())
    return emitOpError("query, key and value must share one element type");
  int64_t d = q.getDimSize(3);
  if (ShapedType::isDynamic(d))
    return emitOpError("the head dimension of the query must be static");
  if (d != 64 && d != 128 && d != 256)
    return emitOpError() << "head dimension " << d << " is not supported (64, 128 or 256)";
  if (!compatible(k.getDimSize(3), d) || !compatible(v.getDimSize(3), d))
    return emitOpError("key and value head dimensions must equal the query's");
  if (!compatible(q.getDimSize(0), k.getDimSize(0)) || !compatible(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError("query, key and value must have the same batch size");
  if (!compatible(k.getDimSize(1), v.getDimSize(1)) || !compatible(k.getDimSize(2), v.getDimSize(2)))
    return emitOpError("key and value must have the same number of heads and sequence length");
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) && (hkv == 0 || hq % hkv != 0))
    return emitOpError() << "query heads (" << hq << ") must be a multiple of key/value heads (" << hkv << ")";
  auto out = getOutput().getType();
  if (out.getShape() != q.getShape() || out.getElementType() != q.getElementType())
    return emitOpError("the output must have the query's shape and element type");
  if (Value lse = getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (l.getRank() != 3 || !l.getElementType().isF32() || l.getShape() != q.getShape().take_front(3))
      return emitOpError("the log-sum-exp result must be f32 [batch, heads, seq_q]");
  }
  if (auto scale = getScaleAttr())
    if (!(scale.getValueAsDouble() > 0.0))
      return emitOpError("scale must be positive");
  return success();
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
  for (Operation &inner : block.without_terminator())
    if (!isMemoryEffectFree(&inner))
      return inner.emitOpError() << "is not allowed in " << name << ": modifiers must be pure";
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  Builder b(getContext());
  Type idx = b.getIndexType();
  if (failed(verifyModifier(*this, getScoreMod(), "score_mod", {b.getF32Type(), idx, idx, idx, idx}, b.getF32Type())))
    return failure();
  return verifyModifier(*this, getMaskMod(), "mask_mod", {idx, idx, idx, idx}, b.getI1Type());
}
