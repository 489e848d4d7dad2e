//===- Pipelines.cpp - The pass pipeline shared by every tool -------------===//
#include "flare/Pipelines/Pipelines.h"
#include "flare/Target/Target.h"

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Dialect/Attn/Config.h"
#include "flare/Dialect/Attn/Passes.h"
#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/Tile/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

using namespace mlir;

namespace flare {

/// The target of `options` (compileToPTX and flarec check the arch before any pass runs; an unknown
/// one here falls back to sm_90a's description, whose passes then report what they cannot do).
static Target targetOf(const CompileOptions &options) {
  return Target::get(options.arch).value_or(*Target::get("sm_90a"));
}

/// PTX ISA the NVPTX backend targets: 8.0 is the first with sm_90a and is read by every driver since
/// CUDA 12.0.
static constexpr const char *kPtxFeatures = "+ptx80";

/// Dynamic shared memory one CTA may use (the opt-in maximum of each architecture).
namespace {
/// After the kernels became llvm.funcs: their hidden tensor-map parameters (tgpu.user_args, the flag,
/// then the maps) are passed by value, 128 bytes, and their address is taken (nvvm.grid_constant,
/// which only an llvm.func kernel may carry, and llvm.byval, which the gpu.func lowering drops).
struct MarkTensorMapParams : PassWrapper<MarkTensorMapParams, OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkTensorMapParams)
  StringRef getArgument() const override { return "flare-mark-tensor-map-params"; }
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp func) {
      auto userArgs = func->getAttrOfType<IntegerAttr>(tgpu::kUserArgsAttrName);
      if (!userArgs || !func->hasAttr(tgpu::kTensorMapsAttrName))
        return;
      MLIRContext *ctx = func.getContext();
      auto byval = TypeAttr::get(LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 128));
      const unsigned gridParams = (func->hasAttr(tgpu::kPersistentAttrName) ? tgpu::kPersistentGridParams : 0) +
                                  (func->hasAttr(tgpu::kSplitSlotBytesAttrName) ? 1 : 0);
      for (unsigned i = userArgs.getInt() + gridParams + 1; i < func.getNumArguments(); ++i) {
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(), byval);
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(), UnitAttr::get(ctx));
      }
    });
  }
};

/// Skips the NVPTX backend's straight-line strength reduction (CompileOptions::strengthReduction off):
/// the backend's legacy passes ask their LLVM context's gate, by pass argument, before they run on a
/// function.
struct SkipStrengthReduction : llvm::OptPassGate {
  bool isEnabled() const override { return true; }
  bool shouldRunPass(StringRef pass, StringRef) const override { return pass != "slsr"; }
};

/// gpu-module-to-binary{format=isa} with that gate on the LLVM context each module is translated in.
struct ModuleToPtxWithoutSlsr : PassWrapper<ModuleToPtxWithoutSlsr, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ModuleToPtxWithoutSlsr)
  StringRef getArgument() const override { return "flare-module-to-ptx-without-slsr"; }
  void runOnOperation() override {
    static SkipStrengthReduction gate; // no state: shared by every thread's compiles
    SymbolTable table(getOperation());
    // (named: TargetOptions keeps function_refs to them)
    auto symbolTable = [&]() -> SymbolTable * { return &table; };
    auto initialIR = [](llvm::Module &module) { module.getContext().setOptPassGate(gate); };
    gpu::TargetOptions target(/*toolkitPath=*/{}, /*librariesToLink=*/{}, /*cmdOptions=*/{}, /*elfSection=*/{},
                              gpu::CompilationTarget::Assembly, symbolTable, initialIR);
    if (failed(gpu::transformGpuModulesToBinaries(getOperation(), {}, target)))
      signalPassFailure();
  }
};
} // namespace

void addStagePasses(OpPassManager &pm, const CompileOptions &options, Stage stage) {
  switch (stage) {
  case Stage::Input:
    return;
  case Stage::Tile: {
    pm.addPass(attn::createAttnClassifyMask());
    attn::AttnChooseConfigOptions generator;
    generator.arch = options.arch;
    generator.config = options.attentionConfig;
    pm.addPass(attn::createAttnChooseConfig(generator));
    attn::ConvertAttnToTileOptions generate;
    generate.grad = options.backward;
    generate.deterministic = options.backward && options.deterministic;
    generate.gradBlockLists = options.backward && options.backwardBlockLists;
    generate.arch = options.arch;
    pm.addPass(attn::createConvertAttnToTile(generate));
    // The configured variants of the canonical loop the generator emits.
    pm.addPass(attn::createAttnOverlap());
    pm.addPass(attn::createAttnDeferRescale());
    pm.addPass(attn::createAttnLazyRescale());
    pm.addPass(attn::createAttnPartialRowSums());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    pm.addPass(tile::createTileGuardLoopSteps());
    // On mma.sync kernels the versioned gathers spilled more than the clamp per element (bench/NOTES.md,
    // "Gathers at affine offsets"): Hopper's only (and there kernels with ping_pong, the pass's rule).
    if (targetOf(options).hasWgmma)
      pm.addPass(tile::createTileVersionGathers());
    return;
  }
  case Stage::Layouts:
    pm.addPass(tile::createTileDecomposeOnlineSoftmax());
    pm.addPass(tgpu::createTGPUAssignLayouts());
    pm.addPass(tgpu::createTGPUAccelerateDot({options.arch}));
    pm.addPass(tgpu::createTGPUPipelineLoops());
    pm.addPass(tgpu::createTGPUWarpSpecialize());
    return;
  case Stage::Kernels: {
    tgpu::ConvertTGPUToNVVMOptions lowering;
    const Target target = targetOf(options);
    lowering.maxSharedBytes = target.maxSharedBytesPerCTA;
    lowering.arch = options.arch;
    lowering.tmaFallback = options.tmaFallback;
    pm.addPass(tgpu::createConvertTGPUToNVVM(lowering));
    tgpu::TGPUAllocateSharedMemoryOptions sharedMemory;
    sharedMemory.maxSharedBytes = target.maxSharedBytesPerCTA;
    pm.addPass(tgpu::createTGPUAllocateSharedMemory(sharedMemory));
    // CSE first: the per-register code repeats address and index arithmetic many times, and the
    // canonicalizer then folds one copy instead of each (0.23 s -> 0.14 s on an attention kernel).
    pm.addPass(createCSEPass());
    // Bottom-up: on the lowered kernels (one op per register, loops with a hundred iteration
    // arguments) the default top-down traversal takes 6x longer for the same result (1.18 s -> 0.2 s
    // on an attention kernel, identical PTX for every example).
    pm.addPass(createCanonicalizerPass(GreedyRewriteConfig().setUseTopDownTraversal(false)));
    pm.addPass(createCSEPass());
    return;
  }
  case Stage::NVVM: {
    OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
    gpm.addPass(tgpu::createConvertTGPUMachineToNVVM());
    gpm.addPass(createSCFToControlFlowPass());
    gpm.addPass(createConvertGpuOpsToNVVMOps());
    gpm.addPass(std::make_unique<MarkTensorMapParams>());
    gpm.addPass(createConvertNVVMToLLVMPass()); // wgmma and friends become inline PTX
    gpm.addPass(createCanonicalizerPass());
    gpm.addPass(createCSEPass());
    gpm.addPass(createReconcileUnrealizedCastsPass());
    GpuNVVMAttachTargetOptions target;
    target.chip = options.arch;
    target.features = kPtxFeatures;
    target.optLevel = static_cast<unsigned>(options.optLevel);
    pm.addPass(createGpuNVVMAttachTarget(target));
    return;
  }
  case Stage::PTX: {
    if (!options.strengthReduction.value_or(targetOf(options).strengthReduction)) {
      pm.addPass(std::make_unique<ModuleToPtxWithoutSlsr>());
      return;
    }
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa";
    pm.addPass(createGpuModuleToBinaryPass(binary));
    return;
  }
  }
}

/// The module's own location, or line 1 column 1 of its file where the parser gave it none (an empty
/// file's module sits at 0:0).
static Location moduleLocation(ModuleOp module) {
  if (auto file = dyn_cast<FileLineColLoc>(module.getLoc()); file && file.getLine() == 0)
    return FileLineColLoc::get(file.getFilename(), 1, 1);
  return module.getLoc();
}

LogicalResult runStages(ModuleOp module, const CompileOptions &options, Stage last, CompiledModule *meta) {
  if (last >= Stage::Tile) {
    bool anyKernel = false;
    module.walk([&](Operation *op) {
      anyKernel |= isa<attn::AttentionOp>(op) || op->hasAttr(tile::TileDialect::kKernelAttrName);
      return anyKernel ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!anyKernel)
      return emitError(moduleLocation(module))
             << "nothing to compile: the module holds no attn.attention and no tile kernel (a func.func with the '"
             << tile::TileDialect::kKernelAttrName << "' attribute)";
  }
  if (last >= Stage::PTX)
    initializeNVPTXTarget();
  for (int s = static_cast<int>(Stage::Tile); s <= static_cast<int>(last); ++s) {
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    addStagePasses(pm, options, static_cast<Stage>(s));
    if (failed(pm.run(module)))
      return failure();
    if (meta && static_cast<Stage>(s) == Stage::Kernels && failed(collectKernelInfo(module, *meta)))
      return failure();
  }
  return success();
}

LogicalResult collectKernelInfo(ModuleOp module, CompiledModule &meta) {
  meta.kernels.clear();
  WalkResult result = module.walk([&](gpu::GPUFuncOp func) {
    if (!func.isKernel())
      return WalkResult::advance();
    KernelInfo info;
    info.name = func.getName().str();
    if (auto block = func.getKnownBlockSizeAttr())
      info.numThreads = block[0];
    if (auto shared = func->getAttrOfType<IntegerAttr>(tgpu::kSharedBytesAttrName))
      info.sharedBytes = static_cast<int>(shared.getInt());
    for (NamedAttribute attr : func->getDiscardableAttrs())
      if (auto value = dyn_cast<IntegerAttr>(attr.getValue()); value && attr.getName().strref().starts_with("flare."))
        info.hints[attr.getName().strref().drop_front(6).str()] = value.getInt();
    if (auto config = func->getAttrOfType<attn::ConfigAttr>(attn::kKernelConfigAttrName))
      info.attentionConfig = config.text();
    // Hidden parameters after the kernel's own: a persistent kernel's grid, then (TMA) the i32 flag
    // and one tensor map each.
    ArrayRef<Type> argTypes = func.getArgumentTypes();
    info.persistent = func->hasAttr(tgpu::kPersistentAttrName);
    info.registerBudgets = func->hasAttr(tgpu::kRegisterBudgetsAttrName);
    info.tmaRequired = func->hasAttr(tgpu::kTmaRequiredAttrName);
    info.dependentLaunch = func->hasAttr(tgpu::kDependentLaunchAttrName);
    if (auto slot = func->getAttrOfType<IntegerAttr>(tgpu::kSplitSlotBytesAttrName))
      info.splitSlotBytes = slot.getInt();
    if (auto userArgs = func->getAttrOfType<IntegerAttr>(tgpu::kUserArgsAttrName)) {
      auto maps = func->getAttrOfType<ArrayAttr>(tgpu::kTensorMapsAttrName);
      const size_t hidden = (info.persistent ? tgpu::kPersistentGridParams : 0) + (info.splitSlotBytes >= 0 ? 1 : 0) +
                            (maps ? 1 + maps.size() : 0);
      if (argTypes.size() != userArgs.getInt() + hidden) {
        func.emitOpError() << "hidden parameters do not match " << tgpu::kTensorMapsAttrName << " and "
                           << tgpu::kPersistentAttrName;
        return WalkResult::interrupt();
      }
      argTypes = argTypes.take_front(userArgs.getInt());
      if (!maps)
        maps = ArrayAttr::get(func.getContext(), {});
      auto scalars = [](Attribute list) {
        std::vector<HostScalar> out;
        for (Attribute a : cast<ArrayAttr>(list)) {
          ArrayRef<int64_t> kv = cast<DenseI64ArrayAttr>(a).asArrayRef();
          HostScalar h;
          if (kv[0] == 0)
            h.value = kv[1];
          else
            h.arg = static_cast<int>(kv[1]), h.trunc32 = kv[0] == 2;
          out.push_back(h);
        }
        return out;
      };
      for (Attribute m : maps) {
        auto d = cast<DictionaryAttr>(m);
        TensorMapInfo t;
        t.pointerArg = static_cast<int>(d.getAs<IntegerAttr>("pointer").getInt());
        t.elemBytes = static_cast<int>(d.getAs<IntegerAttr>("elem_bytes").getInt());
        t.floatElems = static_cast<bool>(d.get("float"));
        t.sizes = scalars(d.get("sizes"));
        t.strides = scalars(d.get("strides"));
        llvm::append_range(t.box, d.getAs<DenseI32ArrayAttr>("box").asArrayRef());
        t.swizzleBytes = static_cast<int>(d.getAs<IntegerAttr>("swizzle").getInt());
        info.tensorMaps.push_back(std::move(t));
      }
    }
    for (Type t : argTypes) {
      if (isa<LLVM::LLVMPointerType>(t))
        info.args.push_back(ArgKind::Pointer);
      else if (t.isInteger(32))
        info.args.push_back(ArgKind::I32);
      else if (t.isInteger(64))
        info.args.push_back(ArgKind::I64);
      else if (t.isF32())
        info.args.push_back(ArgKind::F32);
      else {
        func.emitOpError() << "parameter type " << t << " is outside Flare's kernel ABI";
        return WalkResult::interrupt();
      }
    }
    meta.kernels.push_back(std::move(info));
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult extractPTX(ModuleOp module, std::string &ptx) {
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute obj : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(obj)) {
        ptx = object.getObject().getValue().str();
        return success();
      }
  return emitError(moduleLocation(module)) << "no PTX was produced: the module holds no gpu.binary after the pipeline";
}

void initializeNVPTXTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

} // namespace flare
