//===- TestKernels.h - Kernel descriptions for the metadata and cache tests -*- C++ -*-===//
#ifndef FLARE_TEST_UNIT_TESTKERNELS_H
#define FLARE_TEST_UNIT_TESTKERNELS_H

#include "flare/Compiler/Compiler.h"

#include <string>
#include <vector>

namespace flare::test {

/// A KernelInfo with a name, block size, dynamic shared memory and arguments, nothing else.
inline KernelInfo kernelInfo(std::string name, int numThreads, int sharedBytes, std::vector<ArgKind> args) {
  KernelInfo k;
  k.name = std::move(name);
  k.numThreads = numThreads;
  k.sharedBytes = sharedBytes;
  k.args = std::move(args);
  return k;
}

} // namespace flare::test

#endif // FLARE_TEST_UNIT_TESTKERNELS_H
