//===- Builder.h - Write tile kernels from C++ ------------------*- C++ -*-===//
//
// A builder that reads like a Triton kernel and produces tile-dialect IR, the same IR a user would write
// by hand in a .mlir file (flare::rt::KernelCache and flare::compileToPTX take its text):
//
//   flare::tile::KernelBuilder k("vector_add", /*numWarps=*/4);
//   auto x = k.ptrArg(DType::F32), y = k.ptrArg(DType::F32), z = k.ptrArg(DType::F32);
//   auto n = k.i32Arg();
//   auto start = k.programId(0) * k.i32(1024);
//   auto xv = k.makeView(x, {n}, {k.i32(1)});   // ... yv, zv likewise
//   k.store(zv, {start}, k.load(xv, {start}, {1024}) + k.load(yv, {start}, {1024}));
//   std::string ir = k.finish();
//
// Arithmetic on Values follows the tile dialect's types (f32 + f32, i32 * i32); a scalar meeting a tile
// is splat to the tile's shape and size-1 dimensions broadcast, as in Triton. Every mistake (mismatched
// types or shapes, a use after finish) throws flare::Error. This header includes no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TILE_BUILDER_H
#define FLARE_TILE_BUILDER_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Value;
}

namespace flare::tile {

enum class DType { F32, BF16, F16, I32, I64, I1 };
enum class Reduce { Sum, Max, Min };

class KernelBuilder;

/// How the GPU layer runs a kernel beyond its layouts: the fields of `#tile.schedule`
/// (dialects/Tile/TileDialect.td says what each does), at their defaults here.
struct Schedule {
  bool pingPong = true;          ///< two warpgroups may take turns issuing a streamed loop's MMAs
  int minBlocksPerSM = 0;        ///< CTAs that must fit on one SM (1 to 8; 0: ptxas decides)
  bool producerWarpgroup = false; ///< one more warpgroup issues the streamed loops' TMA copies
  bool persistent = false;       ///< one CTA per SM slot runs program instances in turn
  bool pairInstances = true;     ///< a persistent CTA takes pairs of instances per turn
  bool operandsAfterFirstStage = false;
  bool prefetchNextInstance = false;
  bool invariantAInRegisters = false;
  bool uniformWarpgroup = true;  ///< the warpgroup index as a warp-uniform value
  bool peelZeroFirst = false;
  bool dynamicInstances = false; ///< a persistent CTA takes its next instance from a shared counter
};

/// A scalar or a tile produced by a KernelBuilder. Cheap to copy; valid while its builder lives.
class Value {
public:
  Value() = default;
  DType dtype() const;
  /// Empty for a scalar.
  std::vector<int64_t> shape() const;
  bool isTile() const { return !shape().empty(); }

private:
  friend class KernelBuilder;
  friend Value operator+(Value, Value);
  friend Value operator-(Value, Value);
  friend Value operator*(Value, Value);
  friend Value operator/(Value, Value);
  Value(KernelBuilder *builder, int id) : builder_(builder), id_(id) {}
  KernelBuilder *builder_ = nullptr;
  int id_ = -1;
};

/// A strided view of global memory (tile.make_view).
class View {
private:
  friend class KernelBuilder;
  int id_ = -1;
};

Value operator+(Value a, Value b);
Value operator-(Value a, Value b);
Value operator*(Value a, Value b);
Value operator/(Value a, Value b);

class KernelBuilder {
public:
  explicit KernelBuilder(const std::string &name, int numWarps = 4);
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder &) = delete;
  KernelBuilder &operator=(const KernelBuilder &) = delete;

  // Parameters, in order (Flare's kernel ABI: global pointers and i32/i64/f32 scalars).
  Value ptrArg(DType element);
  Value i32Arg();
  Value i64Arg();
  Value f32Arg();

  // Scalars and tiles from nothing.
  Value programId(int axis);
  Value numPrograms(int axis);
  Value i32(int64_t v);
  Value i64(int64_t v);
  Value f32(double v);
  Value full(const std::vector<int64_t> &shape, double value, DType dtype);
  Value range(int32_t start, int32_t end);
  Value splat(Value scalar, const std::vector<int64_t> &shape);

  // Shapes.
  Value expandDims(Value tile, int axis);
  Value broadcast(Value tile, const std::vector<int64_t> &shape);
  Value trans(Value tile);

  // Global memory.
  Value addPtr(Value ptr, Value offset);
  View makeView(Value ptr, const std::vector<Value> &sizes, const std::vector<Value> &strides);
  Value load(View view, const std::vector<Value> &offsets, const std::vector<int64_t> &shape,
             std::optional<double> padding = std::nullopt);
  void store(View view, const std::vector<Value> &offsets, Value tile);
  void atomicAdd(View view, const std::vector<Value> &offsets, Value tile);

  // Compute.
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value mul(Value a, Value b);
  Value div(Value a, Value b);
  Value maximum(Value a, Value b);
  Value minimum(Value a, Value b);
  Value exp(Value x);
  Value exp2(Value x);
  Value log(Value x);
  Value log2(Value x);
  Value sqrt(Value x);
  Value rsqrt(Value x);
  Value tanh(Value x);
  Value abs(Value x);
  /// Comparisons give i1; signed for integers, ordered for floats.
  Value lt(Value a, Value b);
  Value le(Value a, Value b);
  Value gt(Value a, Value b);
  Value ge(Value a, Value b);
  Value eq(Value a, Value b);
  Value ne(Value a, Value b);
  Value logicalAnd(Value a, Value b);
  Value logicalOr(Value a, Value b);
  Value select(Value cond, Value a, Value b);
  /// Float <-> float (extend or round to nearest), int -> float (signed), i32 <-> i64.
  Value cast(Value x, DType to);
  Value reduce(Value tile, int axis, Reduce kind);
  Value sum(Value tile, int axis) { return reduce(tile, axis, Reduce::Sum); }
  Value max(Value tile, int axis) { return reduce(tile, axis, Reduce::Max); }
  Value min(Value tile, int axis) { return reduce(tile, axis, Reduce::Min); }
  /// acc + a * b on tensor cores (bf16/f16 operands, f32 accumulator).
  Value dot(Value a, Value b, Value acc);

  /// for (iv = lower; iv < upper; iv += step) carrying `inits`; `body` returns the next values.
  std::vector<Value> forLoop(Value lower, Value upper, Value step, const std::vector<Value> &inits,
                             const std::function<std::vector<Value>(Value iv, const std::vector<Value> &)> &body);

  /// The kernel's schedule (`tile.schedule`); a combination the GPU layer would not honour (a producer
  /// warpgroup beside two CTAs per SM, a persistent-only field without `persistent`, ...) throws
  /// flare::Error with the verifier's message.
  void schedule(const Schedule &s);

  /// Ends the kernel, verifies it and returns the module's IR text. The builder cannot be used after.
  std::string finish();

  struct Impl;

private:
  mlir::Value viewValue(View v);
  friend class Value;
  friend Value operator+(Value, Value);
  friend Value operator-(Value, Value);
  friend Value operator*(Value, Value);
  friend Value operator/(Value, Value);
  std::unique_ptr<Impl> impl_;
};

} // namespace flare::tile

#endif // FLARE_TILE_BUILDER_H
