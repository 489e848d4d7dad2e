//===- RuntimeNoGpuTest.cpp - The runtime without a driver or GPU ---------===//
//
// Build and CI machines have no GPU and often no driver. The runtime must then fail cleanly: a
// flare::Error that says what is missing, never a crash or an abort. On a machine with a GPU the
// driver-missing checks are skipped (the GPU tests cover that side).
//
//===----------------------------------------------------------------------===//
#include "flare/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>

using namespace flare;
using namespace flare::rt;

namespace {

bool mentionsDriverOrDevice(const std::string &message) {
  for (const char *word : {"driver", "device", "libcuda", "cuInit", "CUDA_ERROR"})
    if (message.find(word) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST(RuntimeNoGpuTest, ContextFailsWithClearError) {
  std::string reason;
  if (gpuAvailable(&reason))
    GTEST_SKIP() << "a CUDA GPU is available, so the no-driver error path cannot be exercised here";

  std::cout << "[ no GPU  ] gpuAvailable() = false: " << reason << "\n";
  EXPECT_FALSE(reason.empty()) << "gpuAvailable gave no reason";
  EXPECT_TRUE(mentionsDriverOrDevice(reason)) << "unclear reason: " << reason;
  // The reason pointer is optional.
  EXPECT_FALSE(gpuAvailable());

  // Twice: the failed load is remembered and must be reported the same way, not crash the second time.
  for (int attempt = 0; attempt < 2; ++attempt) {
    SCOPED_TRACE("Context(0), attempt " + std::to_string(attempt + 1));
    try {
      Context ctx(0);
      ADD_FAILURE() << "Context(0) succeeded although gpuAvailable() said: " << reason;
    } catch (const Error &e) {
      std::string message = e.what();
      std::cout << "[ no GPU  ] Context(0) threw: " << message << "\n";
      EXPECT_TRUE(mentionsDriverOrDevice(message)) << "unclear error: " << message;
      // When the library itself is missing, say which one and why the loader refused it.
      if (message.find("CUDA driver not found") != std::string::npos) {
        EXPECT_NE(message.find("libcuda.so.1"), std::string::npos) << message;
      }
      // A driver-call failure carries its CUresult name; a missing library carries none.
      EXPECT_EQ(e.cuResult() == 0, e.cuName().empty()) << message;
    } catch (const std::exception &e) {
      ADD_FAILURE() << "Context(0) threw something other than flare::Error: " << e.what();
    }
  }
}

TEST(RuntimeNoGpuTest, OtherDevicesFailToo) {
  if (gpuAvailable())
    GTEST_SKIP() << "a CUDA GPU is available";
  for (int device : {1, -1}) {
    SCOPED_TRACE("Context(" + std::to_string(device) + ")");
    EXPECT_THROW(Context ctx(device), Error);
  }
}

// KernelArgs is pure host code and must work everywhere.
TEST(RuntimeNoGpuTest, KernelArgsRecordKindsAndValues) {
  KernelArgs args;
  args.addPointer(uint64_t(0x7f0000001000)).addI32(-5).addI64(int64_t(1) << 40).addF32(1.5f);
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args.kinds(), (std::vector<ArgKind>{ArgKind::Pointer, ArgKind::I32, ArgKind::I64, ArgKind::F32}));

  uint64_t p = 0;
  int32_t i = 0;
  int64_t l = 0;
  float f = 0;
  std::memcpy(&p, args.value(0), sizeof(p));
  std::memcpy(&i, args.value(1), sizeof(i));
  std::memcpy(&l, args.value(2), sizeof(l));
  std::memcpy(&f, args.value(3), sizeof(f));
  EXPECT_EQ(p, uint64_t(0x7f0000001000)) << "pointer argument 0";
  EXPECT_EQ(i, -5) << "i32 argument 1";
  EXPECT_EQ(l, int64_t(1) << 40) << "i64 argument 2";
  EXPECT_EQ(f, 1.5f) << "f32 argument 3";

  args.clear();
  EXPECT_EQ(args.size(), 0u);
}
