//===- KernelCacheThreadsTest.cpp - The kernel cache from many threads at once, on a GPU -===//
//
// One compile per kernel however many threads ask, different kernels compiled at the same time, a
// failing compile's error for every waiting thread and nothing kept. Without a GPU every test skips
// and says why (test/fakecuda/ runs these tests on a stand-in driver, test/unit/SingleFlightTest.cpp
// checks the rule itself).
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "flare/Attention.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace flare::test {
namespace {

using rt::CacheSource;

class KernelCacheThreads : public GpuTest {};

/// Runs `body(i)` on `n` threads that start together; each thread makes the context current first.
template <class F> void onThreads(rt::Context &ctx, int n, F body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      ctx.makeCurrent();
      ++ready;
      while (ready.load() < n)
        std::this_thread::yield();
      body(i);
    });
  for (std::thread &t : threads)
    t.join();
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

TEST_F(KernelCacheThreads, OneKernelAskedByManyThreadsCompilesOnce) {
  const std::string source = readExample("tile/softmax.mlir");
  constexpr int kThreads = 8;
  std::vector<rt::CacheAnswer> answers(kThreads);
  std::vector<std::string> errors(kThreads);
  onThreads(*ctx, kThreads, [&](int i) {
    try {
      answers[i] = cache->lookup(source, {}, "softmax.mlir");
    } catch (const std::exception &e) {
      errors[i] = e.what();
    }
  });
  size_t compiled = 0, waited = 0;
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_EQ(errors[i], "") << "thread " << i;
    EXPECT_EQ(answers[i].module, answers[0].module) << "thread " << i << " got another module";
    EXPECT_EQ(answers[i].key, answers[0].key);
    compiled += answers[i].source == CacheSource::Compiled;
    waited += answers[i].source == CacheSource::Waited;
  }
  std::printf("[ cache ] %d threads, one kernel: 1 compiled, %zu waited for it, %zu found it in memory\n", kThreads,
              waited, kThreads - 1 - waited);
  EXPECT_EQ(compiled, 1u);
  EXPECT_EQ(cache->misses(), 1u);
  EXPECT_EQ(cache->hits(), size_t(kThreads - 1));
  EXPECT_EQ(cache->waits(), waited);
  EXPECT_EQ(cache->lookup(source, {}, "softmax.mlir").source, CacheSource::Memory);
}

// Four attention kernels on four threads, against the same four one after the other in another
// cache: the same kernels, and (printed, for the record) the wall times.
TEST_F(KernelCacheThreads, DifferentKernelsCompileAtTheSameTime) {
  std::vector<std::string> sources;
  AttentionOptions opt;
  // A scale of this run's own keeps the driver's JIT cache (keyed by the PTX text) cold as well.
  opt.scale = 0.0883f + 1e-7f * static_cast<float>(::getpid() % 1000);
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      opt.causal = causal;
      sources.push_back(attentionModule(opt, DType::BF16, d));
    }
  const int n = static_cast<int>(sources.size());
  rt::KernelCache alone(*ctx, (cacheDir / "one-after-the-other").string());
  auto start = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<rt::Module>> sequential;
  for (const std::string &s : sources)
    sequential.push_back(alone.getOrCompile(s));
  const double sequentialMs = msSince(start);

  std::vector<rt::CacheAnswer> answers(n);
  std::vector<std::string> errors(n);
  start = std::chrono::steady_clock::now();
  onThreads(*ctx, n, [&](int i) {
    try {
      answers[i] = cache->lookup(sources[i]);
    } catch (const std::exception &e) {
      errors[i] = e.what();
    }
  });
  const double concurrentMs = msSince(start);
  std::printf("[ cache ] %d attention kernels: %.0f ms one after the other, %.0f ms on %d threads (%.2fx)\n", n,
              sequentialMs, concurrentMs, n, sequentialMs / concurrentMs);
  EXPECT_EQ(cache->misses(), size_t(n));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(errors[i], "") << "kernel " << i;
    EXPECT_EQ(answers[i].source, CacheSource::Compiled) << "kernel " << i;
    EXPECT_EQ(answers[i].module->compiled().ptx, sequential[i]->compiled().ptx) << "kernel " << i;
    EXPECT_GT(answers[i].module->kernel("flare_attention").info().hint("attention.block_m"), 0);
  }
}

// A kernel that does not compile: every thread asking at once gets the compile error, nothing is
// counted as compiled or kept, and the next request compiles (and fails) again; the cache still
// serves other kernels.
TEST_F(KernelCacheThreads, AFailingCompileFailsEveryWaiterAndIsNotKept) {
  const std::string bad = R"(func.func @bad(%x: !tile.ptr<f32>) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = arith.constant 100 : i32
  %xv = tile.make_view %x, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %a = tile.load %xv[%c0] : !tile.view<f32, 1> -> tensor<100xf32>
  tile.store %a, %xv[%c0] : tensor<100xf32>, !tile.view<f32, 1>
  return
}
)";
  constexpr int kThreads = 6;
  std::vector<std::string> errors(kThreads);
  onThreads(*ctx, kThreads, [&](int i) {
    try {
      cache->getOrCompile(bad, {}, "bad.mlir");
      errors[i] = "(compiled)";
    } catch (const Error &e) {
      errors[i] = e.what();
    }
  });
  for (int i = 0; i < kThreads; ++i)
    EXPECT_NE(errors[i].find("power-of-two"), std::string::npos) << "thread " << i << ": " << errors[i];
  EXPECT_EQ(cache->misses(), 0u);
  EXPECT_EQ(cache->hits(), 0u);
  EXPECT_THROW(cache->getOrCompile(bad, {}, "bad.mlir"), Error);
  EXPECT_EQ(cache->getOrCompile(readExample("tile/vector_add.mlir"))->kernel("vector_add").info().name, "vector_add");
}

} // namespace
} // namespace flare::test
