//===- FuzzReference.cpp - flare-fuzz-reference: the float64 attention interpreter -===//
//
// The input is a module holding an attn.attention op. The harness reads the op's operand types and
// makes a tiny problem that fits them: batch 1, Sq = Skv = 3, the head counts and head dim from the
// types (1, 1 and 8 where dynamic), one aux vector per aux operand (its static length, else 4 entries:
// more than any index the mask sees), values derived from the input. Then
// flare::reference::attentionReference interprets the op's score_mod and mask_mod regions over it.
// A flare::Error is a correct rejection; anything else is a finding.
//
// Problems bigger than kMaxElements (static dims from the types) are skipped: their cost is the
// input's size, not a fault.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Error.h"
#include "flare/Pipelines/Pipelines.h"
#include "flare/Reference/Attention.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace mlir;

namespace {

constexpr int kSeq = 3;
constexpr int kDynamicHeadDim = 8;
constexpr int kDynamicAuxLength = 4;
/// Bound on B * Hq * S * D and on every aux length.
constexpr int64_t kMaxElements = 1 << 16;

/// A static dimension, or `dynamic` where the type leaves it open.
int64_t dimOr(RankedTensorType type, int64_t axis, int64_t dynamic) {
  return axis < type.getRank() && !type.isDynamicDim(axis) ? type.getDimSize(axis) : dynamic;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string source(reinterpret_cast<const char *>(data), size);
  if (!flare::fuzz::withinLimits(source))
    return -1;

  // Read the sizes the op's types fix (its own parse; the reference parses the text again).
  flare::reference::AttentionProblem problem;
  std::vector<float> q, k, v;
  {
    DialectRegistry registry;
    flare::registerAllDialects(registry);
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return 0;
    flare::attn::AttentionOp op;
    module->walk([&](flare::attn::AttentionOp found) { op = found; });
    if (!op)
      return 0;
    auto queryType = dyn_cast<RankedTensorType>(op.getQuery().getType());
    auto keyType = dyn_cast<RankedTensorType>(op.getKey().getType());
    if (!queryType || !keyType)
      return 0;
    // B, Hq, Hkv, Sq, Skv, D.
    const int64_t dims[] = {dimOr(queryType, 0, 1),    dimOr(queryType, 1, 1), dimOr(keyType, 1, 1),
                            dimOr(queryType, 2, kSeq), dimOr(keyType, 2, kSeq), dimOr(queryType, 3, kDynamicHeadDim)};
    int64_t elements = 1;
    for (int64_t dim : dims) {
      if (dim <= 0 || dim > kMaxElements)
        return 0;
      elements *= dim;
      if (elements > kMaxElements)
        return 0;
    }
    problem.batch = static_cast<int>(dims[0]);
    problem.headsQ = static_cast<int>(dims[1]);
    problem.headsKV = static_cast<int>(dims[2]);
    problem.seqQ = static_cast<int>(dims[3]);
    problem.seqKV = static_cast<int>(dims[4]);
    problem.headDim = static_cast<int>(dims[5]);
    uint64_t bits = flare::fuzz::inputHash(source);
    for (Value aux : op.getAux()) {
      auto type = dyn_cast<RankedTensorType>(aux.getType());
      int64_t length = type ? dimOr(type, 0, kDynamicAuxLength) : kDynamicAuxLength;
      if (length < 0 || length > kMaxElements)
        return 0;
      std::vector<double> values(static_cast<size_t>(length));
      bool isFloat = type && isa<FloatType>(type.getElementType());
      for (double &x : values) {
        bits = bits * 6364136223846793005ull + 1442695040888963407ull;
        x = isFloat ? static_cast<double>(bits >> 40) / double(1 << 24) - 0.5 : static_cast<double>(bits >> 62);
      }
      problem.aux.push_back(std::move(values));
    }
    // Inputs: small values from the same generator (their precision does not matter here).
    auto fill = [&](std::vector<float> &t, int64_t heads, int64_t seq) {
      t.resize(static_cast<size_t>(problem.batch * heads * seq * problem.headDim));
      for (float &x : t) {
        bits = bits * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<float>(bits >> 40) / float(1 << 24) - 0.5f;
      }
    };
    fill(q, problem.headsQ, problem.seqQ);
    fill(k, problem.headsKV, problem.seqKV);
    fill(v, problem.headsKV, problem.seqKV);
    problem.q = q.data();
    problem.k = k.data();
    problem.v = v.data();
  }

  try {
    flare::reference::attentionReference(source, problem);
  } catch (const flare::Error &) {
  }
  return 0;
}
