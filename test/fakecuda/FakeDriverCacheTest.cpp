//===- FakeDriverCacheTest.cpp - The concurrent kernel cache on the stand-in driver -===//
//
// The fake driver holds JITs on request, which makes the interleavings these tests need certain rather
// than likely: compiles of different kernels in flight at the same time, requests waiting for a compile
// of their kernel, a rejected kernel's error reaching every waiting request.
// test/gpu/KernelCacheThreadsTest.cpp is built into this executable as well.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"

#include <gtest/gtest.h>

namespace flare::test {
namespace {

using rt::CacheSource;

/// A thread that makes the context current and looks `source` up, keeping the answer or the error.
struct Lookup {
  rt::CacheAnswer answer;
  std::string error;
  std::thread thread;

  Lookup(rt::Context &ctx, rt::KernelCache &cache, const std::string &source) {
    thread = std::thread([this, &ctx, &cache, source] {
      ctx.makeCurrent();
      try {
        answer = cache.lookup(source);
      } catch (const std::exception &e) {
        error = e.what();
      }
    });
  }
};

std::vector<std::string> tileExamples() {
  std::vector<std::string> sources;
  for (const char *name : {"tile/softmax.mlir", "tile/vector_add.mlir", "tile/layer_norm.mlir", "tile/column_sum.mlir"})
    sources.push_back(readExample(name));
  return sources;
}

// Four kernels asked for by four threads are all being compiled at the same moment: nothing holds a
// lock around a compile. (With one lock around every lookup, as before, one JIT at a time is held.)
TEST_F(FakeDriver, DifferentKernelsCompileAtTheSameTime) {
  const std::vector<std::string> sources = tileExamples();
  fake.holdJits(1);
  std::vector<std::unique_ptr<Lookup>> lookups;
  for (const std::string &s : sources)
    lookups.push_back(std::make_unique<Lookup>(*ctx, *cache, s));
  const bool allInFlight = eventually([&] { return fake.jitsHeld() == static_cast<int>(sources.size()); });
  const int held = fake.jitsHeld();
  fake.holdJits(0);
  for (auto &l : lookups)
    l->thread.join();
  ASSERT_TRUE(allInFlight) << "only " << held << " of " << sources.size() << " compiles were in flight at once";
  EXPECT_EQ(fake.maxConcurrentJits(), static_cast<int>(sources.size()));
  EXPECT_EQ(cache->misses(), sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    EXPECT_EQ(lookups[i]->error, "") << "kernel " << i;
    EXPECT_EQ(lookups[i]->answer.source, CacheSource::Compiled) << "kernel " << i;
  }
}

// Requests for a kernel that is being compiled wait for that compile: one compile, one load, every
// request answered with the same module.
TEST_F(FakeDriver, RequestsForAKernelBeingCompiledWaitForIt) {
  const std::string source = readExample("tile/softmax.mlir");
  constexpr size_t kWaiters = 5;
  fake.holdJits(1);
  std::vector<std::unique_ptr<Lookup>> lookups;
  lookups.push_back(std::make_unique<Lookup>(*ctx, *cache, source));
  const bool compiling = eventually([&] { return fake.jitsHeld() == 1; });
  for (size_t i = 0; i < kWaiters; ++i)
    lookups.push_back(std::make_unique<Lookup>(*ctx, *cache, source));
  const bool waiting = eventually([&] { return cache->waiting() == kWaiters; });
  fake.holdJits(0);
  for (auto &l : lookups)
    l->thread.join();
  ASSERT_TRUE(compiling);
  ASSERT_TRUE(waiting) << cache->waiting() << " requests waited";
  EXPECT_EQ(fake.jits(), 1);
  EXPECT_EQ(lookups[0]->answer.source, CacheSource::Compiled);
  for (size_t i = 1; i < lookups.size(); ++i) {
    EXPECT_EQ(lookups[i]->error, "") << "request " << i;
    EXPECT_EQ(lookups[i]->answer.source, CacheSource::Waited) << "request " << i;
    EXPECT_EQ(lookups[i]->answer.module, lookups[0]->answer.module) << "request " << i;
  }
  EXPECT_EQ(cache->misses(), 1u);
  EXPECT_EQ(cache->hits(), kWaiters);
  EXPECT_EQ(cache->waits(), kWaiters);
  EXPECT_EQ(cache->waiting(), 0u);
  EXPECT_EQ(cache->lookup(source).source, CacheSource::Memory);
}

// The driver rejects the kernel while requests wait for it: each of them throws that error (with the
// JIT log), nothing is kept in memory or on disk, and the next request compiles it again (and now
// succeeds).
TEST_F(FakeDriver, ARejectedKernelFailsEveryWaitingRequestAndIsNotKept) {
  const std::string source = readExample("tile/softmax.mlir");
  constexpr size_t kWaiters = 5;
  fake.rejectPtx(1);
  fake.holdJits(1);
  std::vector<std::unique_ptr<Lookup>> lookups;
  lookups.push_back(std::make_unique<Lookup>(*ctx, *cache, source));
  const bool compiling = eventually([&] { return fake.jitsHeld() == 1; });
  for (size_t i = 0; i < kWaiters; ++i)
    lookups.push_back(std::make_unique<Lookup>(*ctx, *cache, source));
  const bool waiting = eventually([&] { return cache->waiting() == kWaiters; });
  fake.holdJits(0);
  for (auto &l : lookups)
    l->thread.join();
  ASSERT_TRUE(compiling && waiting);
  for (size_t i = 0; i < lookups.size(); ++i) {
    EXPECT_NE(lookups[i]->error.find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << "request " << i << ": "
                                                                                   << lookups[i]->error;
    EXPECT_NE(lookups[i]->error.find("the fake driver rejects this PTX"), std::string::npos) << lookups[i]->error;
  }
  EXPECT_EQ(fake.jits(), 1);
  EXPECT_EQ(cache->waiting(), 0u);
  size_t entries = 0;
  if (std::filesystem::exists(cacheDir))
    for (const auto &file : std::filesystem::directory_iterator(cacheDir))
      entries += file.path().extension() == ".fkc";
  EXPECT_EQ(entries, 0u) << "a kernel the driver rejected reached the disk";
  fake.rejectPtx(0);
  rt::CacheAnswer again = cache->lookup(source);
  EXPECT_EQ(again.source, CacheSource::Compiled);
  EXPECT_EQ(fake.jits(), 2);
  EXPECT_EQ(rt::KernelCache(*ctx, cacheDir.string()).lookup(source).source, CacheSource::Disk);
}

} // namespace
} // namespace flare::test
