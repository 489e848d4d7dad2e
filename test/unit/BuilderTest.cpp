//===- BuilderTest.cpp - Tile kernels written from C++ ---------------------===//
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"
#include "flare/Tile/Builder.h"

#include "ExampleSource.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using flare::tile::DType;
using flare::tile::KernelBuilder;
using flare::tile::Value;

namespace {

using flare::test::readExample;

// examples/tile/vector_add.mlir, written with the builder.
std::string vectorAdd() {
  KernelBuilder k("vector_add", 4);
  Value x = k.ptrArg(DType::F32), y = k.ptrArg(DType::F32), z = k.ptrArg(DType::F32);
  Value n = k.i32Arg();
  Value pid = k.programId(0);
  Value block = k.i32(1024), one = k.i32(1);
  Value start = pid * block;
  auto xv = k.makeView(x, {n}, {one});
  auto yv = k.makeView(y, {n}, {one});
  auto zv = k.makeView(z, {n}, {one});
  Value a = k.load(xv, {start}, {1024});
  Value b = k.load(yv, {start}, {1024});
  k.store(zv, {start}, a + b);
  return k.finish();
}

// examples/tile/softmax.mlir, written with the builder.
std::string softmax() {
  KernelBuilder k("softmax", 4);
  Value in = k.ptrArg(DType::F32), out = k.ptrArg(DType::F32);
  Value rows = k.i32Arg(), cols = k.i32Arg(), inStride = k.i32Arg(), outStride = k.i32Arg();
  Value pid = k.programId(0);
  Value c0 = k.i32(0), c1 = k.i32(1), rowsPerProgram = k.i32(4);
  Value row0 = pid * rowsPerProgram;
  auto iv = k.makeView(in, {rows, cols}, {inStride, c1});
  auto ov = k.makeView(out, {rows, cols}, {outStride, c1});
  Value x = k.load(iv, {row0, c0}, {4, 1024}, -INFINITY);
  Value m = k.broadcast(k.expandDims(k.max(x, 1), 1), {4, 1024});
  Value e = k.exp(x - m);
  Value l = k.broadcast(k.expandDims(k.sum(e, 1), 1), {4, 1024});
  k.store(ov, {row0, c0}, e / l);
  return k.finish();
}

TEST(Builder, WritesTheSameKernelsAsTheHandWrittenExamples) {
  EXPECT_EQ(flare::canonicalizeIR(vectorAdd()), flare::canonicalizeIR(readExample("tile/vector_add.mlir")));
  EXPECT_EQ(flare::canonicalizeIR(softmax()), flare::canonicalizeIR(readExample("tile/softmax.mlir")));
}

TEST(Builder, KernelsCompileToPTX) {
  flare::CompiledModule m = flare::compileToPTX(softmax(), {});
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].name, "softmax");
  EXPECT_NE(m.ptx.find("ex2.approx"), std::string::npos);
}

TEST(Builder, ScalarsSplatAndUnitDimensionsBroadcast) {
  KernelBuilder k("k", 4);
  Value p = k.ptrArg(DType::F32);
  Value c1 = k.i32(1), c0 = k.i32(0), n = k.i32(64);
  auto v = k.makeView(p, {n, n}, {n, c1});
  Value t = k.load(v, {c0, c0}, {64, 64});
  Value row = k.expandDims(k.sum(t, 1), 1); // 64 x 1
  Value r = (t - row) * k.f32(2.0);         // broadcast, then splat
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(r.dtype(), DType::F32);
  k.store(v, {c0, c0}, r);
  EXPECT_NO_THROW(flare::compileToPTX(k.finish(), {}));
}

TEST(Builder, LoopsCarryTiles) {
  KernelBuilder k("acc", 4);
  Value p = k.ptrArg(DType::F32);
  Value n = k.i32Arg();
  Value c0 = k.i32(0), c1 = k.i32(1), step = k.i32(128);
  auto v = k.makeView(p, {n}, {c1});
  auto result = k.forLoop(c0, n, step, {k.full({128}, 0.0, DType::F32)}, [&](Value i, const std::vector<Value> &acc) {
    return std::vector<Value>{acc[0] + k.load(v, {i}, {128})};
  });
  k.store(v, {c0}, result[0]);
  std::string ir = k.finish();
  EXPECT_NE(ir.find("scf.for"), std::string::npos);
  EXPECT_NO_THROW(flare::compileToPTX(ir, {}));
}

TEST(Builder, MistakesAreErrorsNotCrashes) {
  KernelBuilder k("bad", 4);
  Value p = k.ptrArg(DType::F32);
  Value i = k.i32(1), f = k.f32(1.0);
  EXPECT_THROW(i + f, flare::Error) << "i32 + f32 needs a cast";
  EXPECT_THROW(k.exp(i), flare::Error) << "exp of an integer";
  auto v = k.makeView(p, {i}, {i});
  Value t = k.load(v, {i}, {64});
  EXPECT_THROW(k.reduce(t, 1, flare::tile::Reduce::Sum), flare::Error) << "axis out of range";
  EXPECT_THROW(k.trans(t), flare::Error) << "trans of a 1-D tile";
  EXPECT_THROW(k.programId(3), flare::Error);
  EXPECT_THROW(k.select(f, t, t), flare::Error) << "non-i1 condition";
  k.finish();
  EXPECT_THROW(k.i32(0), flare::Error) << "use after finish";
}

TEST(Builder, SchedulesAreTypedAndChecked) {
  KernelBuilder k("persistent_kernel", 8);
  flare::tile::Schedule s;
  s.persistent = true;
  s.producerWarpgroup = true;
  s.pingPong = false;
  k.schedule(s);
  const std::string ir = k.finish();
  EXPECT_NE(ir.find("tile.schedule = #tile.schedule<ping_pong = false, producer_warpgroup = true, persistent = true>"),
            std::string::npos)
      << ir;
  // The same kernel with the defaults prints an empty schedule.
  KernelBuilder d("default_kernel", 4);
  d.schedule({});
  EXPECT_NE(d.finish().find("#tile.schedule<>"), std::string::npos);
  // A field the lowering would not honour is refused where it is set.
  KernelBuilder bad("bad_schedule", 8);
  flare::tile::Schedule prefetchWithProducer;
  prefetchWithProducer.persistent = prefetchWithProducer.producerWarpgroup = true;
  prefetchWithProducer.prefetchNextInstance = true;
  try {
    bad.schedule(prefetchWithProducer);
    FAIL() << "expected a flare::Error";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("prefetch_next_instance needs persistent without producer_warpgroup"),
              std::string::npos)
        << e.what();
  }
  // ... and one that needs the kernel's warps, when the kernel is finished.
  KernelBuilder twoWarps("two_warps", 2);
  flare::tile::Schedule producer;
  producer.producerWarpgroup = true;
  twoWarps.schedule(producer);
  EXPECT_THROW(twoWarps.finish(), flare::Error);
}

TEST(Builder, VerifierErrorsSurfaceAsFlareErrors) {
  KernelBuilder k("bad_dot", 4);
  Value p = k.ptrArg(DType::BF16);
  Value c0 = k.i32(0), c1 = k.i32(1);
  auto v = k.makeView(p, {c1, c1}, {c1, c1});
  Value a = k.load(v, {c0, c0}, {16, 32});
  Value b = k.load(v, {c0, c0}, {16, 32}); // inner dimensions 32 vs 16 do not match
  k.dot(a, b, k.full({16, 32}, 0.0, DType::F32));
  try {
    k.finish();
    FAIL() << "expected a flare::Error";
  } catch (const flare::Error &e) {
    EXPECT_NE(std::string(e.what()).find("inner dimensions differ"), std::string::npos) << e.what();
  }
}

} // namespace
