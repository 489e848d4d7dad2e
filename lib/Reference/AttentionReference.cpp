//===- AttentionReference.cpp - Float64 CPU reference of attn.attention ---===//
//
// Exact softmax attention in double, with the op's modifier regions interpreted:
//
//   1. Parse and verify the source and find its one attn.attention (inside func `funcName` if given).
//   2. Check the problem against the op: sizes against static dimensions, one vector per aux operand,
//      integer aux vectors holding integers of their element type.
//   3. Compile score_mod and mask_mod once each into a flat instruction list over numbered slots
//      (RegionProgram.cpp). The block's scalar arguments take the first slots; arith.constant,
//      attn.q_len and attn.kv_len become the initial value of their slot. An op the interpreter does
//      not know is rejected here, before any evaluation.
//   4. For every query row (b, h, i), rows spread over threads, with hk = h / (Hq / Hkv):
//        s_j = mask_mod(b, h, i, j) ? score_mod(scale * Q[b,h,i] . K[b,hk,j], b, h, i, j) : -inf
//        m = max_j s_j,   l = sum_j exp(s_j - m),   O[b,h,i] = sum_j exp(s_j - m) V[b,hk,j] / l,
//        lse = m + log(l)
//      A row whose every s_j is -inf (masked, or -inf from score_mod) sees no key: O = 0, lse = -inf.
//
//===----------------------------------------------------------------------===//
#include "flare/Reference/Attention.h"

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Error.h"

#include "../Target/ParseContext.h"
#include "RegionProgram.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iomanip>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

using namespace mlir;

namespace flare::reference {
namespace {

using namespace interpreter;

constexpr double kInf = std::numeric_limits<double>::infinity();
/// The name the source buffer carries in locations ("input:3:7").
constexpr const char *kBufferName = "input";
/// Rows a worker takes at a time: enough to make the shared counter cheap, few enough to balance causal
/// masks, whose rows differ in cost.
constexpr int64_t kRowsPerGrab = 4;

//===----------------------------------------------------------------------===//
// Parsing and checking the problem
//===----------------------------------------------------------------------===//

attn::AttentionOp findAttention(ModuleOp module, const std::string &funcName) {
  Operation *scope = module;
  std::string where = "the module";
  if (!funcName.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func)
      throw Error(std::string(kPrefix) + "the module has no func.func @" + funcName);
    scope = func;
    where = "@" + funcName;
  }
  SmallVector<attn::AttentionOp> ops;
  scope->walk([&](attn::AttentionOp op) { ops.push_back(op); });
  if (ops.size() == 1)
    return ops.front();
  std::string message = kPrefix + where + " must hold exactly one attn.attention, found " + std::to_string(ops.size());
  for (auto [n, op] : llvm::enumerate(ops))
    message += (n == 0 ? " (at " : ", ") + describe(op.getLoc());
  if (!ops.empty())
    message += funcName.empty() ? "); pass the name of the function to use" : ")";
  throw Error(message);
}

void checkProblem(attn::AttentionOp op, const AttentionProblem &p) {
  const std::string at = " (attn.attention at " + describe(op.getLoc()) + ")";
  const std::pair<const char *, int> sizes[] = {{"batch", p.batch}, {"headsQ", p.headsQ}, {"headsKV", p.headsKV},
                                                {"seqQ", p.seqQ},   {"seqKV", p.seqKV},   {"headDim", p.headDim}};
  for (auto [name, size] : sizes)
    if (size <= 0)
      throw Error(kPrefix + std::string("the problem's ") + name + " = " + std::to_string(size) + " is not positive");
  if (p.headDimV < 0)
    throw Error(kPrefix + std::string("the problem's headDimV = ") + std::to_string(p.headDimV) +
                " is negative (0: headDim)");
  if (p.headsQ % p.headsKV != 0)
    throw Error(kPrefix + std::string("the problem's headsQ = ") + std::to_string(p.headsQ) +
                " is not a multiple of headsKV = " + std::to_string(p.headsKV));
  if (!p.q || !p.k || !p.v)
    throw Error(std::string(kPrefix) + "the problem's q, k and v must all point at data");

  auto checkShape = [&](const char *operand, Value value, std::array<std::pair<const char *, int>, 4> dims) {
    auto type = cast<RankedTensorType>(value.getType());
    for (auto [axis, dim] : llvm::enumerate(dims))
      if (!type.isDynamicDim(axis) && type.getDimSize(axis) != dim.second)
        throw Error(kPrefix + std::string("the problem's ") + dim.first + " = " + std::to_string(dim.second) +
                    " does not match dimension " + std::to_string(axis) + " of the " + operand + " type " +
                    describe(type) + at);
  };
  const bool varlen = !p.cuSeqlensQ.empty();
  if (op.isVarlen() != varlen)
    throw Error(kPrefix + std::string(op.isVarlen() ? "the op has cu_seqlens: give the problem's cuSeqlensQ/K"
                                                    : "the problem gives cuSeqlensQ but the op has no cu_seqlens") +
                at);
  if (varlen) {
    for (auto [name, cu, total] : {std::tuple{"cuSeqlensQ", &p.cuSeqlensQ, p.seqQ}, {"cuSeqlensK", &p.cuSeqlensK, p.seqKV}}) {
      if (cu->size() != static_cast<size_t>(p.batch) + 1)
        throw Error(kPrefix + std::string("the problem's ") + name + " must have batch + 1 entries");
      for (size_t b = 0; b < cu->size(); ++b)
        if ((*cu)[b] < (b ? (*cu)[b - 1] : 0) || (*cu)[b] > total)
          throw Error(kPrefix + std::string("the problem's ") + name + " must be non-decreasing offsets in [0, " +
                      std::to_string(total) + "]");
    }
  }
  const int tensorBatch = varlen ? 1 : p.batch;
  checkShape("query", op.getQuery(),
             {{{"batch", tensorBatch}, {"headsQ", p.headsQ}, {"seqQ", p.seqQ}, {"headDim", p.headDim}}});
  const int dimV = p.headDimV ? p.headDimV : p.headDim;
  for (auto [operand, value] : {std::pair<const char *, Value>{"key", op.getKey()}, {"value", op.getValue()}}) {
    const int dim = value == op.getValue() ? dimV : p.headDim;
    const char *dimName = value == op.getValue() && p.headDimV ? "headDimV" : "headDim";
    if (op.isPaged()) { // [num_pages, Hkv, page_size, D]: the problem holds the keys gathered
      auto type = cast<RankedTensorType>(value.getType());
      if ((!type.isDynamicDim(1) && type.getDimSize(1) != p.headsKV) ||
          (!type.isDynamicDim(3) && type.getDimSize(3) != dim))
        throw Error(kPrefix + std::string("the problem's headsKV and ") + dimName + " do not match the paged " +
                    operand + " type " + describe(type) + at);
      if (int64_t n = op.getKeyCount(); !ShapedType::isDynamic(n) && n != p.seqKV)
        throw Error(kPrefix + std::string("the problem's seqKV = ") + std::to_string(p.seqKV) +
                    " is not the page table's " + std::to_string(n) + " keys" + at);
      continue;
    }
    checkShape(operand, value,
               {{{"batch", tensorBatch}, {"headsKV", p.headsKV}, {"seqKV", p.seqKV}, {dimName, dim}}});
  }
  if (static_cast<bool>(op.getKvLens()) != !p.kvLens.empty())
    throw Error(kPrefix + std::string(op.getKvLens() ? "the op has kv_lens: give the problem's kvLens"
                                                     : "the problem gives kvLens but the op has no kv_lens") +
                at);
  if (!p.kvLens.empty()) {
    if (p.kvLens.size() != static_cast<size_t>(p.batch))
      throw Error(kPrefix + std::string("the problem's kvLens has ") + std::to_string(p.kvLens.size()) +
                  " entries for batch " + std::to_string(p.batch));
    for (auto [b, len] : llvm::enumerate(p.kvLens))
      if (len < 0 || len > p.seqKV)
        throw Error(kPrefix + std::string("the problem's kvLens[") + std::to_string(b) + "] = " + std::to_string(len) +
                    " lies outside [0, seqKV = " + std::to_string(p.seqKV) + "]");
  }

  if (p.aux.size() != op.getAux().size())
    throw Error(kPrefix + std::string("the problem has ") + std::to_string(p.aux.size()) +
                " aux vectors but the op has " + std::to_string(op.getAux().size()) + " aux operands" + at);
  for (auto [n, value] : llvm::enumerate(op.getAux())) {
    auto type = cast<RankedTensorType>(value.getType());
    const std::vector<double> &data = p.aux[n];
    std::string which = "aux operand #" + std::to_string(n) + " (" + describe(type) + ")";
    if (!type.isDynamicDim(0) && static_cast<size_t>(type.getDimSize(0)) != data.size())
      throw Error(kPrefix + which + " has " + std::to_string(type.getDimSize(0)) + " elements but the problem gives " +
                  std::to_string(data.size()) + at);
    unsigned width = widthOf(type.getElementType());
    if (!width)
      continue;
    double limit = std::ldexp(1.0, static_cast<int>(width) - 1);
    for (auto [index, x] : llvm::enumerate(data))
      if (!(x == std::trunc(x) && x >= -limit && x < limit))
        throw Error(kPrefix + which + " element " + std::to_string(index) + " is " + describe(x) +
                    ", not an i" + std::to_string(width) + at);
  }
}

//===----------------------------------------------------------------------===//
// The attention itself
//===----------------------------------------------------------------------===//

/// q . k over the head dimension. Eight partial sums keep the multiply-adds independent (a single running
/// sum is bound by the latency of each add); in double the order changes the result by a few ulps only.
double dot(const double *q, const float *k, int64_t n) {
  double acc[8] = {};
  int64_t d = 0;
  for (; d + 8 <= n; d += 8)
    for (int u = 0; u < 8; ++u)
      acc[u] += q[d + u] * static_cast<double>(k[d + u]);
  for (; d < n; ++d)
    acc[0] += q[d] * static_cast<double>(k[d]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/// The op's modifiers at one element (b, h, i, j), with this thread's own copies of the programs' slots.
class Modifiers {
public:
  Modifiers(const Program &score, const Program &mask, const std::vector<std::vector<double>> &aux)
      : scoreProgram(score), maskProgram(mask), aux(aux), scoreSlots(score.initial), maskSlots(mask.initial) {}

  /// mask_mod's verdict (true without one).
  bool keeps(int64_t b, int64_t h, int64_t i, int64_t j) {
    if (!maskProgram.present())
      return true;
    setIndices(maskSlots.data(), b, h, i, j);
    return maskProgram.run(maskSlots.data(), aux).i;
  }
  bool hasScoreMod() const { return scoreProgram.present(); }
  /// score_mod(x, b, h, i, j) (x without one).
  double score(double x, int64_t b, int64_t h, int64_t i, int64_t j) {
    if (!scoreProgram.present())
      return x;
    scoreSlots[0].f = x;
    setIndices(scoreSlots.data() + 1, b, h, i, j);
    return scoreProgram.run(scoreSlots.data(), aux).f;
  }

private:
  static void setIndices(Slot *slots, int64_t b, int64_t h, int64_t i, int64_t j) {
    slots[0].i = b;
    slots[1].i = h;
    slots[2].i = i;
    slots[3].i = j;
  }

  const Program &scoreProgram, &maskProgram;
  const std::vector<std::vector<double>> &aux;
  std::vector<Slot> scoreSlots, maskSlots;
};

/// The modifiers' compiled programs: one pair, or one per batch entry (kv_lens).
struct Programs {
  std::vector<Program> score, mask;
};

/// Computes whole query rows; one per thread.
class RowWorker {
public:
  RowWorker(const AttentionProblem &p, double scale, const Programs &programs, AttentionResult &result)
      : p(p), scale(scale), result(result), dimV(p.headDimV ? p.headDimV : p.headDim), q(p.headDim), s(p.seqKV) {
    for (size_t n = 0; n < programs.score.size(); ++n)
      mods.emplace_back(programs.score[n], programs.mask[n], p.aux);
  }

  /// Row `row` of the flattened [B, Hq, Sq]: fills result.out[row, :] (zero on entry) and result.lse[row].
  void computeRow(int64_t row) {
    int64_t i = row % p.seqQ, h = (row / p.seqQ) % p.headsQ, b = row / p.seqQ / p.headsQ;
    const int64_t dim = p.headDim, hk = h / (p.headsQ / p.headsKV);
    int64_t seqKV = p.kvLens.empty() ? p.seqKV : p.kvLens[b];
    const float *k = p.k + (b * p.headsKV + hk) * p.seqKV * dim;
    const float *v = p.v + (b * p.headsKV + hk) * p.seqKV * dimV;
    if (!p.cuSeqlensQ.empty()) {
      // Packed: row t of head h belongs to the sequence whose offsets hold it (none: not written).
      const int64_t t = i;
      auto next = std::upper_bound(p.cuSeqlensQ.begin(), p.cuSeqlensQ.end(), t);
      b = (next - p.cuSeqlensQ.begin()) - 1;
      if (b < 0 || b >= p.batch) {
        result.lse[row] = std::numeric_limits<double>::quiet_NaN();
        return;
      }
      i = t - p.cuSeqlensQ[b];
      seqKV = p.cuSeqlensK[b + 1] - p.cuSeqlensK[b];
      k = p.k + (hk * p.seqKV + p.cuSeqlensK[b]) * dim;
      v = p.v + (hk * p.seqKV + p.cuSeqlensK[b]) * dimV;
    }
    Modifiers &mods = this->mods[this->mods.size() == 1 ? 0 : b];
    for (int64_t d = 0; d < dim; ++d)
      q[d] = p.q[row * dim + d];

    double m = -kInf;
    for (int64_t j = 0; j < seqKV; ++j) {
      s[j] = -kInf;
      if (!mods.keeps(b, h, i, j))
        continue;
      s[j] = mods.score(scale * dot(q.data(), k + j * dim, dim), b, h, i, j);
      m = std::max(m, s[j]);
    }
    if (m == -kInf) {
      result.lse[row] = -kInf;
      return;
    }

    double *out = result.out.data() + row * dimV, l = 0;
    for (int64_t j = 0; j < seqKV; ++j) {
      if (s[j] == -kInf)
        continue;
      double weight = std::exp(s[j] - m);
      l += weight;
      for (int64_t d = 0; d < dimV; ++d)
        out[d] += weight * static_cast<double>(v[j * dimV + d]);
    }
    for (int64_t d = 0; d < dimV; ++d)
      out[d] /= l;
    result.lse[row] = m + std::log(l);
  }

private:
  const AttentionProblem &p;
  double scale;
  std::vector<Modifiers> mods; // one per sequence length (kv_lens), else one
  AttentionResult &result;
  int64_t dimV; // V's and the output's head dim
  std::vector<double> q, s;
};

/// Parses the source, checks the problem and compiles both regions (score_mod's block starts with
/// (s, b, h, qi, kv), mask_mod's with (b, h, qi, kv)): once, or with kv_lens once per batch entry
/// (attn.kv_len is a constant of the program).
void prepare(const std::string &mlirSource, const AttentionProblem &problem, const std::string &funcName,
             Programs &programs, double &scale) {
  detail::runOnLargeStack([&] { // the parser recurses with the text's nesting
    detail::ParseContext pc(detail::attentionDialects());
    OwningOpRef<ModuleOp> module = pc.parse(mlirSource, kBufferName);
    if (!module)
      pc.fail(std::string(kPrefix) + "failed to parse the attention module");
    attn::AttentionOp op = findAttention(*module, funcName);
    checkProblem(op, problem);
    scale = op.getScaleAttr() ? op.getScaleAttr().getValueAsDouble() : 1.0 / std::sqrt(double(problem.headDim));
    // score_mod's block starts with (s, b, h, qi, kv), mask_mod's with (b, h, qi, kv).
    // (q_len, kv_len) of each sequence: one pair, the kv_lens, or the packed sequences'.
    std::vector<std::pair<int, int>> lengths = {{problem.seqQ, problem.seqKV}};
    if (!problem.kvLens.empty()) {
      lengths.clear();
      for (int n : problem.kvLens)
        lengths.push_back({problem.seqQ, n});
    } else if (!problem.cuSeqlensQ.empty()) {
      lengths.clear();
      for (int b = 0; b < problem.batch; ++b)
        lengths.push_back({problem.cuSeqlensQ[b + 1] - problem.cuSeqlensQ[b],
                           problem.cuSeqlensK[b + 1] - problem.cuSeqlensK[b]});
    }
    for (auto [lenQ, lenKV] : lengths) {
      programs.score.push_back(compileRegion(op.getScoreMod(), 5, "score_mod", lenQ, lenKV));
      programs.mask.push_back(compileRegion(op.getMaskMod(), 4, "mask_mod", lenQ, lenKV));
    }
  });
}

/// Runs `work(first, last)` over [0, n) in chunks of `grain` on every hardware thread; the first
/// exception stops the others and is rethrown.
template <class Fn> void parallelFor(int64_t n, int64_t grain, Fn &&work) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex errorMutex;
  auto run = [&] {
    try {
      while (!failed) {
        int64_t first = next.fetch_add(grain);
        if (first >= n)
          break;
        work(first, std::min(first + grain, n));
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!error)
        error = std::current_exception();
      failed = true;
    }
  };
  int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), (n + grain - 1) / grain);
  std::vector<std::thread> helpers;
  for (int64_t t = 1; t < threads; ++t)
    helpers.emplace_back(run);
  run();
  for (std::thread &helper : helpers)
    helper.join();
  if (error)
    std::rethrow_exception(error);
}

} // namespace

AttentionResult attentionReference(const std::string &mlirSource, const AttentionProblem &problem,
                                   const std::string &funcName) {
  Programs programs;
  double scale;
  prepare(mlirSource, problem, funcName, programs, scale);
  const int64_t rows = int64_t(problem.cuSeqlensQ.empty() ? problem.batch : 1) * problem.headsQ * problem.seqQ;
  AttentionResult result;
  result.out.assign(rows * (problem.headDimV ? problem.headDimV : problem.headDim), 0.0);
  result.lse.assign(rows, 0.0);

  parallelFor(rows, kRowsPerGrab, [&](int64_t first, int64_t last) {
    RowWorker worker(problem, scale, programs, result);
    for (int64_t row = first; row < last; ++row)
      worker.computeRow(row);
  });
  return result;
}

AttentionGradients attentionBackwardReference(const std::string &mlirSource, const AttentionProblem &problem,
                                              const float *dout, const std::string &funcName) {
  if (!problem.kvLens.empty() || !problem.cuSeqlensQ.empty())
    throw Error(std::string(kPrefix) + "the backward reference takes no kvLens or cuSeqlens");
  Programs programs;
  double scale;
  prepare(mlirSource, problem, funcName, programs, scale);
  const Program &score = programs.score.front(), &mask = programs.mask.front();
  const AttentionProblem &p = problem;
  // Q, K, dQ and dK are `dim` wide; V, dO and dV `dimV` (multi-head latent attention: 192 and 128).
  const int64_t dim = p.headDim, dimV = p.headDimV ? p.headDimV : p.headDim, group = p.headsQ / p.headsKV;
  AttentionGradients g;
  g.dq.assign(int64_t(p.batch) * p.headsQ * p.seqQ * dim, 0.0);
  g.dk.assign(int64_t(p.batch) * p.headsKV * p.seqKV * dim, 0.0);
  g.dv.assign(int64_t(p.batch) * p.headsKV * p.seqKV * dimV, 0.0);
  // One (batch, KV head) per task: its query heads' dQ rows and its own dK, dV rows, written by no other.
  parallelFor(int64_t(p.batch) * p.headsKV, 1, [&](int64_t first, int64_t last) {
    Modifiers mods(score, mask, p.aux);
    std::vector<double> q(dim), y(p.seqKV), slope(p.seqKV), dp(p.seqKV);
    for (int64_t task = first; task < last; ++task) {
      const int64_t b = task / p.headsKV, hk = task % p.headsKV;
      const float *k = p.k + task * p.seqKV * dim, *v = p.v + task * p.seqKV * dimV;
      double *dk = g.dk.data() + task * p.seqKV * dim, *dv = g.dv.data() + task * p.seqKV * dimV;
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h)
        for (int64_t i = 0; i < p.seqQ; ++i) {
          const int64_t row = (b * p.headsQ + h) * p.seqQ + i;
          for (int64_t d = 0; d < dim; ++d)
            q[d] = p.q[row * dim + d];
          const float *dO = dout + row * dimV;
          double m = -kInf;
          for (int64_t j = 0; j < p.seqKV; ++j) {
            y[j] = -kInf;
            slope[j] = 1.0;
            if (!mods.keeps(b, h, i, j))
              continue;
            const double x = scale * dot(q.data(), k + j * dim, dim);
            y[j] = mods.score(x, b, h, i, j);
            if (mods.hasScoreMod()) {
              const double step = 1e-5 * std::max(1.0, std::fabs(x));
              slope[j] = (mods.score(x + step, b, h, i, j) - mods.score(x - step, b, h, i, j)) / (2 * step);
            }
            m = std::max(m, y[j]);
          }
          if (m == -kInf)
            continue; // no key: zero gradients
          double l = 0, delta = 0;
          for (int64_t j = 0; j < p.seqKV; ++j)
            if (y[j] != -kInf)
              l += std::exp(y[j] - m);
          for (int64_t j = 0; j < p.seqKV; ++j) {
            if (y[j] == -kInf)
              continue;
            y[j] = std::exp(y[j] - m) / l; // P
            double acc = 0;
            for (int64_t d = 0; d < dimV; ++d)
              acc += static_cast<double>(dO[d]) * v[j * dimV + d];
            dp[j] = acc;
            delta += y[j] * acc;
          }
          double *dq = g.dq.data() + row * dim;
          for (int64_t j = 0; j < p.seqKV; ++j) {
            if (y[j] == -kInf)
              continue;
            const double pj = y[j], ds = pj * (dp[j] - delta) * slope[j];
            for (int64_t d = 0; d < dim; ++d) {
              dq[d] += scale * ds * static_cast<double>(k[j * dim + d]);
              dk[j * dim + d] += scale * ds * q[d];
            }
            for (int64_t d = 0; d < dimV; ++d)
              dv[j * dimV + d] += pj * static_cast<double>(dO[d]);
          }
        }
    }
  });
  return g;
}

} // namespace flare::reference
