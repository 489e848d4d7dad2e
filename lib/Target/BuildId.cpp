//===- BuildId.cpp - The identity of this build of the compiler -----------===//
// Its own translation unit: the generated header changes with every source change, and only this
// small file is recompiled for it.
#include "flare/Compiler/Compiler.h"

#include "flare/BuildId.h"
#include "llvm/Config/llvm-config.h"

namespace flare {

std::string compilerVersion() {
  return std::string("flare-0.1.0+") + FLARE_BUILD_ID + "+llvm-" + LLVM_VERSION_STRING;
}

} // namespace flare
