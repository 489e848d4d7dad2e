//===- KernelVariants.h - Which generated kernels a variant pass changes -*- C++ -*-===//
//
// The passes that turn convert-attn-to-tile's canonical loop into a configured variant
// (attn-overlap, attn-defer-rescale, attn-lazy-rescale, attn-partial-row-sums) follow each
// kernel's #attn.config, the one form of its configuration, which the generator leaves on the
// kernel function.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_DIALECT_ATTN_TRANSFORMS_KERNELVARIANTS_H
#define FLARE_LIB_DIALECT_ATTN_TRANSFORMS_KERNELVARIANTS_H

#include "flare/Dialect/Attn/Config.h"
#include "flare/Dialect/Tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace flare::attn {

/// The configuration the generator left on `func`, null on functions it did not generate.
inline ConfigAttr kernelConfig(mlir::func::FuncOp func) {
  return func->getAttrOfType<ConfigAttr>(kKernelConfigAttrName);
}

/// The row factor `f` of `mul` = x * broadcast(expand_dims(f)) (the accumulator's rescale), or null.
inline mlir::Value rowFactor(mlir::arith::MulFOp mul) {
  auto broadcast = mul.getRhs().getDefiningOp<tile::BroadcastOp>();
  auto expand = broadcast ? broadcast.getSrc().getDefiningOp<tile::ExpandDimsOp>() : nullptr;
  return expand && expand.getAxis() == 1 ? expand.getSrc() : mlir::Value();
}

} // namespace flare::attn

#endif // FLARE_LIB_DIALECT_ATTN_TRANSFORMS_KERNELVARIANTS_H
