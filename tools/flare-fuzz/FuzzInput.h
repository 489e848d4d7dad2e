//===- FuzzInput.h - Input limits shared by Flare's fuzz targets -*- C++ -*-===//
//
// What a fuzz target accepts before it hands text to libflare. These are limits of the harnesses, not
// of the library: an input beyond them is skipped (and kept out of the corpus), never reported.
//
//   kMaxInputBytes  32 KiB: ten times the largest example; bigger inputs only make each run slower.
//   kMaxNesting     100 open brackets ({ [ ( <) at once. MLIR's parser and verifier recurse once per
//                   level, so a deep enough input exhausts the stack; until the library bounds nesting
//                   itself, the harness does not feed it such inputs.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TOOLS_FLARE_FUZZ_FUZZINPUT_H
#define FLARE_TOOLS_FLARE_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace flare::fuzz {

inline constexpr size_t kMaxInputBytes = 32 * 1024;
inline constexpr int kMaxNesting = 100;

/// The deepest bracket nesting in `text`. A closer pops only the opener it matches, so the `>` of an
/// arrow (`->`) or a comparison leaves the depth alone; brackets inside strings and comments count too,
/// which only ever overestimates.
inline int nestingDepth(std::string_view text) {
  constexpr int kStackSize = kMaxNesting + 1;
  char open[kStackSize];
  int depth = 0, deepest = 0;
  for (char c : text) {
    char opener = c == '}' ? '{' : c == ']' ? '[' : c == ')' ? '(' : c == '>' ? '<' : 0;
    if (c == '{' || c == '[' || c == '(' || c == '<') {
      if (depth == kStackSize)
        return depth; // already beyond the limit
      open[depth++] = c;
      deepest = depth > deepest ? depth : deepest;
    } else if (opener && depth > 0 && open[depth - 1] == opener) {
      --depth;
    }
  }
  return deepest;
}

/// True when the input is within the harness's limits (size, then nesting).
inline bool withinLimits(std::string_view text) {
  return text.size() <= kMaxInputBytes && nestingDepth(text) <= kMaxNesting;
}

/// FNV-1a: a stable hash of the input, for choices the input does not spell out (the target
/// architecture) so that a reproducer replays the same choice.
inline uint64_t inputHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

} // namespace flare::fuzz

#endif // FLARE_TOOLS_FLARE_FUZZ_FUZZINPUT_H
