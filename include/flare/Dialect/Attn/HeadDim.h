//===- HeadDim.h - The head dim a generated attention kernel is sized for -*- C++ -*-===//
//
// Free of MLIR headers: the runtime's launch-shape choices include it as well as the dialect.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_DIALECT_ATTN_HEADDIM_H
#define FLARE_DIALECT_ATTN_HEADDIM_H

#include <algorithm>
#include <cstdint>

namespace flare::attn {

/// The head dim a kernel's tiles are sized for: the wider of Q.K's and V's, padded to a power of two
/// (tiles are powers of two: 96 runs in tiles of 128, 192 / 128 in tiles of 256). Configurations are
/// chosen by it.
inline int64_t tileHeadDim(int64_t headDimQK, int64_t headDimV) {
  int64_t d = 1;
  while (d < std::max(headDimQK, headDimV))
    d *= 2;
  return d;
}

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_HEADDIM_H
