//===- FlareOpt.cpp - flare-opt: run single passes on Flare IR ------------===//
#include "flare/Tools/Tools.h"

#include "flare/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int flare::tools::flareOptMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  initializeNVPTXTarget();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Flare optimizer driver\n", registry));
}
