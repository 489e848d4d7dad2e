//===- AttentionTest.cpp - Generated attention kernels against the float64 reference ===//
//
// Every example of examples/attention (head dims 64, 128 and 256 by rewriting the head dimension of
// its types), compiled by Flare's pipeline and launched by its kernel ABI, and flare::attention with
// its options, custom modules and strided layouts. Each result is compared with the float64
// reference that interprets the very same score_mod/mask_mod regions, on random bf16 (and, through
// the API, f16) inputs, with outputs poisoned before the launch and sequence lengths that are not
// multiples of the tiles (1, 17, 1000, 4097), GQA/MQA, Sq != Skv and rows that see no key (output 0,
// LSE -inf).
//
//===----------------------------------------------------------------------===//
#include "../ExampleText.h"
#include "AttentionExamples.h"

#include "flare/Attention.h"
#include "flare/Reference/Attention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace flare::test {
namespace {

using Shape = AttentionShape;

/// bf16 inputs of one problem, with their exact float values for the reference.
struct Inputs {
  std::vector<uint16_t> q, k, v;
  std::vector<float> qf, kf, vf;
};

Inputs randomInputs(const Shape &s, int d, std::mt19937 &rng, DType dtype = DType::BF16) {
  Inputs in;
  std::uniform_real_distribution<float> dist(-1.5f, 1.5f);
  auto fill = [&](std::vector<uint16_t> &bits, std::vector<float> &exact, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      bits.push_back(encode16(dist(rng), dtype));
      exact.push_back(decode16(bits.back(), dtype));
    }
  };
  fill(in.q, in.qf, size_t(s.b) * s.hq * s.sq * d);
  fill(in.k, in.kf, size_t(s.b) * s.hkv * s.skv * d);
  fill(in.v, in.vf, size_t(s.b) * s.hkv * s.skv * d);
  return in;
}

/// Checks O (16-bit, [B, Hq, Sq, D] as laid out by `oStrides`) and LSE against the reference.
void expectMatches(const std::vector<uint16_t> &got, const std::vector<int64_t> &oStrides, const Shape &s, int d,
                   const reference::AttentionResult &ref, const std::vector<float> *lse,
                   DType dtype = DType::BF16) {
  double worst = 0;
  size_t maskedRows = 0;
  for (int b = 0; b < s.b; ++b)
    for (int h = 0; h < s.hq; ++h)
      for (int i = 0; i < s.sq; ++i) {
        size_t row = (size_t(b) * s.hq + h) * s.sq + i;
        bool noKey = std::isinf(ref.lse[row]);
        maskedRows += noKey;
        for (int x = 0; x < d; ++x) {
          float o = decode16(got[b * oStrides[0] + h * oStrides[1] + i * oStrides[2] + x], dtype);
          double want = ref.out[row * d + x];
          ASSERT_FALSE(std::isnan(o)) << "NaN at row " << row << " col " << x;
          if (noKey) {
            ASSERT_EQ(o, 0.f) << "a row that sees no key must be 0 (row " << row << ")";
          }
          // bf16 keeps 8 bits (f16 11): half an ulp of |O| <= 1.5 plus the error of P rounded to 16 bits.
          ASSERT_NEAR(o, want, 2e-2 + 1e-2 * std::fabs(want)) << "row " << row << " col " << x;
          worst = std::max(worst, std::fabs(o - want));
        }
        if (lse) {
          float l = (*lse)[row];
          if (noKey)
            ASSERT_TRUE(std::isinf(l) && l < 0) << "LSE of a row that sees no key must be -inf, got " << l;
          else
            ASSERT_NEAR(l, ref.lse[row], 2e-3 + 1e-4 * std::fabs(ref.lse[row])) << "LSE row " << row;
        }
      }
  std::printf("      %s D=%d: worst |O - ref| %.4f, %zu rows see no key\n", describe(s).c_str(), d, worst, maskedRows);
}


class Attention : public GpuTest {
protected:
  /// Launches `kernel` (a generated attention kernel) by Flare's attention ABI on [B, H, S, D] tensors
  /// whose rows are `rowPad` elements longer than D (0: contiguous; the padding holds NaN, which
  /// must never be read). With `combine` (a split_kv kernel's `<name>_combine`), the keys are split
  /// into `splits` parts whose outputs and LSEs (poisoned f32 workspaces) `combine` merges.
  void runExample(const std::string &ir, rt::Kernel &kernel, const Shape &s, int d, bool withLse,
                  const std::vector<std::vector<double>> &auxValues, const std::vector<DType> &auxTypes,
                  int rowPad = 0, rt::Kernel *combine = nullptr, int splits = 0) {
    Inputs in = randomInputs(s, d, rng);
    const int pitch = d + rowPad;
    auto padRows = [&](const std::vector<uint16_t> &dense) {
      std::vector<uint16_t> out(dense.size() / d * pitch, 0x7fc0);
      for (size_t r = 0; r < dense.size() / d; ++r)
        std::copy_n(dense.begin() + r * d, d, out.begin() + r * pitch);
      return out;
    };
    auto dq = rt::DeviceBuffer::fromHost(*ctx, padRows(in.q)), dk = rt::DeviceBuffer::fromHost(*ctx, padRows(in.k)),
         dv = rt::DeviceBuffer::fromHost(*ctx, padRows(in.v));
    const size_t outElements = in.q.size() / d * pitch;
    auto dout = poisoned(outElements * 2);
    auto dlse = poisoned(size_t(s.b) * s.hq * s.sq * 4);
    std::vector<rt::DeviceBuffer> aux;
    for (size_t i = 0; i < auxValues.size(); ++i)
      aux.push_back(uploadAux(*ctx, auxValues[i], auxTypes[i]));
    rt::KernelArgs args;
    args.addPointer(dq).addPointer(dk).addPointer(dv).addPointer(dout);
    if (withLse)
      args.addPointer(dlse);
    for (auto &a : aux)
      args.addPointer(a);
    args.addI32(s.hq).addI32(s.hkv).addI32(s.sq).addI32(s.skv);
    for (auto &values : auxValues)
      args.addI32(static_cast<int32_t>(values.size()));
    const std::vector<int64_t> qStrides = {int64_t(s.hq) * s.sq * pitch, int64_t(s.sq) * pitch, pitch};
    const std::vector<int64_t> kStrides = {int64_t(s.hkv) * s.skv * pitch, int64_t(s.skv) * pitch, pitch};
    for (const auto *st : {&qStrides, &kStrides, &kStrides, &qStrides})
      args.addI64((*st)[0]).addI64((*st)[1]).addI64((*st)[2]);
    const size_t partRows = size_t(s.b) * s.hq * std::max(splits, 1) * s.sq;
    auto partOut = poisoned(combine ? partRows * d * 4 : 4), partLse = poisoned(combine ? partRows * 4 : 4);
    if (combine)
      args.addPointer(partOut).addPointer(partLse).addI32(splits);
    // With tensor maps (sm_90a), K and V are copied by TMA exactly when their rows are 16-byte aligned;
    // otherwise the kernel takes its cp.async path.
    if (!kernel.info().tensorMaps.empty()) {
      std::string why;
      EXPECT_EQ(kernel.usesTensorMaps(args, &why), rowPad == 0) << why;
    }
    const int64_t bm = kernel.info().hint("attention.block_m");
    ASSERT_GT(bm, 0);
    // Packed GQA rows: x over the blocks of a group's G x Sq rows, y over KV heads.
    const bool packed = kernel.info().hint("attention.pack_gqa") > 0;
    const int64_t rows = packed ? int64_t(s.sq) * (s.hq / s.hkv) : s.sq;
    const rt::Grid grid{static_cast<unsigned>((rows + bm - 1) / bm), unsigned(packed ? s.hkv : s.hq),
                        unsigned(s.b * (combine ? splits : 1))};
    // A kernel compiled without the copies that replace its maps refuses such a launch, and says why.
    if (kernel.info().tmaRequired && rowPad != 0) {
      try {
        kernel.launch(grid, args);
        ADD_FAILURE() << "a kernel without the TMA fallback launched on rows that are not 16-byte aligned";
      } catch (const Error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("multiple of 16"), std::string::npos) << msg;
        EXPECT_NE(msg.find("tmaFallback"), std::string::npos) << msg;
      }
      return;
    }
    kernel.launch(grid, args);
    if (combine) {
      const int64_t rows = combine->info().hint("attention.block_m");
      ASSERT_GT(rows, 0);
      combine->launch({static_cast<unsigned>((s.sq + rows - 1) / rows), unsigned(s.hq), unsigned(s.b)}, args);
    }

    reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, in.qf.data(), in.kf.data(), in.vf.data(), auxValues, {}, {}, {}};
    reference::AttentionResult ref = reference::attentionReference(ir, p);
    std::vector<float> lse;
    if (withLse)
      lse = dlse.toHost<float>(size_t(s.b) * s.hq * s.sq);
    expectMatches(dout.toHost<uint16_t>(outElements), qStrides, s, d, ref, withLse ? &lse : nullptr);
  }
  /// runExample on each shape, with the aux tensors the example `file` reads; stops at the first
  /// fatal failure.
  void runExampleShapes(const std::string &ir, rt::Kernel &kernel, const std::string &file,
                        const std::vector<Shape> &shapes, int d, bool withLse, rt::Kernel *combine = nullptr,
                        int splits = 0) {
    for (const Shape &s : shapes) {
      SCOPED_TRACE(describe(s));
      std::vector<std::vector<double>> aux;
      std::vector<DType> auxTypes;
      exampleAux(file, s, aux, auxTypes, rng);
      runExample(ir, kernel, s, d, withLse, aux, auxTypes, 0, combine, splits);
      if (HasFatalFailure())
        return;
    }
  }
};

struct Example {
  const char *file, *kernel;
  bool lse;
  bool staticHeads; // gqa/mqa fix the head counts in their types
  int hq, hkv;
};

constexpr Example kExamples[] = {
    {"plain", "plain", true, false, 0, 0},
    {"causal", "causal", true, false, 0, 0},
    {"causal_bottom_right", "causal_bottom_right", true, false, 0, 0},
    {"sliding_window", "sliding_window", false, false, 0, 0},
    {"softcap", "softcap", true, false, 0, 0},
    {"alibi", "alibi", false, false, 0, 0},
    {"prefix_lm", "prefix_lm", false, false, 0, 0},
    {"document", "document", true, false, 0, 0},
    {"gqa", "gqa", false, true, 32, 8},
    {"mqa", "mqa", true, true, 32, 1},
    {"block_sparse", "block_sparse", false, false, 0, 0},
};

/// The module flarec wrote for an example (scripts/run-examples.sh: PTX and --emit=meta JSON in
/// $FLARE_PTX_DIR), or nothing when that directory or the files are absent.
std::optional<CompiledModule> flarecOutput(const std::string &example, const std::string &arch) {
  const char *dir = std::getenv("FLARE_PTX_DIR");
  if (!dir)
    return std::nullopt;
  std::string base = std::string(dir) + "/attention-" + example + "." + arch;
  std::ifstream ptx(base + ".ptx"), meta(base + ".json");
  if (!ptx || !meta)
    return std::nullopt;
  std::stringstream p, m;
  p << ptx.rdbuf();
  m << meta.rdbuf();
  return CompiledModule::fromMetadataJson(m.str(), p.str());
}

TEST_F(Attention, EveryExampleMatchesTheFloat64Reference) {
  size_t fromFlarec = 0;
  for (const Example &ex : kExamples)
    for (int d : {64, 128, 256}) {
      std::string ir = withHeadDim(readExample(std::string("attention/") + ex.file + ".mlir"), d);
      SCOPED_TRACE(std::string(ex.file) + ", D = " + std::to_string(d));
      // At the head dimension the examples are written for, launch the files flarec produced when
      // they exist; otherwise (and for 64 and 256) compile the text in-process (the same pipeline).
      std::optional<CompiledModule> files = d == 128 ? flarecOutput(ex.file, ctx->arch()) : std::nullopt;
      std::printf("[ example ] %s, D = %d%s\n", ex.file, d, files ? " (PTX and metadata written by flarec)" : "");
      std::shared_ptr<rt::Module> module = files ? rt::Module::load(*ctx, *files) : cache->getOrCompile(ir, {}, ex.file);
      fromFlarec += files.has_value();
      // The driver's JIT log (empty for a binary from the disk cache): no serialized wgmma (C7509,
      // C7518, ...).
      EXPECT_EQ(module->jitLog().find("instructions are serialized"), std::string::npos) << module->jitLog();
      // A producer warpgroup's register budgets are honoured (whole-program JIT, not the linker's).
      EXPECT_EQ(module->jitLog().find("'setmaxnreg' ignored"), std::string::npos) << module->jitLog();
      rt::Kernel kernel = module->kernel(ex.kernel);
      if (ctx->arch() == "sm_90a") { // Q is copied by TMA, K and V stream through TMA, O is stored by TMA
        EXPECT_EQ(kernel.info().tensorMaps.size(), 4u);
      }
      // Skv = 256 is a whole number of key blocks (no partial block); the other shapes end in one.
      std::vector<Shape> shapes =
          ex.staticHeads
              ? pickShapes<Shape>({{1, ex.hq, ex.hkv, 65, 300}, {2, ex.hq, ex.hkv, 1, 17}, {1, ex.hq, ex.hkv, 200, 256}},
                                  {{1, ex.hq, ex.hkv, 65, 300}})
              : pickShapes<Shape>({{1, 2, 1, 17, 1000}, {2, 2, 2, 1000, 17}, {1, 1, 1, 1, 4097}, {1, 2, 2, 1, 1},
                                   {1, 2, 2, 200, 256}},
                                  {{1, 2, 1, 17, 300}, {1, 2, 2, 1, 1}, {1, 2, 2, 200, 256}});
      if (d == 128 && !ex.staticHeads && !smallShapes())
        shapes.push_back({1, 1, 1, 4097, 4097});
      runExampleShapes(ir, kernel, ex.file, shapes, d, ex.lse);
      if (HasFatalFailure())
        return;
    }
  std::printf("[ example ] %zu of %zu examples ran from flarec's files%s\n", fromFlarec, std::size(kExamples),
              fromFlarec ? "" : " (FLARE_PTX_DIR unset: scripts/run-examples.sh sets it)");
}

// Split keys (split_kv, flash-decoding): each program instance of grid z = (batch, part) runs one part
// of its rows' key blocks and `<name>_combine` merges the parts' outputs and LSEs. Packed GQA
// (pack_gqa): the query heads of a KV head are the rows of one instance, (head in group, query) with
// the query fastest, the regions' head index one value per row (ALiBi's slopes). Every example at
// every head dim, split, packed and both, with one query (decoding), a few and a ragged block of them,
// 1, 3 and 16 parts (more parts than key blocks: empty parts, LSE -inf, weight 0), against the
// float64 reference.
TEST_F(Attention, SplitKvAndPackedGqaMatchTheFloat64Reference) {
  for (const char *switches : {"split_kv", "split_kv, pack_gqa", "pack_gqa"})
    for (const Example &ex : kExamples)
      for (int d : {64, 128, 256}) {
        const std::string ir = withHeadDim(readExample(std::string("attention/") + ex.file + ".mlir"), d);
        CompileOptions options;
        options.arch = ctx->arch();
        // (A mask gathering from a table per element takes 32 keys per step, as flare::attention's split
        // launches do: its layout change needs a score tile of shared memory.)
        const bool gathers = std::string(ex.file) == "block_sparse";
        options.attentionConfig = "#attn.config<block_m = 64, block_n = " + std::string(gathers ? "32" : d > 128 ? "64" : "128") +
                                  ", warps = 4, overlap, pair_instances, " + switches + ">";
        SCOPED_TRACE(std::string(ex.file) + ", D = " + std::to_string(d) + ", " + options.attentionConfig);
        std::shared_ptr<rt::Module> module = cache->getOrCompile(ir, options, ex.file);
        rt::Kernel kernel = module->kernel(ex.kernel);
        const bool split = std::string(switches).find("split_kv") != std::string::npos;
        std::optional<rt::Kernel> combine;
        if (split)
          combine = module->kernel(std::string(ex.kernel) + "_combine");
        const int hq = ex.staticHeads ? ex.hq : 4, hkv = ex.staticHeads ? ex.hkv : 2;
        const std::vector<Shape> shapes = pickShapes<Shape>(
            {{2, hq, hkv, 1, 1000}, {1, hq, hkv, 5, 3001}, {1, hq, hkv, 77, 700}}, {{1, hq, hkv, 1, 300}});
        for (int splits : split ? pickShapes<int>({1, 3, 16}, {3}) : std::vector<int>{0}) {
          std::printf("[ split-kv ] %s, D = %d, %s, %d parts\n", ex.file, d, switches, splits);
          runExampleShapes(ir, kernel, ex.file, shapes, d, ex.lse, combine ? &*combine : nullptr, splits);
          if (HasFatalFailure())
            return;
        }
      }
}

// Rows of D + 1 elements (flare::attention refuses them; a direct launch may pass them): no row of K
// or V is 16-byte aligned, so the streamed loop fills its ring element by element instead of by
// cp.async, and the Q and O accesses take their unaligned paths too.
TEST_F(Attention, UnalignedRowsMatchTheFloat64Reference) {
  for (const char *file : {"plain", "causal"})
    for (int d : {64, 128}) {
      std::string ir = withHeadDim(readExample(std::string("attention/") + file + ".mlir"), d);
      SCOPED_TRACE(std::string(file) + ", D = " + std::to_string(d));
      std::printf("[ example ] %s, D = %d, rows of D + 1 elements\n", file, d);
      rt::Kernel kernel = cache->getOrCompile(ir, {}, file)->kernel(file);
      for (const Shape &s : pickShapes<Shape>({{1, 2, 1, 200, 301}, {2, 2, 2, 150, 150}}, {{1, 2, 1, 200, 301}})) {
        SCOPED_TRACE(describe(s));
        runExample(ir, kernel, s, d, /*withLse=*/true, {}, {}, /*rowPad=*/1);
        if (HasFatalFailure())
          return;
      }
      // Without the fallback (as flare::attention compiles it) the launch is refused with its reason.
      CompileOptions noFallback;
      noFallback.tmaFallback = false;
      rt::Kernel strict = cache->getOrCompile(ir, noFallback, file)->kernel(file);
      EXPECT_EQ(strict.info().tmaRequired, ctx->arch() == "sm_90a");
      if (strict.info().tmaRequired)
        runExample(ir, strict, Shape{1, 2, 1, 200, 301}, d, /*withLse=*/true, {}, {}, /*rowPad=*/1);
    }
}

// The mma.sync path (sm_80 PTX, which a Hopper GPU runs too): the generated kernels without wgmma,
// streamed copies or overlap, for the masks whose code differs (none, causal blocks, a per-row aux
// tensor, a per-element aux tensor).
TEST_F(Attention, MmaSyncPathMatchesTheFloat64Reference) {
  for (const Example &ex : kExamples) {
    const std::string file = ex.file;
    if (file != "plain" && file != "causal" && file != "alibi" && file != "document")
      continue;
    for (int d : {64, 128}) {
      std::string ir = withHeadDim(readExample("attention/" + file + ".mlir"), d);
      SCOPED_TRACE(file + ", D = " + std::to_string(d) + ", sm_80");
      std::printf("[ example ] %s, D = %d, compiled for sm_80\n", ex.file, d);
      CompileOptions options;
      options.arch = "sm_80";
      rt::Kernel kernel = cache->getOrCompile(ir, options, ex.file)->kernel(ex.kernel);
      runExampleShapes(ir, kernel, ex.file, pickShapes<Shape>({{1, 2, 1, 17, 1000}, {2, 2, 2, 333, 130}}, {{1, 2, 1, 17, 300}}),
                       d, ex.lse);
      if (HasFatalFailure())
        return;
    }
  }
}

// Configurations that fit a target's shared memory (attn-choose-config's fit step): sm_86 and sm_89
// let a CTA use 99 KiB, where head dims above 128 take 64 query rows on four warps and 32 keys per
// step (128 rows needed 147-160 KiB). Their PTX runs on a Hopper GPU too: the kernels the fit chose,
// against float64.
TEST_F(Attention, ConfigurationsFitTheSharedMemoryOfSm86) {
  for (const char *file : {"plain", "causal", "alibi", "document"})
    for (int d : {192, 256}) {
      std::string ir = withHeadDim(readExample(std::string("attention/") + file + ".mlir"), d);
      SCOPED_TRACE(std::string(file) + ", D = " + std::to_string(d) + ", sm_86");
      std::printf("[ example ] %s, D = %d, compiled for sm_86 (99 KiB of shared memory a CTA)\n", file, d);
      CompileOptions options;
      options.arch = "sm_86";
      rt::Kernel kernel = cache->getOrCompile(ir, options, file)->kernel(file);
      EXPECT_NE(kernel.info().attentionConfig.find("block_m = 64,"), std::string::npos) << kernel.info().attentionConfig;
      EXPECT_LE(kernel.info().sharedBytes, 99 * 1024);
      const bool lse = std::string(file) != "alibi";
      runExampleShapes(ir, kernel, file, pickShapes<Shape>({{1, 2, 1, 17, 1000}, {2, 2, 2, 333, 130}}, {{1, 2, 1, 17, 300}}),
                       d, lse);
      if (HasFatalFailure())
        return;
    }
}

/// flare::attention on q, k, v of the given shape; `layout` 0: [B, H, S, D] memory, 1: [B, S, H, D].
class AttentionApi : public GpuTest {
protected:
  void run(const Shape &s, int d, AttentionOptions opt, bool withLse, int layout,
           const std::vector<std::vector<double>> &auxValues = {}, const std::vector<DType> &auxTypes = {}) {
    Inputs in = randomInputs(s, d, rng, dtype);
    // Logical [B, H, S, D]; memory in `layout` order.
    auto strides = [&](int h, int seq) -> std::vector<int64_t> {
      if (layout == 0)
        return {int64_t(h) * seq * d, int64_t(seq) * d, d, 1};
      return {int64_t(seq) * h * d, d, int64_t(h) * d, 1};
    };
    auto toMemory = [&](const std::vector<uint16_t> &dense, int h, int seq) {
      std::vector<uint16_t> mem(dense.size());
      auto st = strides(h, seq);
      for (int b = 0; b < s.b; ++b)
        for (int hh = 0; hh < h; ++hh)
          for (int i = 0; i < seq; ++i)
            for (int x = 0; x < d; ++x)
              mem[b * st[0] + hh * st[1] + i * st[2] + x] = dense[((size_t(b) * h + hh) * seq + i) * d + x];
      return mem;
    };
    auto dq = rt::DeviceBuffer::fromHost(*ctx, toMemory(in.q, s.hq, s.sq));
    auto dk = rt::DeviceBuffer::fromHost(*ctx, toMemory(in.k, s.hkv, s.skv));
    auto dv = rt::DeviceBuffer::fromHost(*ctx, toMemory(in.v, s.hkv, s.skv));
    auto dout = poisoned(in.q.size() * 2);
    auto dlse = poisoned(size_t(s.b) * s.hq * s.sq * 4);
    TensorView q{dq.ptr(), dtype, {s.b, s.hq, s.sq, d}, strides(s.hq, s.sq)};
    TensorView k{dk.ptr(), dtype, {s.b, s.hkv, s.skv, d}, strides(s.hkv, s.skv)};
    TensorView v{dv.ptr(), dtype, {s.b, s.hkv, s.skv, d}, strides(s.hkv, s.skv)};
    TensorView out{dout.ptr(), dtype, {s.b, s.hq, s.sq, d}, strides(s.hq, s.sq)};
    if (withLse)
      opt.lse = TensorView{dlse.ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
    std::vector<rt::DeviceBuffer> aux;
    for (size_t i = 0; i < auxValues.size(); ++i) {
      aux.push_back(uploadAux(*ctx, auxValues[i], auxTypes[i]));
      opt.aux.push_back(TensorView{aux.back().ptr(), auxTypes[i], {int64_t(auxValues[i].size())}, {}});
    }
    flare::attention(*cache, q, k, v, out, opt);
    ctx->synchronize();

    AttentionPlan plan = planAttention(q, k, v, out, opt);
    reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, in.qf.data(), in.kf.data(), in.vf.data(), auxValues, {}, {}, {}};
    reference::AttentionResult ref = reference::attentionReference(plan.module, p);
    std::vector<float> lse;
    if (withLse)
      lse = dlse.toHost<float>(size_t(s.b) * s.hq * s.sq);
    expectMatches(dout.toHost<uint16_t>(in.q.size()), strides(s.hq, s.sq), s, d, ref, withLse ? &lse : nullptr,
                  dtype);
  }

  /// flare::attention on a paged cache: `lens` keys per sequence, pages of `pageSize` keys scattered
  /// at random over a pool (sequence 1 shares sequence 0's first pages, a prefix cache; table entries
  /// past a sequence's last page hold page ids outside the pool, spare pages and rows past a length
  /// keys and values of 9000), `layout` 0: pages [num_pages, page_size, Hkv, D] in memory (vLLM's), 1: [num_pages, Hkv,
  /// page_size, D]. pageSize 0: contiguous K and V with kvLens. The reference sees the keys gathered.
  void runPaged(int b, int hq, int hkv, int sq, const std::vector<int> &lens, int pageSize, int d,
                AttentionOptions opt, bool withLse, int layout, const std::string &module = "") {
    const int maxLen = *std::max_element(lens.begin(), lens.end());
    const int ps = pageSize ? pageSize : std::max(maxLen, 1);
    const int maxPages = pageSize ? (maxLen + ps - 1) / ps + 2 : 1; // two spare entries per row
    const Shape s{b, hq, hkv, sq, maxPages * ps};
    Inputs in = randomInputs(s, d, rng, dtype); // k, v: the dense [B, Hkv, Skv, D] the reference reads
    // The table: every used page of every sequence a distinct pool page, in shuffled order, except
    // sequence 1's first pages, which are sequence 0's (their keys copied in the dense inputs).
    std::vector<int32_t> table(size_t(b) * maxPages, 0);
    std::vector<std::pair<int, int>> owner; // pool page -> (sequence, page of it)
    const int shared = b > 1 ? std::min({2, (lens[0] + ps - 1) / ps, (lens[1] + ps - 1) / ps}) : 0;
    for (int seq = 0; seq < b; ++seq)
      for (int pg = 0; pg < (lens[seq] + ps - 1) / ps; ++pg)
        if (!(seq == 1 && pg < shared))
          owner.push_back({seq, pg});
    const int spare = 3;
    for (int i = 0; i < spare; ++i)
      owner.push_back({-1, -1});
    std::shuffle(owner.begin(), owner.end(), rng);
    const int numPages = static_cast<int>(owner.size());
    std::uniform_int_distribution<int32_t> poisonId(numPages + 1000, std::numeric_limits<int32_t>::max());
    for (int32_t &e : table)
      e = pageSize ? poisonId(rng) : 0;
    for (int id = 0; id < numPages; ++id)
      if (owner[id].first >= 0)
        table[size_t(owner[id].first) * maxPages + owner[id].second] = id;
    for (int pg = 0; pg < shared; ++pg)
      table[size_t(maxPages) + pg] = table[pg];
    // Sequence 1's shared keys are sequence 0's.
    for (int h = 0; h < hkv && shared; ++h)
      for (int j = 0; j < shared * ps; ++j)
        for (int x = 0; x < d; ++x) {
          size_t from = ((size_t(0) * hkv + h) * s.skv + j) * d + x, to = ((size_t(1) * hkv + h) * s.skv + j) * d + x;
          in.k[to] = in.k[from], in.kf[to] = in.kf[from], in.v[to] = in.v[from], in.vf[to] = in.vf[from];
        }

    // The cache in memory: large finite keys and values wherever no used key lands (spare pages, rows
    // past a length), which must weigh exactly 0.
    const uint16_t garbage = encode16(9000.f, dtype);
    std::vector<uint16_t> kMem, vMem;
    std::vector<int64_t> kvShape, kvStrides;
    if (pageSize) {
      kvShape = {numPages, hkv, ps, d};
      kvStrides = layout == 0 ? std::vector<int64_t>{int64_t(ps) * hkv * d, d, int64_t(hkv) * d, 1}
                              : std::vector<int64_t>{int64_t(hkv) * ps * d, int64_t(ps) * d, d, 1};
    } else {
      kvShape = {b, hkv, s.skv, d};
      kvStrides = {int64_t(hkv) * s.skv * d, int64_t(s.skv) * d, d, 1};
    }
    kMem.assign(size_t(kvShape[0]) * hkv * kvShape[2] * d, garbage);
    vMem = kMem;
    for (int seq = 0; seq < b; ++seq)
      for (int j = 0; j < lens[seq]; ++j) {
        const int64_t page = pageSize ? table[size_t(seq) * maxPages + j / ps] : seq, row = pageSize ? j % ps : j;
        for (int h = 0; h < hkv; ++h)
          for (int x = 0; x < d; ++x) {
            size_t from = ((size_t(seq) * hkv + h) * s.skv + j) * d + x;
            size_t to = page * kvStrides[0] + h * kvStrides[1] + row * kvStrides[2] + x;
            kMem[to] = in.k[from];
            vMem[to] = in.v[from];
          }
      }
    auto dq = rt::DeviceBuffer::fromHost(*ctx, in.q);
    auto dk = rt::DeviceBuffer::fromHost(*ctx, kMem), dv = rt::DeviceBuffer::fromHost(*ctx, vMem);
    auto dtable = rt::DeviceBuffer::fromHost(*ctx, table);
    std::vector<int32_t> lens32(lens.begin(), lens.end());
    auto dlens = rt::DeviceBuffer::fromHost(*ctx, lens32);
    auto dout = poisoned(in.q.size() * 2);
    auto dlse = poisoned(size_t(b) * hq * sq * 4);
    TensorView q{dq.ptr(), dtype, {b, hq, sq, d}, {}};
    TensorView k{dk.ptr(), dtype, kvShape, kvStrides};
    TensorView v{dv.ptr(), dtype, kvShape, kvStrides};
    TensorView out{dout.ptr(), dtype, {b, hq, sq, d}, {}};
    if (withLse)
      opt.lse = TensorView{dlse.ptr(), DType::F32, {b, hq, sq}, {}};
    opt.kvLens = TensorView{dlens.ptr(), DType::I32, {b}, {}};
    if (pageSize)
      opt.pageTable = TensorView{dtable.ptr(), DType::I32, {b, maxPages}, {}};
    opt.module = module;
    flare::attention(*cache, q, k, v, out, opt);
    ctx->synchronize();

    AttentionPlan plan = planAttention(q, k, v, out, opt);
    reference::AttentionProblem p{b, hq, hkv, sq, s.skv, d, in.qf.data(), in.kf.data(), in.vf.data(), {}, lens, {}, {}};
    reference::AttentionResult ref = reference::attentionReference(plan.module, p);
    std::vector<float> lse;
    if (withLse)
      lse = dlse.toHost<float>(size_t(b) * hq * sq);
    expectMatches(dout.toHost<uint16_t>(in.q.size()), {int64_t(hq) * sq * d, int64_t(sq) * d, d, 1}, s, d, ref,
                  withLse ? &lse : nullptr, dtype);
  }

  /// flare::attention on packed variable-length sequences: query and key lengths `lensQ`, `lensK`,
  /// packed with `spare` unused rows after the last sequence (which must keep their poison), `layout`
  /// 0: [1, H, total, D] memory, 1: [total, H, D] (FlashAttention's varlen layout).
  void runPacked(int hq, int hkv, const std::vector<int> &lensQ, const std::vector<int> &lensK, int d,
                 AttentionOptions opt, bool withLse, int layout, const std::string &module = "") {
    const int b = static_cast<int>(lensQ.size()), spare = 7;
    std::vector<int> cuQ = {0}, cuK = {0};
    for (int i = 0; i < b; ++i) {
      cuQ.push_back(cuQ.back() + lensQ[i]);
      cuK.push_back(cuK.back() + lensK[i]);
    }
    const int totalQ = cuQ.back() + spare, totalK = cuK.back() + spare;
    const Shape s{1, hq, hkv, totalQ, totalK};
    Inputs in = randomInputs(s, d, rng, dtype);
    auto strides = [&](int h, int rows) -> std::vector<int64_t> {
      if (layout == 0)
        return {int64_t(h) * rows * d, int64_t(rows) * d, d, 1};
      return {int64_t(rows) * h * d, d, int64_t(h) * d, 1};
    };
    auto toMemory = [&](const std::vector<uint16_t> &dense, int h, int rows) {
      std::vector<uint16_t> mem(dense.size());
      auto st = strides(h, rows);
      for (int hh = 0; hh < h; ++hh)
        for (int i = 0; i < rows; ++i)
          for (int x = 0; x < d; ++x)
            mem[hh * st[1] + i * st[2] + x] = dense[(size_t(hh) * rows + i) * d + x];
      return mem;
    };
    auto dq = rt::DeviceBuffer::fromHost(*ctx, toMemory(in.q, hq, totalQ));
    auto dk = rt::DeviceBuffer::fromHost(*ctx, toMemory(in.k, hkv, totalK));
    auto dv = rt::DeviceBuffer::fromHost(*ctx, toMemory(in.v, hkv, totalK));
    std::vector<int32_t> cuQ32(cuQ.begin(), cuQ.end()), cuK32(cuK.begin(), cuK.end());
    auto dcuQ = rt::DeviceBuffer::fromHost(*ctx, cuQ32), dcuK = rt::DeviceBuffer::fromHost(*ctx, cuK32);
    auto dout = poisoned(in.q.size() * 2);
    auto dlse = poisoned(size_t(hq) * totalQ * 4);
    TensorView q{dq.ptr(), dtype, {1, hq, totalQ, d}, strides(hq, totalQ)};
    TensorView k{dk.ptr(), dtype, {1, hkv, totalK, d}, strides(hkv, totalK)};
    TensorView v{dv.ptr(), dtype, {1, hkv, totalK, d}, strides(hkv, totalK)};
    TensorView out{dout.ptr(), dtype, {1, hq, totalQ, d}, strides(hq, totalQ)};
    if (withLse)
      opt.lse = TensorView{dlse.ptr(), DType::F32, {1, hq, totalQ}, {}};
    opt.cuSeqlensQ = TensorView{dcuQ.ptr(), DType::I32, {b + 1}, {}};
    opt.cuSeqlensK = TensorView{dcuK.ptr(), DType::I32, {b + 1}, {}};
    opt.maxSeqlenQ = std::max(1, *std::max_element(lensQ.begin(), lensQ.end()));
    opt.maxSeqlenK = std::max(1, *std::max_element(lensK.begin(), lensK.end()));
    opt.module = module;
    flare::attention(*cache, q, k, v, out, opt);
    ctx->synchronize();

    AttentionPlan plan = planAttention(q, k, v, out, opt);
    reference::AttentionProblem p{b, hq, hkv, totalQ, totalK, d, in.qf.data(), in.kf.data(), in.vf.data(), {}, {},
                                  cuQ, cuK};
    reference::AttentionResult ref = reference::attentionReference(plan.module, p);
    const std::vector<uint16_t> got = dout.toHost<uint16_t>(in.q.size());
    const std::vector<float> lse = withLse ? dlse.toHost<float>(size_t(hq) * totalQ) : std::vector<float>{};
    const std::vector<int64_t> os = strides(hq, totalQ);
    uint16_t poison16;
    std::memset(&poison16, kPoisonByte, sizeof poison16);
    float poison32;
    std::memset(&poison32, kPoisonByte, sizeof poison32);
    double worst = 0;
    for (int h = 0; h < hq; ++h)
      for (int t = 0; t < totalQ; ++t) {
        const size_t row = size_t(h) * totalQ + t;
        const bool inSequence = t < cuQ.back();
        const bool noKey = inSequence && std::isinf(ref.lse[row]);
        for (int x = 0; x < d; ++x) {
          const uint16_t bits = got[h * os[1] + t * os[2] + x];
          if (!inSequence) {
            ASSERT_EQ(bits, poison16) << "row " << t << " of head " << h << " lies outside every sequence and was written";
            continue;
          }
          const float o = decode16(bits, dtype);
          const double want = ref.out[row * d + x];
          ASSERT_FALSE(std::isnan(o)) << "NaN at head " << h << " row " << t << " col " << x;
          if (noKey) {
            ASSERT_EQ(o, 0.f) << "a row that sees no key must be 0 (head " << h << " row " << t << ")";
          }
          ASSERT_NEAR(o, want, 2e-2 + 1e-2 * std::fabs(want)) << "head " << h << " row " << t << " col " << x;
          worst = std::max(worst, std::fabs(o - want));
        }
        if (!withLse)
          continue;
        const float l = lse[row];
        if (!inSequence)
          ASSERT_EQ(std::memcmp(&l, &poison32, sizeof l), 0) << "LSE row " << t << " outside every sequence was written";
        else if (noKey)
          ASSERT_TRUE(std::isinf(l) && l < 0) << "LSE of a row that sees no key must be -inf, got " << l;
        else
          ASSERT_NEAR(l, ref.lse[row], 2e-3 + 1e-4 * std::fabs(ref.lse[row])) << "LSE head " << h << " row " << t;
      }
    std::printf("      %d sequences, D=%d: worst |O - ref| %.4f\n", b, d, worst);
  }

  DType dtype = DType::BF16; ///< element type of q, k, v and out
};

// The same caches and packed sequences compiled for sm_80 (mma.sync, K and V through registers; run
// by the driver on newer GPUs): the table and offset reads there are the register path's.
TEST_F(AttentionApi, CachesAndPackedSequencesOnTheMmaSyncPath) {
  if (ctx->ccMajor() <= 8)
    GTEST_SKIP() << "this device's own architecture is sm_80-class: the other tests cover it";
  AttentionOptions causal;
  causal.causal = true;
  causal.alignment = CausalAlignment::BottomRight;
  causal.arch = "sm_80";
  for (int d : {64, 128})
    for (int pageSize : {16, 64, 0}) {
      SCOPED_TRACE("sm_80, D = " + std::to_string(d) + ", page size " + std::to_string(pageSize));
      std::printf("[ paged sm_80 ] D = %d, page size %d\n", d, pageSize);
      runPaged(3, 8, 2, 3, {333, 0, 70}, pageSize, d, causal, /*withLse=*/true, /*layout=*/d == 64 ? 0 : 1);
      if (HasFatalFailure())
        return;
    }
  AttentionOptions packed;
  packed.causal = true;
  packed.arch = "sm_80";
  for (int d : {64, 128}) {
    SCOPED_TRACE("sm_80 packed, D = " + std::to_string(d));
    std::printf("[ varlen sm_80 ] D = %d\n", d);
    runPacked(4, 2, {300, 0, 1, 77}, {300, 0, 1, 77}, d, packed, /*withLse=*/true, /*layout=*/1);
    if (HasFatalFailure())
      return;
  }
}

// flare::appendKV: new rows land at position kvLens[b] + i of each sequence, in the page the table
// names, in both cache layouts and page sizes 16 and 64, for 1 to 70 new rows (runs that cross
// pages); every other byte of the caches is unchanged, and rows past the table's end are not written.
TEST_F(AttentionApi, AppendedRowsLandWhereTheTableSays) {
  const int d = 128, hkv = 2, b = 3, maxPages = 6;
  for (int pageSize : {16, 64})
    for (int rows : {1, 5, 70})
      for (int layout : {0, 1}) {
        SCOPED_TRACE("page size " + std::to_string(pageSize) + ", " + std::to_string(rows) + " new rows, layout " +
                     std::to_string(layout));
        std::printf("[ append ] page size %d, %d new rows, layout %d\n", pageSize, rows, layout);
        const int numPages = b * maxPages + 2;
        // Sequence b's table: distinct pages of a shuffled pool.
        std::vector<int32_t> pool(numPages);
        for (int i = 0; i < numPages; ++i)
          pool[i] = i;
        std::shuffle(pool.begin(), pool.end(), rng);
        std::vector<int32_t> table(pool.begin(), pool.begin() + b * maxPages);
        // Lengths: empty, mid-page, and near the table's end (its last rows fall off it).
        std::vector<int32_t> lens = {0, pageSize + 3, maxPages * pageSize - 2};
        std::vector<int64_t> shape = {numPages, hkv, pageSize, d};
        std::vector<int64_t> strides = layout == 0 ? std::vector<int64_t>{int64_t(pageSize) * hkv * d, d, int64_t(hkv) * d, 1}
                                                   : std::vector<int64_t>{int64_t(hkv) * pageSize * d, int64_t(pageSize) * d, d, 1};
        std::uniform_int_distribution<int> bits(0, 0x7f7f);
        auto randomBits = [&](size_t n) {
          std::vector<uint16_t> x(n);
          for (uint16_t &e : x)
            e = static_cast<uint16_t>(bits(rng));
          return x;
        };
        const size_t cacheElems = size_t(numPages) * hkv * pageSize * d, newElems = size_t(b) * hkv * rows * d;
        std::vector<uint16_t> kCache = randomBits(cacheElems), vCache = randomBits(cacheElems);
        std::vector<uint16_t> kNew = randomBits(newElems), vNew = randomBits(newElems);
        auto dkc = rt::DeviceBuffer::fromHost(*ctx, kCache), dvc = rt::DeviceBuffer::fromHost(*ctx, vCache);
        auto dkn = rt::DeviceBuffer::fromHost(*ctx, kNew), dvn = rt::DeviceBuffer::fromHost(*ctx, vNew);
        auto dtable = rt::DeviceBuffer::fromHost(*ctx, table), dlens = rt::DeviceBuffer::fromHost(*ctx, lens);
        appendKV(*cache, TensorView{dkn.ptr(), dtype, {b, hkv, rows, d}, {}},
                 TensorView{dvn.ptr(), dtype, {b, hkv, rows, d}, {}}, TensorView{dkc.ptr(), dtype, shape, strides},
                 TensorView{dvc.ptr(), dtype, shape, strides}, TensorView{dlens.ptr(), DType::I32, {b}, {}},
                 TensorView{dtable.ptr(), DType::I32, {b, maxPages}, {}});
        ctx->synchronize();
        // The expected caches: the host copies with the new rows written where the table says.
        for (int seq = 0; seq < b; ++seq)
          for (int i = 0; i < rows; ++i) {
            const int pos = lens[seq] + i;
            if (pos >= maxPages * pageSize)
              continue; // past the table: not written
            const int64_t page = table[size_t(seq) * maxPages + pos / pageSize], row = pos % pageSize;
            for (int h = 0; h < hkv; ++h)
              for (int x = 0; x < d; ++x) {
                const size_t from = ((size_t(seq) * hkv + h) * rows + i) * d + x;
                const size_t to = page * strides[0] + h * strides[1] + row * strides[2] + x;
                kCache[to] = kNew[from];
                vCache[to] = vNew[from];
              }
          }
        const std::vector<uint16_t> gotK = dkc.toHost<uint16_t>(cacheElems), gotV = dvc.toHost<uint16_t>(cacheElems);
        size_t wrongK = 0, wrongV = 0;
        for (size_t i = 0; i < cacheElems; ++i) {
          wrongK += gotK[i] != kCache[i];
          wrongV += gotV[i] != vCache[i];
        }
        ASSERT_EQ(wrongK, 0u) << "elements of the K cache differ from the expected";
        ASSERT_EQ(wrongV, 0u) << "elements of the V cache differ from the expected";
      }
}

// Packed variable-length sequences (cu_seqlens): ragged lengths with zero-length and one-token
// sequences, queries and keys of different lengths, GQA, both memory layouts, causal (per sequence,
// top-left and bottom-right) with the LSE, also from persistent CTAs taking their instances from a
// shared counter, a sliding window with a softcap, and a custom module whose score_mod reads the
// sequence's own lengths; rows after the last sequence must keep their poison (blocks wholly inside a
// sequence are stored through the view of every packed row, its last block through its own rows).
TEST_F(AttentionApi, PackedSequencesMatchTheFloat64Reference) {
  AttentionOptions causal;
  causal.causal = true;
  AttentionOptions bottomRight = causal;
  bottomRight.alignment = CausalAlignment::BottomRight;
  AttentionOptions window;
  window.windowLeft = 100;
  window.windowRight = 10;
  window.softcap = 30.f;
  AttentionOptions custom;
  // Persistent CTAs that take the (sequence, head, block) instances from a shared counter, heaviest
  // first, beside a producer warpgroup (tile.persistent = 2).
  AttentionOptions counter = causal;
  counter.tile.persistent = 2;
  counter.tile.producer = 1;
  struct Case {
    int hq, hkv;
    std::vector<int> lensQ, lensK;
  };
  const std::vector<Case> cases = pickShapes<Case>(
      {{8, 2, {300, 0, 1, 1000, 77, 129}, {300, 0, 1, 1000, 77, 129}},
       {4, 4, {5, 200, 1, 64}, {700, 333, 17, 0}},
       {4, 1, {2000, 3}, {2100, 3}}},
      {{8, 2, {300, 0, 1, 77}, {300, 0, 1, 77}}, {4, 4, {5, 200, 1}, {700, 333, 0}}});
  for (int d : {64, 128, 256}) {
    const std::string t = "tensor<?x?x?x" + std::to_string(d) + "xbf16>";
    // A bias by the distance of the query from its sequence's last query (attn.q_len per sequence).
    const std::string module =
        "func.func @biased(%q: " + t + ", %k: " + t + ", %v: " + t +
        ", %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> " + t + " {\n" +
        "  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>) score_mod {\n"
        "  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %j: index):\n"
        "    %n = attn.q_len\n"
        "    %back = arith.subi %n, %qi : index\n"
        "    %i = arith.index_cast %back : index to i32\n"
        "    %f = arith.sitofp %i : i32 to f32\n"
        "    %w = arith.constant 0.002 : f32\n"
        "    %bias = arith.mulf %f, %w : f32\n"
        "    %y = arith.addf %s, %bias : f32\n"
        "    attn.yield %y : f32\n"
        "  } : " + t + ", " + t + ", " + t + " -> " + t + "\n"
        "  return %o : " + t + "\n}\n";
    for (const Case &c : cases)
      for (const AttentionOptions *base : {&causal, &bottomRight, &window, &custom, &counter}) {
        const int layout = (d / 64 + static_cast<int>(c.lensQ.size())) % 2;
        const char *what = base == &causal        ? "causal + LSE"
                           : base == &bottomRight ? "causal bottom-right"
                           : base == &window      ? "window (100, 10), softcap"
                           : base == &counter     ? "causal + LSE, instances from a shared counter"
                                                  : "custom";
        std::string lens;
        for (size_t i = 0; i < c.lensQ.size(); ++i)
          lens += (i ? "," : "") + std::to_string(c.lensQ[i]) + "x" + std::to_string(c.lensK[i]);
        SCOPED_TRACE("D = " + std::to_string(d) + ", Hq/Hkv " + std::to_string(c.hq) + "/" + std::to_string(c.hkv) +
                     ", lengths " + lens + ", layout " + std::to_string(layout) + ", " + what);
        std::printf("[ varlen ] D = %d, lengths %s, %s\n", d, lens.c_str(), what);
        runPacked(c.hq, c.hkv, c.lensQ, c.lensK, d, *base, /*withLse=*/base == &causal || base == &counter, layout,
                  base == &custom ? module : "");
        if (HasFatalFailure())
          return;
      }
  }
}

// Paged KV caches and per-sequence lengths: random page tables (shuffled pools, a shared prefix,
// partially filled last pages, bad entries past each sequence's pages and huge values in unused rows),
// sequences of 0, 1 and hundreds of keys, 1 to 16 queries, GQA ratios 1, 4 and 8, page sizes 16, 64
// and 256, both cache layouts, causal bottom-right with the LSE, a softcap, and a custom module whose
// score_mod reads attn.kv_len (each sequence's own), with the keys split (by the rule, forced to 5
// parts) and not.
TEST_F(AttentionApi, PagedCachesMatchTheFloat64Reference) {
  AttentionOptions causal;
  causal.causal = true;
  causal.alignment = CausalAlignment::BottomRight;
  AttentionOptions softcap;
  softcap.softcap = 30.f;
  softcap.tile.kvSplits = 1;
  AttentionOptions custom;
  custom.tile.kvSplits = 5;
  struct Case {
    int b, hq, hkv, sq;
    std::vector<int> lens;
  };
  // Decoding (1-16 queries: split keys, packed GQA; 9 x 8 KV heads: packed, not split) and prefill
  // (200 queries: the contiguous cache's tiles, whose blocks of keys span several pages of 16 or 64:
  // row pieces).
  const std::vector<Case> cases = pickShapes<Case>(
      {{4, 8, 2, 1, {700, 333, 0, 1}}, {3, 8, 1, 5, {1000, 64, 17}}, {2, 4, 4, 16, {129, 517}},
       {9, 32, 8, 1, {300, 17, 0, 1, 129, 64, 250, 33, 200}}, {2, 4, 2, 200, {777, 201}}},
      {{4, 8, 2, 1, {300, 133, 0, 1}}, {2, 4, 4, 16, {129, 200}}, {9, 32, 8, 1, {300, 17, 0, 1, 129, 64, 250, 33, 200}},
       {2, 4, 2, 200, {333, 201}}});
  for (int d : {64, 128, 256}) {
    const std::string t = "tensor<?x?x?x" + std::to_string(d) + "xbf16>";
    for (int pageSize : {16, 64, 256, 0}) {
      // A distance bias from each sequence's last key (attn.kv_len is the sequence's length).
      const std::string kv =
          pageSize ? "tensor<?x?x" + std::to_string(pageSize) + "x" + std::to_string(d) + "xbf16>" : t;
      const std::string module =
          "func.func @biased(%q: " + t + ", %k: " + kv + ", %v: " + kv + ", %lens: tensor<?xi32>" +
          (pageSize ? ", %pages: tensor<?x?xi32>" : "") + ") -> " + t + " {\n" +
          "  %o = attn.attention %q, %k, %v kv_lens(%lens : tensor<?xi32>)" +
          (pageSize ? " page_table(%pages : tensor<?x?xi32>)" : "") +
          " score_mod {\n"
          "  ^bb0(%s: f32, %b: index, %h: index, %qi: index, %j: index):\n"
          "    %n = attn.kv_len\n"
          "    %back = arith.subi %n, %j : index\n"
          "    %i = arith.index_cast %back : index to i32\n"
          "    %f = arith.sitofp %i : i32 to f32\n"
          "    %w = arith.constant -0.01 : f32\n"
          "    %bias = arith.mulf %f, %w : f32\n"
          "    %y = arith.addf %s, %bias : f32\n"
          "    attn.yield %y : f32\n"
          "  } : " + t + ", " + kv + ", " + kv + " -> " + t + "\n"
          "  return %o : " + t + "\n}\n";
      for (const Case &c : cases)
        for (const AttentionOptions *base : {&causal, &softcap, &custom}) {
          const int layout = (d / 64 + c.sq) % 2;
          const char *what = base == &causal ? "causal bottom-right + LSE" : base == &softcap ? "softcap" : "custom";
          std::string lens;
          for (int n : c.lens)
            lens += (lens.empty() ? "" : ",") + std::to_string(n);
          SCOPED_TRACE("D = " + std::to_string(d) + ", page size " + std::to_string(pageSize) + ", B=" +
                       std::to_string(c.b) + " Hq=" + std::to_string(c.hq) + " Hkv=" + std::to_string(c.hkv) +
                       " Sq=" + std::to_string(c.sq) + " lens " + lens + ", layout " + std::to_string(layout) + ", " +
                       what);
          std::printf("[ paged ] D = %d, page size %d, lens %s, Sq %d, Hq/Hkv %d/%d, %s\n", d, pageSize, lens.c_str(),
                      c.sq, c.hq, c.hkv, what);
          runPaged(c.b, c.hq, c.hkv, c.sq, c.lens, pageSize, d, *base, /*withLse=*/base == &causal, layout,
                   base == &custom ? module : "");
          if (HasFatalFailure())
            return;
        }
    }
  }
}

TEST_F(AttentionApi, OptionsMatchTheFloat64Reference) {
  struct Variant {
    const char *name;
    AttentionOptions opt;
    bool lse;
  };
  std::vector<Variant> variants;
  variants.push_back({"plain", {}, true});
  {
    AttentionOptions o;
    o.causal = true;
    variants.push_back({"causal", o, false});
    o.alignment = CausalAlignment::BottomRight;
    variants.push_back({"causal bottom-right", o, true});
  }
  {
    AttentionOptions o;
    o.windowLeft = 100;
    o.windowRight = 30;
    variants.push_back({"window (100, 30)", o, true});
    o.causal = true;
    o.softcap = 50.f;
    o.scale = 0.3f;
    variants.push_back({"causal window 100, softcap 50, scale 0.3", o, true});
  }
  {
    // One bound only: every key from 100 before the diagonal on (the blocks before the band are
    // skipped, the rest run unmasked), and every key up to 30 after it.
    AttentionOptions o;
    o.windowLeft = 100;
    variants.push_back({"window (100, unbounded)", o, true});
    o.windowLeft = -1;
    o.windowRight = 30;
    variants.push_back({"window (unbounded, 30)", o, false});
  }
  for (const Variant &var : variants)
    for (int d : {64, 128, 256})
      // 333 x 477: a short launch (causal at head dim 64 takes its 64 x 64 tiles, launchTileConfig).
      for (Shape s : pickShapes<Shape>({{2, 4, 2, 17, 1000}, {1, 4, 1, 1000, 17}, {1, 2, 2, 1, 1}, {1, 3, 1, 333, 477}},
                                       {{1, 2, 2, 1, 1}, {1, 3, 1, 333, 477}})) {
        SCOPED_TRACE(std::string(var.name) + ", D = " + std::to_string(d) + ", " + describe(s));
        std::printf("[ attention ] %s\n", var.name);
        run(s, d, var.opt, var.lse, /*layout=*/0);
        if (HasFatalFailure())
          return;
      }
}

// Decoding shapes: one to a few queries per sequence against many keys, GQA and MQA, where the
// program instances cannot fill the GPU and flare::attention splits the keys by itself (tile.kvSplits
// = 0), and with the parts forced: 1 (no split), 7, and 64 (more parts than some calls have key
// blocks: empty parts). Both memory layouts, with and without the LSE, causal bottom-right and a
// softcap.
TEST_F(AttentionApi, DecodingSplitsTheKeysAndMatchesTheFloat64Reference) {
  AttentionOptions causal;
  causal.causal = true;
  causal.alignment = CausalAlignment::BottomRight;
  AttentionOptions softcap;
  softcap.softcap = 30.f;
  for (int d : {64, 128, 256})
    for (int parts : {0, 1, 7, 64})
      for (Shape s : pickShapes<Shape>({{1, 32, 8, 1, 4097}, {2, 8, 1, 4, 1000}, {3, 4, 4, 16, 2049}, {1, 16, 2, 1, 130}},
                                       {{1, 32, 8, 1, 4097}})) {
        for (const AttentionOptions *base : {&causal, &softcap}) {
          AttentionOptions opt = *base;
          opt.tile.kvSplits = parts;
          SCOPED_TRACE("D = " + std::to_string(d) + ", kvSplits = " + std::to_string(parts) + ", " + describe(s) +
                       (base == &causal ? ", causal bottom-right" : ", softcap"));
          std::printf("[ decode ] D = %d, kvSplits = %d, %s\n", d, parts, describe(s).c_str());
          run(s, d, opt, /*withLse=*/base == &causal, /*layout=*/parts % 2);
          if (HasFatalFailure())
            return;
        }
      }
}

// Warm calls are graph-capturable: captured on a stream in the driver's global capture mode (which
// fails any allocation or synchronisation made while capturing), then replayed twice on fresh
// inputs written into the captured buffers, outputs and LSEs poisoned before each replay, against
// the float64 reference. A decoding call whose keys split by themselves (the parts, the combine and
// the stream's workspace), one of forced parts (20: two combine steps, parts with no key), and a
// persistent launch whose last instances split between CTAs (the hand-over's flags, which each
// launch must leave as the next one needs them).
TEST_F(AttentionApi, WarmCallsReplayFromACudaGraph) {
  GraphDriver drv;
  ASSERT_TRUE(drv.missing.empty()) << "libcuda has no " << drv.missing;
  void *stream = nullptr;
  ASSERT_EQ(drv.streamCreate(&stream, /*CU_STREAM_NON_BLOCKING*/ 1), 0);
  struct Case {
    const char *what;
    Shape s;
    int d, kvSplits;
    bool causal;
  };
  const std::vector<Case> cases = {{"decoding, parts by the shape", {1, 32, 8, 1, 4097}, 128, 0, true},
                                   {"decoding, 20 parts", {2, 8, 1, 4, 1000}, 64, 20, false},
                                   {"split instances", {1, 17, 17, 1000, 2000}, 128, 0, false}};
  for (const Case &c : pickShapes(cases, {cases[0]})) {
    SCOPED_TRACE(c.what);
    const Shape &s = c.s;
    const int d = c.d;
    Inputs in = randomInputs(s, d, rng);
    auto dq = rt::DeviceBuffer::fromHost(*ctx, in.q), dk = rt::DeviceBuffer::fromHost(*ctx, in.k),
         dv = rt::DeviceBuffer::fromHost(*ctx, in.v);
    auto dout = poisoned(in.q.size() * 2), dlse = poisoned(size_t(s.b) * s.hq * s.sq * 4);
    const std::vector<int64_t> qs = {int64_t(s.hq) * s.sq * d, int64_t(s.sq) * d, d, 1},
                               ks = {int64_t(s.hkv) * s.skv * d, int64_t(s.skv) * d, d, 1};
    TensorView q{dq.ptr(), DType::BF16, {s.b, s.hq, s.sq, d}, qs}, k{dk.ptr(), DType::BF16, {s.b, s.hkv, s.skv, d}, ks},
        v{dv.ptr(), DType::BF16, {s.b, s.hkv, s.skv, d}, ks}, out{dout.ptr(), DType::BF16, {s.b, s.hq, s.sq, d}, qs};
    AttentionOptions opt;
    opt.causal = c.causal;
    opt.alignment = CausalAlignment::BottomRight;
    opt.tile.kvSplits = c.kvSplits;
    opt.lse = TensorView{dlse.ptr(), DType::F32, {s.b, s.hq, s.sq}, {}};
    // The warm-up call compiles and sizes the stream's workspaces; the captured one must do neither.
    flare::attention(*cache, q, k, v, out, opt, stream);
    ASSERT_EQ(drv.streamSynchronize(stream), 0);
    GraphDriver::Graph graph;
    const std::string failed = drv.capture(stream, [&] { flare::attention(*cache, q, k, v, out, opt, stream); }, graph);
    ASSERT_TRUE(failed.empty()) << failed;
    AttentionPlan plan = planAttention(q, k, v, out, opt);
    for (int replay = 0; replay < 2; ++replay) {
      in = randomInputs(s, d, rng);
      dq.upload(in.q.data(), dq.bytes());
      dk.upload(in.k.data(), dk.bytes());
      dv.upload(in.v.data(), dv.bytes());
      dout.fillBytes(kPoisonByte);
      dlse.fillBytes(kPoisonByte);
      ctx->synchronize();
      ASSERT_EQ(drv.launch(graph.exec, stream), 0);
      ASSERT_EQ(drv.streamSynchronize(stream), 0);
      std::printf("[ graph ] %s, replay %d: %s\n", c.what, replay, describe(s).c_str());
      reference::AttentionProblem p{s.b, s.hq, s.hkv, s.sq, s.skv, d, in.qf.data(), in.kf.data(), in.vf.data(),
                                    {}, {}, {}, {}};
      std::vector<float> lse = dlse.toHost<float>(size_t(s.b) * s.hq * s.sq);
      expectMatches(dout.toHost<uint16_t>(in.q.size()), qs, s, d, reference::attentionReference(plan.module, p), &lse);
      if (HasFatalFailure())
        break;
    }
    if (HasFatalFailure())
      break;
  }
  drv.streamDestroy(stream);
}

TEST_F(AttentionApi, SplitInstancesMatchTheFloat64Reference) {
  // Head dim 128 without a mask: the persistent kernel splits the KV steps of the last program
  // instances between CTAs (tile.split_range) when there are more instances than CTAs, not a
  // multiple of them, and at least kSplitMinSteps (16) steps each. On the H200's 132 SMs: 17 heads
  // of 8 row blocks (136 instances: every CTA's range holds pieces) of 16 steps, the last one
  // partial; GQA with 144 instances of 17 steps, in the other memory layout (both all tail); 25
  // heads of 16 row blocks (400 instances: two whole rounds, then 136 instances' steps cut). Each
  // twice: a launch leaves the workspace's flags as the next one needs them.
  const Shape split1{1, 17, 17, 1000, 2000}, split2{2, 8, 2, 1100, 2100}, split3{1, 25, 25, 2000, 2100};
  // Small shapes: split1 once (the split kernel, and the flags it leaves, run again below).
  for (auto [s, layout] : pickShapes<std::pair<Shape, int>>({{split1, 0}, {split2, 1}, {split3, 0}, {split1, 1},
                                                             {split2, 0}, {split3, 1}},
                                                            {{split1, 0}})) {
    SCOPED_TRACE(describe(s));
    std::printf("[ attention ] split instances, %s\n", describe(s).c_str());
    run(s, 128, AttentionOptions{}, /*withLse=*/true, layout);
    if (HasFatalFailure())
      return;
  }
  // One kernel for all of them; a launch that would not split (8 steps) gets the kernel without the
  // hand-over's code, compiled once more; the split one is still there for the next long launch.
  EXPECT_EQ(cache->misses(), 1u);
  for (Shape s : {Shape{1, 17, 17, 1000, 1000}, split1}) {
    SCOPED_TRACE(describe(s));
    run(s, 128, AttentionOptions{}, /*withLse=*/true, /*layout=*/0);
    if (HasFatalFailure())
      return;
  }
  EXPECT_EQ(cache->misses(), 2u);
}

TEST_F(AttentionApi, AutotuningPicksACandidateAndKeepsIt) {
  AttentionOptions causal;
  causal.causal = true;
  // Small shapes: a class of its own (Sq, Skv in [256, 512), B x Hq = 2).
  const Shape tuned = smallShapes() ? Shape{1, 2, 1, 300, 300} : Shape{2, 4, 2, 1000, 1000},
              sameClass = smallShapes() ? Shape{1, 2, 1, 260, 280} : Shape{2, 4, 2, 900, 700};
  for (int d : {64, 128, 256}) {
    // Every configuration the tuner may pick computes the right thing.
    std::vector<AttentionTileConfig> candidates = autotuneCandidates(ctx->arch(), d);
    for (const AttentionTileConfig &c : candidates) {
      SCOPED_TRACE("candidate " + c.text() + ", D = " + std::to_string(d));
      std::printf("[ autotune  ] D = %d, candidate %s\n", d, c.text().c_str());
      AttentionOptions o = causal;
      o.tile = c;
      run(tuned, d, o, true, /*layout=*/0);
      if (HasFatalFailure())
        return;
    }
    // Autotuned: the choice is one of them, written to the cache directory and reused by a call of
    // the same class (Sq, Skv and B x Hq in the same powers of two) without compiling anything.
    AttentionOptions o = causal;
    o.autotune = true;
    o.lse = TensorView{0x40000000, DType::F32, {tuned.b, tuned.hq, tuned.sq}, {}};
    // The key of the shape class (planAttention needs no GPU memory: addresses far apart).
    TensorView fakeQ{0x10000000, dtype, {tuned.b, tuned.hq, tuned.sq, d}, {}};
    TensorView fakeKV{0x20000000, dtype, {tuned.b, tuned.hkv, tuned.skv, d}, {}};
    TensorView fakeOut{0x30000000, dtype, {tuned.b, tuned.hq, tuned.sq, d}, {}};
    const std::string key = autotuneKey(planAttention(fakeQ, fakeKV, fakeKV, fakeOut, o), ctx->arch(), ctx->name());
    o.lse = TensorView{};
    SCOPED_TRACE("autotuned, D = " + std::to_string(d) + ", key " + key);
    run(tuned, d, o, true, 0);
    std::optional<AttentionTileConfig> choice = autotunedConfig(key);
    ASSERT_TRUE(choice.has_value());
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), *choice), candidates.end()) << choice->text();
    std::printf("[ autotune  ] D = %d, causal, %s: chose %s\n", d, describe(tuned).c_str(), choice->text().c_str());
    std::ifstream file(cacheDir / "autotune-v1.tsv");
    std::stringstream text;
    text << file.rdbuf();
    EXPECT_NE(text.str().find(key + "\t" + choice->text() + "\t"), std::string::npos) << text.str();
    const size_t misses = cache->misses();
    run(sameClass, d, o, true, 0);
    EXPECT_EQ(cache->misses(), misses);
    if (HasFatalFailure())
      return;
  }
}

TEST_F(AttentionApi, Float16InputsMatchTheFloat64Reference) {
  dtype = DType::F16;
  AttentionOptions causal;
  causal.causal = true;
  for (int d : {64, 128, 256})
    for (Shape s : pickShapes<Shape>({{2, 4, 2, 17, 1000}, {1, 2, 1, 1000, 17}}, {{1, 2, 1, 17, 300}})) {
      SCOPED_TRACE("f16, D = " + std::to_string(d) + ", " + describe(s));
      std::printf("[ attention ] f16, plain with LSE and causal\n");
      run(s, d, {}, true, 0);
      run(s, d, causal, false, 0);
      if (HasFatalFailure())
        return;
    }
}

TEST_F(AttentionApi, StridedLayoutsAndCustomModules) {
  AttentionOptions causal;
  causal.causal = true;
  std::printf("[ attention ] [B, S, H, D] memory layout, causal\n");
  run({2, 4, 2, 300, 333}, 128, causal, true, /*layout=*/1);
  ASSERT_FALSE(HasFatalFailure());

  AttentionOptions alibi;
  alibi.module = readExample("attention/alibi.mlir");
  auto slopes = alibiSlopes(4);
  std::printf("[ attention ] custom module: alibi with an aux tensor\n");
  run({1, 4, 2, 129, 257}, 128, alibi, false, 1, {std::vector<double>(slopes.begin(), slopes.end())}, {DType::F32});
  ASSERT_FALSE(HasFatalFailure());

  // A custom mask that hides whole rows: query i sees nothing when i % 3 == 0 (a generic mask).
  AttentionOptions holes;
  holes.module = R"(
func.func @holes(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
      %c3 = arith.constant 3 : index
      %c0 = arith.constant 0 : index
      %r = arith.remui %qi, %c3 : index
      %keep = arith.cmpi ne, %r, %c0 : index
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
)";
  std::printf("[ attention ] custom module: fully masked rows\n");
  run({1, 2, 1, 100, 77}, 64, holes, true, 0);
}

// Masks whose index values leave 32 bits: the kernel must keep exactly the keys the op's 64-bit
// index arithmetic keeps (as the float64 reference does), whether the index ranges fold a comparison
// away, the generator computes the region in 64 bits, or the arithmetic wraps around.
TEST_F(AttentionApi, MasksWith64BitIndexValuesMatchTheReference) {
  auto module = [](const std::string &name, const std::string &body) {
    return "func.func @" + name + R"((%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v
    mask_mod {
    ^bb0(%b: index, %h: index, %qi: index, %kv: index):
)" + body + R"(
      attn.yield %keep : i1
    } : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
)";
  };
  struct Case {
    const char *what;
    std::string ir;
  };
  const std::vector<Case> cases = {
      // Causal and a left window of 2^63 - 1 keys (decided: always kept; 32 bits read it as -1).
      {"causal, left window 2^63 - 1", module("w_max", R"(
      %left = arith.constant 9223372036854775807 : index
      %lo = arith.subi %qi, %left : index
      %above = arith.cmpi sge, %kv, %lo : index
      %below = arith.cmpi sle, %kv, %qi : index
      %keep = arith.andi %below, %above : i1)")},
      // Causal and a left window of 2^32 keys (32 bits read it as 0: the diagonal only).
      {"causal, left window 2^32", module("w_2_32", R"(
      %left = arith.constant 4294967296 : index
      %lo = arith.subi %qi, %left : index
      %above = arith.cmpi sge, %kv, %lo : index
      %below = arith.cmpi sle, %kv, %qi : index
      %keep = arith.andi %below, %above : i1)")},
      // Causal written as 2^33 qi >= 2^33 kv: 64-bit products (in 32 bits both are 0: every key).
      {"causal in units of 2^33", module("scaled", R"(
      %c = arith.constant 8589934592 : index
      %x = arith.muli %qi, %c : index
      %y = arith.muli %kv, %c : index
      %keep = arith.cmpi sge, %x, %y : index)")},
      // kv <= qi + 2^63 - 1 wraps for qi >= 1: only row 0 keeps its keys, the others none.
      {"a bound that wraps around", module("wraps", R"(
      %big = arith.constant 9223372036854775807 : index
      %hi = arith.addi %qi, %big : index
      %keep = arith.cmpi sle, %kv, %hi : index)")},
      // 0 <= qi - kv < 300 through a zero-extension of the i32 difference (negative: 2^32 and up).
      {"window through a zero-extension", module("zext", R"(
      %q32 = arith.index_cast %qi : index to i32
      %k32 = arith.index_cast %kv : index to i32
      %d = arith.subi %q32, %k32 : i32
      %du = arith.index_castui %d : i32 to index
      %w = arith.constant 300 : index
      %keep = arith.cmpi slt, %du, %w : index)")},
  };
  for (const Case &c : cases)
    for (Shape s : {Shape{1, 2, 1, 777, 1000}, Shape{2, 2, 2, 130, 61}}) {
      SCOPED_TRACE(std::string(c.what) + ", " + describe(s));
      std::printf("[ attention ] 64-bit index mask: %s\n", c.what);
      AttentionOptions opt;
      opt.module = c.ir;
      run(s, 64, opt, /*withLse=*/true, /*layout=*/0);
      if (HasFatalFailure())
        return;
    }
}

// The shapes above launch a few programs each; the warpgroups of a CTA synchronise through mbarriers
// and named barriers whose races show only when programs compete for the SMs (two per SM at head dim
// 64) over many launches. A grid of several waves, launched repeatedly into poisoned outputs, must give
// the same bits every time (the kernels are deterministic), leave no element unwritten, and its first
// and last heads match the reference. A persistent kernel (head dims 128 and 256) runs the 512
// programs on one CTA per SM in pairs, the last round partial: head dim 128 is checked with and
// without its producer warpgroup and causal also from a shared counter (tile.persistent = 2: 64
// (head, batch) units in four groups, heaviest first in each), and each head dim with the other
// schedule too.
TEST_F(AttentionApi, ManyProgramsGiveTheSameBitsEveryLaunch) {
  // 8 row blocks x 16 heads x 4 = 512 programs, 1000 not a tile multiple. At 1000 keys the persistent
  // kernels without a mask run one program per CTA and turn (#attn.config without pair_instances), the
  // masked ones pairs of programs.
  // Small shapes: 8 row blocks x 4 heads = 32 programs (persistent kernels: fewer than the SMs, one
  // turn each), launched twice.
  const Shape s = smallShapes() ? Shape{1, 4, 4, 1000, 1000} : Shape{4, 16, 16, 1000, 1000};
  const int kLaunches = smallShapes() ? 2 : 25;
  enum Mask { Plain, Causal, Window };
  struct Variant {
    int d;
    Mask mask;
    int producer;   // AttentionTileConfig::producer
    int persistent; // AttentionTileConfig::persistent
  };
  std::vector<Variant> variants;
  for (int d : {64, 128, 256})
    for (Mask mask : {Plain, Causal, Window}) {
      variants.push_back({d, mask, 0, 0});
      if (d == 128) {
        variants.push_back({d, mask, 1, -1}); // the producer warpgroup in a kernel that is not persistent
        variants.push_back({d, mask, -1, 1}); // persistent without the producer warpgroup
        if (mask == Causal) // persistent, instances from a shared counter (heaviest first, 4 groups)
          variants.push_back({d, mask, 1, 2});
      } else if (mask == Plain) {
        variants.push_back({d, mask, 0, d == 64 ? 1 : -1}); // the other schedule than the configured one
      }
    }
  for (const Variant &variant : variants) {
      const int d = variant.d;
      const char *maskName = variant.mask == Plain ? "plain" : variant.mask == Causal ? "causal" : "window";
      SCOPED_TRACE("D = " + std::to_string(d) + ", " + maskName + ", producer " + std::to_string(variant.producer) +
                   ", persistent " + std::to_string(variant.persistent));
      Inputs in = randomInputs(s, d, rng);
      auto dq = rt::DeviceBuffer::fromHost(*ctx, in.q), dk = rt::DeviceBuffer::fromHost(*ctx, in.k),
           dv = rt::DeviceBuffer::fromHost(*ctx, in.v);
      const std::vector<int64_t> st = {int64_t(s.hq) * s.sq * d, int64_t(s.sq) * d, d, 1};
      TensorView q{dq.ptr(), DType::BF16, {s.b, s.hq, s.sq, d}, st}, k{dk.ptr(), DType::BF16, {s.b, s.hkv, s.skv, d}, st},
          v{dv.ptr(), DType::BF16, {s.b, s.hkv, s.skv, d}, st};
      AttentionOptions opt;
      opt.causal = variant.mask == Causal;
      if (variant.mask == Window) { // a band of 300 keys around the diagonal: two loops per program
        opt.windowLeft = 200;
        opt.windowRight = 100;
      }
      opt.tile.producer = variant.producer;
      opt.tile.persistent = variant.persistent;
      std::vector<uint16_t> first;
      for (int launch = 0; launch < kLaunches; ++launch) {
        auto dout = poisoned(in.q.size() * 2);
        flare::attention(*cache, q, k, v, TensorView{dout.ptr(), DType::BF16, {s.b, s.hq, s.sq, d}, st}, opt);
        ctx->synchronize();
        std::vector<uint16_t> got = dout.toHost<uint16_t>(in.q.size());
        if (launch == 0) {
          // Every element written: none is still the poison (a NaN) or any other non-finite value.
          size_t unwritten = 0;
          for (uint16_t bits : got)
            unwritten += (bits & 0x7f80u) == 0x7f80u;
          ASSERT_EQ(unwritten, 0u) << unwritten << " output elements are not finite (unwritten programs?)";
          first = std::move(got);
          continue;
        }
        size_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i)
          differ += got[i] != first[i];
        ASSERT_EQ(differ, 0u) << "launch " << launch << " differs from the first in " << differ << " elements";
      }
      // Heads 0 and 1 of batch 0 and the last two heads of the last batch against the float64
      // reference (problems of their own: their inputs are those heads' rows of q, k and v). The plan
      // only gives the module's text: q stands in for out.
      AttentionPlan plan = planAttention(q, k, v, q, opt);
      const Shape head{1, 2, 2, s.sq, s.skv};
      std::printf("[ attention ] %d launches of %d programs, D = %d, %s, producer %d, persistent %d\n", kLaunches,
                  8 * s.hq * s.b, d, maskName, variant.producer, variant.persistent);
      const size_t headElems = size_t(s.sq) * d;
      for (size_t firstHead : {size_t(0), size_t(s.b) * s.hq - 2}) {
        const size_t at = firstHead * headElems;
        reference::AttentionProblem p{1, 2, 2, s.sq, s.skv, d, in.qf.data() + at, in.kf.data() + at,
                                      in.vf.data() + at, {}, {}, {}, {}};
        std::vector<uint16_t> got(first.begin() + at, first.begin() + at + 2 * headElems);
        expectMatches(got, st, head, d, reference::attentionReference(plan.module, p), nullptr);
        if (HasFatalFailure())
          return;
      }
    }
}

// Every launch compiles one kernel on its first call (its configuration is decided before
// compiling): a launch too short to split the one without the stream-K hand-over. Up to 1024 keys
// that kernel also runs one query block per CTA and turn where it can (persistent, no mask). Where
// the configured kernel never splits and cannot run single instances (head dim 64, masks), short
// and long launches share one compiled kernel, whichever comes first. At head dims 128 and 256 a
// long launch needs the kernel whose CTAs take pairs (at 128 without the hand-over: 6 instances do
// not split).
TEST_F(AttentionApi, ShortLaunchesCompileOneKernelAndShareItWhereNothingSplits) {
  const Shape shortShape{1, 2, 2, 300, 300}, longShape{1, 2, 2, 300, 2100};
  AttentionOptions causal;
  causal.causal = true;
  struct Case {
    int d;
    AttentionOptions opt;
    bool shortFirst;
    size_t longMisses; // compiles of the long launch
  };
  for (const Case &c : {Case{64, {}, false, 1}, Case{256, {}, true, 1}, Case{128, causal, true, 0},
                        Case{128, {}, true, 1}}) {
    SCOPED_TRACE("D = " + std::to_string(c.d) + (c.opt.causal ? ", causal" : "") +
                 (c.shortFirst ? ", short launch first" : ", long launch first"));
    std::printf("[ attention ] compiles of short and long launches, D = %d%s\n", c.d, c.opt.causal ? ", causal" : "");
    const size_t before = cache->misses();
    for (bool isShort : {c.shortFirst, !c.shortFirst}) {
      const size_t misses = cache->misses();
      run(isShort ? shortShape : longShape, c.d, c.opt, /*withLse=*/false, /*layout=*/0);
      if (HasFatalFailure())
        return;
      const size_t expected = isShort ? (c.shortFirst ? 1 : 0) : c.shortFirst ? c.longMisses : 1;
      EXPECT_EQ(cache->misses() - misses, expected) << (isShort ? "short launch" : "long launch");
    }
    // Both again: nothing new.
    const size_t misses = cache->misses();
    run(shortShape, c.d, c.opt, false, 0);
    run(longShape, c.d, c.opt, false, 0);
    EXPECT_EQ(cache->misses(), misses);
    EXPECT_EQ(misses - before, c.shortFirst ? 1 + c.longMisses : 1);
  }
  // Another process (a fresh cache object on the same directory) finds both requests on disk.
  cache = std::make_unique<flare::rt::KernelCache>(*ctx, cacheDir.string());
  for (int d : {64, 256})
    for (const Shape &s : {shortShape, longShape})
      run(s, d, AttentionOptions{}, false, 0);
  EXPECT_EQ(cache->misses(), 0u);
}

TEST_F(AttentionApi, CompileTimeOfOneKernel) {
  // Cold: a fresh cache, so the IR is parsed, generated, compiled to PTX and loaded by the driver. A
  // scale no other test uses keeps the driver's own JIT cache (keyed by the PTX text) cold too.
  AttentionOptions opt;
  opt.causal = true;
  opt.scale = 0.0625f + 1e-6f * static_cast<float>(::getpid() % 1000);
  std::string ir = attentionModule(opt, DType::BF16, 128);
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  // As flare::attention compiles it (without the TMA fallback), then with the fallback.
  for (bool fallback : {false, true}) {
    CompileOptions options;
    options.arch = ctx->arch();
    options.tmaFallback = fallback;
    auto t0 = std::chrono::steady_clock::now();
    CompiledModule compiled = compileToPTX(ir, options, "causal");
    auto t1 = std::chrono::steady_clock::now();
    auto module = rt::Module::load(*ctx, compiled);
    auto t2 = std::chrono::steady_clock::now();
    EXPECT_GT(module->kernel("flare_attention").info().hint("attention.block_m"), 0);
    EXPECT_EQ(module->kernel("flare_attention").info().tmaRequired, !fallback && ctx->arch() == "sm_90a");
    std::printf("[ compile ] causal attention, D = 128, %s, %s: IR -> PTX %.1f ms, PTX -> loaded module %.1f ms, "
                "cold total %.1f ms\n",
                ctx->arch().c_str(), fallback ? "with the TMA fallback" : "as flare::attention compiles it",
                ms(t0, t1), ms(t1, t2), ms(t0, t2));
  }
  // Through the kernel cache: a miss (compile + store), then a hit from memory and one from disk.
  rt::KernelCache fresh(*ctx, (cacheDir / "compile-time").string());
  auto t3 = std::chrono::steady_clock::now();
  fresh.getOrCompile(ir);
  auto t4 = std::chrono::steady_clock::now();
  fresh.getOrCompile(ir);
  auto t5 = std::chrono::steady_clock::now();
  rt::KernelCache again(*ctx, (cacheDir / "compile-time").string());
  again.getOrCompile(ir);
  auto t6 = std::chrono::steady_clock::now();
  std::printf("[ compile ] kernel cache: miss %.1f ms, memory hit %.3f ms, disk hit + load %.1f ms\n", ms(t3, t4),
              ms(t4, t5), ms(t5, t6));
  EXPECT_EQ(again.hits(), 1u);
}

} // namespace
} // namespace flare::test
