//===- TileRegisters.h - The source kernel's values as lowered -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. What the per-thread lowering of one tile kernel knows of the
// values it has lowered so far: each scalar's lowered value, each tile's registers (one value per
// register of its #tgpu.linear layout), each view's pointer, sizes and strides, and per layout the
// coordinate this thread's lane and warp ids contribute, from which every register's coordinate
// follows by one XOR per dimension; and how a tile's registers go to shared memory (as they are, as
// a wgmma operand's core matrices, widened to scratch words). KernelLowering.h derives from it; a
// lowering step that reads or makes tiles takes a TileRegisters.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_TILEREGISTERS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_TILEREGISTERS_H

#include "TensorCores.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <optional>

namespace flare::tgpu::lowering {

class TileRegisters : public TensorCoreBuilder {
protected:
  explicit TileRegisters(func::FuncOp func) : TensorCoreBuilder(func.getContext()), func(func) {}

  func::FuncOp func;                                    // the tile kernel being lowered
  Operation *prologueAnchor = nullptr;                  // per-thread constants are computed before it
  IRMapping scalars;                                    // scalar values: source -> lowered
  DenseMap<Value, SmallVector<Value>> regs;             // tiles: source -> one value per register
  DenseMap<Value, ViewInfo> views;                      // views: source -> pointer, sizes, strides
  DenseMap<Attribute, SmallVector<Value>> threadCoords; // per layout: T_d for each dimension
  DenseMap<Attribute, SmallVector<Value>> savedThreadCoords; // the kernel level's, while rebound
  struct {
    Value threadId, laneId, warpId, warpgroup, smemBase;
    Operation *prologueAnchor = nullptr;
  } kernelThread; // the kernel-level values while the tile loop's are bound

  LinearLayout layoutOf(Value tileValue) { return getLayoutAttr(tileValue.getType()).getLayout(); }

  /// Inside a persistent kernel's tile loop: the thread ids, the shared buffer's address and the
  /// per-thread constants (threadCoord) derived anew per instance, from a zero LLVM cannot see
  /// through (so that it does not hoist what the body derives from them out of the loop, live
  /// through every instance); restoreThreadValues goes back to the kernel level's after the loop.
  void rebindThreadValues();
  void restoreThreadValues();
  /// Emits `body` with the kernel-level thread values (for code placed before the tile loop), then
  /// goes back to the instance's.
  void withKernelThreadValues(const std::function<void()> &body);

  /// T_d: the coordinate contribution of this thread's lane and warp ids, per dimension (i32),
  /// computed once per layout in the kernel's prologue (before prologueAnchor).
  ArrayRef<Value> threadCoord(Attribute layoutAttr);

  /// Coordinate (i32 per dimension) of register `reg` of a tile with the given layout.
  SmallVector<Value> regCoord(Attribute layoutAttr, const LinearLayout &layout, int reg) {
    return regCoord(threadCoord(layoutAttr), layout, reg);
  }
  /// The same from given thread coordinates `t` (T_d, e.g. copies of threadCoord's).
  SmallVector<Value> regCoord(ArrayRef<Value> t, const LinearLayout &layout, int reg) {
    LinearLayout::Coord r = layout.applyInput(LayoutInput::Reg, reg);
    SmallVector<Value> c;
    for (int d = 0; d < layout.rank(); ++d)
      c.push_back(r[d] ? arith::XOrIOp::create(b, loc, t[d], i32(r[d])).getResult() : t[d]);
    return c;
  }

  /// Stores every register of `tile` (a tile of the source IR) to shared memory at
  /// base + offsetOf(coordinate), skipping registers that duplicate another of the same thread.
  /// `constantStep`, where given, names the register basis vectors (coordinate steps) that move
  /// every address by a constant number of bytes (bits no other basis vector sets): registers that
  /// differ only in those share one computed address plus an immediate offset, so that LLVM does not
  /// keep an address per register (hoisted out of a loop, they cost a register each).
  void storeTile(Value tile, Value byteBase, const std::function<Value(ArrayRef<Value>)> &offsetOf, int vectorDim,
                 const std::function<std::optional<int64_t>(const LinearLayout::Coord &)> &constantStep = nullptr);
  /// Stores a register tile as a wgmma operand (A K-major; B N-major when its registers run along N,
  /// else K-major) at byte offset `base`; returns whether B was stored N-major.
  bool storeWgmmaOperand(Value tile, bool isB, int64_t k, Value base);

  /// Shared-memory scratch holds 32-bit words at least (i1 and 16-bit values are widened on the way).
  static Type scratchType(Type t) {
    return t.getIntOrFloatBitWidth() < 32 && isa<IntegerType>(t) ? IntegerType::get(t.getContext(), 32) : t;
  }
  Value toScratch(Value v) {
    Type st = scratchType(v.getType());
    return st == v.getType() ? v : arith::ExtUIOp::create(b, loc, st, v).getResult();
  }
  Value fromScratch(Value v, Type t) {
    return v.getType() == t ? v : arith::TruncIOp::create(b, loc, t, v).getResult();
  }

  /// A scope that knows only the kernel's arguments.
  ScalarScope freshScalarScope() {
    ScalarScope scope;
    for (BlockArgument arg : func.getArguments())
      scope.scalars.map(arg, scalars.lookup(arg));
    return scope;
  }
  void swapScalarScope(ScalarScope &scope) {
    std::swap(scalars, scope.scalars);
    std::swap(views, scope.views);
  }

  /// The value of the body scalar `v` of `op` for the induction value `iv` (re-emitting the pure
  /// arith ops between them), for copies issued ahead of their iteration.
  Value scalarAt(Value v, scf::ForOp op, Value iv, DenseMap<Value, Value> &memo);
  /// tile.scalar_load's element `offset` of the lowered global pointer `base` (every thread reads it).
  Value loadScalar(tile::ScalarLoadOp load, Value base, Value offset);
  /// The offsets `load` (in the body of `op`) reads at for the induction value `iv` (scalarAt of each).
  SmallVector<Value> loadOffsetsAt(tile::LoadOp load, scf::ForOp op, Value iv, DenseMap<Value, Value> &memo);

  /// Source values (tiles, scalars) as their lowered values, one per register or scalar, in order.
  SmallVector<Value> flatten(ValueRange values) {
    SmallVector<Value> out;
    for (Value v : values) {
      if (isa<RankedTensorType>(v.getType()))
        llvm::append_range(out, regs[v]);
      else
        out.push_back(scalars.lookup(v));
    }
    return out;
  }
  SmallVector<Type> flattenTypes(TypeRange types) {
    SmallVector<Type> out;
    for (Type t : types) {
      if (auto tt = dyn_cast<RankedTensorType>(t))
        out.append(getLayoutAttr(tt).getLayout().numRegs(), tt.getElementType());
      else
        out.push_back(t);
    }
    return out;
  }
  /// Binds `values` (source) to consecutive entries of `lowered`.
  void unflatten(ValueRange values, ValueRange lowered) {
    size_t pos = 0;
    for (Value v : values) {
      if (auto tt = dyn_cast<RankedTensorType>(v.getType())) {
        int n = getLayoutAttr(tt).getLayout().numRegs();
        regs[v] = SmallVector<Value>(lowered.begin() + pos, lowered.begin() + pos + n);
        pos += n;
      } else {
        scalars.map(v, lowered[pos++]);
      }
    }
  }
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_TILEREGISTERS_H
