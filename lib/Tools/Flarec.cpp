//===- Flarec.cpp - flarec: the Flare compiler driver ---------------------===//
//
//   flarec kernel.mlir --emit=ptx --arch=sm_90a -o kernel.ptx
//
// Levels, in pipeline order: tile (the parsed, verified input), tgpu (layouts assigned), gpu (per-thread
// code in a gpu.module), llvm (NVVM and LLVM dialects with the #nvvm.target), ptx (PTX text), meta (the
// kernels' launch metadata as JSON). Diagnostics carry source locations; any failure exits non-zero.
//
//===----------------------------------------------------------------------===//
#include "flare/Tools/Tools.h"

#include "flare/Compiler/Compiler.h"
#include "flare/Pipelines/Pipelines.h"

#include "../Target/ParseContext.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { Attn, Tile, TGPU, GPU, LLVM, PTX, Meta };
} // namespace

int flare::tools::flarecMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory category("flarec options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir file, or - for standard input>"),
                             cl::cat(category));
  cl::opt<std::string> output("o", cl::desc("output file (default: stdout)"), cl::value_desc("file"), cl::init("-"),
                              cl::cat(category));
  cl::opt<Emit> emit("emit", cl::desc("what to produce"), cl::init(Emit::PTX), cl::cat(category),
                     cl::values(clEnumValN(Emit::Attn, "attn", "the verified input"),
                                clEnumValN(Emit::Tile, "tile", "tile kernels (attention ops generated as kernels)"),
                                clEnumValN(Emit::TGPU, "tgpu", "tiles with register layouts"),
                                clEnumValN(Emit::GPU, "gpu", "per-thread code in a gpu.module"),
                                clEnumValN(Emit::LLVM, "llvm", "NVVM/LLVM dialects with the target attached"),
                                clEnumValN(Emit::PTX, "ptx", "PTX text"),
                                clEnumValN(Emit::Meta, "meta", "kernel launch metadata (JSON)")));
  cl::opt<std::string> metaOutput("meta-o",
                                  cl::desc("with --emit=ptx, also write the launch metadata (JSON) to this file"),
                                  cl::value_desc("file"), cl::init(""), cl::cat(category));
  cl::opt<std::string> arch("arch", cl::desc("target architecture: sm_80, sm_86, sm_89, sm_90, sm_90a"),
                            cl::init("sm_90a"), cl::cat(category));
  cl::opt<int> optLevel("O", cl::desc("NVPTX optimisation level (0-3)"), cl::init(3), cl::Prefix, cl::cat(category));
  cl::opt<bool> strengthReduction("strength-reduction",
                                  cl::desc("the NVPTX backend's straight-line strength reduction (default: the "
                                           "target's choice, on for sm_90a, off for targets without wgmma, where it "
                                           "costs large mma.sync kernels most of their compile)"),
                                  cl::cat(category));
  cl::opt<bool> tmaFallback("tma-fallback",
                            cl::desc("kernels that copy through TMA also carry the copies that launches whose "
                                     "tensor maps do not encode take (=false: smaller, tgpu.tma_required)"),
                            cl::init(true), cl::cat(category));
  cl::opt<std::string> attentionConfig(
      "attention-config",
      cl::desc("the configuration of every generated attention kernel (#attn.config<...>, as --emit=meta "
               "reports it in attentionConfig and the runtime's kernels in KernelInfo::attentionConfig); "
               "default: the configured choice"),
      cl::value_desc("#attn.config<...>"), cl::init(""), cl::cat(category));
  cl::opt<bool> grad("grad",
                     cl::desc("generate the backward kernels of every attn.attention (dQ, dK, dV: "
                              "<name>_bwd_preprocess, <name>_bwd, <name>_bwd_dq) instead of the forward"),
                     cl::init(false), cl::cat(category));
  cl::opt<bool> deterministic("deterministic",
                              cl::desc("with --grad: the deterministic backward (dQ by its own kernel, summed in "
                                       "key order without atomics: two runs give identical bits)"),
                              cl::init(false), cl::cat(category));
  cl::opt<bool> blockLists("block-lists",
                           cl::desc("with --grad, for a mask the compiler cannot classify: the backward kernels "
                                    "visit the blocks that block lists name (<name>_bwd_block_mask writes them), as "
                                    "flare::attentionBackward compiles them"),
                           cl::init(false), cl::cat(category));
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Flare compiler driver\n");

  auto error = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "flarec") << msg << "\n";
    return 1;
  };
  if (input.empty()) // never wait on a terminal without saying so
    return error("no input file (give a .mlir file, or - to read standard input); see flarec --help");
  if (!flare::isSupportedArch(arch))
    return error("unsupported --arch='" + arch + "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
  if (!metaOutput.empty() && emit != Emit::PTX)
    return error("--meta-o goes with --emit=ptx (--emit=meta prints the metadata alone)");
  if (deterministic && !grad)
    return error("--deterministic goes with --grad (the forward is deterministic as it is)");
  if (blockLists && !grad)
    return error("--block-lists goes with --grad (the forward's lists are a configuration switch: "
                 "--attention-config with block_lists)");
  if (optLevel < 0 || optLevel > 3)
    return error("-O" + llvm::Twine(optLevel.getValue()) + " is outside 0-3");

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &errorMessage);
  if (!file)
    return error(errorMessage);

  DialectRegistry registry;
  flare::registerAllDialects(registry);
  flare::registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  const llvm::MemoryBuffer &text = *file;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  if (!flare::detail::checkNesting(text.getBuffer(), text.getBufferIdentifier(), &context))
    return 1;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  flare::CompileOptions options;
  options.arch = arch;
  options.optLevel = optLevel;
  options.tmaFallback = tmaFallback;
  if (strengthReduction.getNumOccurrences())
    options.strengthReduction = strengthReduction;
  options.attentionConfig = attentionConfig;
  options.backward = grad;
  options.deterministic = deterministic;
  options.backwardBlockLists = blockLists;
  flare::CompiledModule meta;
  meta.arch = options.arch;
  static constexpr flare::Stage stageOf[] = {flare::Stage::Input, flare::Stage::Tile, flare::Stage::Layouts, flare::Stage::Kernels,
                                             flare::Stage::NVVM, flare::Stage::PTX, flare::Stage::PTX};
  flare::Stage last = stageOf[static_cast<int>(emit.getValue())];
  if (failed(flare::runStages(*module, options, last, &meta)))
    return 1;

  // Writes `text` to `path` ("-": standard output); a write that fails (a full disk, a closed pipe)
  // is an error, not LLVM's fatal "IO failure" when the stream closes.
  auto write = [&](const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> text) {
    std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &errorMessage);
    if (!out)
      return error(errorMessage);
    text(out->os());
    out->os().flush();
    if (std::error_code ec = out->os().error()) {
      out->os().clear_error();
      return error("cannot write " + (path == "-" ? std::string("to standard output") : "'" + path + "'") + ": " +
                   ec.message());
    }
    out->keep();
    return 0;
  };
  switch (emit) {
  case Emit::PTX:
    if (failed(flare::extractPTX(*module, meta.ptx)))
      return 1;
    if (int rc = write(output, [&](llvm::raw_ostream &os) { os << meta.ptx; }))
      return rc;
    if (!metaOutput.empty())
      return write(metaOutput, [&](llvm::raw_ostream &os) { os << meta.metadataJson() << "\n"; });
    return 0;
  case Emit::Meta:
    return write(output, [&](llvm::raw_ostream &os) { os << meta.metadataJson() << "\n"; });
  default:
    return write(output, [&](llvm::raw_ostream &os) { module->print(os); os << "\n"; });
  }
}
