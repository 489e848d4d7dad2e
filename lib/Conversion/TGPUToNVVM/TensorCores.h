//===- TensorCores.h - Issuing tensor-core MMAs -----------------*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. How the per-thread lowering issues tensor-core work, apart from
// where its operands come from: mma.sync over register fragments (sm_80 and up), and wgmma over
// shared-memory operands described by descriptors or an A operand in registers (sm_90a): the
// descriptors' fixed fields and per-K-step starts, the fence / issue / commit sequence of one dot,
// the accumulator as the struct wgmma reads and writes, and the warpgroup a thread's rows belong
// to. KernelLowering.h derives from it; what it knows of a kernel is the builder, the thread's ids
// and the shared buffer's base (MachineBuilder.h) and whether the warpgroup id is warp-uniform.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TENSORCORES_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TENSORCORES_H

#include "MachineBuilder.h"

namespace flare::tgpu::lowering {

/// The accumulator registers (of `regs` for n columns) that MMAs over the first nIssued columns
/// write (0: all): a prefix, wgmma's accumulator fragment running in 8-column groups in order.
inline size_t issuedRegisters(size_t regs, int64_t n, int64_t nIssued) {
  return nIssued ? regs * static_cast<size_t>(nIssued) / static_cast<size_t>(n) : regs;
}

class TensorCoreBuilder : public MachineBuilder {
protected:
  explicit TensorCoreBuilder(MLIRContext *context) : MachineBuilder(context) {}

  Value warpgroup;              // warpId / 4, warp-uniform to ptxas; made on first use (warpgroupId)
  bool uniformWarpgroup = true; // #tile.schedule<uniform_warpgroup = ...>

  /// `v` (the same in every lane of a converged warp) as lane 0's copy: ptxas then knows it is
  /// warp-uniform and keeps what derives from it (wgmma descriptors, per-warpgroup shared
  /// addresses) in uniform registers instead of moving it there before every use.
  Value warpUniform(Value v);
  /// The thread's warpgroup (warpId / 4), made once per set of thread values, right after warpId:
  /// warp-uniform to ptxas unless the kernel says `#tile.schedule<uniform_warpgroup = false>`.
  Value warpgroupId();

  /// Two 16-bit values as vector<2 x T> (the low one first), for the 32-bit registers MMAs take.
  Value packHalves(Value lo, Value hi);

  /// The mma.sync m16n8k16 MMAs of an [m, k] x [k, n] product on `numWarps` warps, registers in the
  /// order of LinearLayout::mmaOperandA / mmaOperandB / mmaAccumulator (fragment registers first,
  /// then K repetitions, then M or N repetitions): `aReg(i)` / `bReg(i)` give operand register i,
  /// `c` the accumulator's registers, updated in place.
  void emitMmaSync(int64_t m, int64_t k, int64_t n, int numWarps, Type elem, llvm::function_ref<Value(int)> aReg,
                   llvm::function_ref<Value(int)> bReg, SmallVectorImpl<Value> &c);

  /// The IR form of flare::coreMatrixOffset (flare/Layout/SharedLayout.h): the byte offset of
  /// element (row, col) of a no-swizzle core-matrix layout of `cols` columns (`transposed`: the roles
  /// inside a core matrix swapped, for N-major B).
  Value coreMatrixOffset(Value row, Value col, int64_t cols, bool transposed = false);
  /// The MMAs of one wgmma dot on the accumulator struct, committed as a group but not waited for.
  /// A (K-major) and B sit in shared memory as described by their SmemOperand (core matrices or
  /// 128-byte swizzled panels); with `aRegs` (the A tile's registers in wgmma's fragment order), A
  /// is read from registers instead. `kIssued` / `nIssued` (0: k / n): the MMAs cover the first
  /// kIssued of K and the first nIssued columns only (tile.dot's k_extent / n_extent: the rest is
  /// zero padding); `acc` then holds the first nIssued columns' registers (a prefix of the n's).
  Value emitWgmmaAsync(const SmemOperand &a, const SmemOperand &bOp, int64_t m, int64_t n, int64_t k, Type elem,
                       Value acc, ArrayRef<Value> aRegs = {}, int64_t kIssued = 0, int64_t nIssued = 0);
  /// emitWgmmaAsync on the registers `c`, waited for: `c` holds the product.
  void emitWgmma(const SmemOperand &a, const SmemOperand &bOp, int64_t m, int64_t n, int64_t k, Type elem,
                 SmallVectorImpl<Value> &c, ArrayRef<Value> aRegs = {}, int64_t kIssued = 0, int64_t nIssued = 0);
  /// The accumulator registers `c` as the f32 struct wgmma reads and writes, and back.
  Value packAccumulator(ArrayRef<Value> c);
  void unpackAccumulator(Value acc, SmallVectorImpl<Value> &c);
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TENSORCORES_H
