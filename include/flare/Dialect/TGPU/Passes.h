//===- Passes.h - Passes of the tgpu layer ----------------------*- C++ -*-===//
#ifndef FLARE_DIALECT_TGPU_PASSES_H
#define FLARE_DIALECT_TGPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace gpu { class GPUDialect; }
namespace LLVM { class LLVMDialect; }
namespace NVVM { class NVVMDialect; }
namespace scf { class SCFDialect; }
namespace arith { class ArithDialect; }
} // namespace mlir

namespace flare::tgpu {
class TGPUDialect;

#define GEN_PASS_DECL
#include "TGPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

#endif // FLARE_DIALECT_TGPU_PASSES_H
