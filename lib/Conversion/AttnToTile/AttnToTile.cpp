//===- AttnToTile.cpp - Generate a FlashAttention tile kernel from attn.attention ===//
//
// For a function whose body is one attn.attention on its arguments, emits a tile kernel of the same
// name. One program instance owns BLOCK_M query rows of one (batch, head):
//
//   Q block in registers/shared memory; m = -inf, l = 0, acc = 0 per row
//   [lo, hi)   = KV blocks the mask may keep for these rows (the rest are never visited)
//   [flo, fhi) = the sub-range it keeps entirely (MaskAnalysis.h derives both, at run time)
//   for j in [flo, fhi):            s = score(j)                      no mask code
//   for j in [lo, flo) u [fhi, hi): s = keep(j) ? score(j) : -inf     mask_mod and kv < Skv
//     with score(j) = score_mod(scale * Q K_j^T) * log2(e) (scale * log2(e) folded into one multiply
//     when there is no score_mod), then one online-softmax step and acc = alpha * acc + P V_j
//   O = acc / l, LSE = (m + log2 l) * ln 2; a row with l = 0 gives O = 0 and LSE = -inf.
//
// Modifier regions are scalar code; they are inlined as tile code by giving every region value a
// shape class: Uniform (a scalar: batch, head, lengths, constants), Row (one value per query row,
// [BLOCK_M]), Col (per key, [BLOCK_N]) or Full ([BLOCK_M, BLOCK_N]). An op takes the join of its
// operands' classes, broadcasting the narrower ones. Uniform and Row values do not depend on the
// KV block and are computed once before the loops (ALiBi slopes, document ids of the query rows).
//
//===----------------------------------------------------------------------===//
#include "Generator.h"
#include "flare/Dialect/Attn/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace flare::attn {
#define GEN_PASS_DEF_CONVERTATTNTOTILE
#include "Attn/Passes.h.inc"

} // namespace flare::attn

using namespace mlir;
using namespace flare;
using namespace flare::attn;
using namespace flare::attn::generator;

namespace {

/// `text` as BLOCK_M,BLOCK_N,WARPS (powers of two, blocks from 16) and up to `extra.size()` more
/// integers, each accepted by its check, into `values` (fields not given stay 0).
bool parseTiles(StringRef text, MutableArrayRef<int64_t> values, ArrayRef<bool (*)(int64_t)> extra) {
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  if (parts.size() < 3 || parts.size() > 3 + extra.size())
    return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t &v = values[i];
    if (parts[i].trim().getAsInteger(10, v))
      return false;
    if (i < 3 ? v < (i < 2 ? 16 : 1) || !llvm::isPowerOf2_64(v) : !extra[i - 3](v))
      return false;
  }
  return true;
}

bool isSwitch(int64_t v) { return v == 0 || v == 1; }

/// convert-attn-to-tile's grad-tiles: BLOCK_M,BLOCK_N,WARPS[,TRANSPOSED[,DQ_CHUNK[,SPLIT]]].
std::optional<BackwardTiles> parseBackwardTiles(StringRef text) {
  int64_t v[6] = {0, 0, 0, 0, 0, 0};
  auto isChunk = [](int64_t c) { return c == 0 || (c >= 16 && llvm::isPowerOf2_64(c)); };
  if (!parseTiles(text, v, {isSwitch, isChunk, isSwitch}))
    return std::nullopt;
  return BackwardTiles{v[0], v[1], v[2], v[3] == 1, v[4], v[5] == 1};
}

/// convert-attn-to-tile's grad-dq-tiles: BLOCK_M,BLOCK_N,WARPS[,PRODUCER[,PING_PONG]].
std::optional<BackwardDqTiles> parseBackwardDqTiles(StringRef text) {
  int64_t v[5] = {0, 0, 0, 0, 0};
  if (!parseTiles(text, v, {isSwitch, isSwitch}))
    return std::nullopt;
  return BackwardDqTiles{v[0], v[1], v[2], v[3] == 1, v[4] == 1};
}

struct ConvertAttnToTilePass : public flare::attn::impl::ConvertAttnToTileBase<ConvertAttnToTilePass> {
  using ConvertAttnToTileBase::ConvertAttnToTileBase;
  void runOnOperation() override {
    SmallVector<std::pair<AttentionOp, func::FuncOp>> work;
    WalkResult walk = getOperation().walk([&](AttentionOp op) {
      auto func = op->getParentOfType<func::FuncOp>();
      if (!func || op->getParentOp() != func) {
        op.emitOpError("convert-attn-to-tile: attn.attention must sit directly in a func.func");
        return WalkResult::interrupt();
      }
      work.push_back({op, func});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (auto [op, func] : work) {
      ConfigAttr config = op.getConfigAttr();
      if (grad) {
        // The backward's tiles are as wide as the wider of Q.K's and V's head dims.
        const int64_t headDim = tileHeadDim(cast<RankedTensorType>(op.getQuery().getType()).getDimSize(3),
                                            cast<RankedTensorType>(op.getValue().getType()).getDimSize(3));
        const std::optional<Target> target = Target::get(arch);
        if (!target) {
          op.emitOpError() << "convert-attn-to-tile: unknown arch '" << arch << "'";
          return signalPassFailure();
        }
        if (deterministic && dqAtomics) {
          op.emitOpError("convert-attn-to-tile: dq-atomics sums dQ in no fixed order: it cannot be deterministic");
          return signalPassFailure();
        }
        const bool atomics = dqAtomics || backwardSumsDqByAtomics(*target, deterministic);
        BackwardTiles tiles = chooseBackwardTiles(headDim, *target, atomics, AttentionFacts::of(op).auxPerElement);
        if (!gradTiles.empty()) {
          std::optional<BackwardTiles> parsed = parseBackwardTiles(gradTiles);
          if (!parsed) {
            op.emitOpError("convert-attn-to-tile: grad-tiles must be BLOCK_M,BLOCK_N,WARPS (powers of two, blocks from "
                           "16), optionally TRANSPOSED (0 or 1), DQ_CHUNK (0, or a power of two from 16) and SPLIT (0 "
                           "or 1), got '")
                << gradTiles << "'";
            return signalPassFailure();
          }
          tiles = *parsed;
          if (tiles.splitDkDv && atomics) {
            op.emitOpError("convert-attn-to-tile: grad-tiles SPLIT needs dQ by a kernel of its own (dQ is summed "
                           "by atomics here)");
            return signalPassFailure();
          }
        }
        std::optional<BackwardDqTiles> dqTiles;
        if (!atomics) {
          dqTiles = chooseBackwardDqTiles(headDim, *target);
          if (!gradDqTiles.empty()) {
            dqTiles = parseBackwardDqTiles(gradDqTiles);
            if (!dqTiles) {
              op.emitOpError("convert-attn-to-tile: grad-dq-tiles must be BLOCK_M,BLOCK_N,WARPS[,PRODUCER[,PING_PONG]] "
                             "(powers of two, blocks from 16; the switches 0 or 1), got '")
                  << gradDqTiles << "'";
              return signalPassFailure();
            }
          }
        } else if (!gradDqTiles.empty()) {
          op.emitOpError("convert-attn-to-tile: grad-dq-tiles needs a dQ kernel of its own (dQ is summed by "
                         "atomics here)");
          return signalPassFailure();
        }
        Generator gen(op, func, analyzeMask(op), config);
        if (failed(gen.runBackward(tiles, dqTiles, gradBlockLists)))
          return signalPassFailure();
        func.erase();
        continue;
      }
      if (!config) {
        op.emitOpError("convert-attn-to-tile: the op has no config (#attn.config); run attn-choose-config first");
        return signalPassFailure();
      }
      MaskInfo mask = analyzeMask(op);
      Generator gen(op, func, std::move(mask), config);
      if (failed(gen.run()))
        return signalPassFailure();
      func.erase();
    }
  }
};

} // namespace
