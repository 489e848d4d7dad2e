//===- Passes.td - Passes of the tile dialect -----------------------------===//
#ifndef FLARE_TILE_PASSES
#define FLARE_TILE_PASSES

include "mlir/Pass/PassBase.td"

def TileDecomposeOnlineSoftmax : Pass<"tile-decompose-online-softmax", "::mlir::ModuleOp"> {
  let summary = "rewrite tile.online_softmax into reductions and elementwise ops";
  let description = [{
    Implements the equations of tile.online_softmax (see the op) with tile.reduce max/sum,
    tile.expand_dims/broadcast and arith/math ops, before layouts are assigned.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

#endif // FLARE_TILE_PASSES
