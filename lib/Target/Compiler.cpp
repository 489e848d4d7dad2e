//===- Compiler.cpp - In-process compilation of Flare IR to PTX -----------===//
#include "flare/Compiler/Compiler.h"

#include "flare/Error.h"
#include "flare/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace flare {
namespace {

/// A context with every dialect registered, multithreading off (compilations are small and the
/// runtime may compile from several threads, each with its own context), and diagnostics captured.
struct CompilationContext {
  MLIRContext context{MLIRContext::Threading::DISABLED};
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diagStream{diagnostics};
  SourceMgrDiagnosticHandler handler{sourceMgr, &context, diagStream};

  CompilationContext() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parse(const std::string &source, const std::string &bufferName) {
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, &context);
  }

  [[noreturn]] void fail(const std::string &what) {
    std::string msg = what;
    if (!diagnostics.empty())
      msg += ":\n" + diagnostics;
    throw Error(msg);
  }
};

} // namespace

CompiledModule compileToPTX(const std::string &source, const CompileOptions &options, const std::string &bufferName) {
  if (!isSupportedArch(options.arch))
    throw Error("unsupported target architecture '" + options.arch + "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
  if (options.optLevel < 0 || options.optLevel > 3)
    throw Error("optimisation level " + std::to_string(options.optLevel) + " is outside 0-3");
  CompilationContext cc;
  OwningOpRef<ModuleOp> module = cc.parse(source, bufferName);
  if (!module)
    cc.fail("failed to parse " + bufferName);
  CompiledModule result;
  result.arch = options.arch;
  if (failed(runStages(*module, options, Stage::PTX, &result)))
    cc.fail("failed to compile " + bufferName);
  if (failed(extractPTX(*module, result.ptx)))
    cc.fail("failed to compile " + bufferName);
  return result;
}

std::string canonicalizeIR(const std::string &source, const std::string &bufferName) {
  CompilationContext cc;
  OwningOpRef<ModuleOp> module = cc.parse(source, bufferName);
  if (!module)
    cc.fail("failed to parse " + bufferName);
  std::string out;
  llvm::raw_string_ostream os(out);
  module->print(os, OpPrintingFlags().printGenericOpForm().enableDebugInfo(false));
  return out;
}

std::string compilerVersion() {
  return std::string("flare-0.1.0+llvm-") + LLVM_VERSION_STRING;
}

} // namespace flare
