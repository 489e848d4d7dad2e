//===- TGPUDialect.h - The tgpu dialect -------------------------*- C++ -*-===//
#ifndef FLARE_DIALECT_TGPU_TGPUDIALECT_H
#define FLARE_DIALECT_TGPU_TGPUDIALECT_H

#include "flare/Layout/LinearLayout.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "TGPU/TGPUDialect.h.inc"
#include "TGPU/TGPUEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "TGPU/TGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "TGPU/TGPUTypes.h.inc"

#define GET_OP_CLASSES
#include "TGPU/TGPUOps.h.inc"

namespace flare::tgpu {
/// Registers of an SM that one CTA's warps may share out by setmaxnreg: the 64K register file less
/// what the allocator keeps back.
inline constexpr int64_t kRegistersPerCTA = 64512;
/// The registers a CTA of warp-specialized warps holds: `consumerWarps` with `consumerRegisters` per
/// thread and `producerWarps` with `producerRegisters` (at most kRegistersPerCTA).
inline int64_t registersOfRoles(int64_t consumerWarps, int64_t consumerRegisters, int64_t producerWarps,
                                int64_t producerRegisters) {
  return 32 * (consumerWarps * consumerRegisters + producerWarps * producerRegisters);
}
/// Name of the kernel attribute that records the dynamic shared memory a lowered kernel needs.
inline constexpr llvm::StringLiteral kSharedBytesAttrName = "tgpu.shared_bytes";
/// On a lowered kernel with hidden parameters: how many of its parameters are the source kernel's.
/// The hidden ones follow in this order: a persistent kernel's grid (three i32: the program
/// instances its body indexes), then with TMA an i32 "maps encoded" flag and one tensor map each
/// (the maps' descriptions in kTensorMapsAttrName).
inline constexpr llvm::StringLiteral kUserArgsAttrName = "tgpu.user_args";
inline constexpr llvm::StringLiteral kTensorMapsAttrName = "tgpu.tensor_maps";
/// Unit attribute on a lowered kernel with tensor maps compiled without the element-wise copies that
/// replace them (convert-tgpu-to-nvvm's `tma-fallback=0`): it ignores its "maps encoded" flag, and a
/// launcher must not launch it when a map does not encode.
inline constexpr llvm::StringLiteral kTmaRequiredAttrName = "tgpu.tma_required";
/// Unit attribute on a lowered kernel that starts by waiting for the grid before it (tile.wait_prior_grids
/// on a target with grid dependencies): a launcher may launch it as a programmatic dependent launch.
inline constexpr llvm::StringLiteral kDependentLaunchAttrName = "tgpu.dependent_launch";
/// Unit attribute on a lowered persistent kernel (#tile.schedule<persistent = true>): launched with as many CTAs as fit
/// on the device at once, each running program instances of the grid in its hidden parameters.
inline constexpr llvm::StringLiteral kPersistentAttrName = "tgpu.persistent";
/// Unit attribute on a lowered kernel whose warpgroups move register budgets (setmaxnreg, a producer
/// warpgroup): ptxas honours them only when it compiles the PTX as a whole program, not as the
/// relocatable code the driver's linker takes (C7504).
inline constexpr llvm::StringLiteral kRegisterBudgetsAttrName = "tgpu.register_budgets";
/// I32 attribute on a lowered persistent kernel that splits program instances (tile.split_range):
/// the bytes of one CTA's slot in its workspace, a hidden pointer parameter right after the grid.
/// The launcher passes G slots and then G i32 flags, zero before the first launch (G: the CTAs
/// launched); every launch leaves the flags zero again.
inline constexpr llvm::StringLiteral kSplitSlotBytesAttrName = "tgpu.split_slot_bytes";
/// Hidden i32 parameters of a persistent kernel: the grid's x, y and z.
inline constexpr unsigned kPersistentGridParams = 3;
/// A dot of an [m, k] x [k, n] product in a kernel of `numWarps` warps can run as warpgroup MMAs:
/// its warps all stack along M, 16 rows each (one m64nNk16 per warpgroup and K step), and N is a
/// multiple of 8 up to 256.
inline bool wgmmaFits(int64_t m, int64_t n, int numWarps) {
  if (numWarps % 4 != 0)
    return false;
  auto [wm, wn] = LinearLayout::mmaWarps(m, n, numWarps);
  return wm == numWarps && wn == 1 && m == 16 * numWarps && n % 8 == 0 && n <= 256;
}
/// Checks a #tgpu.mma<wgmma> mark on `dot` (a tile.dot of an [m, k] x [k, n] product in a kernel of
/// `numWarps` warps): where the target has no wgmma or the dot does not fit it, the error at the dot
/// ("is marked #tgpu.mma<wgmma> but ...") and failure; success for a dot without that mark.
mlir::LogicalResult verifyWgmmaMark(mlir::Operation *dot, int64_t m, int64_t n, int numWarps, bool targetHasWgmma,
                                    llvm::StringRef arch);
/// `op` (a tile.dot) is marked `#tgpu.mma<wgmma>` (tgpu-accelerate-dot).
inline bool runsOnWgmma(mlir::Operation *op) {
  auto mark = op->getAttrOfType<MmaEngineAttr>(TGPUDialect::kMmaAttrName);
  return mark && mark.getValue() == MmaEngine::Wgmma;
}
/// `op` (a tile.dot) makes its A operand's descriptors at the dot (`tgpu.descriptors_at_dot`,
/// tgpu-accelerate-dot).
inline bool descriptorsAtDot(mlir::Operation *op) { return op->hasAttr(TGPUDialect::kDescriptorsAtDotAttrName); }
/// The layout of a laid-out tile type, or null when the tensor carries no tgpu layout.
LinearLayoutAttr getLayoutAttr(mlir::Type type);
} // namespace flare::tgpu

#endif // FLARE_DIALECT_TGPU_TGPUDIALECT_H
