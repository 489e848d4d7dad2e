//===- ExampleText.h - Variants of the example kernels' text in tests -*- C++ -*-===//
#ifndef FLARE_TEST_EXAMPLETEXT_H
#define FLARE_TEST_EXAMPLETEXT_H

#include <string>

namespace flare::test {
/// Rewrites an attention example's head dimension (they are written for 128).
inline std::string withHeadDim(std::string text, int d) {
  const std::string from = "x128xbf16", to = "x" + std::to_string(d) + "xbf16";
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
  return text;
}
} // namespace flare::test

#endif // FLARE_TEST_EXAMPLETEXT_H
