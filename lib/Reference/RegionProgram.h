//===- RegionProgram.h - Modifier regions compiled for the reference -*- C++ -*-===//
//
// Private to lib/Reference: score_mod and mask_mod compiled once into straight-line code over numbered
// slots (RegionProgram.cpp), which the float64 reference runs per element. An op the interpreter does
// not know is rejected when the region is compiled, before any evaluation.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_REFERENCE_REGIONPROGRAM_H
#define FLARE_LIB_REFERENCE_REGIONPROGRAM_H

#include "flare/Error.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/FloatingPointMode.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flare::reference::interpreter {

inline constexpr const char *kPrefix = "attention reference: ";

/// "input:3:7", or "an unknown location".
std::string describe(mlir::Location loc);
/// A double as written in the source: "1.5", "4294967296".
std::string describe(double x);
std::string describe(mlir::Type type);
/// The width an integer or index type computes in, 0 for a float.
unsigned widthOf(mlir::Type type);
/// `bits` as an iN value: its N-bit pattern sign-extended (i1: 0 or 1); see RegionProgram.cpp.
int64_t wrap(uint64_t bits, unsigned width);

//===----------------------------------------------------------------------===//
// Compiled modifier regions
//===----------------------------------------------------------------------===//

/// One value of a modifier region: every float type (f16, bf16, f32, f64) as a double, every integer as
/// described above.
union Slot {
  double f;
  int64_t i;
};

enum class Opcode : uint8_t {
  // Floats, computed in double.
  AddF, SubF, MulF, DivF, RemF, NegF, MaximumF, MinimumF, MaxNumF, MinNumF, CmpF, TruncF, Tanh, Exp, Exp2, Log,
  Log2, Log1p, Sqrt, Rsqrt, AbsF, Sin, Cos, PowF, Fma, Floor, Ceil, Erf, CopySign,
  // Integers, wrapped to the result's width.
  AddI, SubI, MulI, DivSI, DivUI, RemSI, RemUI, FloorDivSI, CeilDivSI, CeilDivUI, AndI, OrI, XOrI, ShLI, ShRSI,
  ShRUI, MaxSI, MinSI, MaxUI, MinUI, AbsI, CmpI,
  // Conversions: ExtendSigned is extsi, trunci and index_cast; ExtendUnsigned is extui and index_castui.
  ExtendSigned, ExtendUnsigned, SIToFP, UIToFP, FPToSI, FPToUI,
  // Any type.
  Copy, Select, AuxLoad,
};

struct Instr {
  Opcode opcode;
  uint8_t operandWidth = 0; ///< integer width of the first operand (signed and unsigned views use it)
  uint8_t resultWidth = 0;  ///< integer width of the result, which is wrapped to it
  uint8_t predicate = 0;    ///< arith::CmpIPredicate or arith::CmpFPredicate
  int32_t result = 0, a = 0, b = 0, c = 0; ///< slots; AuxLoad: `b` is the aux operand number
  const llvm::fltSemantics *format = nullptr;                          ///< TruncF's result format
  llvm::RoundingMode rounding = llvm::RoundingMode::NearestTiesToEven; ///< TruncF's rounding
};

/// A modifier region compiled to straight-line code. run() allocates nothing: the caller keeps one copy
/// of `initial` per thread and writes the block's scalar arguments into its first slots.
class Program {
public:
  bool present() const { return resultSlot >= 0; }
  Slot run(Slot *slots, const std::vector<std::vector<double>> &aux) const;

  std::vector<Instr> code;
  std::vector<std::string> origins; ///< "'arith.divsi' in mask_mod at input:7:9", one per instruction
  std::vector<Slot> initial;        ///< arguments first; constants hold their value, op results start at 0
  int32_t resultSlot = -1;

private:
  [[noreturn]] void fail(const Instr &instr, const std::string &why) const {
    throw Error(kPrefix + origins[&instr - code.data()] + ": " + why);
  }
};

/// Compiles `region` (verified: a single block of scalar ops and one yield; empty: an absent program)
/// named `regionName` in messages. Its `numScalarArgs` leading block arguments take slots
/// 0..numScalarArgs-1, the rest are aux tensors; attn.q_len and attn.kv_len are the constants seqQ and
/// seqKV. Throws flare::Error at an op the reference cannot interpret.
Program compileRegion(mlir::Region &region, unsigned numScalarArgs, const std::string &regionName, int64_t seqQ,
                      int64_t seqKV);

} // namespace flare::reference::interpreter

#endif // FLARE_LIB_REFERENCE_REGIONPROGRAM_H
