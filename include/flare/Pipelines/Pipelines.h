//===- Pipelines.h - The pass pipeline shared by every tool -----*- C++ -*-===//
//
// One pipeline, registered once: flare-opt (`--flare-tile-to-ptx`), flarec (`--emit=`) and the runtime's
// JIT (flare::compileToPTX) all run exactly these passes, stage by stage:
//
//   Input   -> Tile    : attn-classify-mask, convert-attn-to-tile       attention ops become tile kernels
//   Tile    -> Layouts : tile-decompose-online-softmax,
//                        tgpu-assign-layouts                            tiles get #tgpu.linear layouts
//   Layouts -> Kernels : convert-tgpu-to-nvvm, canonicalize, cse         gpu.module of per-thread code
//   Kernels -> NVVM    : convert-scf-to-cf, convert-gpu-to-nvvm,         nvvm + llvm dialects only,
//                        reconcile-unrealized-casts, nvvm-attach-target  with the #nvvm.target
//   NVVM    -> PTX     : gpu-module-to-binary{format=isa}                PTX from LLVM's NVPTX backend
//                        (the same with a gate that skips the backend's strength reduction where
//                        CompileOptions::strengthReduction is off)
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_PIPELINES_PIPELINES_H
#define FLARE_PIPELINES_PIPELINES_H

#include "flare/Compiler/Compiler.h"
#include "flare/InitAll.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
class DialectRegistry;
}

namespace flare {

enum class Stage { Input = 0, Tile, Layouts, Kernels, NVVM, PTX };

/// Adds the passes that take a module from `stage - 1` to `stage` (nothing for Stage::Input).
void addStagePasses(mlir::OpPassManager &pm, const CompileOptions &options, Stage stage);

/// Runs every stage after the module's current one up to `last`. When `meta` is given and the run
/// passes Stage::Kernels, the kernels' launch metadata is recorded there.
mlir::LogicalResult runStages(mlir::ModuleOp module, const CompileOptions &options, Stage last,
                              CompiledModule *meta = nullptr);

/// Reads kernel names, block sizes, shared memory and parameter kinds from the gpu.module that
/// Stage::Kernels produced.
mlir::LogicalResult collectKernelInfo(mlir::ModuleOp module, CompiledModule &meta);

/// Extracts the PTX text of the gpu.binary that Stage::PTX produced.
mlir::LogicalResult extractPTX(mlir::ModuleOp module, std::string &ptx);

/// Initialises LLVM's NVPTX target once (needed before serialising to PTX).
void initializeNVPTXTarget();

} // namespace flare

#endif // FLARE_PIPELINES_PIPELINES_H
