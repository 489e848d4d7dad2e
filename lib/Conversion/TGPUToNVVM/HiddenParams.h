//===- HiddenParams.h - The parameters a kernel gets after its own -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. After a kernel's own parameters the lowering appends the ones its
// machinery needs, in the order it first needs them (the launch ABI, dialects/TGPU/Rationale.md):
//
//   the grid of a persistent kernel      three i32 (the grid its program ids index)
//   the workspace of split instances     a global pointer (stream-K's hand-over slots)
//   the TMA flag                         i32, non-zero when the runtime encoded every tensor map
//   the tensor maps                      one 128-byte, 64-byte aligned map per (view, box rows), each
//                                        described in the kernel's `tgpu.tensor_maps` for the runtime
//
// `tgpu.user_args` (set by the lowering) tells the runtime where its own parameters end.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_HIDDENPARAMS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_HIDDENPARAMS_H

#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace flare::tgpu::lowering {
using namespace mlir;

class HiddenParams {
public:
  void begin(gpu::GPUFuncOp k) { kernel = k; }

  /// Appends a parameter of `type`; null where the function could not take it (failed() then says
  /// so, and the kernel must not be emitted).
  Value append(Type type, DictionaryAttr attrs = {}) {
    MLIRContext *ctx = kernel.getContext();
    const unsigned idx = kernel.getNumArguments();
    if (mlir::failed(kernel.insertArgument(idx, type, attrs ? attrs : DictionaryAttr::get(ctx), kernel.getLoc()))) {
      insertFailed = true;
      return {};
    }
    return kernel.getArgument(idx);
  }
  bool failed() const { return insertFailed; }

  /// The TMA flag, appended the first time it is asked for (before any map); a kernel without the
  /// element-wise fallback of its copies is marked `tgpu.tma_required` then. Null where it could
  /// not be appended.
  Value tmaFlag(bool fallback) {
    if (!flag) {
      flag = append(IntegerType::get(kernel.getContext(), 32));
      if (flag && !fallback)
        kernel->setAttr(tgpu::kTmaRequiredAttrName, UnitAttr::get(kernel.getContext()));
    }
    return flag;
  }
  bool hasTmaFlag() const { return static_cast<bool>(flag); }

  /// The `!tgpu.tensormap` of (view, boxRows): made once, its description (`describe()`) appended
  /// to the kernel's `tgpu.tensor_maps`, its parameter after the flag (`fallback` as for tmaFlag),
  /// and its `tgpu.tensor_map` at the kernel's start, after the maps made before it, where it
  /// dominates every copy. Null where the parameter could not be appended.
  Value tensorMap(Value view, int64_t boxRows, bool fallback, function_ref<DictionaryAttr()> describe) {
    Value &map = maps[{view, boxRows}];
    if (map)
      return map;
    tmaFlag(fallback);
    MLIRContext *ctx = kernel.getContext();
    descriptions.push_back(describe());
    kernel->setAttr(kTensorMapsAttrName, ArrayAttr::get(ctx, descriptions));
    // A 128-byte, 64-byte aligned parameter whose address the kernel takes: the pipeline makes it
    // by-value and grid-constant once the kernel is an llvm.func (MarkTensorMapParams).
    constexpr int64_t kTensorMapAlign = 64;
    NamedAttrList argAttrs;
    argAttrs.append(LLVM::LLVMDialect::getAlignAttrName(),
                    IntegerAttr::get(IntegerType::get(ctx, 64), kTensorMapAlign));
    Value param = append(LLVM::LLVMPointerType::get(ctx), argAttrs.getDictionary(ctx));
    if (!param)
      return {};
    Block &entry = kernel.getBody().front();
    auto at = entry.begin();
    while (at != entry.end() && isa<TensorMapOp>(*at))
      ++at;
    OpBuilder atStart(&entry, at);
    map = TensorMapOp::create(atStart, kernel.getLoc(), TensorMapType::get(ctx), param);
    return map;
  }

private:
  gpu::GPUFuncOp kernel;
  Value flag;                 // the TMA flag, once appended
  bool insertFailed = false;  // appending a parameter failed
  SmallVector<Attribute> descriptions;                // tgpu.tensor_maps, in parameter order
  DenseMap<std::pair<Value, int64_t>, Value> maps;    // (view, box rows) -> its tgpu.tensor_map
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_HIDDENPARAMS_H
