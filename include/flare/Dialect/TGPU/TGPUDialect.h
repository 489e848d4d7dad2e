//===- TGPUDialect.h - The tgpu dialect -------------------------*- C++ -*-===//
#ifndef FLARE_DIALECT_TGPU_TGPUDIALECT_H
#define FLARE_DIALECT_TGPU_TGPUDIALECT_H

#include "flare/Layout/LinearLayout.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "TGPU/TGPUDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "TGPU/TGPUAttrs.h.inc"

#define GET_OP_CLASSES
#include "TGPU/TGPUOps.h.inc"

namespace flare::tgpu {
/// Name of the kernel attribute that records the dynamic shared memory a lowered kernel needs.
inline constexpr llvm::StringLiteral kSharedBytesAttrName = "tgpu.shared_bytes";
/// On a lowered kernel with TMA reads: how many of its parameters are the source kernel's (the rest are
/// hidden: an i32 "maps encoded" flag, then one tensor map each), and the maps' descriptions.
inline constexpr llvm::StringLiteral kUserArgsAttrName = "tgpu.user_args";
inline constexpr llvm::StringLiteral kTensorMapsAttrName = "tgpu.tensor_maps";
/// The layout of a laid-out tile type, or null when the tensor carries no tgpu layout.
LinearLayoutAttr getLayoutAttr(mlir::Type type);
} // namespace flare::tgpu

#endif // FLARE_DIALECT_TGPU_TGPUDIALECT_H
