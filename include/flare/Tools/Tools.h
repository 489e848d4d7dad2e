//===- Tools.h - Entry points of the command-line tools ---------*- C++ -*-===//
//
// The tools' code lives in libflare (which holds MLIR and LLVM privately); the executables are thin
// wrappers around these entry points.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TOOLS_TOOLS_H
#define FLARE_TOOLS_TOOLS_H

namespace flare::tools {
/// flare-opt: MlirOptMain with Flare's dialects and passes.
int flareOptMain(int argc, char **argv);
/// flarec: the compiler driver (`--emit=`, `--arch=`, `-o`).
int flarecMain(int argc, char **argv);
/// flare-warmup: compiles the attention kernels of a list of calls into the kernel cache.
int flareWarmupMain(int argc, char **argv);
} // namespace flare::tools

#endif // FLARE_TOOLS_TOOLS_H
