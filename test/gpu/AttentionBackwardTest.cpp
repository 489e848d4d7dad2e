//===- AttentionBackwardTest.cpp - Generated backward kernels against float64 ===//
//
// The backward kernels (`flarec --grad`) of every example of examples/attention at head dims 64, 128
// and 256, launched by their ABI with the forward's O and LSE taken from the float64 reference, and
// flare::attentionBackward with its options after flare::attention's forward. dQ, dK and dV are
// compared with the float64 backward reference (which differentiates score_mod by central
// differences of the interpreted region, independently of the compiler's derivative), on random bf16
// inputs, with poisoned outputs and workspace, at lengths that are not multiples of the tiles, GQA/MQA,
// Sq != Skv and rows that see no key (zero gradients); the deterministic mode (CompileOptions::
// deterministic, AttentionOptions::deterministic; sm_90a's default, sm_80's on request) the same way,
// and bit for bit equal across calls.
//
//===----------------------------------------------------------------------===//
#include "../ExampleText.h"
#include "AttentionExamples.h"

#include "flare/Attention.h"
#include "flare/Reference/Attention.h"
#include "flare/Target/Target.h"

#include <cmath>
#include <cstring>

namespace flare::test {
namespace {

using Shape = AttentionShape;

/// Random 16-bit bits (bf16 or f16) and their exact values.
struct Tensor16 {
  std::vector<uint16_t> bits;
  std::vector<float> exact;
};
Tensor16 random16(size_t n, std::mt19937 &rng, DType dtype = DType::BF16) {
  Tensor16 t;
  if (dtype == DType::BF16) {
    t.bits = randomBF16(n, rng, -1.5f, 1.5f);
  } else {
    std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
    for (size_t i = 0; i < n; ++i)
      t.bits.push_back(encode16(dist(rng), dtype));
  }
  for (uint16_t b : t.bits)
    t.exact.push_back(decode16(b, dtype));
  return t;
}
Tensor16 rounded(const std::vector<double> &values) {
  Tensor16 t;
  for (double v : values) {
    t.bits.push_back(toBF16(static_cast<float>(v)));
    t.exact.push_back(fromBF16(t.bits.back()));
  }
  return t;
}

class AttentionBackward : public GpuTest {
protected:
  /// The module's backward kernels on one problem, against the float64 reference.
  void runBackward(const std::string &ir, rt::Module &module, const std::string &name, const Shape &s, int d,
                   const std::vector<std::vector<double>> &aux, const std::vector<DType> &auxTypes) {
    const size_t qn = size_t(s.b) * s.hq * s.sq * d, kn = size_t(s.b) * s.hkv * s.skv * d,
                 rows = size_t(s.b) * s.hq * s.sq;
    Tensor16 q = random16(qn, rng), k = random16(kn, rng), v = random16(kn, rng), dO = random16(qn, rng);
    reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, q.exact.data(), k.exact.data(), v.exact.data(), aux, {}, {}, {}};
    reference::AttentionResult fwd = reference::attentionReference(ir, p);
    Tensor16 o = rounded(fwd.out);
    std::vector<float> lse(fwd.lse.begin(), fwd.lse.end());
    auto up16 = [&](const Tensor16 &t) { return rt::DeviceBuffer::fromHost(*ctx, t.bits); };
    auto bq = up16(q), bk = up16(k), bv = up16(v), bo = up16(o), bdo = up16(dO);
    auto blse = rt::DeviceBuffer::fromHost(*ctx, lse);
    auto delta = poisoned(rows * 4), acc = poisoned(rows * d * 4);
    auto dq = poisoned(qn * 2), dk = poisoned(kn * 2), dv = poisoned(kn * 2);
    std::vector<rt::DeviceBuffer> auxBuffers;
    for (size_t i = 0; i < aux.size(); ++i)
      auxBuffers.push_back(uploadAux(*ctx, aux[i], auxTypes[i]));
    rt::KernelArgs args;
    args.addPointer(bq).addPointer(bk).addPointer(bv).addPointer(bo).addPointer(bdo).addPointer(blse);
    args.addPointer(delta).addPointer(acc).addPointer(dq).addPointer(dk).addPointer(dv);
    for (auto &a : auxBuffers)
      args.addPointer(a);
    args.addI32(s.hq).addI32(s.hkv).addI32(s.sq).addI32(s.skv);
    for (auto &a : aux)
      args.addI32(static_cast<int32_t>(a.size()));
    const int64_t qs[3] = {int64_t(s.hq) * s.sq * d, int64_t(s.sq) * d, d};
    const int64_t ks[3] = {int64_t(s.hkv) * s.skv * d, int64_t(s.skv) * d, d};
    for (const int64_t *st : {qs, ks, ks, qs, qs, qs, ks, ks}) // q, k, v, o, do, dq, dk, dv
      args.addI64(st[0]).addI64(st[1]).addI64(st[2]);
    auto launch = [&](const std::string &kernel, const char *hint, int rowsOf, int heads) {
      rt::Kernel kk = module.kernel(kernel);
      const int64_t block = kk.info().hint(hint);
      ASSERT_GT(block, 0) << kernel;
      kk.launch({static_cast<unsigned>((rowsOf + block - 1) / block), unsigned(heads), unsigned(s.b)}, args);
    };
    launch(name + "_bwd_preprocess", "attention.block_m", s.sq, s.hq);
    launch(name + "_bwd", "attention.block_n", s.skv, s.hkv);
    if (module.compiled().findKernel(name + "_bwd_dv")) // dK and dV in a kernel each
      launch(name + "_bwd_dv", "attention.block_n", s.skv, s.hkv);
    launch(name + "_bwd_dq", "attention.block_m", s.sq, s.hq);
    reference::AttentionGradients ref = reference::attentionBackwardReference(ir, p, dO.exact.data());
    const std::vector<uint16_t> gotDq = dq.toHost<uint16_t>(qn);
    expectGradient(gotDq, ref.dq, "dQ");
    expectGradient(dk.toHost<uint16_t>(kn), ref.dk, "dK");
    expectGradient(dv.toHost<uint16_t>(kn), ref.dv, "dV");
    // Rows that see no key: exactly zero.
    for (size_t r = 0; r < rows; ++r)
      if (std::isinf(fwd.lse[r])) {
        for (int x = 0; x < d; ++x)
          ASSERT_EQ(fromBF16(gotDq[r * d + x]), 0.f) << "dQ of row " << r << " (no key) must be 0";
      }
  }
};

struct Example {
  const char *file;
  bool staticHeads;
  int hq, hkv;
};
constexpr Example kExamples[] = {
    {"plain", false, 0, 0},    {"causal", false, 0, 0},  {"causal_bottom_right", false, 0, 0},
    {"sliding_window", false, 0, 0}, {"softcap", false, 0, 0}, {"alibi", false, 0, 0},
    {"prefix_lm", false, 0, 0}, {"document", false, 0, 0}, {"gqa", true, 32, 8},
    {"mqa", true, 32, 1},      {"block_sparse", false, 0, 0},
};

TEST_F(AttentionBackward, EveryExampleMatchesTheFloat64Reference) {
  for (const std::string &arch : archsToTest())
    for (const Example &ex : kExamples)
      for (int d : {64, 128, 256})
        for (bool deterministic : {false, true}) {
          if (deterministic && Target::get(arch)->hasWgmma) // the default kernels there
            continue;
          std::string ir = withHeadDim(readExample(std::string("attention/") + ex.file + ".mlir"), d);
          SCOPED_TRACE(arch + ", " + ex.file + ", D = " + std::to_string(d) + (deterministic ? ", deterministic" : ""));
          std::printf("[ backward ] %s, %s, D = %d%s\n", arch.c_str(), ex.file, d, deterministic ? ", deterministic" : "");
          CompileOptions options;
          options.arch = arch;
          options.backward = true;
          options.deterministic = deterministic;
          // As flare::attentionBackward compiles them (the views here are 16-byte aligned, their maps
          // encode): without the element-wise copies for maps that do not.
          options.tmaFallback = false;
          std::shared_ptr<rt::Module> module = cache->getOrCompile(ir, options, ex.file);
          std::vector<Shape> shapes =
              ex.staticHeads ? std::vector<Shape>{{1, ex.hq, ex.hkv, 65, 100}}
                             : pickShapes<Shape>({{1, 2, 1, 17, 300}, {2, 2, 2, 300, 17}, {1, 2, 2, 1, 1},
                                                  {1, 2, 2, 200, 256}, {1, 1, 1, 700, 1000}},
                                                 {{1, 2, 1, 17, 300}, {1, 2, 2, 200, 256}});
          if (arch != ctx->arch() || d != 128 || deterministic) // the ragged shapes only
            shapes.resize(std::min<size_t>(shapes.size(), 2));
          for (const Shape &s : shapes) {
            SCOPED_TRACE(describe(s));
            std::vector<std::vector<double>> aux;
            std::vector<DType> auxTypes;
            exampleAux(ex.file, s, aux, auxTypes, rng);
            runBackward(ir, *module, ex.file, s, d, aux, auxTypes);
            if (HasFatalFailure() || HasFailure())
              return;
          }
        }
}

// flare::attentionBackward after flare::attention: the built-in options, the forward's own LSE, the
// runtime's workspace (twice on one stream: the second call reuses it).
TEST_F(AttentionBackward, ApiMatchesTheFloat64Reference) {
  struct Case {
    bool causal;
    int64_t windowLeft;
    float softcap;
    bool deterministic = false;
    DType dtype = DType::BF16;
  };
  for (int d : {64, 128})
    for (Case c : {Case{false, -1, 0.f}, Case{true, -1, 0.f}, Case{true, 100, 0.f}, Case{false, -1, 20.f},
                   Case{false, -1, 0.f, true}, Case{true, -1, 20.f, true}, Case{true, -1, 0.f, false, DType::F16},
                   Case{false, 64, 30.f, true, DType::F16}}) {
      const Shape s{2, 4, 2, 333, 257};
      SCOPED_TRACE("D = " + std::to_string(d) + (c.causal ? ", causal" : "") + ", window " +
                   std::to_string(c.windowLeft) + ", softcap " + std::to_string(c.softcap) +
                   (c.deterministic ? ", deterministic" : "") + (c.dtype == DType::F16 ? ", f16" : ""));
      const size_t qn = size_t(s.b) * s.hq * s.sq * d, kn = size_t(s.b) * s.hkv * s.skv * d;
      Tensor16 q = random16(qn, rng, c.dtype), k = random16(kn, rng, c.dtype), v = random16(kn, rng, c.dtype),
               dO = random16(qn, rng, c.dtype);
      auto bq = rt::DeviceBuffer::fromHost(*ctx, q.bits), bk = rt::DeviceBuffer::fromHost(*ctx, k.bits),
           bv = rt::DeviceBuffer::fromHost(*ctx, v.bits), bdo = rt::DeviceBuffer::fromHost(*ctx, dO.bits);
      auto out = poisoned(qn * 2), lse = poisoned(size_t(s.b) * s.hq * s.sq * 4);
      auto view = [&](const rt::DeviceBuffer &b, int heads, int seq) {
        return TensorView{b.ptr(), c.dtype, {s.b, heads, seq, d}, {}};
      };
      AttentionOptions opt;
      opt.causal = c.causal;
      opt.windowLeft = c.windowLeft;
      opt.softcap = c.softcap;
      opt.lse = TensorView{lse.ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
      flare::attention(*cache, view(bq, s.hq, s.sq), view(bk, s.hkv, s.skv), view(bv, s.hkv, s.skv),
                       view(out, s.hq, s.sq), opt);
      std::vector<uint16_t> firstBits; // dq, dk, dv of the first call
      for (int call = 0; call < 2; ++call) {
        auto dq = poisoned(qn * 2), dk = poisoned(kn * 2), dv = poisoned(kn * 2);
        AttentionOptions bopt = opt;
        bopt.lse = {};
        bopt.deterministic = c.deterministic;
        flare::attentionBackward(*cache, view(bq, s.hq, s.sq), view(bk, s.hkv, s.skv), view(bv, s.hkv, s.skv),
                                 view(out, s.hq, s.sq), view(bdo, s.hq, s.sq), opt.lse, view(dq, s.hq, s.sq),
                                 view(dk, s.hkv, s.skv), view(dv, s.hkv, s.skv), bopt);
        AttentionBackwardPlan plan =
            planAttentionBackward(view(bq, s.hq, s.sq), view(bk, s.hkv, s.skv), view(bv, s.hkv, s.skv),
                                  view(out, s.hq, s.sq), view(bdo, s.hq, s.sq), opt.lse, view(dq, s.hq, s.sq),
                                  view(dk, s.hkv, s.skv), view(dv, s.hkv, s.skv), bopt);
        reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, q.exact.data(), k.exact.data(), v.exact.data(), {}, {}, {}, {}};
        reference::AttentionGradients ref = reference::attentionBackwardReference(plan.forward.module, p, dO.exact.data());
        expectGradient(dq.toHost<uint16_t>(qn), ref.dq, "dQ", c.dtype);
        expectGradient(dk.toHost<uint16_t>(kn), ref.dk, "dK", c.dtype);
        expectGradient(dv.toHost<uint16_t>(kn), ref.dv, "dV", c.dtype);
        if (HasFailure())
          return;
        if (c.deterministic) { // the second call's bits are the first's
          std::vector<uint16_t> bits = dq.toHost<uint16_t>(qn);
          for (const rt::DeviceBuffer *g : {&dk, &dv}) {
            std::vector<uint16_t> part = g->toHost<uint16_t>(kn);
            bits.insert(bits.end(), part.begin(), part.end());
          }
          if (call == 0)
            firstBits = std::move(bits);
          else
            ASSERT_TRUE(bits == firstBits) << "the deterministic mode gave different bits on a second call";
        }
      }
    }
}

// A training step's attention in a CUDA graph: the forward (with its LSE) and the backward, warm,
// captured together on one stream in the driver's global capture mode (no allocation or
// synchronisation while capturing: the backward's dQ sums are the stream's, sized by the warm-up),
// then replayed twice on fresh q, k, v and dO written into the captured buffers, gradients poisoned
// before each replay, against the float64 reference. Causal GQA at head dims 64 and 128.
TEST_F(AttentionBackward, ATrainingStepReplaysFromACudaGraph) {
  GraphDriver drv;
  ASSERT_TRUE(drv.missing.empty()) << "libcuda has no " << drv.missing;
  void *stream = nullptr;
  ASSERT_EQ(drv.streamCreate(&stream, /*CU_STREAM_NON_BLOCKING*/ 1), 0);
  for (int d : pickShapes<int>({64, 128}, {64})) {
    SCOPED_TRACE("D = " + std::to_string(d));
    const Shape s{2, 4, 2, 333, 257};
    const size_t qn = size_t(s.b) * s.hq * s.sq * d, kn = size_t(s.b) * s.hkv * s.skv * d;
    Tensor16 q = random16(qn, rng), k = random16(kn, rng), v = random16(kn, rng), dO = random16(qn, rng);
    auto bq = rt::DeviceBuffer::fromHost(*ctx, q.bits), bk = rt::DeviceBuffer::fromHost(*ctx, k.bits),
         bv = rt::DeviceBuffer::fromHost(*ctx, v.bits), bdo = rt::DeviceBuffer::fromHost(*ctx, dO.bits);
    auto out = poisoned(qn * 2), lse = poisoned(size_t(s.b) * s.hq * s.sq * 4);
    auto dq = poisoned(qn * 2), dk = poisoned(kn * 2), dv = poisoned(kn * 2);
    auto view = [&](const rt::DeviceBuffer &b, int heads, int seq) {
      return TensorView{b.ptr(), DType::BF16, {s.b, heads, seq, d}, {}};
    };
    AttentionOptions opt;
    opt.causal = true;
    opt.lse = TensorView{lse.ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
    AttentionOptions bopt = opt;
    bopt.lse = {};
    auto step = [&] {
      flare::attention(*cache, view(bq, s.hq, s.sq), view(bk, s.hkv, s.skv), view(bv, s.hkv, s.skv),
                       view(out, s.hq, s.sq), opt, stream);
      flare::attentionBackward(*cache, view(bq, s.hq, s.sq), view(bk, s.hkv, s.skv), view(bv, s.hkv, s.skv),
                               view(out, s.hq, s.sq), view(bdo, s.hq, s.sq), opt.lse, view(dq, s.hq, s.sq),
                               view(dk, s.hkv, s.skv), view(dv, s.hkv, s.skv), bopt, stream);
    };
    step();
    ASSERT_EQ(drv.streamSynchronize(stream), 0);
    GraphDriver::Graph graph;
    const std::string failed = drv.capture(stream, step, graph);
    ASSERT_TRUE(failed.empty()) << "a training step: " << failed;
    AttentionBackwardPlan plan =
        planAttentionBackward(view(bq, s.hq, s.sq), view(bk, s.hkv, s.skv), view(bv, s.hkv, s.skv),
                              view(out, s.hq, s.sq), view(bdo, s.hq, s.sq), opt.lse, view(dq, s.hq, s.sq),
                              view(dk, s.hkv, s.skv), view(dv, s.hkv, s.skv), bopt);
    for (int replay = 0; replay < 2 && !HasFailure(); ++replay) {
      q = random16(qn, rng), k = random16(kn, rng), v = random16(kn, rng), dO = random16(qn, rng);
      bq.upload(q.bits.data(), bq.bytes());
      bk.upload(k.bits.data(), bk.bytes());
      bv.upload(v.bits.data(), bv.bytes());
      bdo.upload(dO.bits.data(), bdo.bytes());
      for (rt::DeviceBuffer *b : {&out, &lse, &dq, &dk, &dv})
        b->fillBytes(kPoisonByte);
      ctx->synchronize();
      ASSERT_EQ(drv.launch(graph.exec, stream), 0);
      ASSERT_EQ(drv.streamSynchronize(stream), 0);
      std::printf("[ graph ] forward and backward, D = %d, replay %d\n", d, replay);
      reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, q.exact.data(), k.exact.data(), v.exact.data(),
                                    {}, {}, {}, {}};
      reference::AttentionGradients ref = reference::attentionBackwardReference(plan.forward.module, p, dO.exact.data());
      expectGradient(dq.toHost<uint16_t>(qn), ref.dq, "dQ");
      expectGradient(dk.toHost<uint16_t>(kn), ref.dk, "dK");
      expectGradient(dv.toHost<uint16_t>(kn), ref.dv, "dV");
    }
    if (HasFailure())
      break;
  }
  drv.streamDestroy(stream);
}

} // namespace
} // namespace flare::test
