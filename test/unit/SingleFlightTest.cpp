//===- SingleFlightTest.cpp - One run per key, and concurrent compiles, without a GPU -===//
//
// What the concurrent kernel cache rests on, checked without a device: SingleFlight (one run per key
// at a time, waiters get the result or the error, nothing kept after a failure, different keys at the
// same time) and the compiler from several threads at once. test/fakecuda/ checks the cache itself on
// a stand-in driver, test/gpu/KernelCacheThreadsTest.cpp on a GPU.
//
//===----------------------------------------------------------------------===//
#include "flare/Attention.h"
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"
#include "flare/Runtime/SingleFlight.h"

#include "ExampleSource.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace {

using flare::AttentionOptions;
using flare::DType;
using flare::rt::SingleFlight;

/// Long enough for any thread of a test to reach its next step on a loaded machine; a test waiting
/// this long has found a bug (a lock held around the work, a lost wake-up), and fails instead of hanging.
constexpr auto kPatience = std::chrono::seconds(60);

/// Polls `done` until it holds or kPatience passes; true if it held.
template <class F> bool eventually(F done) {
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// A gate that work waits at until the test opens it (or kPatience passes: then false).
class Gate {
public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, kPatience, [&] { return open_; });
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(SingleFlight, DifferentKeysRunConcurrently) {
  // Each key's work waits until both are running: with one lock around all work, the second could
  // not start and the first would give up after kPatience.
  SingleFlight<int> flights;
  std::atomic<int> running{0};
  auto work = [&](int value) {
    ++running;
    if (!eventually([&] { return running.load() == 2; }))
      throw std::runtime_error("the other key's work never started while this one ran");
    return value;
  };
  std::pair<int, SingleFlight<int>::Role> a, b;
  std::string errorA, errorB;
  std::thread ta([&] {
    try {
      a = flights.run("a", [&] { return work(1); });
    } catch (const std::exception &e) {
      errorA = e.what();
    }
  });
  std::thread tb([&] {
    try {
      b = flights.run("b", [&] { return work(2); });
    } catch (const std::exception &e) {
      errorB = e.what();
    }
  });
  ta.join();
  tb.join();
  EXPECT_EQ(errorA, "");
  EXPECT_EQ(errorB, "");
  EXPECT_EQ(a.first, 1);
  EXPECT_EQ(b.first, 2);
  EXPECT_EQ(a.second, SingleFlight<int>::Role::Ran);
  EXPECT_EQ(b.second, SingleFlight<int>::Role::Ran);
  EXPECT_EQ(flights.inFlight(), 0u);
}

TEST(SingleFlight, ConcurrentCallersOfOneKeyShareOneRun) {
  SingleFlight<int> flights;
  Gate gate;
  std::atomic<int> runs{0};
  auto work = [&] {
    ++runs;
    if (!gate.wait())
      throw std::runtime_error("the test never opened the gate");
    return 42;
  };
  constexpr int kCallers = 6;
  std::vector<std::pair<int, SingleFlight<int>::Role>> got(kCallers);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { got[0] = flights.run("k", work); });
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  for (int i = 1; i < kCallers; ++i)
    threads.emplace_back([&, i] { got[i] = flights.run("k", work); });
  // Every other caller is waiting for the first one's work before it is allowed to finish.
  const bool allWaiting = eventually([&] { return flights.waiting() == kCallers - 1; });
  gate.open();
  for (std::thread &t : threads)
    t.join();
  ASSERT_TRUE(allWaiting) << flights.waiting() << " callers waiting";
  EXPECT_EQ(runs.load(), 1);
  for (int i = 0; i < kCallers; ++i) {
    EXPECT_EQ(got[i].first, 42) << "caller " << i;
    EXPECT_EQ(got[i].second, i == 0 ? SingleFlight<int>::Role::Ran : SingleFlight<int>::Role::Waited)
        << "caller " << i;
  }
  EXPECT_EQ(flights.waiting(), 0u);
  EXPECT_EQ(flights.inFlight(), 0u);
}

TEST(SingleFlight, WaitersGetTheErrorAndTheNextCallRunsAgain) {
  SingleFlight<int> flights;
  Gate gate;
  std::atomic<int> runs{0};
  auto failing = [&]() -> int {
    ++runs;
    if (!gate.wait())
      throw std::runtime_error("the test never opened the gate");
    throw flare::Error("compile failed: bad IR");
  };
  constexpr int kCallers = 4;
  std::vector<std::string> errors(kCallers);
  std::vector<std::thread> threads;
  auto call = [&](int i) {
    try {
      flights.run("k", failing);
      errors[i] = "(no error)";
    } catch (const flare::Error &e) {
      errors[i] = e.what();
    }
  };
  threads.emplace_back(call, 0);
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }));
  for (int i = 1; i < kCallers; ++i)
    threads.emplace_back(call, i);
  const bool allWaiting = eventually([&] { return flights.waiting() == kCallers - 1; });
  gate.open();
  for (std::thread &t : threads)
    t.join();
  ASSERT_TRUE(allWaiting);
  EXPECT_EQ(runs.load(), 1);
  for (int i = 0; i < kCallers; ++i)
    EXPECT_EQ(errors[i], "compile failed: bad IR") << "caller " << i;
  // The failure is not remembered: the next call runs its work, which may succeed.
  EXPECT_EQ(flights.inFlight(), 0u);
  auto [value, role] = flights.run("k", [] { return 7; });
  EXPECT_EQ(value, 7);
  EXPECT_EQ(role, SingleFlight<int>::Role::Ran);
}

// The kernel cache compiles different kernels on several threads at once: the compiler must give
// each thread exactly what it gives one thread alone (each compile has its own MLIR context).
TEST(ConcurrentCompiles, ThreadsGetTheSamePTXAsOneThreadAlone) {
  struct Job {
    std::string name, source;
    flare::CompileOptions options;
  };
  std::vector<Job> jobs;
  for (const char *example : {"tile/softmax.mlir", "tile/vector_add.mlir", "tile/layer_norm.mlir"})
    jobs.push_back({example, flare::test::readExample(example), {}});
  AttentionOptions causal;
  causal.causal = true;
  jobs.push_back({"causal attention, D = 64", flare::attentionModule(causal, DType::BF16, 64), {}});
  jobs.back().options.tmaFallback = false;
  std::vector<std::string> alone;
  for (const Job &j : jobs)
    alone.push_back(flare::compileToPTX(j.source, j.options, j.name).ptx);
  // Twice each, all at once.
  std::vector<std::string> together(2 * jobs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < together.size(); ++i)
    threads.emplace_back([&, i] {
      const Job &j = jobs[i % jobs.size()];
      try {
        together[i] = flare::compileToPTX(j.source, j.options, j.name).ptx;
      } catch (const std::exception &e) {
        together[i] = std::string("error: ") + e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t i = 0; i < together.size(); ++i)
    EXPECT_TRUE(together[i] == alone[i % jobs.size()]) << jobs[i % jobs.size()].name << " compiled on thread " << i
                                                       << " differs: " << together[i].substr(0, 200);
}

} // namespace
