//===- Builder.cpp - Write tile kernels from C++ --------------------------===//
#include "flare/Tile/Builder.h"

#include "flare/Dialect/Tile/TileDialect.h"
#include "flare/Error.h"
#include "flare/Pipelines/Pipelines.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

namespace flare::tile {

struct KernelBuilder::Impl {
  MLIRContext context{MLIRContext::Threading::DISABLED};
  OpBuilder b{&context};
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  std::vector<mlir::Value> values, views;
  bool finished = false;

  Impl(const std::string &name, int numWarps) {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    loc = FileLineColLoc::get(&context, "<builder>", 0, 0);
    module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    func = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
    func->setAttr(TileDialect::kKernelAttrName, b.getUnitAttr());
    func->setAttr(TileDialect::kNumWarpsAttrName, b.getI32IntegerAttr(numWarps));
    b.setInsertionPointToStart(func.addEntryBlock());
  }

  [[noreturn]] static void fail(const std::string &msg) { throw Error("KernelBuilder: " + msg); }

  void check() const {
    if (finished)
      fail("the kernel is finished; no more ops can be added");
  }
  mlir::Value get(Value v) const;
  SmallVector<mlir::Value> getAll(const std::vector<Value> &vs) const {
    SmallVector<mlir::Value> out;
    for (Value v : vs)
      out.push_back(get(v));
    return out;
  }
  Value wrap(KernelBuilder *kb, mlir::Value v) {
    values.push_back(v);
    return Value(kb, static_cast<int>(values.size() - 1));
  }
  Type toType(DType t) {
    switch (t) {
    case DType::F32: return b.getF32Type();
    case DType::BF16: return b.getBF16Type();
    case DType::F16: return b.getF16Type();
    case DType::I32: return b.getI32Type();
    case DType::I64: return b.getI64Type();
    case DType::I1: return b.getI1Type();
    }
    fail("unknown dtype");
  }
  static Type elemOf(mlir::Value v) { return getElementTypeOrSelf(v.getType()); }
  static ArrayRef<int64_t> shapeOf(mlir::Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t ? t.getShape() : ArrayRef<int64_t>();
  }
  Type like(mlir::Value v, Type elem) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t ? Type(RankedTensorType::get(t.getShape(), elem)) : elem;
  }

  mlir::Value splatTo(mlir::Value scalar, ArrayRef<int64_t> shape) {
    return SplatOp::create(b, loc, RankedTensorType::get(shape, scalar.getType()), scalar);
  }
  mlir::Value broadcastTo(mlir::Value tile, ArrayRef<int64_t> shape) {
    if (shapeOf(tile) == shape)
      return tile;
    return BroadcastOp::create(b, loc, RankedTensorType::get(shape, elemOf(tile)), tile);
  }

  /// Brings two operands to one shape: a scalar is splat, size-1 dimensions broadcast (Triton's rules
  /// for tiles of equal rank).
  std::pair<mlir::Value, mlir::Value> unify(mlir::Value x, mlir::Value y, const char *what) {
    if (elemOf(x) != elemOf(y)) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << what << ": element types differ (" << elemOf(x) << " and " << elemOf(y) << "); cast one first";
      fail(s);
    }
    ArrayRef<int64_t> sx = shapeOf(x), sy = shapeOf(y);
    if (sx == sy)
      return {x, y};
    if (sx.empty())
      return {splatTo(x, sy), y};
    if (sy.empty())
      return {x, splatTo(y, sx)};
    if (sx.size() != sy.size())
      fail(std::string(what) + ": tiles of different ranks");
    SmallVector<int64_t> shape;
    for (size_t d = 0; d < sx.size(); ++d) {
      if (sx[d] != sy[d] && sx[d] != 1 && sy[d] != 1)
        fail(std::string(what) + ": shapes cannot broadcast");
      shape.push_back(std::max(sx[d], sy[d]));
    }
    return {broadcastTo(x, shape), broadcastTo(y, shape)};
  }

  template <typename FloatOp, typename IntOp>
  mlir::Value arith2(mlir::Value x, mlir::Value y, const char *what) {
    auto [u, v] = unify(x, y, what);
    if (isa<FloatType>(elemOf(u)))
      return FloatOp::create(b, loc, u, v);
    return IntOp::create(b, loc, u, v);
  }

  mlir::Value compare(mlir::Value x, mlir::Value y, arith::CmpFPredicate fp, arith::CmpIPredicate ip) {
    auto [u, v] = unify(x, y, "comparison");
    if (isa<FloatType>(elemOf(u)))
      return arith::CmpFOp::create(b, loc, fp, u, v);
    return arith::CmpIOp::create(b, loc, ip, u, v);
  }

  template <typename MathOp>
  mlir::Value math1(mlir::Value x, const char *what) {
    if (!isa<FloatType>(elemOf(x)))
      fail(std::string(what) + " needs a floating-point operand");
    return MathOp::create(b, loc, x);
  }
};

mlir::Value KernelBuilder::viewValue(View v) {
  if (v.id_ < 0 || static_cast<size_t>(v.id_) >= impl_->views.size())
    Impl::fail("use of an empty View");
  return impl_->views[v.id_];
}

mlir::Value KernelBuilder::Impl::get(Value v) const {
  if (v.id_ < 0 || static_cast<size_t>(v.id_) >= values.size())
    fail("use of an empty or foreign Value");
  return values[v.id_];
}



KernelBuilder::KernelBuilder(const std::string &name, int numWarps) : impl_(std::make_unique<Impl>(name, numWarps)) {}
KernelBuilder::~KernelBuilder() = default;

DType Value::dtype() const {
  if (!builder_)
    throw Error("KernelBuilder: dtype() of an empty Value");
  Type t = KernelBuilder::Impl::elemOf(builder_->impl_->get(*this));
  if (t.isF32()) return DType::F32;
  if (t.isBF16()) return DType::BF16;
  if (t.isF16()) return DType::F16;
  if (t.isInteger(64)) return DType::I64;
  if (t.isInteger(1)) return DType::I1;
  return DType::I32;
}

std::vector<int64_t> Value::shape() const {
  if (!builder_)
    throw Error("KernelBuilder: shape() of an empty Value");
  ArrayRef<int64_t> s = KernelBuilder::Impl::shapeOf(builder_->impl_->get(*this));
  return {s.begin(), s.end()};
}

#define FLARE_IMPL(name) (impl_->check(), *impl_)

Value KernelBuilder::ptrArg(DType element) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, I.func.getBody().front().addArgument(PtrType::get(&I.context, I.toType(element)), I.loc));
}
Value KernelBuilder::i32Arg() {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, I.func.getBody().front().addArgument(I.b.getI32Type(), I.loc));
}
Value KernelBuilder::i64Arg() {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, I.func.getBody().front().addArgument(I.b.getI64Type(), I.loc));
}
Value KernelBuilder::f32Arg() {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, I.func.getBody().front().addArgument(I.b.getF32Type(), I.loc));
}

static Axis toAxis(int axis) {
  if (axis < 0 || axis > 2)
    throw Error("KernelBuilder: grid axis " + std::to_string(axis) + " is not 0, 1 or 2");
  return static_cast<Axis>(axis);
}
Value KernelBuilder::programId(int axis) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, ProgramIdOp::create(I.b, I.loc, toAxis(axis)));
}
Value KernelBuilder::numPrograms(int axis) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, NumProgramsOp::create(I.b, I.loc, toAxis(axis)));
}
Value KernelBuilder::i32(int64_t v) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, arith::ConstantIntOp::create(I.b, I.loc, v, 32));
}
Value KernelBuilder::i64(int64_t v) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, arith::ConstantIntOp::create(I.b, I.loc, v, 64));
}
Value KernelBuilder::f32(double v) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, arith::ConstantOp::create(I.b, I.loc, I.b.getF32FloatAttr(static_cast<float>(v))));
}
Value KernelBuilder::full(const std::vector<int64_t> &shape, double value, DType dtype) {
  Impl &I = FLARE_IMPL();
  Type elem = I.toType(dtype);
  auto type = RankedTensorType::get(shape, elem);
  TypedAttr scalar = isa<FloatType>(elem) ? TypedAttr(I.b.getFloatAttr(elem, value))
                                          : TypedAttr(I.b.getIntegerAttr(elem, static_cast<int64_t>(value)));
  return I.wrap(this, arith::ConstantOp::create(I.b, I.loc, DenseElementsAttr::get(type, scalar)));
}
Value KernelBuilder::range(int32_t start, int32_t end) {
  Impl &I = FLARE_IMPL();
  if (end <= start)
    Impl::fail("range needs end > start");
  auto type = RankedTensorType::get({end - start}, I.b.getI32Type());
  return I.wrap(this, RangeOp::create(I.b, I.loc, type, start, end));
}
Value KernelBuilder::splat(Value scalar, const std::vector<int64_t> &shape) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, I.splatTo(I.get(scalar), shape));
}
Value KernelBuilder::expandDims(Value tile, int axis) {
  Impl &I = FLARE_IMPL();
  mlir::Value t = I.get(tile);
  SmallVector<int64_t> shape(Impl::shapeOf(t));
  if (axis < 0 || axis > static_cast<int>(shape.size()))
    Impl::fail("expandDims axis out of range");
  shape.insert(shape.begin() + axis, 1);
  return I.wrap(this, ExpandDimsOp::create(I.b, I.loc, RankedTensorType::get(shape, Impl::elemOf(t)), t, axis));
}
Value KernelBuilder::broadcast(Value tile, const std::vector<int64_t> &shape) {
  Impl &I = FLARE_IMPL();
  return I.wrap(this, I.broadcastTo(I.get(tile), shape));
}
Value KernelBuilder::trans(Value tile) {
  Impl &I = FLARE_IMPL();
  mlir::Value t = I.get(tile);
  ArrayRef<int64_t> s = Impl::shapeOf(t);
  if (s.size() != 2)
    Impl::fail("trans needs a 2-D tile");
  return I.wrap(this, TransOp::create(I.b, I.loc, RankedTensorType::get({s[1], s[0]}, Impl::elemOf(t)), t));
}

Value KernelBuilder::addPtr(Value ptr, Value offset) {
  Impl &I = FLARE_IMPL();
  mlir::Value p = I.get(ptr);
  return I.wrap(this, AddPtrOp::create(I.b, I.loc, p.getType(), p, I.get(offset)));
}
View KernelBuilder::makeView(Value ptr, const std::vector<Value> &sizes, const std::vector<Value> &strides) {
  Impl &I = FLARE_IMPL();
  mlir::Value p = I.get(ptr);
  auto ptrType = dyn_cast<PtrType>(p.getType());
  if (!ptrType)
    Impl::fail("makeView needs a pointer parameter");
  SmallVector<mlir::Value> sz = I.getAll(sizes), st = I.getAll(strides);
  auto type = ViewType::get(&I.context, ptrType.getElementType(), static_cast<unsigned>(sizes.size()));
  I.views.push_back(MakeViewOp::create(I.b, I.loc, type, p, sz, st));
  View view;
  view.id_ = static_cast<int>(I.views.size() - 1);
  return view;
}


Value KernelBuilder::load(View view, const std::vector<Value> &offsets, const std::vector<int64_t> &shape,
                          std::optional<double> padding) {
  Impl &I = FLARE_IMPL();
  mlir::Value v = viewValue(view);
  Type elem = llvm::cast<ViewType>(v.getType()).getElementType();
  SmallVector<mlir::Value> offs = I.getAll(offsets);
  TypedAttr pad;
  if (padding)
    pad = isa<FloatType>(elem) ? TypedAttr(I.b.getFloatAttr(elem, *padding))
                               : TypedAttr(I.b.getIntegerAttr(elem, static_cast<int64_t>(*padding)));
  return I.wrap(this, LoadOp::create(I.b, I.loc, RankedTensorType::get(shape, elem), v, offs, pad));
}
void KernelBuilder::store(View view, const std::vector<Value> &offsets, Value tile) {
  Impl &I = FLARE_IMPL();
  SmallVector<mlir::Value> offs = I.getAll(offsets);
  StoreOp::create(I.b, I.loc, I.get(tile), viewValue(view), offs);
}
void KernelBuilder::atomicAdd(View view, const std::vector<Value> &offsets, Value tile) {
  Impl &I = FLARE_IMPL();
  SmallVector<mlir::Value> offs = I.getAll(offsets);
  AtomicAddOp::create(I.b, I.loc, I.get(tile), viewValue(view), offs);
}

Value KernelBuilder::add(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.arith2<arith::AddFOp, arith::AddIOp>(I.get(a), I.get(b), "add")); }
Value KernelBuilder::sub(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.arith2<arith::SubFOp, arith::SubIOp>(I.get(a), I.get(b), "sub")); }
Value KernelBuilder::mul(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.arith2<arith::MulFOp, arith::MulIOp>(I.get(a), I.get(b), "mul")); }
Value KernelBuilder::div(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.arith2<arith::DivFOp, arith::DivSIOp>(I.get(a), I.get(b), "div")); }
Value KernelBuilder::maximum(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.arith2<arith::MaximumFOp, arith::MaxSIOp>(I.get(a), I.get(b), "maximum")); }
Value KernelBuilder::minimum(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.arith2<arith::MinimumFOp, arith::MinSIOp>(I.get(a), I.get(b), "minimum")); }
Value KernelBuilder::exp(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::ExpOp>(I.get(x), "exp")); }
Value KernelBuilder::exp2(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::Exp2Op>(I.get(x), "exp2")); }
Value KernelBuilder::log(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::LogOp>(I.get(x), "log")); }
Value KernelBuilder::log2(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::Log2Op>(I.get(x), "log2")); }
Value KernelBuilder::sqrt(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::SqrtOp>(I.get(x), "sqrt")); }
Value KernelBuilder::rsqrt(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::RsqrtOp>(I.get(x), "rsqrt")); }
Value KernelBuilder::tanh(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::TanhOp>(I.get(x), "tanh")); }
Value KernelBuilder::abs(Value x) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.math1<math::AbsFOp>(I.get(x), "abs")); }

Value KernelBuilder::lt(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.compare(I.get(a), I.get(b), arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt)); }
Value KernelBuilder::le(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.compare(I.get(a), I.get(b), arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle)); }
Value KernelBuilder::gt(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.compare(I.get(a), I.get(b), arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt)); }
Value KernelBuilder::ge(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.compare(I.get(a), I.get(b), arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge)); }
Value KernelBuilder::eq(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.compare(I.get(a), I.get(b), arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq)); }
Value KernelBuilder::ne(Value a, Value b) { Impl &I = FLARE_IMPL(); return I.wrap(this, I.compare(I.get(a), I.get(b), arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne)); }
Value KernelBuilder::logicalAnd(Value a, Value b) { Impl &I = FLARE_IMPL(); auto [u, v] = I.unify(I.get(a), I.get(b), "and"); return I.wrap(this, arith::AndIOp::create(I.b, I.loc, u, v)); }
Value KernelBuilder::logicalOr(Value a, Value b) { Impl &I = FLARE_IMPL(); auto [u, v] = I.unify(I.get(a), I.get(b), "or"); return I.wrap(this, arith::OrIOp::create(I.b, I.loc, u, v)); }

Value KernelBuilder::select(Value cond, Value a, Value b) {
  Impl &I = FLARE_IMPL();
  auto [u, v] = I.unify(I.get(a), I.get(b), "select");
  mlir::Value c = I.get(cond);
  if (!Impl::elemOf(c).isInteger(1))
    Impl::fail("select needs an i1 condition");
  if (!Impl::shapeOf(u).empty() && Impl::shapeOf(c) != Impl::shapeOf(u))
    c = Impl::shapeOf(c).empty() ? I.splatTo(c, Impl::shapeOf(u)) : I.broadcastTo(c, Impl::shapeOf(u));
  return I.wrap(this, arith::SelectOp::create(I.b, I.loc, c, u, v));
}

Value KernelBuilder::cast(Value x, DType to) {
  Impl &I = FLARE_IMPL();
  mlir::Value v = I.get(x);
  Type from = Impl::elemOf(v), target = I.toType(to);
  Type type = I.like(v, target);
  if (from == target)
    return x;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(target);
  if (fromF && toF)
    return I.wrap(this, fromF.getWidth() < toF.getWidth() ? arith::ExtFOp::create(I.b, I.loc, type, v).getResult()
                                                          : arith::TruncFOp::create(I.b, I.loc, type, v).getResult());
  if (!fromF && toF)
    return I.wrap(this, arith::SIToFPOp::create(I.b, I.loc, type, v));
  if (!fromF && !toF)
    return I.wrap(this, from.getIntOrFloatBitWidth() < target.getIntOrFloatBitWidth()
                            ? arith::ExtSIOp::create(I.b, I.loc, type, v).getResult()
                            : arith::TruncIOp::create(I.b, I.loc, type, v).getResult());
  Impl::fail("float to integer casts are not supported");
}

Value KernelBuilder::reduce(Value tile, int axis, Reduce kind) {
  Impl &I = FLARE_IMPL();
  mlir::Value t = I.get(tile);
  ArrayRef<int64_t> shape = Impl::shapeOf(t);
  if (axis < 0 || axis >= static_cast<int>(shape.size()))
    Impl::fail("reduce axis " + std::to_string(axis) + " is out of range");
  Type result = Impl::elemOf(t);
  if (shape.size() > 1) {
    SmallVector<int64_t> s(shape);
    s.erase(s.begin() + axis);
    result = RankedTensorType::get(s, result);
  }
  ReduceKind k = kind == Reduce::Sum ? ReduceKind::sum : kind == Reduce::Max ? ReduceKind::max : ReduceKind::min;
  return I.wrap(this, ReduceOp::create(I.b, I.loc, result, k, t, axis));
}

Value KernelBuilder::dot(Value a, Value b, Value acc) {
  Impl &I = FLARE_IMPL();
  mlir::Value c = I.get(acc);
  return I.wrap(this, DotOp::create(I.b, I.loc, c.getType(), I.get(a), I.get(b), c));
}

std::vector<Value> KernelBuilder::forLoop(Value lower, Value upper, Value step, const std::vector<Value> &inits,
                                          const std::function<std::vector<Value>(Value, const std::vector<Value> &)> &body) {
  Impl &I = FLARE_IMPL();
  auto loop = scf::ForOp::create(I.b, I.loc, I.get(lower), I.get(upper), I.get(step), I.getAll(inits));
  Block *blk = loop.getBody();
  if (!blk->empty() && isa<scf::YieldOp>(blk->back()))
    blk->back().erase();
  std::vector<Value> iters;
  for (mlir::Value arg : loop.getRegionIterArgs())
    iters.push_back(I.wrap(this, arg));
  {
    OpBuilder::InsertionGuard guard(I.b);
    I.b.setInsertionPointToEnd(blk);
    std::vector<Value> next = body(I.wrap(this, loop.getInductionVar()), iters);
    if (next.size() != inits.size())
      Impl::fail("the loop body returned " + std::to_string(next.size()) + " values for " +
                 std::to_string(inits.size()) + " carried ones");
    scf::YieldOp::create(I.b, I.loc, I.getAll(next));
  }
  std::vector<Value> results;
  for (mlir::Value r : loop.getResults())
    results.push_back(I.wrap(this, r));
  return results;
}

void KernelBuilder::schedule(const Schedule &s) {
  Impl &I = FLARE_IMPL();
  std::string diagnostics;
  auto emitError = [&] { return mlir::emitError(I.loc); };
  ScheduleAttr attr;
  {
    ScopedDiagnosticHandler handler(&I.context, [&](Diagnostic &diag) {
      diagnostics += diag.str();
      return success();
    });
    attr = ScheduleAttr::getChecked(emitError, &I.context, s.pingPong, int64_t{s.minBlocksPerSM}, s.producerWarpgroup,
                                    s.persistent, s.pairInstances, s.operandsAfterFirstStage, s.prefetchNextInstance,
                                    s.invariantAInRegisters, s.uniformWarpgroup, s.peelZeroFirst,
                                    s.dynamicInstances);
  }
  if (!attr)
    Impl::fail("schedule: " + diagnostics);
  I.func->setAttr(TileDialect::kScheduleAttrName, attr);
}

std::string KernelBuilder::finish() {
  Impl &I = FLARE_IMPL();
  func::ReturnOp::create(I.b, I.loc);
  Block &entry = I.func.getBody().front();
  I.func.setType(I.b.getFunctionType(entry.getArgumentTypes(), {}));
  I.finished = true;
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&I.context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    if (failed(verify(*I.module)))
      Impl::fail("the kernel does not verify:\n" + diagnostics);
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  I.module->print(os);
  return out;
}

Value operator+(Value a, Value b) { return a.builder_->add(a, b); }
Value operator-(Value a, Value b) { return a.builder_->sub(a, b); }
Value operator*(Value a, Value b) { return a.builder_->mul(a, b); }
Value operator/(Value a, Value b) { return a.builder_->div(a, b); }

} // namespace flare::tile
