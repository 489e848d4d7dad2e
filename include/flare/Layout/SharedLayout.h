//===- SharedLayout.h - Shared-memory tile layouts and wgmma descriptors -*- C++ -*-===//
//
// Plain C++ (no MLIR) model of how wgmma reads its operands from shared memory, checked exhaustively
// by unit tests and used by the lowering, so that the bit-level conventions live in one place:
//
//  - the 64-bit matrix descriptor (PTX ISA, "Matrix Descriptor Format" of wgmma): start address,
//    leading and stride byte offsets (all in 16-byte units, 14 bits each), the base offset of a
//    swizzled atom and the swizzle mode;
//  - the no-swizzle core-matrix layout of operands the kernel stores from registers: 8 x 16-byte
//    core matrices;
//  - the 32/64/128-byte swizzles of TMA and wgmma (CuTe's Swizzle<B, 4, 3> on byte offsets): with
//    128-byte rows, the 16-byte chunk c of row r sits at chunk c ^ (r % 8), so the 8 rows of an
//    atom reading one column of chunks hit 8 distinct chunk positions (all 32 banks); the layout of
//    copied operands with 128-byte rows (swizzledOperandDescriptor, swizzledKStepOffset).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LAYOUT_SHAREDLAYOUT_H
#define FLARE_LAYOUT_SHAREDLAYOUT_H

#include <cstdint>

namespace flare {

/// Swizzle modes as the wgmma descriptor encodes them (bits 62-63).
enum class SmemSwizzle : unsigned { None = 0, B128 = 1, B64 = 2, B32 = 3 };

/// Bytes of one swizzled row (the swizzle width): 32, 64 or 128; 16 for None (one core-matrix row).
constexpr int64_t swizzleBytes(SmemSwizzle mode) {
  return mode == SmemSwizzle::B128 ? 128 : mode == SmemSwizzle::B64 ? 64 : mode == SmemSwizzle::B32 ? 32 : 16;
}

/// The fields of a wgmma shared-memory matrix descriptor. Addresses and offsets are in bytes and
/// must be multiples of 16 below 2^18 (they are stored >> 4 in 14 bits).
struct WgmmaDescriptor {
  uint32_t startAddress = 0;
  uint32_t leadingByteOffset = 0; ///< LBO: between core matrices along the leading dimension
  uint32_t strideByteOffset = 0;  ///< SBO: between 8-row groups
  unsigned baseOffset = 0;        ///< 3 bits: (address >> 7) & 7 of a swizzle atom not 1024-byte aligned
  SmemSwizzle swizzle = SmemSwizzle::None;

  /// The 64-bit descriptor: start >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, base
  /// offset in 49-51, swizzle mode in 62-63.
  uint64_t encode() const;
  static WgmmaDescriptor decode(uint64_t bits);
  /// True when every field fits its bits and the addresses are 16-byte aligned.
  bool valid() const;
};

/// Byte offset of element (row, col) of a tile with `cols` columns of 16-bit elements in the
/// no-swizzle core-matrix layout: a core-matrix row holds 8 consecutive columns (16 bytes), 8 rows
/// make a 128-byte core matrix, core matrices run along the columns (LBO = 128) and then down the
/// rows (SBO = 16 * cols):
///   (row / 8) * 16 * cols + (col / 8) * 128 + (row % 8) * 16 + (col % 8) * 2.
/// With `transposed` the roles inside each core matrix swap, (col % 8) * 16 + (row % 8) * 2: an
/// MN-major operand stored as core matrices.
int64_t coreMatrixOffset(int64_t row, int64_t col, int64_t cols, bool transposed = false);

/// CuTe's Swizzle<B, M, S> on byte offsets: the B bits at [M + S, M + S + B) are XOR-ed into the B
/// bits at [M, M + B). The wgmma/TMA modes are Swizzle<3,4,3> (128 B), <2,4,3> (64 B), <1,4,3> (32 B).
int64_t swizzle(int64_t byteOffset, SmemSwizzle mode);

/// Byte offset of element (row, col) of a K-major (row = M or N, col = K) tile stored with `mode`:
/// the columns are split into panels as wide as the swizzle (e.g. 64 bf16 columns for 128 B), each
/// panel is rows x swizzleBytes with rows contiguous, panels follow each other, and the swizzle is
/// applied within every 8-row atom. This is what a TMA box of swizzleBytes columns writes.
int64_t swizzledOffset(int64_t row, int64_t col, int64_t rows, int64_t elemBytes, SmemSwizzle mode);

/// A 16-bit wgmma operand stored with swizzledOffset(..., 2, SmemSwizzle::B128), `rows` rows of a
/// multiple of 64 columns. K-major (rows = M or N, columns = K) or MN-major (rows = K, columns = M or
/// N). The descriptor fields other than the start address: swizzle 128B, SBO = one 8-row atom (1024
/// bytes); LBO unused (16) for K-major, one 64-column panel (rows x 128 bytes) for MN-major.
WgmmaDescriptor swizzledOperandDescriptor(int64_t rows, bool mnMajor);
/// Where the k-th 16-deep K step of a wgmma starts in that operand (bytes from its base): K-major,
/// 32 bytes further along the row inside a 64-column panel, then the next panel (rows x 128 bytes);
/// MN-major, 16 rows (of 128 bytes) further.
int64_t swizzledKStepOffset(int64_t kStep, int64_t rows, bool mnMajor);

} // namespace flare

#endif // FLARE_LAYOUT_SHAREDLAYOUT_H
