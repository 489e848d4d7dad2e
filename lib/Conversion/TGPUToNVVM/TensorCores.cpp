//===- TensorCores.cpp - Issuing tensor-core MMAs ------------------------===//
//
// mma.sync over register fragments and wgmma over shared-memory descriptors (TensorCores.h).
//
//===----------------------------------------------------------------------===//
#include "TensorCores.h"

#include "flare/Layout/LinearLayout.h"
#include "flare/Layout/SharedLayout.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace flare::tgpu::lowering {

Value TensorCoreBuilder::warpUniform(Value v) {
  return NVVM::ShflOp::create(b, loc, b.getI32Type(), i32(-1), v, i32(0), i32(kWarpSize - 1), NVVM::ShflKind::idx,
                              UnitAttr());
}

Value TensorCoreBuilder::warpgroupId() {
  if (!warpgroup) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(warpId);
    warpgroup = arith::ShRUIOp::create(b, loc, warpId, i32(2));
    if (uniformWarpgroup)
      warpgroup = warpUniform(warpgroup);
  }
  return warpgroup;
}

void TensorCoreBuilder::emitMmaSync(int64_t m, int64_t k, int64_t n, int numWarps, Type elem,
                                    llvm::function_ref<Value(int)> aReg, llvm::function_ref<Value(int)> bReg,
                                    SmallVectorImpl<Value> &c) {
  // The register order of the mma layouts (LinearLayout::mmaOperandA/B, mmaAccumulator): fragment
  // registers first, then K repetitions, then M (for A and C) or N (for B) repetitions.
  auto [wm, wn] = LinearLayout::mmaWarps(m, n, numWarps);
  const int64_t mBlocks = m / wm / 16, nBlocks = n / wn / 8, kBlocks = k / 16;
  Type i32Type = b.getI32Type();
  // Two 16-bit values in one 32-bit register, the first in the low half.
  // (mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as i32.)
  auto pack = [&](Value lo, Value hi) -> Value {
    Value v = packHalves(lo, hi);
    return elem.isBF16() ? LLVM::BitcastOp::create(b, loc, i32Type, v).getResult() : v;
  };
  NVVM::MMATypes ptxType = elem.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  for (int64_t mi = 0; mi < mBlocks; ++mi)
    for (int64_t ki = 0; ki < kBlocks; ++ki) {
      int64_t aBase = 8 * (ki + kBlocks * mi);
      SmallVector<Value> aFrag;
      for (int r = 0; r < 8; r += 2)
        aFrag.push_back(pack(aReg(aBase + r), aReg(aBase + r + 1)));
      for (int64_t ni = 0; ni < nBlocks; ++ni) {
        int64_t bBase = 4 * (ki + kBlocks * ni), cBase = 4 * (ni + nBlocks * mi);
        SmallVector<Value> bFrag = {pack(bReg(bBase), bReg(bBase + 1)), pack(bReg(bBase + 2), bReg(bBase + 3))};
        SmallVector<Value> cFrag(c.begin() + cBase, c.begin() + cBase + 4);
        Value d = NVVM::MmaOp::create(b, loc, resultType, aFrag, bFrag, cFrag, ArrayRef<int64_t>{16, 8, 16},
                                      std::nullopt, std::nullopt,
                                      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                                      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int r = 0; r < 4; ++r)
          c[cBase + r] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{r});
      }
    }
}

/// The IR form of flare::coreMatrixOffset (flare/Layout/SharedLayout.h, unit-tested there).
/// Byte offset of element (row, col) of a no-swizzle core-matrix layout: rows of 16 bytes hold 8
/// consecutive columns, 8 rows make a 128-byte core matrix, core matrices run along the columns
/// (LBO = 128) and then down the rows (SBO = cols * 16):
///     (row / 8) * SBO + (col / 8) * LBO + (row % 8) * 16 + (col % 8) * 2.
/// K-major operands use (row, col) = (m or n, k); N-major B uses (row, col) = (n, k) with the roles
/// inside the core matrix swapped (`transposed`): (k % 8) * 16 + (n % 8) * 2.
Value TensorCoreBuilder::coreMatrixOffset(Value row, Value col, int64_t cols, bool transposed) {
  Value r8 = arith::ShRUIOp::create(b, loc, row, i32(3)), c8 = arith::ShRUIOp::create(b, loc, col, i32(3));
  Value rIn = arith::AndIOp::create(b, loc, row, i32(7)), cIn = arith::AndIOp::create(b, loc, col, i32(7));
  if (transposed)
    std::swap(rIn, cIn);
  Value off = arith::MulIOp::create(b, loc, r8, i32(cols * kCoreRowBytes));
  off = arith::AddIOp::create(b, loc, off, arith::MulIOp::create(b, loc, c8, i32(kCoreBytes)));
  off = arith::AddIOp::create(b, loc, off, arith::MulIOp::create(b, loc, rIn, i32(kCoreRowBytes)));
  return arith::AddIOp::create(b, loc, off, arith::MulIOp::create(b, loc, cIn, i32(2)));
}

/// The MMAs of one wgmma dot whose A [m, k] (K-major) and B [k, n] (K- or N-major) already sit in
/// shared memory (`a`, `bOp`): per warpgroup and 16-deep K step one m64nNk16, fenced and committed
/// (not waited for).
Value TensorCoreBuilder::emitWgmmaAsync(const SmemOperand &a, const SmemOperand &bOp, int64_t m, int64_t n, int64_t k,
                                     Type elem, Value acc, ArrayRef<Value> aRegs, int64_t kIssued, int64_t nIssued) {
  const int64_t kSteps = (kIssued ? kIssued : k) / 16, nMma = nIssued ? nIssued : n;
  const bool bNMajor = bOp.nMajor, bSwizzled = bOp.swizzled, aSwizzled = a.swizzled;
  const int64_t sbo = k * kCoreRowBytes, lbo = kCoreBytes;
  // Descriptors (flare/Layout/SharedLayout.h): the constant fields (LBO, SBO, swizzle mode) once,
  // the start address (>> 4, 14 bits) per operand and K step. Core matrices: LBO between core
  // matrices along K, SBO between 8-row groups.
  WgmmaDescriptor fixed;
  fixed.leadingByteOffset = static_cast<uint32_t>(lbo);
  fixed.strideByteOffset = static_cast<uint32_t>(sbo);
  // 128-byte swizzled operands (flare::swizzledOperandDescriptor / swizzledKStepOffset): B has n
  // rows (K-major) or k rows (N-major), A m rows, its warpgroup's 64 rows 64 x 128 bytes down.
  // Core matrices: a 16-deep K step is two core matrices (2 * LBO) further.
  constexpr int64_t kSwizzleRow = 128;
  const WgmmaDescriptor fixedB = bSwizzled ? swizzledOperandDescriptor(bNMajor ? k : n, bNMajor) : fixed;
  // An M-major A (a.nMajor: a block stored K-major for another dot, read as its transpose) is k rows
  // of 64-column panels, one per warpgroup's 64 rows of M.
  const bool aMMajor = a.nMajor;
  assert((!aMMajor || (aSwizzled && aRegs.empty())) && "an M-major A is read from swizzled panels");
  const WgmmaDescriptor fixedA = aSwizzled ? swizzledOperandDescriptor(aMMajor ? k : m, aMMajor) : fixed;
  auto bStepOffset = [&](int64_t kk) {
    return bSwizzled ? swizzledKStepOffset(kk, bNMajor ? k : n, bNMajor) : kk * 2 * lbo;
  };
  auto aStepOffset = [&](int64_t kk) {
    return aSwizzled ? swizzledKStepOffset(kk, aMMajor ? k : m, aMMajor) : kk * 2 * lbo;
  };
  Value smemAddr = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), smemBase);
  // The descriptor of an operand's first K step; later steps add their offset (a multiple of 16
  // bytes) >> 4 to it: shared addresses stay below 2^18, so the 14-bit start field never carries
  // into the other fields, and each K step costs one add instead of a shift, mask and or.
  auto descriptorWith = [&](Value byteOffset, const WgmmaDescriptor &fields) -> Value {
    Value addr = arith::AddIOp::create(b, loc, smemAddr, byteOffset);
    Value start = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, addr, i32(4)), i32(0x3FFF));
    Value d = arith::ExtUIOp::create(b, loc, b.getI64Type(), start);
    return arith::OrIOp::create(b, loc, d, i64(static_cast<int64_t>(fields.encode())));
  };
  auto stepDescriptor = [&](Value first, int64_t byteOffset) -> Value {
    assert(byteOffset % 16 == 0 && "wgmma K steps start at 16-byte boundaries");
    return byteOffset ? arith::AddIOp::create(b, loc, first, i64(byteOffset >> 4)).getResult() : first;
  };
  Value aGroup;
  if (aRegs.empty()) {
    // Warpgroup g computes rows 64g .. 64g + 63: its A slice starts 8g core-matrix rows down (K-major),
    // or g panels of k rows further (M-major).
    Value group = warpgroupId();
    const int64_t groupBytes = aMMajor ? k * kSwizzleRow : aSwizzled ? 64 * kSwizzleRow : 8 * sbo;
    aGroup = arith::AddIOp::create(b, loc, a.base, arith::MulIOp::create(b, loc, group, i32(groupBytes)));
  }
  auto pack = [&](Value lo, Value hi) -> Value {
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), packHalves(lo, hi));
  };
  // Fragment kk of a register A is registers 8kk .. 8kk + 7 (LinearLayout::mmaOperandA), in pairs;
  // packed before the fence, so that no register wgmma reads is written between its MMAs.
  SmallVector<Value> packedA;
  for (size_t r = 0; r + 1 < aRegs.size(); r += 2)
    packedA.push_back(pack(aRegs[r], aRegs[r + 1]));
  Value firstB = descriptorWith(bOp.base, fixedB);
  Value firstA = aRegs.empty() ? descriptorWith(aGroup, fixedA) : Value();
  if (firstA && a.descriptorsAtDot) {
    // An opaque copy of the first K step's descriptor at the dot: LICM cannot hoist it, nor the adds
    // of the later K steps (one 64-bit add each, beside an MMA of at least 64 x 16 x 16), so no
    // descriptor is held across the loop (tgpu.descriptors_at_dot, set by tgpu-accelerate-dot).
    firstA = LLVM::InlineAsmOp::create(b, loc, b.getI64Type(), ValueRange{firstA}, "mov.b64 $0, $1;", "=l,l",
                                       /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::TailCallKind::None,
                                       LLVM::AsmDialectAttr(), ArrayAttr())
                 .getResult(0);
  }
  WgmmaFenceOp::create(b, loc);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    Value descB = stepDescriptor(firstB, bStepOffset(kk));
    if (!aRegs.empty()) {
      acc = WgmmaOp::create(b, loc, acc.getType(), acc, Value(), ArrayRef<Value>(packedA).slice(4 * kk, 4), descB,
                            static_cast<uint64_t>(nMma), elem, bNMajor, /*a_m_major=*/false);
      continue;
    }
    Value descA = stepDescriptor(firstA, aStepOffset(kk));
    acc = WgmmaOp::create(b, loc, acc.getType(), acc, descA, ValueRange{}, descB, static_cast<uint64_t>(nMma), elem,
                          bNMajor, aMMajor);
  }
  WgmmaCommitOp::create(b, loc);
  return acc;
}

Value TensorCoreBuilder::packAccumulator(ArrayRef<Value> c) {
  auto accType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(c.size(), b.getF32Type()));
  Value acc = LLVM::UndefOp::create(b, loc, accType);
  for (size_t i = 0; i < c.size(); ++i)
    acc = LLVM::InsertValueOp::create(b, loc, acc, c[i], ArrayRef<int64_t>{static_cast<int64_t>(i)});
  return acc;
}

void TensorCoreBuilder::unpackAccumulator(Value acc, SmallVectorImpl<Value> &c) {
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{static_cast<int64_t>(i)});
}

void TensorCoreBuilder::emitWgmma(const SmemOperand &a, const SmemOperand &bOp, int64_t m, int64_t n, int64_t k,
                               Type elem, SmallVectorImpl<Value> &c, ArrayRef<Value> aRegs, int64_t kIssued,
                               int64_t nIssued) {
  const size_t live = issuedRegisters(c.size(), n, nIssued);
  Value acc = emitWgmmaAsync(a, bOp, m, n, k, elem, packAccumulator(ArrayRef<Value>(c).take_front(live)), aRegs,
                             kIssued, nIssued);
  WgmmaWaitOp::create(b, loc, 0);
  SmallVector<Value> written(live);
  unpackAccumulator(acc, written);
  std::copy(written.begin(), written.end(), c.begin());
}

Value TensorCoreBuilder::packHalves(Value lo, Value hi) {
  auto pair = VectorType::get({2}, lo.getType());
  auto tlo = lo.getDefiningOp<arith::TruncFOp>(), thi = hi.getDefiningOp<arith::TruncFOp>();
  if (tlo && thi && tlo.getIn().getType() == thi.getIn().getType()) {
    // Both halves are narrowed from f32: one paired conversion (cvt.rn.bf16x2.f32) instead of two.
    auto wide = VectorType::get({2}, tlo.getIn().getType());
    Value v = LLVM::UndefOp::create(b, loc, wide);
    v = LLVM::InsertElementOp::create(b, loc, v, tlo.getIn(), i32(0));
    v = LLVM::InsertElementOp::create(b, loc, v, thi.getIn(), i32(1));
    return arith::TruncFOp::create(b, loc, pair, v);
  }
  Value v = LLVM::UndefOp::create(b, loc, pair);
  v = LLVM::InsertElementOp::create(b, loc, v, lo, i32(0));
  return LLVM::InsertElementOp::create(b, loc, v, hi, i32(1));
}

} // namespace flare::tgpu::lowering
