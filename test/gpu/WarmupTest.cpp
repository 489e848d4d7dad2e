//===- WarmupTest.cpp - Warm-up on a GPU ----------------------------------===//
//
// After warm-up, the calls it describes compile nothing, in the same process and in a new one on the
// same directory; with autotune, every candidate is compiled ahead. Without a GPU every test skips and
// says why (test/fakecuda/ runs these tests on a stand-in driver, test/unit/WarmupTest.cpp checks what
// needs no device).
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "flare/Attention.h"
#include "flare/Warmup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace flare::test {
namespace {

using rt::CacheSource;

class Warmup : public GpuTest {};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// Device buffers for one call of a request's class (zeros; out and lse apart from the inputs).
struct CallBuffers {
  std::vector<rt::DeviceBuffer> buffers;
  TensorView q, k, v, out;
  AttentionOptions options;
};

CallBuffers buffersFor(rt::Context &ctx, const WarmupRequest &r) {
  CallBuffers c;
  auto view = [&](std::vector<int64_t> shape, DType dtype) {
    size_t bytes = dtypeBytes(dtype);
    for (int64_t d : shape)
      bytes *= static_cast<size_t>(d);
    c.buffers.emplace_back(ctx, bytes);
    c.buffers.back().fillBytes(0);
    return TensorView{c.buffers.back().ptr(), dtype, shape, {}};
  };
  c.q = view({r.batch, r.headsQ, r.seqQ, r.headDim}, r.dtype);
  c.k = view({r.batch, r.headsKV, r.seqKV, r.headDim}, r.dtype);
  c.v = view({r.batch, r.headsKV, r.seqKV, r.headDim}, r.dtype);
  c.out = view({r.batch, r.headsQ, r.seqQ, r.headDim}, r.dtype);
  c.options = r.options;
  if (r.lse)
    c.options.lse = view({r.batch, r.headsQ, r.seqQ}, DType::F32);
  for (const WarmupAux &a : r.aux)
    c.options.aux.push_back(view({a.length}, a.dtype));
  return c;
}

/// flare::attention on zeros for a call of the request's class.
void call(rt::KernelCache &cache, rt::Context &ctx, const WarmupRequest &r) {
  CallBuffers c = buffersFor(ctx, r);
  attention(cache, c.q, c.k, c.v, c.out, c.options);
  ctx.synchronize();
}

std::vector<WarmupRequest> someCalls() {
  std::vector<WarmupRequest> calls;
  AttentionOptions causal;
  causal.causal = true;
  auto add = [&](int64_t d, int64_t sq, int64_t skv, AttentionOptions opt, bool lse, int64_t b = 1) {
    WarmupRequest r;
    r.batch = b, r.headsQ = 4, r.headsKV = 2, r.seqQ = sq, r.seqKV = skv, r.headDim = d, r.lse = lse;
    r.options = opt;
    r.label = "call " + std::to_string(calls.size());
    calls.push_back(r);
  };
  add(128, 300, 300, {}, false);     // short: the kernel without the stream-K hand-over
  add(128, 300, 2100, {}, false);    // long: the one with it
  add(64, 512, 512, causal, false);  // short causal at head dim 64: 64 x 64 tiles on sm_90a
  add(64, 2048, 2048, causal, true); // the configured tiles, with the LSE
  add(256, 1000, 1000, causal, false, 2);
  return calls;
}

TEST_F(Warmup, CallsAfterWarmUpCompileNothing) {
  std::vector<WarmupRequest> calls = someCalls();
  std::vector<WarmupRequest> requests = calls;
  requests.push_back(calls[0]); // a repeat
  requests.back().label = "repeat";
  WarmupRequest bad = calls[0];
  bad.headDim = 72;
  bad.label = "bad";
  requests.push_back(bad);

  auto start = std::chrono::steady_clock::now();
  std::vector<WarmupResult> results = warmup(*cache, requests, 4);
  std::printf("[ warm-up ] %zu requests on 4 threads: %.0f ms, %zu kernels compiled\n", requests.size(),
              msSince(start), cache->misses());
  ASSERT_EQ(results.size(), requests.size());
  size_t compiled = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE(requests[i].text());
    ASSERT_TRUE(results[i].ok()) << results[i].error;
    ASSERT_FALSE(results[i].kernels.empty());
    EXPECT_EQ(results[i].duplicateOf, -1);
    compiled += results[i].compiled();
    for (const WarmupKernel &k : results[i].kernels)
      std::printf("[ warm-up ] %-8s %7.0f ms  %.12s %s %s  %s\n", rt::cacheSourceName(k.source), results[i].ms,
                  k.cacheKey.c_str(), k.name.c_str(), k.config.c_str(), requests[i].text().c_str());
  }
  EXPECT_EQ(compiled, cache->misses()) << "every compile belongs to one request";
  const WarmupResult &repeat = results[calls.size()], &failed = results[calls.size() + 1];
  EXPECT_EQ(repeat.duplicateOf, 0);
  EXPECT_TRUE(repeat.ok()) << repeat.error;
  EXPECT_EQ(repeat.compiled(), 0u);
  EXPECT_EQ(failed.error, "bad: flare::attention: head_dim 72 is not supported (a multiple of 16 from 32 to 256)");

  // The calls themselves now compile nothing.
  const size_t misses = cache->misses();
  for (const WarmupRequest &r : calls) {
    SCOPED_TRACE(r.text());
    call(*cache, *ctx, r);
    EXPECT_EQ(cache->misses(), misses) << "the call compiled a kernel warm-up did not";
  }

  // Another process (a new cache object on the directory): warm-up finds every kernel on disk, and
  // the calls compile nothing either.
  cache = std::make_unique<rt::KernelCache>(*ctx, cacheDir.string());
  results = warmup(*cache, calls, 2);
  for (size_t i = 0; i < calls.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].error;
    EXPECT_EQ(results[i].compiled(), 0u) << calls[i].text();
  }
  for (const WarmupRequest &r : calls)
    call(*cache, *ctx, r);
  EXPECT_EQ(cache->misses(), 0u);
}

// With autotune, warm-up compiles every candidate before the first autotuned call, which then times
// them without compiling; afterwards warm-up compiles (finds) the choice alone.
TEST_F(Warmup, AutotunedCallsFindEveryCandidateCompiled) {
  WarmupRequest r;
  r.batch = 2, r.headsQ = 4, r.headsKV = 2, r.seqQ = r.seqKV = 1000, r.headDim = 128;
  r.options.causal = true;
  r.options.autotune = true;
  // A shape class of this test's own: the process keeps autotuning choices by class.
  r.options.scale = 0.0884f + 1e-7f * static_cast<float>(::getpid() % 1000);
  std::vector<WarmupResult> results = warmup(*cache, {r});
  ASSERT_TRUE(results[0].ok()) << results[0].error;
  const size_t candidates = autotuneCandidates(ctx->arch(), r.headDim).size();
  EXPECT_GE(results[0].kernels.size(), candidates);
  EXPECT_GE(results[0].compiled(), 1u);
  const size_t misses = cache->misses();
  call(*cache, *ctx, r);
  EXPECT_EQ(cache->misses(), misses) << "the first autotuned call compiled a candidate warm-up did not";
  const std::string key = autotuneKey(planWarmup(r), ctx->arch(), ctx->name());
  std::optional<AttentionTileConfig> choice = autotunedConfig(key);
  ASSERT_TRUE(choice.has_value());
  std::vector<std::string> candidateKeys;
  for (const WarmupKernel &k : results[0].kernels)
    candidateKeys.push_back(k.cacheKey);
  results = warmup(*cache, {r});
  ASSERT_TRUE(results[0].ok()) << results[0].error;
  EXPECT_LT(results[0].kernels.size(), candidateKeys.size()) << "warm-up looked up more than the choice";
  for (const WarmupKernel &k : results[0].kernels) {
    EXPECT_NE(k.source, CacheSource::Compiled) << k.config;
    EXPECT_NE(std::find(candidateKeys.begin(), candidateKeys.end(), k.cacheKey), candidateKeys.end()) << k.config;
  }
  std::printf("[ warm-up ] autotune: %zu candidates compiled ahead, chose %s\n", candidates, choice->text().c_str());
}

} // namespace
} // namespace flare::test
