//===- SharedAreas.h - The shared memory one kernel's lowering asks for -*- C++ -*-===//
//
// Private to convert-tgpu-to-nvvm. A kernel's shared memory is six `tgpu.shared_area`s, made empty
// where the kernel starts, in this order:
//
//   scratch              the other ops' scratch (layout conversions, reductions), reused op by op
//   operands             dot operands kept in shared memory until their dot ("lazy" tiles), the
//                        rings of pipelined dot loops; reused once their dot has run
//   persistent operands  operands stored once for the whole kernel or loop (K and V of the backward,
//                        TMA operands such as Q)
//   operand barriers     the TMA operands' mbarriers and the producer's copies of their coordinates
//   rings                the stages and barriers of streamed loops (the largest ring)
//   staging              TMA stores' panels where no ring is large enough
//
// The lowering grows each as it goes and sizes them when the kernel is done (bytes, alignment and
// the location of the op that needed the most); tgpu-allocate-shared-memory places them and reports
// a kernel that does not fit at that location.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_CONVERSION_TGPUTONVVM_SHAREDAREAS_H
#define FLARE_LIB_CONVERSION_TGPUTONVVM_SHAREDAREAS_H

#include "LoweringPlans.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace flare::tgpu::lowering {
using namespace mlir;

/// One `tgpu.shared_area` while the kernel is lowered.
struct SharedArea {
  Operation *op = nullptr; // the tgpu.shared_area (its result: the area's offset, i32)
  int64_t bytes = 0;       // what it needs so far
  LocationAttr user;       // the op that needed the most of it (grow) or its largest piece (append)
  int64_t largestPiece = 0;
  bool swizzled = false;   // it holds 128-byte swizzled panels: 1024-byte aligned

  Value base() const { return op->getResult(0); }
  /// At least `atLeast` bytes; `where` becomes the user when it needs more than any before.
  void grow(int64_t atLeast, Location where) {
    if (atLeast > bytes) {
      bytes = atLeast;
      user = where;
    }
  }
  /// A piece of `n` bytes that `where` needs: its user when no piece before was larger.
  void charge(int64_t n, Location where) {
    if (n > largestPiece) {
      largestPiece = n;
      user = where;
    }
  }
  /// `n` more bytes at the end for `where`, from an offset aligned to `align`; returns that offset.
  int64_t append(int64_t n, int64_t align, Location where) {
    const int64_t at = alignUp(bytes, align);
    bytes = at + n;
    charge(n, where);
    return at;
  }
};

/// The six areas of one kernel, in their order (above).
struct SharedAreas {
  SharedArea scratch, operands, persistentOperands, operandBarriers, rings, staging;

  /// Makes the six areas, empty, at the builder's insertion point.
  void create(OpBuilder &b, Location loc) {
    auto area = [&](SharedArea &a, StringRef name) {
      a.op = SharedAreaOp::create(b, loc, b.getI32Type(), name, 0, 1).getOperation();
    };
    area(scratch, "scratch");
    area(operands, "operands");
    area(persistentOperands, "persistent operands");
    area(operandBarriers, "operand barriers");
    area(rings, "rings");
    area(staging, "staging");
  }

  /// What the areas before the rings need, unaligned (a streamed loop's stage count is chosen to fit
  /// beside them).
  int64_t beforeRings() const {
    return scratch.bytes + operands.bytes + persistentOperands.bytes + operandBarriers.bytes;
  }
  /// What the areas before the staging area need, each placed at a 1024-byte boundary (the most any
  /// of them asks for): whether a TMA store's own panels still fit.
  int64_t alignedBeforeStaging() const {
    constexpr int64_t kSwizzleAlign = 1024;
    return alignUp(scratch.bytes, kSwizzleAlign) + alignUp(operands.bytes, kSwizzleAlign) +
           alignUp(persistentOperands.bytes + operandBarriers.bytes, kSwizzleAlign) +
           alignUp(rings.bytes, kSwizzleAlign);
  }

  /// What the kernel needs with a staging area of at least `bytes` (for a TMA store or reduce whose
  /// panels no ring holds): alignedBeforeStaging() and the larger staging area.
  int64_t withStaging(int64_t bytes) const { return alignedBeforeStaging() + std::max(staging.bytes, bytes); }

  /// Sizes every area once the kernel is lowered: its bytes, its alignment (swizzled panels at 1024
  /// bytes; a ring's stages always are), and as location the op that needed the most of it, else
  /// the kernel's (`kernel`), so that a kernel over the limit is reported where it is written.
  void size(Location kernel) {
    constexpr int64_t kAlign = 16, kPanelsAlign = 128, kSwizzledAlign = 1024, kBarrierAlign = 8;
    auto set = [&](const SharedArea &a, int64_t align) {
      auto sized = cast<SharedAreaOp>(a.op);
      sized.setBytes(a.bytes);
      sized.setAlignment(align);
      sized->setLoc(a.user ? Location(a.user) : kernel);
    };
    set(scratch, 1);
    set(operands, operands.swizzled ? kSwizzledAlign : kAlign);
    set(persistentOperands,
        persistentOperands.swizzled ? kSwizzledAlign : persistentOperands.bytes ? kPanelsAlign : kAlign);
    set(operandBarriers, kBarrierAlign);
    set(rings, rings.bytes ? kSwizzledAlign : 1);
    set(staging, staging.bytes ? kSwizzledAlign : 1);
  }
};

} // namespace flare::tgpu::lowering

#endif // FLARE_LIB_CONVERSION_TGPUTONVVM_SHAREDAREAS_H
