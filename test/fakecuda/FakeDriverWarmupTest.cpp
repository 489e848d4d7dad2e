//===- FakeDriverWarmupTest.cpp - flare-warmup and flare_warmup on the stand-in driver -===//
//
// The warm-up command and the C API's warm-up, end to end with their device paths: the lines and the
// totals flare-warmup prints, a second run that finds every kernel, flare_warmup's per-request results
// and a call after it that compiles nothing. test/gpu/WarmupTest.cpp is built into this executable as
// well.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"

#include "flare/flare_c.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <sys/wait.h>

namespace flare::test {
namespace {

/// Runs a command through the shell: its exit status and its output (stdout and stderr).
std::pair<int, std::string> runCommand(const std::string &command) {
  std::string output;
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return {-1, "popen failed"};
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;)
    output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// flare-warmup fills a cache directory from a list, printing a line per kernel and the total; run
// again it finds every kernel there.
TEST_F(FakeDriver, FlareWarmupFillsTheCacheFromAList) {
  std::error_code ec;
  const std::string tool = (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "flare-warmup").string();
  ASSERT_TRUE(std::filesystem::exists(tool)) << tool;
  std::filesystem::create_directories(cacheDir);
  const std::filesystem::path list = cacheDir / "model.txt";
  std::ofstream(list) << "# two lengths, with and without a causal mask\n"
                         "heads=4 kv_heads=2 head_dim=64 seq=256,2048 causal=0,1\n"
                         "heads=4 kv_heads=2 head_dim=64 seq=256 causal=1   # a repeat\n";
  const std::string command = "'" + tool + "' --threads=3 --cache-dir='" + (cacheDir / "kernels").string() + "' '" +
                              list.string() + "'";
  auto [status, output] = runCommand(command);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("flare-warmup: 5 requests on 3 threads, Flare fake device (sm_90a)"), std::string::npos)
      << output;
  EXPECT_NE(output.find("compiled  "), std::string::npos) << output;
  EXPECT_NE(output.find(" flare_attention bm="), std::string::npos) << output;
  EXPECT_NE(output.find("repeated "), std::string::npos) << output;
  EXPECT_NE(output.find("model.txt:3 dtype=bf16 batch=1 heads=4 kv_heads=2 seq=256 head_dim=64 causal=1"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("flare-warmup: 5 requests, "), std::string::npos) << output;
  EXPECT_NE(output.find(" s wall on 3 threads"), std::string::npos) << output;
  std::printf("%s", output.c_str());
  std::tie(status, output) = runCommand(command);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("(0 compiled, "), std::string::npos) << output;
  EXPECT_EQ(output.find("compiled  "), std::string::npos) << output;
}

// flare_warmup: one result per request (a repeat, a bad request among good ones), non-zero with the
// count and the first error when one fails; the call after it compiles nothing.
TEST_F(FakeDriver, CApiWarmsUpAndReportsEachRequest) {
  ::setenv("FLARE_CACHE_DIR", (cacheDir / "c-api").string().c_str(), 1);
  flare_session *session = flare_session_create(0);
  ::unsetenv("FLARE_CACHE_DIR");
  ASSERT_NE(session, nullptr) << flare_last_error();
  flare_attention_options causal{};
  causal.causal = 1;
  causal.window_left = causal.window_right = -1;
  flare_attention_options withLse = causal;
  withLse.lse.data = 1; // asks for the LSE: no address is read
  flare_warmup_request requests[4] = {{FLARE_BF16, 1, 4, 2, 300, 300, 64, &causal},
                                      {FLARE_BF16, 1, 4, 2, 300, 300, 64, &causal},
                                      {FLARE_F32, 1, 4, 2, 300, 300, 64, &causal},
                                      {FLARE_BF16, 1, 4, 2, 300, 300, 64, &withLse}};
  flare_warmup_result results[4];
  EXPECT_NE(flare_warmup(session, requests, 4, 2, results), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_warmup: 1 of 4 requests failed; the first: request 2: "),
            std::string::npos)
      << flare_last_error();
  EXPECT_EQ(results[3].status, 0) << results[3].error;
  EXPECT_EQ(results[3].duplicate_of, -1) << "the LSE makes it another call class";
  EXPECT_GE(results[3].compiled, 1);
  EXPECT_EQ(results[0].status, 0) << results[0].error;
  EXPECT_GE(results[0].kernels, 1);
  EXPECT_GE(results[0].compiled, 1);
  EXPECT_EQ(results[0].duplicate_of, -1);
  EXPECT_EQ(results[1].status, 0) << results[1].error;
  EXPECT_EQ(results[1].duplicate_of, 0);
  EXPECT_EQ(results[1].compiled, 0);
  EXPECT_NE(results[2].status, 0);
  EXPECT_NE(std::string(results[2].error).find("is not FLARE_BF16 or FLARE_F16"), std::string::npos)
      << results[2].error;
  uint64_t hits = 0, misses = 0;
  ASSERT_EQ(flare_cache_counts(session, &hits, &misses), 0);
  EXPECT_EQ(misses, static_cast<uint64_t>(results[0].compiled + results[3].compiled));

  // The call: fake device memory, a launch the fake counts.
  rt::DeviceBuffer q(*ctx, 4 * 300 * 64 * 2), kv(*ctx, 2 * 300 * 64 * 2), out(*ctx, 4 * 300 * 64 * 2);
  flare_tensor tq{q.ptr(), FLARE_BF16, 4, {1, 4, 300, 64}, {4 * 300 * 64, 300 * 64, 64, 1}};
  flare_tensor tkv{kv.ptr(), FLARE_BF16, 4, {1, 2, 300, 64}, {2 * 300 * 64, 300 * 64, 64, 1}};
  flare_tensor tout{out.ptr(), FLARE_BF16, 4, {1, 4, 300, 64}, {4 * 300 * 64, 300 * 64, 64, 1}};
  const int launches = fake.launches();
  ASSERT_EQ(flare_attention(session, &tq, &tkv, &tkv, &tout, &causal, nullptr), 0) << flare_last_error();
  EXPECT_EQ(fake.launches(), launches + 1);
  uint64_t missesAfter = 0;
  ASSERT_EQ(flare_cache_counts(session, nullptr, &missesAfter), 0);
  EXPECT_EQ(missesAfter, misses) << "the call compiled a kernel that flare_warmup did not";
  flare_session_destroy(session);
}

// flare_kernel_load_options: the options are part of the kernel's cache entry (a second load with the
// same ones compiles nothing, other ones compile again), and a bad option fails with its name.
TEST_F(FakeDriver, CApiLoadsKernelsWithCompileOptions) {
  ::setenv("FLARE_CACHE_DIR", (cacheDir / "c-api-options").string().c_str(), 1);
  flare_session *session = flare_session_create(0);
  ::unsetenv("FLARE_CACHE_DIR");
  ASSERT_NE(session, nullptr) << flare_last_error();
  const char *text = R"(
func.func @add(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %v = tile.make_view %x, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %a = tile.load %v[%zero] : !tile.view<f32, 1> -> tensor<128xf32>
  %b = arith.addf %a, %a : tensor<128xf32>
  tile.store %b, %v[%zero] : tensor<128xf32>, !tile.view<f32, 1>
  return
})";
  auto misses = [&] {
    uint64_t m = 0;
    EXPECT_EQ(flare_cache_counts(session, nullptr, &m), 0);
    return m;
  };
  flare_kernel *plain = flare_kernel_load(session, text, "add");
  ASSERT_NE(plain, nullptr) << flare_last_error();
  const uint64_t afterPlain = misses();
  flare_kernel *opts = flare_kernel_load_options(session, text, "add", "tma-fallback=0 strength-reduction=0");
  ASSERT_NE(opts, nullptr) << flare_last_error();
  EXPECT_EQ(misses(), afterPlain + 1) << "other options: another cache entry";
  flare_kernel *again = flare_kernel_load_options(session, text, "add", "strength-reduction=0 tma-fallback=0");
  ASSERT_NE(again, nullptr) << flare_last_error();
  EXPECT_EQ(misses(), afterPlain + 1) << "the same options: the same entry";
  flare_kernel *empty = flare_kernel_load_options(session, text, "add", "");
  ASSERT_NE(empty, nullptr) << flare_last_error();
  EXPECT_EQ(misses(), afterPlain + 1) << "no options: flare_kernel_load's entry";
  EXPECT_EQ(flare_kernel_load_options(session, text, "add", "tma-fallback=0 fast=1"), nullptr);
  EXPECT_NE(std::string(flare_last_error()).find("unknown compile option 'fast=1'"), std::string::npos)
      << flare_last_error();
  for (flare_kernel *k : {plain, opts, again, empty})
    flare_kernel_destroy(k);
  flare_session_destroy(session);
}

} // namespace
} // namespace flare::test
