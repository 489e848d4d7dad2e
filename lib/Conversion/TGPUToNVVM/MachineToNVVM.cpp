//===- MachineToNVVM.cpp - The tgpu machine protocol ops to NVVM ----------===//
//
// convert-tgpu-machine-to-nvvm: one conversion pattern per machine op, each building the NVVM op
// that implements it; the protocol's types become what NVVM reads (!tgpu.mbarrier its shared-memory
// address, !tgpu.tensormap its parameter's address). A partial conversion: every other op stays as
// it is.
//
//===----------------------------------------------------------------------===//
#include "TileSchedule.h"

#include "flare/Dialect/TGPU/Passes.h"
#include "flare/Dialect/TGPU/TGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

namespace flare::tgpu {
#define GEN_PASS_DEF_CONVERTTGPUMACHINETONVVM
#include "TGPU/Passes.h.inc"
} // namespace flare::tgpu

using namespace mlir;
using namespace flare::tgpu;

namespace {

/// Cycles a thread may be suspended in one try_wait before it polls again (a hint to the hardware).
constexpr int64_t kSuspendTimeHint = 0x989680;

template <typename Op>
struct MachinePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  using Adaptor = typename Op::Adaptor;
};

/// An op without operands or attributes, lowered to an NVVM op without them either.
template <typename Op, typename NVVMOp>
struct NullaryLowering : MachinePattern<Op> {
  using MachinePattern<Op>::MachinePattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVMOp>(op);
    return success();
  }
};

/// A wait for all but `pending` groups, lowered to the NVVM wait of the same count.
template <typename Op, typename NVVMOp>
struct PendingWaitLowering : MachinePattern<Op> {
  using MachinePattern<Op>::MachinePattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVMOp>(op, op.getPending());
    return success();
  }
};

struct FenceAsyncSharedLowering : MachinePattern<FenceAsyncSharedOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(FenceAsyncSharedOp op, Adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::FenceProxyOp>(op, NVVM::ProxyKindAttr::get(rw.getContext(), NVVM::ProxyKind::async_shared),
                                              NVVM::SharedSpaceAttr::get(rw.getContext(), NVVM::SharedSpace::shared_cta));
    return success();
  }
};

struct MBarrierInitLowering : MachinePattern<MBarrierInitOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(MBarrierInitOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::MBarrierInitOp>(op, a.getBarrier(), a.getCount(), Value());
    return success();
  }
};

struct MBarrierArriveLowering : MachinePattern<MBarrierArriveOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(MBarrierArriveOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    NVVM::MBarrierArriveOp::create(rw, op.getLoc(), Type(), a.getBarrier(), Value());
    rw.eraseOp(op);
    return success();
  }
};

struct MBarrierArriveExpectTxLowering : MachinePattern<MBarrierArriveExpectTxOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(MBarrierArriveExpectTxOp op, Adaptor a,
                                ConversionPatternRewriter &rw) const override {
    NVVM::MBarrierArriveExpectTxOp::create(rw, op.getLoc(), Type(), a.getBarrier(), a.getBytes(),
                                           NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
    rw.eraseOp(op);
    return success();
  }
};

struct MBarrierWaitLowering : MachinePattern<MBarrierWaitOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(MBarrierWaitOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    Value hint = arith::ConstantIntOp::create(rw, op.getLoc(), kSuspendTimeHint, 32);
    rw.replaceOpWithNewOp<NVVM::MBarrierTryWaitParityOp>(op, a.getBarrier(), a.getParity(), hint);
    return success();
  }
};

/// Byte offset of a ring stage's barrier: at + (empty ? stages : 0) * 8 + stage * 8, from the shared
/// base the ring's tgpu.ring names (that op stays until no barrier reads it, then goes).
struct RingBarrierLowering : MachinePattern<RingBarrierOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(RingBarrierOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    auto ring = op.getRing().getDefiningOp<RingOp>();
    if (!ring)
      return rw.notifyMatchFailure(op, "the ring is not a tgpu.ring");
    constexpr int64_t kBarrierBytes = 8;
    Location loc = op.getLoc();
    const int64_t stages = op.getRing().getType().getStages();
    auto i32 = [&](int64_t v) { return arith::ConstantIntOp::create(rw, loc, v, 32); };
    Value smem = rw.getRemappedValue(ring.getSmem()), at = rw.getRemappedValue(ring.getAt());
    Value off = arith::AddIOp::create(rw, loc, at, i32(op.getEmpty() ? stages * kBarrierBytes : 0));
    off = arith::AddIOp::create(rw, loc, off, arith::MulIOp::create(rw, loc, a.getStage(), i32(kBarrierBytes)));
    rw.replaceOpWithNewOp<LLVM::GEPOp>(op, smem.getType(), rw.getI8Type(), smem, ValueRange{off});
    return success();
  }
};

/// The map is the parameter's address.
struct TensorMapLowering : MachinePattern<TensorMapOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(TensorMapOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, a.getParam());
    return success();
  }
};

/// The wait of ring index `use`: the phase of parity (use / stages) & 1.
struct RingWaitLowering : MachinePattern<RingWaitOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(RingWaitOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value round = arith::DivUIOp::create(rw, loc, a.getUse(), arith::ConstantIntOp::create(rw, loc, op.getStages(), 32));
    Value parity = arith::AndIOp::create(rw, loc, round, arith::ConstantIntOp::create(rw, loc, 1, 32));
    Value hint = arith::ConstantIntOp::create(rw, loc, kSuspendTimeHint, 32);
    rw.replaceOpWithNewOp<NVVM::MBarrierTryWaitParityOp>(op, a.getBarrier(), parity, hint);
    return success();
  }
};

struct NamedBarrierSyncLowering : MachinePattern<NamedBarrierSyncOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(NamedBarrierSyncOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    NVVM::BarrierOp::create(rw, op.getLoc(), TypeRange{}, a.getId(), a.getThreads(), {}, Value());
    rw.eraseOp(op);
    return success();
  }
};

struct NamedBarrierArriveLowering : MachinePattern<NamedBarrierArriveOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(NamedBarrierArriveOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::BarrierArriveOp>(op, a.getId(), a.getThreads());
    return success();
  }
};

struct SetMaxRegistersLowering : MachinePattern<SetMaxRegistersOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(SetMaxRegistersOp op, Adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::SetMaxRegisterOp>(
        op, op.getCount(), op.getIncrease() ? NVVM::SetMaxRegisterAction::increase : NVVM::SetMaxRegisterAction::decrease);
    return success();
  }
};

/// The producer warps (index >= consumer_warps) branch off, give registers back, run the region and
/// exit (tgpu.warp_exit); the consumers raise their budget after the branch.
struct WarpSpecializeLowering : MachinePattern<WarpSpecializeOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(WarpSpecializeOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value consumers = arith::ConstantIntOp::create(rw, loc, op.getConsumerWarps(), 32);
    Value isProducer = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::uge, a.getWarp(), consumers);
    auto branch = scf::IfOp::create(rw, loc, TypeRange{}, isProducer, /*withElseRegion=*/false);
    Block *then = branch.thenBlock();
    rw.setInsertionPointToStart(then);
    NVVM::SetMaxRegisterOp::create(rw, loc, op.getProducerRegisters(), NVVM::SetMaxRegisterAction::decrease);
    rw.inlineBlockBefore(&op.getProducer().front(), then->getTerminator());
    rw.setInsertionPointAfter(branch);
    rw.replaceOpWithNewOp<NVVM::SetMaxRegisterOp>(op, op.getConsumerRegisters(), NVVM::SetMaxRegisterAction::increase);
    return success();
  }
};

struct TmaLoadLowering : MachinePattern<TmaLoadOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(TmaLoadOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(rw, op.getLoc(), a.getDst(), a.getMap(), a.getCoords(),
                                                           a.getBarrier(), ValueRange{}, Value(), Value(),
                                                           NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
                                                           NVVM::CTAGroupKindAttr(), Value());
    rw.eraseOp(op);
    return success();
  }
};

struct TmaStoreLowering : MachinePattern<TmaStoreOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(TmaStoreOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(rw, op.getLoc(), a.getMap(), a.getSrc(), a.getCoords(), Value(),
                                                       NVVM::TMAStoreMode::TILE, Value());
    rw.eraseOp(op);
    return success();
  }
};

struct TmaReduceAddLowering : MachinePattern<TmaReduceAddOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(TmaReduceAddOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    NVVM::CpAsyncBulkTensorReduceOp::create(rw, op.getLoc(), a.getMap(), a.getSrc(), NVVM::TMAReduxKind::ADD,
                                            NVVM::TMAStoreMode::TILE, a.getCoords(), Value());
    rw.eraseOp(op);
    return success();
  }
};

struct TmaStoreWaitLowering : MachinePattern<TmaStoreWaitOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(TmaStoreWaitOp op, Adaptor, ConversionPatternRewriter &rw) const override {
    // .read: until the groups have read their shared-memory source.
    rw.replaceOpWithNewOp<NVVM::CpAsyncBulkWaitGroupOp>(op, op.getPending(), rw.getUnitAttr());
    return success();
  }
};

struct WgmmaLowering : MachinePattern<WgmmaOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(WgmmaOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    MLIRContext *ctx = rw.getContext();
    Location loc = op.getLoc();
    const int64_t n = static_cast<int64_t>(op.getN());
    const bool bf16 = op.getElementType().isBF16();
    if (a.getDescA()) {
      auto type = bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
      rw.replaceOpWithNewOp<NVVM::WgmmaMmaAsyncOp>(
          op, op.getType(), a.getAcc(), a.getDescA(), a.getDescB(),
          NVVM::MMAShapeAttr::get(ctx, 64, static_cast<int>(n), 16), NVVM::WGMMATypesAttr::get(ctx, type),
          NVVM::WGMMATypesAttr::get(ctx, type), NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
          NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
          NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
          // A M-major is PTX's transposed A (col); B K-major its untransposed B (col).
          NVVM::MMALayoutAttr::get(ctx, op.getAMMajor() ? NVVM::MMALayout::col : NVVM::MMALayout::row),
          NVVM::MMALayoutAttr::get(ctx, op.getBNMajor() ? NVVM::MMALayout::row : NVVM::MMALayout::col),
          NVVM::MMAIntOverflowAttr());
      return success();
    }
    // A in registers: the PTX form has no NVVM op; one inline instruction with the accumulator tied
    // (outputs $0 .. $(n/2 - 1), the same registers as inputs, then A's four registers and B).
    const int64_t accRegs = n / 2;
    std::string d, constraints;
    for (int64_t i = 0; i < accRegs; ++i) {
      d += (i ? ", $" : "$") + std::to_string(i);
      constraints += "=f,";
    }
    for (int64_t i = 0; i < accRegs; ++i)
      constraints += std::to_string(i) + ",";
    constraints += "r,r,r,r,l";
    const int64_t a0 = 2 * accRegs;
    const std::string t = bf16 ? "bf16" : "f16";
    const std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n" +
                             std::to_string(n) + "k16.f32." + t + "." + t + " {" + d + "}, {$" + std::to_string(a0) +
                             ", $" + std::to_string(a0 + 1) + ", $" + std::to_string(a0 + 2) + ", $" +
                             std::to_string(a0 + 3) + "}, $" + std::to_string(a0 + 4) + ", p, 1, 1, " +
                             (op.getBNMajor() ? "1" : "0") + ";\n}";
    SmallVector<Value> operands;
    for (int64_t i = 0; i < accRegs; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(rw, loc, a.getAcc(), ArrayRef<int64_t>{i}));
    llvm::append_range(operands, a.getRegsA());
    operands.push_back(a.getDescB());
    rw.replaceOpWithNewOp<LLVM::InlineAsmOp>(op, op.getType(), operands, text, constraints, /*has_side_effects=*/true,
                                             /*is_align_stack=*/false, LLVM::TailCallKind::None,
                                             LLVM::AsmDialectAttr(), ArrayAttr());
    return success();
  }
};

struct CpAsyncLowering : MachinePattern<CpAsyncOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(CpAsyncOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    NVVM::CpAsyncOp::create(rw, op.getLoc(), a.getDst(), a.getSrc(), rw.getI32IntegerAttr(16),
                            NVVM::LoadCacheModifierKindAttr::get(rw.getContext(), NVVM::LoadCacheModifierKind::CG),
                            a.getBytes());
    rw.eraseOp(op);
    return success();
  }
};

struct CpAsyncMBarrierArriveLowering : MachinePattern<CpAsyncMBarrierArriveOp> {
  using MachinePattern::MachinePattern;
  LogicalResult matchAndRewrite(CpAsyncMBarrierArriveOp op, Adaptor a, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<NVVM::CpAsyncMBarrierArriveOp>(op, a.getBarrier(), /*noinc=*/true);
    return success();
  }
};

struct ConvertTGPUMachineToNVVMPass
    : public flare::tgpu::impl::ConvertTGPUMachineToNVVMBase<ConvertTGPUMachineToNVVMPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // The persistent tile loop's schedule: its arithmetic (TileSchedule.h).
    if (failed(lowering::expandTileSchedules(getOperation())))
      return signalPassFailure();
    ConversionTarget target(*ctx);
    target.addIllegalOp<TileScheduleOp, TileInstanceOp, TileTakeOp>();
    target.addIllegalOp<RingBarrierOp, RingWaitOp, MBarrierInitOp, MBarrierArriveOp, MBarrierArriveExpectTxOp,
                        MBarrierWaitOp,
                        NamedBarrierSyncOp, NamedBarrierArriveOp, FenceAsyncSharedOp, SetMaxRegistersOp,
                        WgmmaFenceOp, WgmmaCommitOp, WgmmaWaitOp, TmaLoadOp, TmaStoreOp, TmaReduceAddOp, TmaStoreCommitOp,
                        TmaStoreWaitOp, WgmmaOp, CpAsyncOp, CpAsyncCommitOp, CpAsyncWaitOp,
                        CpAsyncMBarrierArriveOp, WarpSpecializeOp, WarpExitOp>();
    target.addIllegalOp<TensorMapOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // The protocol's types as NVVM reads them; every other type stays.
    TypeConverter types;
    types.addConversion([](Type t) { return t; });
    types.addConversion([](MBarrierType t) -> Type { return LLVM::LLVMPointerType::get(t.getContext(), 3); });
    types.addConversion([](TensorMapType t) -> Type { return LLVM::LLVMPointerType::get(t.getContext()); });
    RewritePatternSet patterns(ctx);
    patterns.add<TensorMapLowering, RingBarrierLowering, RingWaitLowering, MBarrierInitLowering, MBarrierArriveLowering,
                 MBarrierArriveExpectTxLowering, MBarrierWaitLowering, NamedBarrierSyncLowering, NamedBarrierArriveLowering,
                 FenceAsyncSharedLowering, SetMaxRegistersLowering, TmaLoadLowering,
                 TmaStoreLowering, TmaReduceAddLowering, TmaStoreWaitLowering, WgmmaLowering, CpAsyncLowering,
                 PendingWaitLowering<WgmmaWaitOp, NVVM::WgmmaWaitGroupSyncOp>,
                 PendingWaitLowering<CpAsyncWaitOp, NVVM::CpAsyncWaitGroupOp>,
                 CpAsyncMBarrierArriveLowering, WarpSpecializeLowering, NullaryLowering<WarpExitOp, NVVM::Exit>,
                 NullaryLowering<WgmmaFenceOp, NVVM::WgmmaFenceAlignedOp>,
                 NullaryLowering<WgmmaCommitOp, NVVM::WgmmaGroupSyncAlignedOp>,
                 NullaryLowering<TmaStoreCommitOp, NVVM::CpAsyncBulkCommitGroupOp>,
                 NullaryLowering<CpAsyncCommitOp, NVVM::CpAsyncCommitGroupOp>>(types, ctx);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      return signalPassFailure();
    // The rings, whose barriers are addresses now.
    WalkResult left = getOperation()->walk([](RingOp ring) {
      if (!ring->use_empty()) {
        ring.emitOpError() << "is read by an op other than tgpu.ring_barrier";
        return WalkResult::interrupt();
      }
      ring->erase();
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
