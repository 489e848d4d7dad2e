//===- CApiTest.cpp - The C API's error paths, without a GPU ----------------===//
//
// The C API turns every failure into a non-zero return (or NULL) and a message from
// flare_last_error(); it never throws across the C boundary. These checks need no device: without a
// driver the session cannot be created, and every entry point rejects null arguments.
//
//===----------------------------------------------------------------------===//
#include "flare/Runtime/Runtime.h"
#include "flare/flare_c.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(CApi, NullArgumentsAreErrorsNotCrashes) {
  flare_tensor t{};
  EXPECT_NE(flare_attention(nullptr, &t, &t, &t, &t, nullptr, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("null session or tensor"), std::string::npos) << flare_last_error();
  EXPECT_NE(flare_attention_backward(nullptr, &t, &t, &t, &t, &t, &t, &t, &t, &t, nullptr, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_attention_backward: null session or tensor"), std::string::npos)
      << flare_last_error();
  EXPECT_NE(flare_kv_append(nullptr, &t, &t, &t, &t, &t, &t, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_kv_append: null session or tensor"), std::string::npos)
      << flare_last_error();
  flare_block_mask *mask = nullptr;
  EXPECT_NE(flare_block_mask_build(nullptr, &t, &t, &t, &t, nullptr, nullptr, &mask), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_block_mask_build: null session"), std::string::npos)
      << flare_last_error();
  EXPECT_NE(flare_block_mask_build_backward(nullptr, &t, &t, &t, &t, &t, nullptr, nullptr, &mask), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_block_mask_build_backward: null session"), std::string::npos)
      << flare_last_error();
  EXPECT_EQ(mask, nullptr);
  flare_block_mask_destroy(nullptr);
  EXPECT_EQ(flare_kernel_load(nullptr, "module {}", "k"), nullptr);
  EXPECT_NE(std::string(flare_last_error()).find("flare_kernel_load: null argument"), std::string::npos);
  EXPECT_EQ(flare_kernel_load_options(nullptr, "module {}", "k", "tma-fallback=0"), nullptr);
  EXPECT_NE(std::string(flare_last_error()).find("flare_kernel_load_options: null argument"), std::string::npos);
  EXPECT_EQ(flare_kernel_load_options(nullptr, "module {}", "k", nullptr), nullptr);
  EXPECT_NE(std::string(flare_last_error()).find("flare_kernel_load_options: null argument"), std::string::npos);
  uint32_t grid[3] = {1, 1, 1};
  EXPECT_NE(flare_kernel_launch(nullptr, grid, 0, nullptr, nullptr, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_kernel_launch: null argument"), std::string::npos);
  flare_session_destroy(nullptr); // allowed, like free(NULL)
  flare_kernel_destroy(nullptr);
}

TEST(CApi, OptionPointersAreCheckedBeforeUse) {
  flare_tensor t{};
  flare_attention_options options{};
  options.num_aux = 2; // and aux left NULL
  EXPECT_NE(flare_attention(nullptr, &t, &t, &t, &t, &options, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("num_aux is 2 but aux is NULL"), std::string::npos)
      << flare_last_error();
  options.num_aux = -1;
  EXPECT_NE(flare_attention(nullptr, &t, &t, &t, &t, &options, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("num_aux is -1"), std::string::npos) << flare_last_error();
  options.num_aux = 0;
  options.lse.data = 0x1000;
  options.lse.rank = 7; // a rank the tensor struct cannot hold
  EXPECT_NE(flare_attention(nullptr, &t, &t, &t, &t, &options, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("lse has rank 7"), std::string::npos) << flare_last_error();
}

TEST(CApi, SessionWithoutADriverReportsWhy) {
  if (flare::rt::gpuAvailable())
    GTEST_SKIP() << "a CUDA GPU is available, so the no-driver error path cannot be exercised here";
  EXPECT_EQ(flare_session_create(0), nullptr);
  std::string message = flare_last_error();
  EXPECT_FALSE(message.empty());
  EXPECT_TRUE(message.find("driver") != std::string::npos || message.find("libcuda") != std::string::npos)
      << message;
}

} // namespace
