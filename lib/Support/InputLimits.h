//===- InputLimits.h - Bounds on the text Flare parses, and a stack for it -*- C++ -*-===//
//
// Private to libflare and its tools. MLIR's parser (and the JSON reader) recurse once per nested
// bracket, so text nested deeply enough overflows any thread's stack and ends the process. Flare
// therefore (1) rejects text nested deeper than a fixed number of brackets before parsing it, with
// the location where that depth is reached, and (2) parses and compiles on a thread of its own whose
// stack is large enough for that depth, whatever the caller's thread has.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_SUPPORT_INPUTLIMITS_H
#define FLARE_LIB_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>

namespace flare::detail {

/// The deepest bracket nesting ((, [, {, < counted together) accepted in IR text. Hand-written and
/// generated kernels nest a few dozen levels (regions in regions, types in attributes).
inline constexpr size_t kMaxIRNesting = 256;
/// The deepest nesting accepted in kernel-cache metadata (JSON objects and arrays; Flare writes 4).
inline constexpr size_t kMaxJsonNesting = 32;

/// Where text first nests deeper than a limit (1-based line and column of the opening bracket).
struct NestingExcess {
  unsigned line = 0, column = 0;
};

/// The first place `text` nests brackets deeper than `limit`, skipping string literals and `//`
/// comments; nullopt when it never does. With `mlirSyntax`, `->` and `>=` are not closing brackets
/// and `<` counts as an opening one.
std::optional<NestingExcess> findNestingExcess(llvm::StringRef text, size_t limit, bool mlirSyntax);

/// The stack of the thread runOnLargeStack uses: room for kMaxIRNesting levels of the parser and for
/// the passes' recursive walks, with a wide margin.
inline constexpr unsigned kCompilerStackBytes = 64u << 20;

/// Runs `body` on a thread with kCompilerStackBytes of stack and waits for it; an exception thrown
/// by `body` is rethrown here.
void runOnLargeStack(llvm::function_ref<void()> body);

} // namespace flare::detail

#endif // FLARE_LIB_SUPPORT_INPUTLIMITS_H
