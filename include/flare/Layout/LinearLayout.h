//===- LinearLayout.h - Register layouts as linear maps over bits -*- C++ -*-===//
//
// A LinearLayout says which element of a tile every register of every thread holds. Its inputs are three
// bit vectors, the register index inside a thread, the lane inside a warp and the warp inside the CTA; its
// output is a coordinate per tile dimension. The map is linear over GF(2): every input bit has a basis
// vector (one coordinate per dimension), and the coordinate of (reg, lane, warp) is the XOR of the basis
// vectors of the bits that are set:
//
//     coord(reg, lane, warp) = XOR_{b : reg_b = 1} R_b  ^  XOR_{b : lane_b = 1} L_b  ^  XOR_{b : warp_b = 1} W_b
//
// All tile sizes are powers of two. A zero basis vector means the bit does not move the element: two
// threads (or two registers) differing in that bit hold the same element (a broadcast). The named
// layouts of the compiler are builders of this one representation:
//
//   blocked(shape = {4, 8}, warps = 1, vec = 2), one warp of 32 lanes over 32 elements:
//     reg  bit 0      -> (0, 1)                      two contiguous columns per thread
//     lane bits 0..1  -> (0, 2), (0, 4)              four lanes along a row
//     lane bits 2..3  -> (1, 0), (2, 0)              then down the rows
//     lane bit  4     -> (0, 0)                      the tile is covered: lanes 16..31 repeat 0..15
//
//
// This header is plain C++ (no LLVM or MLIR): the math is unit-tested exhaustively on its own.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LAYOUT_LINEARLAYOUT_H
#define FLARE_LAYOUT_LINEARLAYOUT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flare {

/// The three input spaces of a register layout.
enum class LayoutInput { Reg = 0, Lane = 1, Warp = 2 };

class LinearLayout {
public:
  using Coord = std::vector<int64_t>;
  using Bases = std::vector<Coord>;

  static constexpr int kLaneBits = 5; ///< 32 lanes per warp
  static constexpr int kNumInputs = 3;

  LinearLayout() = default;
  /// `shape` must be powers of two; each basis vector has shape.size() entries, each a power of two
  /// below the dimension's size or zero. Use verify() to check a hand-built layout.
  LinearLayout(Coord shape, Bases reg, Bases lane, Bases warp);

  /// The default layout of a tile: `vec` contiguous elements of the last dimension per thread, then
  /// lanes along the last dimension towards the first, then warps, then more registers. Lanes and warps
  /// left over once the tile is covered get zero bases (they duplicate elements).
  static LinearLayout blocked(const Coord &shape, int numWarps, int vec);

  /// How mma.sync tiles a [M, N] accumulator over `numWarps` warps: warps along M first (16 rows per
  /// warp at least), then along N (8 columns at least); warps left over duplicate.
  static std::pair<int, int> mmaWarps(int64_t m, int64_t n, int numWarps);
  /// Register layouts of mma.sync m16n8k16 (16-bit operands, f32 accumulator), tiled over the warps of
  /// mmaWarps(M, N). Per warp and 16x8 block of the accumulator, lane l holds rows l/4 and l/4 + 8,
  /// columns 2(l%4) and 2(l%4) + 1 (registers c0 c1 | c2 c3); the A fragment (16x16) adds columns + 8
  /// (a0 a1 | a2 a3 | a4 a5 | a6 a7), the B fragment (16x8) holds rows 2(l%4), +1, +8, +9 of column l/4.
  /// Register bits run: fragment bits, then K repetitions, then N (or M) repetitions.
  static LinearLayout mmaAccumulator(int64_t m, int64_t n, int numWarps);
  static LinearLayout mmaOperandA(int64_t m, int64_t k, int64_t n, int numWarps);
  static LinearLayout mmaOperandB(int64_t k, int64_t n, int64_t m, int numWarps);

  /// The same elements viewed in `shape` (equal element count, row-major order kept): each basis
  /// vector's row-major index is re-split into the new dimensions.
  LinearLayout reshaped(const Coord &shape) const;

  /// The layout of a transposed tile: result dimension i is source dimension perm[i].
  LinearLayout permuted(const std::vector<int> &perm) const;

  /// Checks the invariants: power-of-two shape, basis vectors of the right rank with power-of-two or
  /// zero entries inside the shape, 5 lane bits, and every element of the tile covered. Returns an
  /// empty string when valid, else what is wrong.
  std::string verify() const;

  const Coord &shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  const Bases &bases(LayoutInput in) const { return bases_[static_cast<int>(in)]; }
  int numBits(LayoutInput in) const { return static_cast<int>(bases(in).size()); }
  int numRegs() const { return 1 << numBits(LayoutInput::Reg); }
  int numWarps() const { return 1 << numBits(LayoutInput::Warp); }
  int64_t numElements() const;

  /// The coordinate held by register `reg` of lane `lane` in warp `warp`.
  Coord apply(int reg, int lane, int warp) const;
  /// The XOR of the bases of input `in` selected by the bits of `index`.
  Coord applyInput(LayoutInput in, int index) const;

  /// The layout of reduce(axis): the dimension is removed from every basis and register bits whose
  /// basis becomes zero are dropped (lane and warp bits stay, as broadcasts). Returns nullopt when a
  /// basis mixes `axis` with another dimension (such a reduction would need data movement first).
  std::optional<LinearLayout> sliceReduced(int axis) const;
  /// The inverse of expandDims: removes dimension `axis`, which must have size 1.
  LinearLayout removeUnitDim(int axis) const;
  /// The layout after inserting a dimension of size 1 at `axis`.
  LinearLayout expandDims(int axis) const;
  /// The layout a broadcast source must have so that every thread already holds the values it needs:
  /// this layout with the dimensions in `dims` shrunk to size 1 and their components zeroed, zero
  /// register bits dropped.
  LinearLayout broadcastSource(const std::vector<int> &dims) const;

  /// For each register of `this`, the register of `src` that the same thread uses to hold the same
  /// element after projecting away the dimensions where `src` has size 1 (broadcast). nullopt when
  /// some thread does not hold the element it needs (the conversion needs shared memory).
  std::optional<std::vector<int>> registerPermutationFrom(const LinearLayout &src) const;

  /// A conversion from `src` to this layout by one warp shuffle per destination register, when every
  /// warp already holds (in `src`) the elements it needs (equal warp bases). For destination register r,
  /// lane l reads from lane `sourceLane[r] ^ XOR{laneXor[b] : bit b of l set}`, and every lane l' offers
  /// its register `offeredReg[r] ^ XOR{regXor[b] : bit b of l' set}`. A nonzero regXor[b] lets two
  /// lanes that hold the same elements offer different registers in one shuffle (a select per such
  /// bit); at most two are used. nullopt when no such plan exists (the conversion needs shared memory).
  struct WarpShuffle {
    std::vector<int> sourceLane, offeredReg; ///< per destination register
    int laneXor[kLaneBits] = {};             ///< per destination lane bit
    int regXor[kLaneBits] = {};              ///< per source lane bit
  };
  std::optional<WarpShuffle> warpShuffleFrom(const LinearLayout &src) const;

  /// Whether every register's coordinate is the thread's (register 0's) plus a constant: per
  /// dimension, the bits the register bases set are disjoint from those the lane and warp bases set.
  /// An affine function of the coordinates is then one per-thread value plus a constant per register.
  bool registersAddToThread() const;

  /// Row-major linear index of a coordinate inside the shape.
  int64_t linearIndex(const Coord &coord) const;

  bool operator==(const LinearLayout &o) const { return shape_ == o.shape_ && bases_[0] == o.bases_[0] && bases_[1] == o.bases_[1] && bases_[2] == o.bases_[2]; }
  bool operator!=(const LinearLayout &o) const { return !(*this == o); }

  /// "shape=[4, 8] reg=[[0, 1]] lane=[[0, 2], ...] warp=[]", for diagnostics and tests.
  std::string str() const;

private:
  Coord shape_;
  Bases bases_[kNumInputs];
};

/// How many consecutive registers of `layout` hold consecutive elements of dimension `dim`: the low
/// register bits whose bases are (0, .., 1, .., 0), (0, .., 2, .., 0), ... (at most `maxElems`).
inline int contiguousRegsAlong(const LinearLayout &layout, int dim, int maxElems) {
  const auto &reg = layout.bases(LayoutInput::Reg);
  int n = 1;
  for (size_t bit = 0; bit < reg.size() && n * 2 <= maxElems; ++bit) {
    LinearLayout::Coord want(layout.rank(), 0);
    want[dim] = n;
    if (reg[bit] != want)
      break;
    n *= 2;
  }
  return n;
}
/// contiguousRegsAlong the last dimension.
inline int contiguousRegs(const LinearLayout &layout, int maxElems) {
  return contiguousRegsAlong(layout, layout.rank() - 1, maxElems);
}

} // namespace flare

#endif // FLARE_LAYOUT_LINEARLAYOUT_H
