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

/// The width of the tiles that hold a head dim: the next power of two (tiles are powers of two: 96
/// runs in tiles of 128, 192 in tiles of 256; the padding is zeros).
inline int64_t paddedHeadDim(int64_t headDim) {
  int64_t d = 1;
  while (d < headDim)
    d *= 2;
  return d;
}

/// The head dim a kernel is configured for: the wider of Q.K's and V's tiles (192 / 128: 256).
inline int64_t tileHeadDim(int64_t headDimQK, int64_t headDimV) {
  return paddedHeadDim(std::max(headDimQK, headDimV));
}

} // namespace flare::attn

#endif // FLARE_DIALECT_ATTN_HEADDIM_H
