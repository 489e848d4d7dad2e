//===- BF16.h - bf16 bits from and to float, for the example programs --*- C++ -*-===//
#ifndef FLARE_EXAMPLES_JIT_BF16_H
#define FLARE_EXAMPLES_JIT_BF16_H

#include <cstdint>
#include <cstring>

namespace flare_examples {
/// The bf16 nearest to `f` (ties to even).
inline uint16_t toBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
/// The float a bf16 holds exactly.
inline float fromBF16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
} // namespace flare_examples

#endif // FLARE_EXAMPLES_JIT_BF16_H
