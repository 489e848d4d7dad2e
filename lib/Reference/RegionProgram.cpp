//===- RegionProgram.cpp - Modifier regions compiled for the reference ----===//
//
// The interpreter of score_mod and mask_mod for the float64 reference (RegionProgram.h): values in
// 64-bit slots (floats as doubles, integers as described below), one instruction per op.
//
//===----------------------------------------------------------------------===//
#include "RegionProgram.h"

#include "flare/Dialect/Attn/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

using namespace mlir;

namespace flare::reference::interpreter {

/// "input:3:7", or "an unknown location".
std::string describe(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColRange>())
    return (file.getFilename().getValue() + ":" + Twine(file.getStartLine()) + ":" + Twine(file.getStartColumn()))
        .str();
  return "an unknown location";
}

/// A double as written in the source: "1.5", "4294967296".
std::string describe(double x) {
  std::ostringstream os;
  os << std::setprecision(17) << x;
  return os.str();
}

std::string describe(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

//===----------------------------------------------------------------------===//
// Integer representation
//===----------------------------------------------------------------------===//
//
// An iN value (index is i64) lives in an int64 as its N-bit pattern sign-extended, except i1, which is
// 0 or 1. Addition, subtraction, multiplication and bitwise ops are the same on every view of the bits,
// so they compute in uint64 (wrapping, never undefined) and wrap() the result back to N bits: that is
// two's-complement arithmetic modulo 2^N. Signed and unsigned ops read the operand through signedValue()
// or unsignedValue() first.

int64_t wrap(uint64_t bits, unsigned width) {
  if (width == 1)
    return static_cast<int64_t>(bits & 1);
  if (width >= 64)
    return static_cast<int64_t>(bits);
  unsigned unused = 64 - width;
  return static_cast<int64_t>(bits << unused) >> unused;
}

int64_t signedValue(int64_t v, unsigned width) { return width == 1 ? -v : v; }

uint64_t unsignedValue(int64_t v, unsigned width) {
  return width >= 64 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(v) & ((uint64_t(1) << width) - 1);
}

/// The width an integer or index type computes in, 0 for a float.
unsigned widthOf(Type type) {
  if (type.isIndex())
    return 64;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return 0;
}

/// Float-to-integer conversions outside the result's range are poison in arith; the reference saturates,
/// as PTX's cvt does, and maps NaN to 0.
int64_t saturateToSigned(double x, unsigned width) {
  if (std::isnan(x))
    return 0;
  double t = std::trunc(x), limit = std::ldexp(1.0, static_cast<int>(width) - 1);
  if (t >= limit)
    return wrap((uint64_t(1) << (width - 1)) - 1, width);
  if (t < -limit)
    return wrap(uint64_t(1) << (width - 1), width);
  return wrap(static_cast<uint64_t>(static_cast<int64_t>(t)), width);
}

int64_t saturateToUnsigned(double x, unsigned width) {
  if (std::isnan(x) || x <= 0)
    return 0;
  double t = std::trunc(x);
  if (t >= std::ldexp(1.0, static_cast<int>(width)))
    return wrap(~uint64_t(0), width);
  return wrap(static_cast<uint64_t>(t), width);
}

bool compareInts(arith::CmpIPredicate predicate, int64_t x, int64_t y, unsigned width) {
  int64_t sx = signedValue(x, width), sy = signedValue(y, width);
  uint64_t ux = unsignedValue(x, width), uy = unsignedValue(y, width);
  switch (predicate) {
  case arith::CmpIPredicate::eq: return x == y;
  case arith::CmpIPredicate::ne: return x != y;
  case arith::CmpIPredicate::slt: return sx < sy;
  case arith::CmpIPredicate::sle: return sx <= sy;
  case arith::CmpIPredicate::sgt: return sx > sy;
  case arith::CmpIPredicate::sge: return sx >= sy;
  case arith::CmpIPredicate::ult: return ux < uy;
  case arith::CmpIPredicate::ule: return ux <= uy;
  case arith::CmpIPredicate::ugt: return ux > uy;
  case arith::CmpIPredicate::uge: return ux >= uy;
  }
  llvm_unreachable("unknown cmpi predicate");
}

/// C++ comparisons are false when either side is NaN, which is exactly the ordered predicates; the
/// unordered ones are also true for NaN.
bool compareFloats(arith::CmpFPredicate predicate, double x, double y) {
  bool unordered = std::isnan(x) || std::isnan(y);
  switch (predicate) {
  case arith::CmpFPredicate::AlwaysFalse: return false;
  case arith::CmpFPredicate::OEQ: return x == y;
  case arith::CmpFPredicate::OGT: return x > y;
  case arith::CmpFPredicate::OGE: return x >= y;
  case arith::CmpFPredicate::OLT: return x < y;
  case arith::CmpFPredicate::OLE: return x <= y;
  case arith::CmpFPredicate::ONE: return x < y || x > y;
  case arith::CmpFPredicate::ORD: return !unordered;
  case arith::CmpFPredicate::UEQ: return unordered || x == y;
  case arith::CmpFPredicate::UGT: return unordered || x > y;
  case arith::CmpFPredicate::UGE: return unordered || x >= y;
  case arith::CmpFPredicate::ULT: return unordered || x < y;
  case arith::CmpFPredicate::ULE: return unordered || x <= y;
  case arith::CmpFPredicate::UNE: return unordered || x != y;
  case arith::CmpFPredicate::UNO: return unordered;
  case arith::CmpFPredicate::AlwaysTrue: return true;
  }
  llvm_unreachable("unknown cmpf predicate");
}

/// arith.maximumf / minimumf: NaN wins, and -0 < +0.
double maximum(double x, double y) {
  if (std::isnan(x) || std::isnan(y))
    return std::numeric_limits<double>::quiet_NaN();
  if (x == y)
    return std::signbit(x) ? y : x;
  return x > y ? x : y;
}

double minimum(double x, double y) {
  if (std::isnan(x) || std::isnan(y))
    return std::numeric_limits<double>::quiet_NaN();
  if (x == y)
    return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

Slot Program::run(Slot *slots, const std::vector<std::vector<double>> &aux) const {
  for (const Instr &in : code) {
    const Slot x = slots[in.a], y = slots[in.b], z = slots[in.c];
    Slot &r = slots[in.result];
    const unsigned w = in.operandWidth, rw = in.resultWidth;
    auto ux = static_cast<uint64_t>(x.i), uy = static_cast<uint64_t>(y.i);
    switch (in.opcode) {
    case Opcode::AddF: r.f = x.f + y.f; break;
    case Opcode::SubF: r.f = x.f - y.f; break;
    case Opcode::MulF: r.f = x.f * y.f; break;
    case Opcode::DivF: r.f = x.f / y.f; break;
    case Opcode::RemF: r.f = std::fmod(x.f, y.f); break;
    case Opcode::NegF: r.f = -x.f; break;
    case Opcode::MaximumF: r.f = maximum(x.f, y.f); break;
    case Opcode::MinimumF: r.f = minimum(x.f, y.f); break;
    case Opcode::MaxNumF: r.f = std::fmax(x.f, y.f); break;
    case Opcode::MinNumF: r.f = std::fmin(x.f, y.f); break;
    case Opcode::CmpF: r.i = compareFloats(static_cast<arith::CmpFPredicate>(in.predicate), x.f, y.f); break;
    case Opcode::TruncF: {
      // The kernel rounds here too, so the reference must: in.format is f32, f16, bf16 or another narrower type.
      llvm::APFloat value(x.f);
      bool lostInfo;
      value.convert(*in.format, in.rounding, &lostInfo);
      value.convert(llvm::APFloat::IEEEdouble(), llvm::RoundingMode::NearestTiesToEven, &lostInfo);
      r.f = value.convertToDouble();
      break;
    }
    case Opcode::Tanh: r.f = std::tanh(x.f); break;
    case Opcode::Exp: r.f = std::exp(x.f); break;
    case Opcode::Exp2: r.f = std::exp2(x.f); break;
    case Opcode::Log: r.f = std::log(x.f); break;
    case Opcode::Log2: r.f = std::log2(x.f); break;
    case Opcode::Log1p: r.f = std::log1p(x.f); break;
    case Opcode::Sqrt: r.f = std::sqrt(x.f); break;
    case Opcode::Rsqrt: r.f = 1.0 / std::sqrt(x.f); break;
    case Opcode::AbsF: r.f = std::fabs(x.f); break;
    case Opcode::Sin: r.f = std::sin(x.f); break;
    case Opcode::Cos: r.f = std::cos(x.f); break;
    case Opcode::PowF: r.f = std::pow(x.f, y.f); break;
    case Opcode::Fma: r.f = std::fma(x.f, y.f, z.f); break;
    case Opcode::Floor: r.f = std::floor(x.f); break;
    case Opcode::Ceil: r.f = std::ceil(x.f); break;
    case Opcode::Erf: r.f = std::erf(x.f); break;
    case Opcode::CopySign: r.f = std::copysign(x.f, y.f); break;

    case Opcode::AddI: r.i = wrap(ux + uy, rw); break;
    case Opcode::SubI: r.i = wrap(ux - uy, rw); break;
    case Opcode::MulI: r.i = wrap(ux * uy, rw); break;
    case Opcode::AndI: r.i = wrap(ux & uy, rw); break;
    case Opcode::OrI: r.i = wrap(ux | uy, rw); break;
    case Opcode::XOrI: r.i = wrap(ux ^ uy, rw); break;
    case Opcode::DivSI:
    case Opcode::RemSI:
    case Opcode::FloorDivSI:
    case Opcode::CeilDivSI: {
      int64_t n = signedValue(x.i, w), d = signedValue(y.i, w);
      if (d == 0)
        fail(in, "division by zero");
      // INT64_MIN / -1 overflows int64: its quotient wraps to INT64_MIN, its remainder is 0.
      bool overflow = n == std::numeric_limits<int64_t>::min() && d == -1;
      int64_t quotient = overflow ? n : n / d, remainder = overflow ? 0 : n % d;
      if (in.opcode == Opcode::RemSI) {
        r.i = wrap(static_cast<uint64_t>(remainder), rw);
        break;
      }
      // C++ truncates toward zero; floor and ceil move an inexact quotient one step.
      if (in.opcode == Opcode::FloorDivSI && remainder != 0 && (n < 0) != (d < 0))
        --quotient;
      if (in.opcode == Opcode::CeilDivSI && remainder != 0 && (n < 0) == (d < 0))
        ++quotient;
      r.i = wrap(static_cast<uint64_t>(quotient), rw);
      break;
    }
    case Opcode::DivUI:
    case Opcode::RemUI:
    case Opcode::CeilDivUI: {
      uint64_t n = unsignedValue(x.i, w), d = unsignedValue(y.i, w);
      if (d == 0)
        fail(in, "division by zero");
      uint64_t value = in.opcode == Opcode::RemUI ? n % d : n / d;
      if (in.opcode == Opcode::CeilDivUI && n % d != 0)
        ++value;
      r.i = wrap(value, rw);
      break;
    }
    // Shifts by the width or more are poison in arith; the reference shifts every bit out, as PTX's
    // clamped shifts do.
    case Opcode::ShLI: {
      uint64_t amount = unsignedValue(y.i, w);
      r.i = amount >= w ? 0 : wrap(ux << amount, rw);
      break;
    }
    case Opcode::ShRUI: {
      uint64_t amount = unsignedValue(y.i, w);
      r.i = amount >= w ? 0 : wrap(unsignedValue(x.i, w) >> amount, rw);
      break;
    }
    case Opcode::ShRSI: {
      uint64_t amount = std::min<uint64_t>(unsignedValue(y.i, w), w - 1);
      r.i = wrap(static_cast<uint64_t>(signedValue(x.i, w) >> amount), rw);
      break;
    }
    case Opcode::MaxSI: r.i = signedValue(x.i, w) >= signedValue(y.i, w) ? x.i : y.i; break;
    case Opcode::MinSI: r.i = signedValue(x.i, w) <= signedValue(y.i, w) ? x.i : y.i; break;
    case Opcode::MaxUI: r.i = unsignedValue(x.i, w) >= unsignedValue(y.i, w) ? x.i : y.i; break;
    case Opcode::MinUI: r.i = unsignedValue(x.i, w) <= unsignedValue(y.i, w) ? x.i : y.i; break;
    case Opcode::AbsI: {
      int64_t v = signedValue(x.i, w);
      r.i = wrap(v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), rw);
      break;
    }
    case Opcode::CmpI: r.i = compareInts(static_cast<arith::CmpIPredicate>(in.predicate), x.i, y.i, w); break;

    case Opcode::ExtendSigned: r.i = wrap(static_cast<uint64_t>(signedValue(x.i, w)), rw); break;
    case Opcode::ExtendUnsigned: r.i = wrap(unsignedValue(x.i, w), rw); break;
    case Opcode::SIToFP: r.f = static_cast<double>(signedValue(x.i, w)); break;
    case Opcode::UIToFP: r.f = static_cast<double>(unsignedValue(x.i, w)); break;
    case Opcode::FPToSI: r.i = saturateToSigned(x.f, rw); break;
    case Opcode::FPToUI: r.i = saturateToUnsigned(x.f, rw); break;

    case Opcode::Copy: r = x; break;
    case Opcode::Select: r = x.i ? y : z; break;
    case Opcode::AuxLoad: {
      const std::vector<double> &tensor = aux[in.b];
      if (x.i < 0 || static_cast<uint64_t>(x.i) >= tensor.size())
        fail(in, "index " + std::to_string(x.i) + " is outside aux operand #" + std::to_string(in.b) + ", which has " +
                     std::to_string(tensor.size()) + " elements");
      double value = tensor[x.i];
      // Integer aux vectors were checked to hold integers of their element type.
      if (rw)
        r.i = wrap(static_cast<uint64_t>(static_cast<int64_t>(value)), rw);
      else
        r.f = value;
      break;
    }
    }
  }
  return slots[resultSlot];
}

/// The ops that compile to one instruction with nothing but their operand and result widths.
constexpr std::pair<llvm::StringLiteral, Opcode> kPlainOps[] = {
    {arith::AddFOp::getOperationName(), Opcode::AddF},
    {arith::SubFOp::getOperationName(), Opcode::SubF},
    {arith::MulFOp::getOperationName(), Opcode::MulF},
    {arith::DivFOp::getOperationName(), Opcode::DivF},
    {arith::RemFOp::getOperationName(), Opcode::RemF},
    {arith::NegFOp::getOperationName(), Opcode::NegF},
    {arith::MaximumFOp::getOperationName(), Opcode::MaximumF},
    {arith::MinimumFOp::getOperationName(), Opcode::MinimumF},
    {arith::MaxNumFOp::getOperationName(), Opcode::MaxNumF},
    {arith::MinNumFOp::getOperationName(), Opcode::MinNumF},
    {arith::ExtFOp::getOperationName(), Opcode::Copy},
    {arith::AddIOp::getOperationName(), Opcode::AddI},
    {arith::SubIOp::getOperationName(), Opcode::SubI},
    {arith::MulIOp::getOperationName(), Opcode::MulI},
    {arith::DivSIOp::getOperationName(), Opcode::DivSI},
    {arith::DivUIOp::getOperationName(), Opcode::DivUI},
    {arith::RemSIOp::getOperationName(), Opcode::RemSI},
    {arith::RemUIOp::getOperationName(), Opcode::RemUI},
    {arith::FloorDivSIOp::getOperationName(), Opcode::FloorDivSI},
    {arith::CeilDivSIOp::getOperationName(), Opcode::CeilDivSI},
    {arith::CeilDivUIOp::getOperationName(), Opcode::CeilDivUI},
    {arith::AndIOp::getOperationName(), Opcode::AndI},
    {arith::OrIOp::getOperationName(), Opcode::OrI},
    {arith::XOrIOp::getOperationName(), Opcode::XOrI},
    {arith::ShLIOp::getOperationName(), Opcode::ShLI},
    {arith::ShRSIOp::getOperationName(), Opcode::ShRSI},
    {arith::ShRUIOp::getOperationName(), Opcode::ShRUI},
    {arith::MaxSIOp::getOperationName(), Opcode::MaxSI},
    {arith::MinSIOp::getOperationName(), Opcode::MinSI},
    {arith::MaxUIOp::getOperationName(), Opcode::MaxUI},
    {arith::MinUIOp::getOperationName(), Opcode::MinUI},
    {arith::IndexCastOp::getOperationName(), Opcode::ExtendSigned},
    {arith::IndexCastUIOp::getOperationName(), Opcode::ExtendUnsigned},
    {arith::ExtSIOp::getOperationName(), Opcode::ExtendSigned},
    {arith::ExtUIOp::getOperationName(), Opcode::ExtendUnsigned},
    {arith::TruncIOp::getOperationName(), Opcode::ExtendSigned},
    {arith::SIToFPOp::getOperationName(), Opcode::SIToFP},
    {arith::UIToFPOp::getOperationName(), Opcode::UIToFP},
    {arith::FPToSIOp::getOperationName(), Opcode::FPToSI},
    {arith::FPToUIOp::getOperationName(), Opcode::FPToUI},
    {arith::SelectOp::getOperationName(), Opcode::Select},
    {math::TanhOp::getOperationName(), Opcode::Tanh},
    {math::ExpOp::getOperationName(), Opcode::Exp},
    {math::Exp2Op::getOperationName(), Opcode::Exp2},
    {math::LogOp::getOperationName(), Opcode::Log},
    {math::Log2Op::getOperationName(), Opcode::Log2},
    {math::Log1pOp::getOperationName(), Opcode::Log1p},
    {math::SqrtOp::getOperationName(), Opcode::Sqrt},
    {math::RsqrtOp::getOperationName(), Opcode::Rsqrt},
    {math::AbsFOp::getOperationName(), Opcode::AbsF},
    {math::AbsIOp::getOperationName(), Opcode::AbsI},
    {math::SinOp::getOperationName(), Opcode::Sin},
    {math::CosOp::getOperationName(), Opcode::Cos},
    {math::PowFOp::getOperationName(), Opcode::PowF},
    {math::FmaOp::getOperationName(), Opcode::Fma},
    {math::FloorOp::getOperationName(), Opcode::Floor},
    {math::CeilOp::getOperationName(), Opcode::Ceil},
    {math::ErfOp::getOperationName(), Opcode::Erf},
    {math::CopySignOp::getOperationName(), Opcode::CopySign},
};

llvm::RoundingMode toLLVM(arith::RoundingMode mode) {
  switch (mode) {
  case arith::RoundingMode::to_nearest_even: return llvm::RoundingMode::NearestTiesToEven;
  case arith::RoundingMode::downward: return llvm::RoundingMode::TowardNegative;
  case arith::RoundingMode::upward: return llvm::RoundingMode::TowardPositive;
  case arith::RoundingMode::toward_zero: return llvm::RoundingMode::TowardZero;
  case arith::RoundingMode::to_nearest_away: return llvm::RoundingMode::NearestTiesToAway;
  }
  llvm_unreachable("unknown rounding mode");
}

/// Compiles one modifier region (already verified: a single block, scalar ops, one yield) to a Program.
class RegionCompiler {
public:
  RegionCompiler(std::string regionName, int64_t seqQ, int64_t seqKV)
      : regionName(std::move(regionName)), seqQ(seqQ), seqKV(seqKV) {}

  /// `numScalarArgs` leading block arguments take slots 0..numScalarArgs-1; the rest are the aux tensors.
  Program compile(Region &region, unsigned numScalarArgs) {
    if (region.empty())
      return std::move(program);
    Block &block = region.front();
    for (BlockArgument arg : block.getArguments()) {
      if (arg.getArgNumber() < numScalarArgs)
        slots[arg] = addSlot(Slot{0});
      else
        auxNumbers[arg] = arg.getArgNumber() - numScalarArgs;
    }
    for (Operation &op : block.without_terminator())
      compileOp(op);
    program.resultSlot = slotOf(block.getTerminator()->getOperand(0), block.getTerminator());
    return std::move(program);
  }

private:
  int32_t addSlot(Slot initial) {
    program.initial.push_back(initial);
    return static_cast<int32_t>(program.initial.size() - 1);
  }

  std::string origin(Operation *op) const {
    return "'" + op->getName().getStringRef().str() + "' in " + regionName + " at " + describe(op->getLoc());
  }

  [[noreturn]] void fail(Operation *op, const std::string &why) const { throw Error(kPrefix + origin(op) + " " + why); }

  Slot constant(Operation *user, Attribute value, Type type) const {
    Slot slot{0};
    if (auto f = dyn_cast<FloatAttr>(value))
      slot.f = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(value))
      slot.i = wrap(static_cast<uint64_t>(i.getValue().getSExtValue()), widthOf(type));
    else
      fail(user, "uses a constant the reference cannot read");
    return slot;
  }

  /// The slot of an operand: defined in the region, or a constant defined above it (the regions are not
  /// isolated from above, so `%cap = arith.constant` may sit in the enclosing function).
  int32_t slotOf(Value value, Operation *user) {
    auto it = slots.find(value);
    if (it != slots.end())
      return it->second;
    Attribute attr;
    if (!matchPattern(value, m_Constant(&attr)))
      fail(user, "uses a value defined outside " + regionName + " that is not a constant");
    return slots[value] = addSlot(constant(user, attr, value.getType()));
  }

  void checkTypes(Operation &op) const {
    auto check = [&](Type type) {
      if (widthOf(type) > 64 || (!type.isIntOrIndexOrFloat() && !isa<RankedTensorType>(type)))
        fail(&op, "computes on " + describe(type) + "; the reference handles floats and integers up to 64 bits");
    };
    llvm::for_each(op.getOperandTypes(), check);
    llvm::for_each(op.getResultTypes(), check);
  }

  void compileOp(Operation &op) {
    checkTypes(op);
    Value result = op.getResult(0);
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      slots[result] = addSlot(constant(&op, c.getValue(), result.getType()));
      return;
    }
    // The lengths are fixed for the whole problem, so they are constants of the compiled region.
    if (isa<attn::QLenOp, attn::KVLenOp>(op)) {
      Slot length{0};
      length.i = isa<attn::QLenOp>(op) ? seqQ : seqKV;
      slots[result] = addSlot(length);
      return;
    }

    Instr in;
    in.resultWidth = widthOf(result.getType());
    if (auto load = dyn_cast<attn::AuxLoadOp>(op)) {
      in.opcode = Opcode::AuxLoad;
      in.a = slotOf(load.getIndex(), &op);
      in.b = static_cast<int32_t>(auxNumbers.lookup(load.getTensor()));
    } else {
      if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
        in.opcode = Opcode::CmpI;
        in.predicate = static_cast<uint8_t>(cmp.getPredicate());
      } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
        in.opcode = Opcode::CmpF;
        in.predicate = static_cast<uint8_t>(cmp.getPredicate());
      } else if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        in.opcode = Opcode::TruncF;
        in.format = &cast<FloatType>(result.getType()).getFloatSemantics();
        if (std::optional<arith::RoundingMode> mode = trunc.getRoundingmode())
          in.rounding = toLLVM(*mode);
      } else {
        StringRef name = op.getName().getStringRef();
        const auto *plain = llvm::find_if(kPlainOps, [&](const auto &entry) { return entry.first == name; });
        if (plain == std::end(kPlainOps))
          fail(&op, "is not supported by the reference interpreter");
        in.opcode = plain->second;
      }
      int32_t *operandSlots[] = {&in.a, &in.b, &in.c};
      for (auto [operand, slot] : llvm::zip_first(op.getOperands(), operandSlots))
        *slot = slotOf(operand, &op);
      in.operandWidth = widthOf(op.getOperand(0).getType());
    }
    in.result = addSlot(Slot{0});
    slots[result] = in.result;
    program.code.push_back(in);
    program.origins.push_back(origin(&op));
  }

  std::string regionName;
  int64_t seqQ, seqKV;
  Program program;
  llvm::DenseMap<Value, int32_t> slots;
  llvm::DenseMap<Value, unsigned> auxNumbers;
};

Program compileRegion(Region &region, unsigned numScalarArgs, const std::string &regionName, int64_t seqQ,
                      int64_t seqKV) {
  return RegionCompiler(regionName, seqQ, seqKV).compile(region, numScalarArgs);
}

} // namespace flare::reference::interpreter
