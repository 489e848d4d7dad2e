//===- FuzzCompile.cpp - flare-fuzz-compile: MLIR text through the whole pipeline -===//
//
// The input is Flare IR as text. It goes through flare::compileToPTX, as the JIT cache and flarec take
// it: parse, verify, attention generation, layouts, lowering to NVVM and LLVM's NVPTX backend. The
// target architecture (sm_90a: wgmma and TMA; sm_80: mma.sync) is chosen from a hash of the input.
//
// A flare::Error is a correct rejection. Anything else is a finding: a sanitizer report, an LLVM fatal
// error or abort, another exception escaping the API, a run over libFuzzer's -timeout or -rss_limit_mb.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"

#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string source(reinterpret_cast<const char *>(data), size);
  if (!flare::fuzz::withinLimits(source))
    return -1; // outside the harness's input limits: not run, not kept
  flare::CompileOptions options;
  options.arch = flare::fuzz::inputHash(source) % 2 ? "sm_80" : "sm_90a";
  try {
    flare::compileToPTX(source, options, "fuzz-input.mlir");
  } catch (const flare::Error &) {
  }
  return 0;
}
