//===- LinearLayout.cpp - Register layouts as linear maps over bits -------===//
#include "flare/Layout/LinearLayout.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <sstream>

using namespace flare;

namespace {
bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
int log2i(int64_t x) {
  int n = 0;
  while ((int64_t(1) << n) < x)
    ++n;
  return n;
}
bool isZero(const LinearLayout::Coord &c) {
  return std::all_of(c.begin(), c.end(), [](int64_t v) { return v == 0; });
}
} // namespace

LinearLayout::LinearLayout(Coord shape, Bases reg, Bases lane, Bases warp) : shape_(std::move(shape)) {
  bases_[0] = std::move(reg);
  bases_[1] = std::move(lane);
  bases_[2] = std::move(warp);
}

LinearLayout LinearLayout::blocked(const Coord &shape, int numWarps, int vec) {
  assert(isPow2(numWarps) && isPow2(vec) && "warps and vector width must be powers of two");
  const int rank = static_cast<int>(shape.size());
  // The tile's coordinate bits, fastest first: the last dimension's bits from low to high, then the
  // dimension before it, and so on.
  std::vector<Coord> bits;
  for (int d = rank - 1; d >= 0; --d)
    for (int64_t b = 1; b < shape[d]; b <<= 1) {
      Coord c(rank, 0);
      c[d] = b;
      bits.push_back(c);
    }
  size_t next = 0;
  auto take = [&](int count, Bases &out) {
    for (int i = 0; i < count; ++i)
      out.push_back(next < bits.size() ? bits[next++] : Coord(rank, 0));
  };
  Bases reg, lane, warp;
  int vecBits = rank ? std::min(log2i(vec), log2i(shape[rank - 1])) : 0;
  for (int i = 0; i < vecBits; ++i)
    reg.push_back(bits[next++]);
  take(kLaneBits, lane);
  take(log2i(numWarps), warp);
  while (next < bits.size())
    reg.push_back(bits[next++]);
  return LinearLayout(shape, std::move(reg), std::move(lane), std::move(warp));
}

std::pair<int, int> LinearLayout::mmaWarps(int64_t m, int64_t n, int numWarps) {
  int wm = 1, wn = 1;
  while (wm * 2 <= numWarps && m / (16 * wm * 2) >= 1)
    wm *= 2;
  while (wm * wn * 2 <= numWarps && n / (8 * wn * 2) >= 1)
    wn *= 2;
  return {wm, wn};
}

namespace {
// Appends register bases walking dimension `dim` from `from` (inclusive) up to `to` (exclusive).
void repeat(LinearLayout::Bases &out, int rank, int dim, int64_t from, int64_t to) {
  for (int64_t v = from; v < to; v <<= 1) {
    LinearLayout::Coord c(rank, 0);
    c[dim] = v;
    out.push_back(c);
  }
}
// Warp bases: log2(wm) bits along dimension mDim (or zero when mDim < 0), then log2(wn) bits along
// nDim (or zero), then zero bases for warps beyond wm * wn.
LinearLayout::Bases mmaWarpBases(int numWarps, int wm, int wn, int mDim, int64_t mStep, int nDim, int64_t nStep) {
  LinearLayout::Bases out;
  for (int w = 1; w < wm; w <<= 1) {
    LinearLayout::Coord c(2, 0);
    if (mDim >= 0)
      c[mDim] = mStep * w;
    out.push_back(c);
  }
  for (int w = 1; w < wn; w <<= 1) {
    LinearLayout::Coord c(2, 0);
    if (nDim >= 0)
      c[nDim] = nStep * w;
    out.push_back(c);
  }
  for (int w = wm * wn; w < numWarps; w <<= 1)
    out.push_back(LinearLayout::Coord(2, 0));
  return out;
}
} // namespace

LinearLayout LinearLayout::mmaAccumulator(int64_t m, int64_t n, int numWarps) {
  auto [wm, wn] = mmaWarps(m, n, numWarps);
  int64_t mw = m / wm, nw = n / wn;
  Bases reg = {{0, 1}, {8, 0}};
  repeat(reg, 2, 1, 8, nw);
  repeat(reg, 2, 0, 16, mw);
  Bases lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  return LinearLayout({m, n}, reg, lane, mmaWarpBases(numWarps, wm, wn, 0, mw, 1, nw));
}

LinearLayout LinearLayout::mmaOperandA(int64_t m, int64_t k, int64_t n, int numWarps) {
  auto [wm, wn] = mmaWarps(m, n, numWarps);
  int64_t mw = m / wm;
  Bases reg = {{0, 1}, {8, 0}, {0, 8}};
  repeat(reg, 2, 1, 16, k);
  repeat(reg, 2, 0, 16, mw);
  Bases lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  return LinearLayout({m, k}, reg, lane, mmaWarpBases(numWarps, wm, wn, 0, mw, -1, 0));
}

LinearLayout LinearLayout::mmaOperandB(int64_t k, int64_t n, int64_t m, int numWarps) {
  auto [wm, wn] = mmaWarps(m, n, numWarps);
  int64_t nw = n / wn;
  Bases reg = {{1, 0}, {8, 0}};
  repeat(reg, 2, 0, 16, k);
  repeat(reg, 2, 1, 8, nw);
  Bases lane = {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}};
  return LinearLayout({k, n}, reg, lane, mmaWarpBases(numWarps, wm, wn, -1, 0, 1, nw));
}

LinearLayout LinearLayout::reshaped(const Coord &shape) const {
  LinearLayout r;
  r.shape_ = shape;
  for (int in = 0; in < kNumInputs; ++in)
    for (const Coord &c : bases_[in]) {
      // Sizes are powers of two, so the row-major index of a basis vector is the OR of its
      // coordinates' bits shifted into place, and splitting it again is linear too.
      int64_t index = linearIndex(c);
      Coord out(shape.size(), 0);
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        out[d] = index % shape[d];
        index /= shape[d];
      }
      r.bases_[in].push_back(out);
    }
  return r;
}

LinearLayout LinearLayout::permuted(const std::vector<int> &perm) const {
  LinearLayout r;
  for (int d : perm)
    r.shape_.push_back(shape_[d]);
  for (int in = 0; in < kNumInputs; ++in)
    for (const Coord &c : bases_[in]) {
      Coord p;
      for (int d : perm)
        p.push_back(c[d]);
      r.bases_[in].push_back(p);
    }
  return r;
}

std::string LinearLayout::verify() const {
  std::ostringstream os;
  for (int64_t s : shape_)
    if (!isPow2(s)) {
      os << "dimension size " << s << " is not a power of two";
      return os.str();
    }
  if (numBits(LayoutInput::Lane) != kLaneBits)
    return "a layout needs exactly 5 lane bases (32 lanes)";
  // Encode each basis vector as a bit mask over the tile's coordinate bits and check that together they
  // span every bit: then (and only then) every element is held by some register of some thread.
  std::vector<int> offset(rank() + 1, 0);
  for (int d = 0; d < rank(); ++d)
    offset[d + 1] = offset[d] + log2i(shape_[d]);
  const int totalBits = offset[rank()];
  if (totalBits > 62)
    return "tile too large";
  std::vector<uint64_t> rows;
  for (const Bases &bs : bases_)
    for (const Coord &c : bs) {
      if (static_cast<int>(c.size()) != rank())
        return "basis vector of the wrong rank";
      uint64_t mask = 0;
      for (int d = 0; d < rank(); ++d) {
        if (c[d] == 0)
          continue;
        if (!isPow2(c[d]) || c[d] >= shape_[d]) {
          os << "basis component " << c[d] << " is not a power of two inside dimension " << d;
          return os.str();
        }
        mask |= uint64_t(1) << (offset[d] + log2i(c[d]));
      }
      rows.push_back(mask);
    }
  int rankGF2 = 0;
  for (int bit = 0; bit < totalBits; ++bit) {
    auto pivot = std::find_if(rows.begin() + rankGF2, rows.end(), [&](uint64_t r) { return (r >> bit) & 1; });
    if (pivot == rows.end())
      continue;
    std::swap(rows[rankGF2], *pivot);
    for (size_t i = 0; i < rows.size(); ++i)
      if (i != static_cast<size_t>(rankGF2) && ((rows[i] >> bit) & 1))
        rows[i] ^= rows[rankGF2];
    ++rankGF2;
  }
  if (rankGF2 != totalBits)
    return "the layout does not cover every element of the tile";
  return {};
}

int64_t LinearLayout::numElements() const {
  int64_t n = 1;
  for (int64_t s : shape_)
    n *= s;
  return n;
}

LinearLayout::Coord LinearLayout::applyInput(LayoutInput in, int index) const {
  Coord c(rank(), 0);
  const Bases &bs = bases(in);
  for (size_t b = 0; b < bs.size(); ++b)
    if ((index >> b) & 1)
      for (int d = 0; d < rank(); ++d)
        c[d] ^= bs[b][d];
  return c;
}

LinearLayout::Coord LinearLayout::apply(int reg, int lane, int warp) const {
  Coord c = applyInput(LayoutInput::Reg, reg);
  Coord l = applyInput(LayoutInput::Lane, lane);
  Coord w = applyInput(LayoutInput::Warp, warp);
  for (int d = 0; d < rank(); ++d)
    c[d] ^= l[d] ^ w[d];
  return c;
}

std::optional<LinearLayout> LinearLayout::sliceReduced(int axis) const {
  assert(axis >= 0 && axis < rank());
  Bases out[kNumInputs];
  for (int in = 0; in < kNumInputs; ++in)
    for (const Coord &c : bases_[in]) {
      Coord p;
      bool other = false;
      for (int d = 0; d < rank(); ++d)
        if (d != axis) {
          p.push_back(c[d]);
          other |= c[d] != 0;
        }
      if (c[axis] != 0 && other)
        return std::nullopt;
      if (in == static_cast<int>(LayoutInput::Reg) && isZero(p))
        continue;
      out[in].push_back(std::move(p));
    }
  Coord shape;
  for (int d = 0; d < rank(); ++d)
    if (d != axis)
      shape.push_back(shape_[d]);
  return LinearLayout(std::move(shape), std::move(out[0]), std::move(out[1]), std::move(out[2]));
}

LinearLayout LinearLayout::expandDims(int axis) const {
  assert(axis >= 0 && axis <= rank());
  LinearLayout r = *this;
  r.shape_.insert(r.shape_.begin() + axis, 1);
  for (Bases &bs : r.bases_)
    for (Coord &c : bs)
      c.insert(c.begin() + axis, 0);
  return r;
}

LinearLayout LinearLayout::removeUnitDim(int axis) const {
  assert(axis >= 0 && axis < rank() && shape_[axis] == 1);
  LinearLayout r = *this;
  r.shape_.erase(r.shape_.begin() + axis);
  for (Bases &bs : r.bases_)
    for (Coord &c : bs)
      c.erase(c.begin() + axis);
  return r;
}

LinearLayout LinearLayout::broadcastSource(const std::vector<int> &dims) const {
  LinearLayout r = *this;
  for (int d : dims) {
    r.shape_[d] = 1;
    for (Bases &bs : r.bases_)
      for (Coord &c : bs)
        c[d] = 0;
  }
  Bases &reg = r.bases_[static_cast<int>(LayoutInput::Reg)];
  reg.erase(std::remove_if(reg.begin(), reg.end(), isZero), reg.end());
  return r;
}

std::optional<std::vector<int>> LinearLayout::registerPermutationFrom(const LinearLayout &src) const {
  if (src.rank() != rank())
    return std::nullopt;
  for (int d = 0; d < rank(); ++d)
    if (src.shape_[d] != shape_[d] && src.shape_[d] != 1)
      return std::nullopt;
  auto project = [&](Coord c) {
    for (int d = 0; d < rank(); ++d)
      if (src.shape_[d] == 1)
        c[d] = 0;
    return c;
  };
  for (LayoutInput in : {LayoutInput::Lane, LayoutInput::Warp}) {
    const Bases &mine = bases(in), &theirs = src.bases(in);
    if (mine.size() != theirs.size())
      return std::nullopt;
    for (size_t b = 0; b < mine.size(); ++b)
      if (project(mine[b]) != theirs[b])
        return std::nullopt;
  }
  std::vector<Coord> srcRegs;
  for (int j = 0; j < src.numRegs(); ++j)
    srcRegs.push_back(src.applyInput(LayoutInput::Reg, j));
  std::vector<int> perm;
  for (int i = 0; i < numRegs(); ++i) {
    auto it = std::find(srcRegs.begin(), srcRegs.end(), project(applyInput(LayoutInput::Reg, i)));
    if (it == srcRegs.end())
      return std::nullopt;
    perm.push_back(static_cast<int>(it - srcRegs.begin()));
  }
  return perm;
}

std::optional<LinearLayout::WarpShuffle> LinearLayout::warpShuffleFrom(const LinearLayout &src) const {
  if (src.shape_ != shape_ || src.bases(LayoutInput::Warp) != bases(LayoutInput::Warp) ||
      src.numBits(LayoutInput::Lane) != kLaneBits || numBits(LayoutInput::Lane) != kLaneBits)
    return std::nullopt;
  constexpr int kLanes = 1 << kLaneBits;
  // Coordinates as row-major indices: with power-of-two sizes, XOR of coordinates is XOR of indices.
  auto index = [](const LinearLayout &l, LayoutInput in, int bits) { return l.linearIndex(l.applyInput(in, bits)); };
  std::map<int64_t, int> srcRegHolding; // element index -> the first source register holding it
  std::vector<int64_t> srcReg(src.numRegs());
  for (int r = src.numRegs() - 1; r >= 0; --r)
    srcRegHolding[srcReg[r] = index(src, LayoutInput::Reg, r)] = r;
  int64_t srcLane[kLaneBits], dstLane[kLaneBits];
  for (int b = 0; b < kLaneBits; ++b) {
    srcLane[b] = index(src, LayoutInput::Lane, 1 << b);
    dstLane[b] = index(*this, LayoutInput::Lane, 1 << b);
  }
  std::vector<int64_t> dstReg(numRegs());
  for (int r = 0; r < numRegs(); ++r)
    dstReg[r] = index(*this, LayoutInput::Reg, r);
  // In one round, lane l' offers the element offered[l'] ^ srcReg[offeredReg], where offered[l'] is its
  // lane's part srcLane(l') and the part srcReg(regXor . l') that its lane bits add to the register.
  auto attempt = [&](const int (&regXor)[kLaneBits]) -> std::optional<WarpShuffle> {
    int64_t offered[kLanes] = {};
    for (int l = 1; l < kLanes; ++l) {
      int b = __builtin_ctz(l);
      offered[l] = offered[l & (l - 1)] ^ srcLane[b] ^ srcReg[regXor[b]];
    }
    WarpShuffle plan;
    std::copy(std::begin(regXor), std::end(regXor), plan.regXor);
    for (int b = 0; b < kLaneBits; ++b) {
      const int64_t *at = std::find(offered, offered + kLanes, dstLane[b]);
      if (at == offered + kLanes)
        return std::nullopt;
      plan.laneXor[b] = static_cast<int>(at - offered);
    }
    for (int r = 0; r < numRegs(); ++r) {
      int64_t target = dstReg[r];
      int l = 0;
      for (; l < kLanes; ++l)
        if (auto it = srcRegHolding.find(target ^ offered[l]); it != srcRegHolding.end()) {
          plan.sourceLane.push_back(l);
          plan.offeredReg.push_back(it->second);
          break;
        }
      if (l == kLanes)
        return std::nullopt;
    }
    return plan;
  };
  // No register choice per lane first, then one lane bit choosing between two registers, then two.
  int regXor[kLaneBits] = {};
  if (auto plan = attempt(regXor))
    return plan;
  const int regBits = src.numBits(LayoutInput::Reg);
  for (int b0 = 0; b0 < kLaneBits; ++b0)
    for (int k0 = 0; k0 < regBits; ++k0) {
      regXor[b0] = 1 << k0;
      if (auto plan = attempt(regXor))
        return plan;
      regXor[b0] = 0;
    }
  for (int b0 = 0; b0 < kLaneBits; ++b0)
    for (int k0 = 0; k0 < regBits; ++k0)
      for (int b1 = b0 + 1; b1 < kLaneBits; ++b1)
        for (int k1 = 0; k1 < regBits; ++k1) {
          regXor[b0] = 1 << k0;
          regXor[b1] = 1 << k1;
          if (auto plan = attempt(regXor))
            return plan;
          regXor[b0] = regXor[b1] = 0;
        }
  return std::nullopt;
}

bool LinearLayout::registersAddToThread() const {
  for (int d = 0; d < rank(); ++d) {
    int64_t regBits = 0, threadBits = 0;
    for (const Coord &basis : bases(LayoutInput::Reg))
      regBits |= basis[d];
    for (LayoutInput in : {LayoutInput::Lane, LayoutInput::Warp})
      for (const Coord &basis : bases(in))
        threadBits |= basis[d];
    if (regBits & threadBits)
      return false;
  }
  return true;
}

int64_t LinearLayout::linearIndex(const Coord &coord) const {
  int64_t idx = 0;
  for (int d = 0; d < rank(); ++d)
    idx = idx * shape_[d] + coord[d];
  return idx;
}

std::string LinearLayout::str() const {
  std::ostringstream os;
  auto printCoord = [&](const Coord &c) {
    os << "[";
    for (size_t i = 0; i < c.size(); ++i)
      os << (i ? ", " : "") << c[i];
    os << "]";
  };
  os << "shape=";
  printCoord(shape_);
  const char *names[] = {"reg", "lane", "warp"};
  for (int in = 0; in < kNumInputs; ++in) {
    os << " " << names[in] << "=[";
    for (size_t b = 0; b < bases_[in].size(); ++b) {
      os << (b ? ", " : "");
      printCoord(bases_[in][b]);
    }
    os << "]";
  }
  return os.str();
}
