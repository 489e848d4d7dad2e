//===- FuzzInput.h - Input limits shared by Flare's fuzz targets -*- C++ -*-===//
//
// What a fuzz target accepts before it hands text to libflare. These are limits of the harnesses, not
// of the library: an input beyond them is skipped (and kept out of the corpus), never reported.
//
//   kMaxInputBytes  32 KiB: ten times the largest example; bigger inputs only make each run slower.
//
// Nesting is not limited here: the library refuses text nested deeper than it can parse
// (lib/Support/InputLimits.h), and that refusal is a flare::Error like any other.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TOOLS_FLARE_FUZZ_FUZZINPUT_H
#define FLARE_TOOLS_FLARE_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace flare::fuzz {

inline constexpr size_t kMaxInputBytes = 32 * 1024;

/// True when the input is within the harness's size limit.
inline bool withinLimits(std::string_view text) { return text.size() <= kMaxInputBytes; }

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
