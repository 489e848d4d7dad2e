//===- LinearLayoutTest.cpp - Exhaustive checks of the register-layout math ===//
#include "flare/Layout/LinearLayout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using flare::LayoutInput;
using flare::LinearLayout;
using Coord = LinearLayout::Coord;

namespace {

std::string name(const Coord &shape, int warps, int vec) {
  std::string s = "shape=[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "] warps=" + std::to_string(warps) + " vec=" + std::to_string(vec);
}

const std::vector<Coord> kShapes = {{1}, {32}, {128}, {1024}, {4096}, {1, 1}, {4, 8}, {16, 16}, {4, 1024},
                                    {64, 64}, {128, 64}, {2, 4, 8}, {8, 1, 256}};

// Every (reg, lane, warp) maps inside the tile and every element is held by someone.
TEST(LinearLayout, BlockedCoversEveryElementExactlyAsPromised) {
  for (const Coord &shape : kShapes)
    for (int warps : {1, 2, 4, 8})
      for (int vec : {1, 2, 4, 8}) {
        SCOPED_TRACE(name(shape, warps, vec));
        LinearLayout l = LinearLayout::blocked(shape, warps, vec);
        EXPECT_EQ(l.verify(), "");
        EXPECT_EQ(l.numWarps(), warps);
        std::set<int64_t> seen;
        for (int w = 0; w < l.numWarps(); ++w)
          for (int lane = 0; lane < 32; ++lane)
            for (int r = 0; r < l.numRegs(); ++r) {
              Coord c = l.apply(r, lane, w);
              for (size_t d = 0; d < shape.size(); ++d)
                ASSERT_TRUE(c[d] >= 0 && c[d] < shape[d]) << "reg " << r << " lane " << lane << " warp " << w;
              seen.insert(l.linearIndex(c));
            }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), l.numElements());
        // No thread holds more registers than one vector or its share of the tile.
        EXPECT_LE(l.numRegs(), std::max<int64_t>(vec, l.numElements() / (32 * warps)));
      }
}

TEST(LinearLayout, BlockedGivesEachThreadContiguousVectors) {
  LinearLayout l = LinearLayout::blocked({4, 1024}, 4, 4);
  // Registers 0..3 of a thread are 4 consecutive columns of one row.
  for (int lane = 0; lane < 32; ++lane) {
    Coord base = l.apply(0, lane, 0);
    for (int r = 1; r < 4; ++r) {
      Coord c = l.apply(r, lane, 0);
      EXPECT_EQ(c[0], base[0]);
      EXPECT_EQ(c[1], base[1] + r) << "lane " << lane << " reg " << r;
    }
  }
  // Lanes 0..31 then cover 128 consecutive columns of row 0.
  EXPECT_EQ(l.apply(0, 31, 0), (Coord{0, 124}));
  EXPECT_EQ(l.apply(0, 0, 1), (Coord{0, 128}));
}

TEST(LinearLayout, SmallTilesBroadcastAcrossSurplusThreads) {
  LinearLayout l = LinearLayout::blocked({32}, 4, 4);
  EXPECT_EQ(l.numRegs(), 4);
  // Only lanes 0..7 of warp 0 are needed: lanes 8.. and warps 1.. repeat them.
  EXPECT_EQ(l.apply(1, 8, 0), l.apply(1, 0, 0));
  EXPECT_EQ(l.apply(2, 3, 3), l.apply(2, 3, 0));
}

TEST(LinearLayout, VerifyRejectsBrokenLayouts) {
  Coord z{0};
  LinearLayout::Bases lanes = {{1}, {2}, {4}, {8}, {16}};
  EXPECT_NE(LinearLayout({3}, {}, lanes, {}).verify(), "") << "non-power-of-two shape";
  EXPECT_NE(LinearLayout({64}, {}, lanes, {}).verify(), "") << "element 32.. not covered";
  EXPECT_NE(LinearLayout({32}, {}, {{1}, {2}, {4}, {8}}, {}).verify(), "") << "only 4 lane bases";
  EXPECT_NE(LinearLayout({32}, {{3}}, lanes, {}).verify(), "") << "basis 3 is not a power of two";
  EXPECT_NE(LinearLayout({32}, {{32}}, lanes, {}).verify(), "") << "basis outside the shape";
  EXPECT_EQ(LinearLayout({32}, {z}, lanes, {z}).verify(), "") << "zero bases are broadcasts";
}

// For each reduced axis, the sliced layout describes exactly the projected coordinates.
TEST(LinearLayout, SliceReducedMatchesProjection) {
  for (const Coord &shape : kShapes) {
    if (shape.size() < 2)
      continue;
    for (int warps : {1, 4, 8})
      for (size_t axis = 0; axis < shape.size(); ++axis) {
        SCOPED_TRACE(name(shape, warps, 4) + " axis=" + std::to_string(axis));
        LinearLayout l = LinearLayout::blocked(shape, warps, 4);
        auto s = l.sliceReduced(static_cast<int>(axis));
        ASSERT_TRUE(s.has_value());
        EXPECT_EQ(s->verify(), "");
        // Every register of the sliced layout is some register's projection, for every thread.
        for (int w = 0; w < warps; ++w)
          for (int lane = 0; lane < 32; ++lane) {
            std::set<Coord> projected;
            for (int r = 0; r < l.numRegs(); ++r) {
              Coord c = l.apply(r, lane, w);
              c.erase(c.begin() + axis);
              projected.insert(c);
            }
            std::set<Coord> sliced;
            for (int r = 0; r < s->numRegs(); ++r)
              sliced.insert(s->apply(r, lane, w));
            ASSERT_EQ(projected, sliced) << "lane " << lane << " warp " << w;
          }
      }
  }
}

TEST(LinearLayout, SliceRejectsMixedBases) {
  // A lane basis (1, 1) moves along both dimensions: reducing either axis needs data movement.
  LinearLayout l({2, 2}, {}, {{1, 1}, {0, 1}, {0, 0}, {0, 0}, {0, 0}}, {});
  EXPECT_EQ(l.verify(), "");
  EXPECT_FALSE(l.sliceReduced(0).has_value());
  EXPECT_FALSE(l.sliceReduced(1).has_value());
}

// reduce -> expand_dims -> broadcast, the softmax pattern, is register-local.
TEST(LinearLayout, BroadcastOfSlicedLayoutIsRegisterLocal) {
  for (const Coord &shape : {Coord{4, 1024}, Coord{16, 16}, Coord{128, 64}, Coord{1, 32}})
    for (int warps : {1, 4, 8})
      for (int axis : {0, 1}) {
        SCOPED_TRACE(name(shape, warps, 4) + " axis=" + std::to_string(axis));
        LinearLayout full = LinearLayout::blocked(shape, warps, 4);
        LinearLayout src = full.sliceReduced(axis)->expandDims(axis);
        EXPECT_EQ(src, full.broadcastSource({axis}));
        auto perm = full.registerPermutationFrom(src);
        ASSERT_TRUE(perm.has_value());
        for (int w = 0; w < warps; ++w)
          for (int lane = 0; lane < 32; ++lane)
            for (int r = 0; r < full.numRegs(); ++r) {
              Coord want = full.apply(r, lane, w);
              want[axis] = 0;
              ASSERT_EQ(src.apply((*perm)[r], lane, w), want) << "lane " << lane << " reg " << r;
            }
      }
}

TEST(LinearLayout, PermutationBetweenDifferentThreadMappingsIsRefused) {
  LinearLayout a = LinearLayout::blocked({64, 64}, 4, 4);
  LinearLayout b = LinearLayout::blocked({64, 64}, 4, 1);
  EXPECT_FALSE(b.registerPermutationFrom(a).has_value());
  auto self = a.registerPermutationFrom(a);
  ASSERT_TRUE(self.has_value());
  for (int r = 0; r < a.numRegs(); ++r)
    EXPECT_EQ((*self)[r], r);
}

TEST(LinearLayout, StrNamesEveryBasis) {
  LinearLayout l = LinearLayout::blocked({4, 8}, 1, 2);
  EXPECT_EQ(l.str(), "shape=[4, 8] reg=[[0, 1]] lane=[[0, 2], [0, 4], [1, 0], [2, 0], [0, 0]] warp=[]");
}

} // namespace
