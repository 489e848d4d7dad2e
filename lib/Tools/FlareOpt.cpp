//===- FlareOpt.cpp - flare-opt: run single passes on Flare IR ------------===//
#include "flare/Tools/Tools.h"

#include "flare/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "../Support/InputLimits.h"

int flare::tools::flareOptMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  initializeNVPTXTarget();
  auto [input, output] = mlir::registerAndParseCLIOptions(argc, argv, "Flare optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  // Text nested beyond what the parser's recursion can take is rejected before parsing.
  if (std::optional<detail::NestingExcess> excess =
          detail::findNestingExcess(file->getBuffer(), detail::kMaxIRNesting, /*mlirSyntax=*/true)) {
    llvm::errs() << file->getBufferIdentifier() << ":" << excess->line << ":" << excess->column
                 << ": error: the input nests brackets more than " << detail::kMaxIRNesting
                 << " levels deep here; Flare does not parse it\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> out = mlir::openOutputFile(output, &errorMessage);
  if (!out) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (failed(mlir::MlirOptMain(out->os(), std::move(file), registry, config)))
    return 1;
  out->os().flush();
  if (std::error_code ec = out->os().error()) {
    out->os().clear_error();
    llvm::errs() << "flare-opt: error: cannot write the output: " << ec.message() << "\n";
    return 1;
  }
  out->keep();
  return 0;
}
