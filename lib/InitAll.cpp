//===- InitAll.cpp - Register Flare's dialects and passes -----------------===//
#include "flare/InitAll.h"

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/Tile/TileDialect.h"
#include "flare/Pipelines/Pipelines.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

namespace flare {

void registerAllDialects(DialectRegistry &registry) {
  registry.insert<attn::AttnDialect, tile::TileDialect, tgpu::TGPUDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, scf::SCFDialect, cf::ControlFlowDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  NVVM::NVVMDialect, index::IndexDialect, memref::MemRefDialect, ub::UBDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

namespace {
/// Stands in for the pipeline when its options are invalid: fails with the reason, at the module.
struct InvalidPipelinePass : public PassWrapper<InvalidPipelinePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InvalidPipelinePass)
  explicit InvalidPipelinePass(std::string reason) : reason(std::move(reason)) {}
  StringRef getArgument() const override { return "flare-invalid-pipeline"; }
  void runOnOperation() override {
    getOperation().emitError(reason);
    signalPassFailure();
  }
  std::string reason;
};

struct TileToPTXOptions : public PassPipelineOptions<TileToPTXOptions> {
  Option<std::string> arch{*this, "arch", llvm::cl::desc("target architecture (sm_80, sm_90a, ...)"),
                           llvm::cl::init("sm_90a")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("NVPTX optimisation level"), llvm::cl::init(3)};
  Option<bool> tmaFallback{*this, "tma-fallback",
                           llvm::cl::desc("copies for launches whose tensor maps do not encode (CompileOptions)"),
                           llvm::cl::init(true)};
  Option<bool> strengthReduction{
      *this, "strength-reduction",
      llvm::cl::desc("the NVPTX backend's straight-line strength reduction (CompileOptions; unset: the target's choice)")};
};
} // namespace

void registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    tgpu::registerTGPUPasses();
    attn::registerAttnPasses();
    tile::registerTilePasses();
    registerCanonicalizerPass();
    registerCSEPass();
    registerSCFToControlFlowPass();
    registerConvertGpuOpsToNVVMOps();
    registerConvertNVVMToLLVMPass();
    registerReconcileUnrealizedCastsPass();
    registerGpuNVVMAttachTarget();
    registerGpuModuleToBinaryPass();
    PassPipelineRegistration<TileToPTXOptions>(
        "flare-tile-to-ptx", "Flare's whole pipeline: tile kernels to a gpu.binary holding PTX",
        [](OpPassManager &pm, const TileToPTXOptions &opts) {
          if (!isSupportedArch(opts.arch)) {
            pm.addPass(std::make_unique<InvalidPipelinePass>(
                "flare-tile-to-ptx: unsupported arch '" + opts.arch.getValue() +
                "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)"));
            return failure();
          }
          CompileOptions options;
          options.arch = opts.arch;
          options.optLevel = opts.optLevel;
          options.tmaFallback = opts.tmaFallback;
          if (opts.strengthReduction.hasValue())
            options.strengthReduction = opts.strengthReduction;
          for (Stage s : {Stage::Tile, Stage::Layouts, Stage::Kernels, Stage::NVVM, Stage::PTX})
            addStagePasses(pm, options, s);
          return success();
        });
  });
}

} // namespace flare
