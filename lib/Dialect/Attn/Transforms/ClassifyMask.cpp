//===- ClassifyMask.cpp - Record the mask family of each attn.attention ---===//
#include "MaskAnalysis.h"
#include "flare/Dialect/Attn/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace flare::attn {
#define GEN_PASS_DEF_ATTNCLASSIFYMASK
#include "Attn/Passes.h.inc"
} // namespace flare::attn

using namespace mlir;
using namespace flare::attn;

namespace {
struct AttnClassifyMaskPass : public flare::attn::impl::AttnClassifyMaskBase<AttnClassifyMaskPass> {
  void runOnOperation() override {
    getOperation().walk([](AttentionOp op) {
      op.setMaskClassAttr(MaskClassAttr::get(op.getContext(), analyzeMask(op).maskClass));
    });
  }
};
} // namespace
