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

// Runs a warp-shuffle plan on every thread of every warp: the lane each destination register reads
// must offer exactly the element that register holds in `dst`.
void expectShuffleDelivers(const LinearLayout &src, const LinearLayout &dst, const LinearLayout::WarpShuffle &plan) {
  auto xorOf = [](const int *table, int bits) {
    int v = 0;
    for (int b = 0; b < LinearLayout::kLaneBits; ++b)
      if ((bits >> b) & 1)
        v ^= table[b];
    return v;
  };
  ASSERT_EQ(static_cast<int>(plan.sourceLane.size()), dst.numRegs());
  ASSERT_EQ(static_cast<int>(plan.offeredReg.size()), dst.numRegs());
  for (int w = 0; w < dst.numWarps(); ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int r = 0; r < dst.numRegs(); ++r) {
        int from = plan.sourceLane[r] ^ xorOf(plan.laneXor, lane);
        ASSERT_TRUE(from >= 0 && from < 32);
        int reg = plan.offeredReg[r] ^ xorOf(plan.regXor, from);
        ASSERT_TRUE(reg >= 0 && reg < src.numRegs());
        ASSERT_EQ(src.apply(reg, from, w), dst.apply(r, lane, w)) << "warp " << w << " lane " << lane << " reg " << r;
      }
}

// The backward's per-query statistics: 64 values read four per lane (lanes 16-31 and every warp repeat
// them), needed in the columns of a transposed wgmma accumulator (lane l: columns 2(l%4) + 8j, +1).
TEST(LinearLayout, WarpShuffleTurnsReplicatedRowsIntoAccumulatorColumns) {
  LinearLayout row = LinearLayout::blocked({1, 64}, 8, 4);
  LinearLayout cols({1, 64}, {{0, 1}, {0, 8}, {0, 16}, {0, 32}}, {{0, 2}, {0, 4}, {0, 0}, {0, 0}, {0, 0}},
                    {{0, 0}, {0, 0}, {0, 0}});
  ASSERT_EQ(cols.verify(), "");
  ASSERT_EQ(row.bases(LayoutInput::Warp), cols.bases(LayoutInput::Warp));
  EXPECT_FALSE(cols.registerPermutationFrom(row).has_value());
  auto plan = cols.warpShuffleFrom(row);
  ASSERT_TRUE(plan.has_value());
  // Lanes 0-15 and 16-31 hold the same values, so the two halves offer different registers in one round.
  int choosing = 0;
  for (int v : plan->regXor)
    choosing += v != 0;
  EXPECT_EQ(choosing, 1);
  expectShuffleDelivers(row, cols, *plan);
  // The way back would need the eight copies of each column lane to offer eight different registers
  // (three choosing lane bits): refused, shared memory does it.
  EXPECT_FALSE(row.warpShuffleFrom(cols).has_value());
}

// Every pair of a family of layouts of one tile whose warps hold the same elements: a plan, when there
// is one, delivers; the same tile spread differently over the warps has none.
TEST(LinearLayout, WarpShufflePlansDeliverOrAreRefused) {
  for (const Coord &shape : {Coord{32}, Coord{64}, Coord{128}, Coord{1, 64}, Coord{8, 16}}) {
    std::vector<LinearLayout> family;
    for (int vec : {1, 2, 4, 8})
      family.push_back(LinearLayout::blocked(shape, 1, vec));
    if (shape.size() == 2 && shape[0] == 1) {
      LinearLayout acc = LinearLayout::mmaAccumulator(64, 64, 4).sliceReduced(0)->expandDims(0);
      if (acc.numWarps() == 1)
        family.push_back(acc);
    }
    int planned = 0;
    for (const LinearLayout &src : family)
      for (const LinearLayout &dst : family) {
        SCOPED_TRACE("from " + src.str() + " to " + dst.str());
        auto plan = dst.warpShuffleFrom(src);
        if (!plan)
          continue;
        ++planned;
        expectShuffleDelivers(src, dst, *plan);
      }
    EXPECT_GE(planned, static_cast<int>(family.size())) << "at least the identities";
  }
  LinearLayout spread = LinearLayout::blocked({1024}, 4, 1), replicated = LinearLayout::blocked({1024}, 1, 1);
  LinearLayout replicated4({1024}, replicated.bases(LayoutInput::Reg), replicated.bases(LayoutInput::Lane),
                           {{0}, {0}});
  EXPECT_FALSE(spread.warpShuffleFrom(replicated4).has_value());
}

TEST(LinearLayout, StrNamesEveryBasis) {
  LinearLayout l = LinearLayout::blocked({4, 8}, 1, 2);
  EXPECT_EQ(l.str(), "shape=[4, 8] reg=[[0, 1]] lane=[[0, 2], [0, 4], [1, 0], [2, 0], [0, 0]] warp=[]");
}

} // namespace
