//===- Compiler.cpp - In-process compilation of Flare IR to PTX -----------===//
#include "flare/Compiler/Compiler.h"

#include "flare/Error.h"
#include "flare/Pipelines/Pipelines.h"

#include "ParseContext.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace flare {
namespace {

/// Every dialect the pipeline knows.
DialectRegistry allDialects() {
  DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}

} // namespace

CompiledModule compileToPTX(const std::string &source, const CompileOptions &options, const std::string &bufferName) {
  if (!isSupportedArch(options.arch))
    throw Error("unsupported target architecture '" + options.arch + "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
  if (options.optLevel < 0 || options.optLevel > 3)
    throw Error("optimisation level " + std::to_string(options.optLevel) + " is outside 0-3");
  CompiledModule result;
  // Parsing and the passes recurse with the input's nesting: they run on a stack of known size.
  detail::runOnLargeStack([&] {
    detail::ParseContext cc(allDialects(), /*loadAllDialects=*/true);
    OwningOpRef<ModuleOp> module = cc.parse(source, bufferName);
    if (!module)
      cc.fail("failed to parse " + bufferName);
    result.arch = options.arch;
    if (failed(runStages(*module, options, Stage::PTX, &result)))
      cc.fail("failed to compile " + bufferName);
    if (failed(extractPTX(*module, result.ptx)))
      cc.fail("failed to compile " + bufferName);
  });
  return result;
}

std::string canonicalizeIR(const std::string &source, const std::string &bufferName) {
  // Dialects load as the parser meets them: loading all of them (NVVM and LLVM are large) would
  // cost more than the parse on every cache lookup.
  std::string out;
  detail::runOnLargeStack([&] {
    detail::ParseContext cc(allDialects());
    OwningOpRef<ModuleOp> module = cc.parse(source, bufferName);
    if (!module)
      cc.fail("failed to parse " + bufferName);
    llvm::raw_string_ostream os(out);
    module->print(os, OpPrintingFlags().printGenericOpForm().enableDebugInfo(false));
  });
  return out;
}

} // namespace flare
