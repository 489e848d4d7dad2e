//===- TGPUOps.td - Operations of the tgpu dialect ------------------------===//
#ifndef FLARE_TGPU_OPS
#define FLARE_TGPU_OPS

include "TGPUDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "TGPUMachineOps.td"

class TGPU_Op<string mnemonic, list<Trait> traits = []> : Op<TGPU_Dialect, mnemonic, traits>;

def TGPU_ConvertLayoutOp : TGPU_Op<"convert_layout", [Pure]> {
  let summary = "move a tile's elements to another register layout";
  let description = [{
    `%y = tgpu.convert_layout %x : tensor<4xf32, #A> -> tensor<4xf32, #B>`: same shape and element
    type, a different `#tgpu.linear` encoding. Lowered to a register permutation when every thread
    already holds what it needs, to warp shuffles (one per result register) when every warp does, else
    through shared memory between CTA barriers.
  }];
  let arguments = (ins AnyRankedTensor:$src);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

#endif // FLARE_TGPU_OPS
