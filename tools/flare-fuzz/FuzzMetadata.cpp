//===- FuzzMetadata.cpp - flare-fuzz-metadata: kernel-cache metadata JSON ---===//
//
// The input is the metadata JSON of a cache entry, which the cache reads back from disk and must treat
// as untrusted. flare::CompiledModule::fromMetadataJson either rejects it with a flare::Error or
// returns a module whose own metadata reads back to the same module (checked here: a difference, or
// an error on the second read, aborts as a finding).
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"

#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > flare::fuzz::kMaxInputBytes)
    return -1;
  std::string json(reinterpret_cast<const char *>(data), size);
  flare::CompiledModule module;
  try {
    module = flare::CompiledModule::fromMetadataJson(json, ".version 8.0\n");
  } catch (const flare::Error &) {
    return 0;
  }
  for (const flare::KernelInfo &kernel : module.kernels)
    if (module.findKernel(kernel.name) == nullptr) {
      std::fprintf(stderr, "findKernel does not find kernel '%s' of the module\n", kernel.name.c_str());
      std::abort();
    }
  // What the module writes, it reads back unchanged.
  std::string written = module.metadataJson();
  try {
    std::string again = flare::CompiledModule::fromMetadataJson(written, module.ptx).metadataJson();
    if (again != written) {
      std::fprintf(stderr, "metadata changes on a round trip:\n%s\nbecomes\n%s\n", written.c_str(), again.c_str());
      std::abort();
    }
  } catch (const flare::Error &e) {
    std::fprintf(stderr, "metadata written by metadataJson() is rejected: %s\n%s\n", e.what(), written.c_str());
    std::abort();
  }
  return 0;
}
