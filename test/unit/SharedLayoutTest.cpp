//===- SharedLayoutTest.cpp - Shared-memory layouts and wgmma descriptors, exhaustively ===//
#include "flare/Layout/SharedLayout.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

using namespace flare;

namespace {

constexpr SmemSwizzle kModes[] = {SmemSwizzle::None, SmemSwizzle::B32, SmemSwizzle::B64, SmemSwizzle::B128};

TEST(SharedLayout, DescriptorFieldsSitWhereThePtxIsaPutsThem) {
  WgmmaDescriptor d;
  d.startAddress = 0x10;
  EXPECT_EQ(d.encode(), 1ull);
  d = {};
  d.leadingByteOffset = 128;
  EXPECT_EQ(d.encode(), 8ull << 16);
  d = {};
  d.strideByteOffset = 2048;
  EXPECT_EQ(d.encode(), 128ull << 32);
  d = {};
  d.baseOffset = 5;
  EXPECT_EQ(d.encode(), 5ull << 49);
  for (SmemSwizzle m : kModes) {
    d = {};
    d.swizzle = m;
    EXPECT_EQ(d.encode(), uint64_t(static_cast<unsigned>(m)) << 62);
  }
  // The largest values of every field, together: no field spills into another.
  d = {(0x3FFFu << 4), (0x3FFFu << 4), (0x3FFFu << 4), 7, SmemSwizzle::B32};
  EXPECT_EQ(d.encode(), 0x3FFFull | (0x3FFFull << 16) | (0x3FFFull << 32) | (7ull << 49) | (3ull << 62));
}

TEST(SharedLayout, DescriptorsRoundTrip) {
  for (uint32_t start = 0; start < (1u << 18); start += 16 * 37)
    for (uint32_t lbo : {0u, 16u, 128u, 1024u, 8192u, (0x3FFFu << 4)})
      for (uint32_t sbo : {0u, 256u, 1024u, 2048u, 4096u, (0x3FFFu << 4)})
        for (unsigned base = 0; base < 8; ++base)
          for (SmemSwizzle m : kModes) {
            WgmmaDescriptor d{start, lbo, sbo, base, m};
            ASSERT_TRUE(d.valid());
            WgmmaDescriptor back = WgmmaDescriptor::decode(d.encode());
            ASSERT_EQ(back.startAddress, start);
            ASSERT_EQ(back.leadingByteOffset, lbo);
            ASSERT_EQ(back.strideByteOffset, sbo);
            ASSERT_EQ(back.baseOffset, base);
            ASSERT_EQ(back.swizzle, m);
          }
  EXPECT_FALSE((WgmmaDescriptor{8, 0, 0, 0, SmemSwizzle::None}.valid()));        // not 16-byte aligned
  EXPECT_FALSE((WgmmaDescriptor{0, 1u << 18, 0, 0, SmemSwizzle::None}.valid())); // does not fit 14 bits
}

TEST(SharedLayout, CoreMatricesCoverTheTileOnce) {
  for (int64_t rows : {8, 64, 128})
    for (int64_t cols : {8, 16, 64, 128, 256}) {
      std::vector<int> hits(rows * cols, 0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          for (bool t : {false, true}) {
            int64_t off = coreMatrixOffset(r, c, cols, t);
            ASSERT_EQ(off % 2, 0);
            ASSERT_GE(off, 0);
            ASSERT_LT(off, rows * cols * 2);
            if (!t)
              ++hits[off / 2];
          }
      for (int h : hits)
        ASSERT_EQ(h, 1) << rows << " x " << cols;
      // 8 consecutive columns of a row are one 16-byte core-matrix row; 8 rows make 128 bytes.
      EXPECT_EQ(coreMatrixOffset(3, 7, cols) - coreMatrixOffset(3, 0, cols), 14);
      EXPECT_EQ(coreMatrixOffset(7, 0, cols) - coreMatrixOffset(0, 0, cols), 112);
      EXPECT_EQ(coreMatrixOffset(0, 8, cols), 128);          // LBO
      EXPECT_EQ(coreMatrixOffset(8, 0, cols), 16 * cols);    // SBO
      EXPECT_EQ(coreMatrixOffset(1, 2, cols, true), 2 * 16 + 1 * 2);
    }
}

TEST(SharedLayout, SwizzlesPermuteEachAtomAndKeepChunksWhole) {
  for (SmemSwizzle m : kModes) {
    const int64_t span = 8 * 128 * 4; // several 1024-byte atoms
    std::set<int64_t> seen;
    for (int64_t x = 0; x < span; ++x) {
      int64_t y = swizzle(x, m);
      ASSERT_EQ(swizzle(y, m), x) << "an involution";
      ASSERT_EQ(y & 15, x & 15) << "16-byte chunks stay whole";
      ASSERT_EQ(y / 1024, x / 1024) << "offsets stay in their 1024-byte atom";
      seen.insert(y);
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), span);
  }
  // 128 B: chunk c of row r (128-byte rows) lands at chunk c ^ (r % 8).
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 8; ++c)
      EXPECT_EQ(swizzle(r * 128 + c * 16, SmemSwizzle::B128), r * 128 + ((c ^ (r % 8)) * 16));
  EXPECT_EQ(swizzle(12345, SmemSwizzle::None), 12345);
}

TEST(SharedLayout, SwizzledRowsReadingOneChunkColumnHitEveryBank) {
  // 8 rows of a 128-byte-swizzled tile reading the same logical 16-byte chunk (what one wgmma core
  // matrix fetch does) touch 8 different 16-byte bank groups: no bank conflict. Without swizzle they
  // would all hit the same 4 banks.
  for (int64_t c = 0; c < 8; ++c) {
    std::set<int64_t> groups;
    for (int64_t r = 0; r < 8; ++r)
      groups.insert((swizzledOffset(r, c * 8, 64, 2, SmemSwizzle::B128) % 128) / 16);
    EXPECT_EQ(groups.size(), 8u) << "chunk column " << c;
  }
}

TEST(SharedLayout, SwizzledTilesCoverTheirBytesOnce) {
  for (SmemSwizzle m : {SmemSwizzle::B32, SmemSwizzle::B64, SmemSwizzle::B128})
    for (int64_t rows : {8, 64, 128})
      for (int64_t cols : {64, 128, 256}) {
        const int64_t perPanel = swizzleBytes(m) / 2;
        if (cols % perPanel)
          continue;
        std::vector<int> hits(rows * cols, 0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            int64_t off = swizzledOffset(r, c, rows, 2, m);
            ASSERT_GE(off, 0);
            ASSERT_LT(off, rows * cols * 2);
            ++hits[off / 2];
          }
        for (int h : hits)
          ASSERT_EQ(h, 1);
        // A panel is rows x swizzle width bytes; the next panel follows it.
        EXPECT_EQ(swizzledOffset(0, perPanel, rows, 2, m), rows * swizzleBytes(m));
      }
}

} // namespace

// The lowering's swizzled wgmma operands: every 16-deep K step starts at the element (0, 16 k) of a
// K-major operand or (16 k, 0) of an MN-major one, and the descriptor strides match the layout: SBO is
// the distance between 8-row atoms, LBO (MN-major) between 64-column panels.
TEST(SharedLayout, SwizzledKStepsAndStridesMatchTheLayout) {
  for (int64_t rows : {64, 128, 256})
    for (int64_t cols : {64, 128, 256})
      for (int64_t kk = 0; kk < cols / 16; ++kk)
        EXPECT_EQ(swizzledKStepOffset(kk, rows, /*mnMajor=*/false), swizzledOffset(0, 16 * kk, rows, 2, SmemSwizzle::B128))
            << rows << " x " << cols << ", step " << kk;
  for (int64_t k : {16, 64, 128})
    for (int64_t kk = 0; kk < k / 16; ++kk)
      EXPECT_EQ(swizzledKStepOffset(kk, k, /*mnMajor=*/true), swizzledOffset(16 * kk, 0, k, 2, SmemSwizzle::B128));
  for (bool mnMajor : {false, true}) {
    const int64_t rows = 128;
    WgmmaDescriptor d = swizzledOperandDescriptor(rows, mnMajor);
    EXPECT_TRUE(d.valid());
    EXPECT_EQ(d.swizzle, SmemSwizzle::B128);
    // Row 8 (the next atom) starts SBO bytes after row 0; column 64 (the next panel) LBO bytes after.
    EXPECT_EQ(swizzledOffset(8, 0, rows, 2, SmemSwizzle::B128), int64_t(d.strideByteOffset));
    if (mnMajor) {
      EXPECT_EQ(swizzledOffset(0, 64, rows, 2, SmemSwizzle::B128), int64_t(d.leadingByteOffset));
    }
  }
}

// The copies the lowering emits put 16-byte chunk c of row r at panel (c / 8), row r, chunk position
// (c % 8) ^ (r % 8): the same bytes as swizzledOffset.
TEST(SharedLayout, SwizzledChunkPlacementIsTheLayout) {
  for (int64_t rows : {8, 64, 128})
    for (int64_t chunksPerRow : {8, 16, 32})
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < chunksPerRow; ++c) {
          const int64_t lowered = (c / 8) * rows * 128 + r * 128 + (((c % 8) ^ (r % 8)) * 16);
          ASSERT_EQ(lowered, swizzledOffset(r, 8 * c, rows, 2, SmemSwizzle::B128)) << r << ", " << c;
        }
}
