//===- FakeDriver.h - The fixture of the tests on the stand-in driver -*- C++ -*-===//
//
// Tests built into flare-fake-driver-tests run with libcuda.so.1 replaced by FakeCuda.cpp (ctest sets
// LD_LIBRARY_PATH), so the runtime's device paths run on any machine: compiles are real, loads and
// launches are the fake's. The fixture reaches the fake's steering functions; it skips, saying why,
// where the fake is not the driver loaded.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TEST_FAKECUDA_FAKEDRIVER_H
#define FLARE_TEST_FAKECUDA_FAKEDRIVER_H

#include "../gpu/GpuTestUtil.h"

#include <chrono>
#include <thread>
#include <type_traits>

#include <dlfcn.h>

namespace flare::test {

/// The fake driver's steering functions.
struct FakeCuda {
  int (*jits)() = nullptr;
  int (*maxConcurrentJits)() = nullptr;
  int (*launches)() = nullptr;
  int (*dependentLaunches)() = nullptr;
  void (*reset)() = nullptr;
  void (*holdJits)(int) = nullptr;
  int (*jitsHeld)() = nullptr;
  void (*rejectPtx)(int) = nullptr;
};

/// Polls `done` for up to a minute (a test waiting that long has found a bug, and fails, not hangs).
template <class F> inline bool eventually(F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    std::string reason;
    if (!rt::gpuAvailable(&reason))
      GTEST_SKIP() << "the fake driver did not load (run with LD_LIBRARY_PATH=<build>/test/fakecuda, as ctest "
                      "does): "
                   << reason;
    void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto symbol = [&](auto &slot, const char *name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(handle ? dlsym(handle, name) : nullptr);
    };
    symbol(fake.jits, "flareFakeCudaJits");
    symbol(fake.maxConcurrentJits, "flareFakeCudaMaxConcurrentJits");
    symbol(fake.launches, "flareFakeCudaLaunches");
    symbol(fake.dependentLaunches, "flareFakeCudaDependentLaunches");
    symbol(fake.reset, "flareFakeCudaReset");
    symbol(fake.holdJits, "flareFakeCudaHoldJits");
    symbol(fake.jitsHeld, "flareFakeCudaJitsHeld");
    symbol(fake.rejectPtx, "flareFakeCudaRejectPtx");
    if (!fake.jits || !fake.maxConcurrentJits || !fake.launches || !fake.dependentLaunches || !fake.reset ||
        !fake.holdJits ||
        !fake.jitsHeld || !fake.rejectPtx)
      GTEST_SKIP() << "libcuda.so.1 is a real driver here, not the fake one these tests steer";
    fake.reset();
    ctx = std::make_unique<rt::Context>(0);
    cacheDir = std::filesystem::temp_directory_path() / ("flare-fake-driver-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(cacheDir);
    cache = std::make_unique<rt::KernelCache>(*ctx, cacheDir.string());
  }
  void TearDown() override {
    if (fake.holdJits) {
      fake.holdJits(0);
      fake.rejectPtx(0);
    }
    cache.reset();
    ctx.reset();
    if (!cacheDir.empty())
      std::filesystem::remove_all(cacheDir);
  }

  FakeCuda fake;
  std::unique_ptr<rt::Context> ctx;
  std::filesystem::path cacheDir;
  std::unique_ptr<rt::KernelCache> cache;
};

} // namespace flare::test

#endif // FLARE_TEST_FAKECUDA_FAKEDRIVER_H
