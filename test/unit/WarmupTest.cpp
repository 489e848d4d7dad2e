//===- WarmupTest.cpp - Warm-up without a GPU -----------------------------===//
//
// What warm-up does before it needs a device: the made-up calls of warm-up requests (planned exactly
// like a real call), the warm-up list parser, and the C API's and flare-warmup's behaviour without a
// GPU. test/fakecuda/ runs warm-up on a stand-in driver, test/gpu/WarmupTest.cpp on a GPU.
//
//===----------------------------------------------------------------------===//
#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"
#include "flare/Warmup.h"
#include "flare/flare_c.h"

#include "ExampleSource.h"

#include "../ExampleFiles.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <sys/wait.h>

namespace {

using flare::AttentionOptions;
using flare::AttentionPlan;
using flare::DType;
using flare::TensorView;
using flare::WarmupRequest;

/// A real call's tensors at real-looking addresses: contiguous, 256-byte aligned.
struct Call {
  TensorView q, k, v, out;
  AttentionOptions options;
};

Call realCall(const WarmupRequest &r) {
  uint64_t next = 0x7f0000000000;
  auto at = [&](std::vector<int64_t> shape, DType dtype) {
    TensorView t{next, dtype, shape, {}};
    uint64_t bytes = flare::dtypeBytes(dtype);
    for (int64_t d : shape)
      bytes *= static_cast<uint64_t>(d);
    next += (bytes + 255) / 256 * 256;
    return t;
  };
  Call c;
  c.q = at({r.batch, r.headsQ, r.seqQ, r.headDim}, r.dtype);
  c.k = at({r.batch, r.headsKV, r.seqKV, r.headDim}, r.dtype);
  c.v = at({r.batch, r.headsKV, r.seqKV, r.headDim}, r.dtype);
  c.out = at({r.batch, r.headsQ, r.seqQ, r.headDim}, r.dtype);
  c.options = r.options;
  if (r.lse)
    c.options.lse = at({r.batch, r.headsQ, r.seqQ}, DType::F32);
  for (const flare::WarmupAux &a : r.aux)
    c.options.aux.push_back(at({a.length}, a.dtype));
  return c;
}

std::vector<WarmupRequest> sampleRequests() {
  std::vector<WarmupRequest> requests;
  WarmupRequest gqa;
  gqa.batch = 2, gqa.headsQ = 32, gqa.headsKV = 8, gqa.seqQ = gqa.seqKV = 4096, gqa.headDim = 128;
  gqa.options.causal = true;
  requests.push_back(gqa);
  WarmupRequest lse = gqa;
  lse.lse = true;
  lse.seqQ = 300;
  lse.dtype = DType::F16;
  requests.push_back(lse);
  WarmupRequest window;
  window.headDim = 64, window.seqQ = 1000, window.seqKV = 3000;
  window.options.windowLeft = 128, window.options.windowRight = 0, window.options.softcap = 30.f;
  window.options.alignment = flare::CausalAlignment::BottomRight;
  window.options.autotune = true; // needs out apart from q, k and v
  requests.push_back(window);
  WarmupRequest custom;
  custom.headsQ = 4, custom.headsKV = 2, custom.seqQ = custom.seqKV = 777, custom.lse = true;
  custom.options.module = flare::test::readExample("attention/document.mlir");
  custom.aux = {{DType::I32, 777}};
  requests.push_back(custom);
  return requests;
}

// planWarmup plans the call the request describes, exactly as planAttention plans that call on real
// tensors: the same module, kernel and argument kinds; only the addresses differ.
TEST(Warmup, PlansTheCallTheRequestDescribes) {
  for (const WarmupRequest &r : sampleRequests()) {
    SCOPED_TRACE(r.text());
    Call c = realCall(r);
    AttentionPlan real = flare::planAttention(c.q, c.k, c.v, c.out, c.options);
    AttentionPlan warm = flare::planWarmup(r);
    EXPECT_EQ(warm.module, real.module);
    EXPECT_EQ(warm.kernelName, real.kernelName);
    EXPECT_EQ(warm.args.kinds(), real.args.kinds());
    EXPECT_EQ(warm.hasLse, real.hasLse);
    EXPECT_EQ(std::vector<int64_t>({warm.batch, warm.headsQ, warm.headsKV, warm.seqQ, warm.seqKV, warm.headDim}),
              std::vector<int64_t>({real.batch, real.headsQ, real.headsKV, real.seqQ, real.seqKV, real.headDim}));
    // Every argument but the pointers is the same.
    for (size_t i = 0; i < real.args.size(); ++i) {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, warm.args.value(i), 8);
      std::memcpy(&b, real.args.value(i), 8);
      if (real.args.kinds()[i] == flare::ArgKind::Pointer)
        EXPECT_EQ(a % 16, 0u) << "made-up address of argument " << i << " is not 16-byte aligned";
      else
        EXPECT_EQ(a, b) << "argument " << i;
    }
    // The same autotune key: warm-up finds the choice a real call made.
    EXPECT_EQ(flare::autotuneKey(warm, "sm_90a", "H200"), flare::autotuneKey(real, "sm_90a", "H200"));
    // And a call's request is the request.
    WarmupRequest back = flare::warmupRequestFor(c.q, c.k, c.v, c.out, c.options);
    EXPECT_EQ(back.text(), r.text());
    EXPECT_EQ(flare::planWarmup(back).module, real.module);
  }
}

TEST(Warmup, BadRequestsAreErrorsThatNameThem) {
  WarmupRequest r;
  r.label = "model.txt:7";
  r.headDim = 72;
  try {
    flare::planWarmup(r);
    ADD_FAILURE() << "head dim 72 was accepted";
  } catch (const flare::Error &e) {
    EXPECT_EQ(std::string(e.what()), "model.txt:7: flare::attention: head_dim 72 is not supported (a multiple of 16 from 32 to 256)");
  }
  // The LSE and aux tensors are described by the request's own fields, not by addresses.
  WarmupRequest byAddress;
  byAddress.options.lse = TensorView{0x1000, DType::F32, {1, 1, 1}, {}};
  EXPECT_THROW(flare::planWarmup(byAddress), flare::Error);
  // Sizes beyond any memory are refused, not wrapped around.
  WarmupRequest huge;
  huge.batch = huge.headsQ = huge.headsKV = 65535;
  huge.seqQ = huge.seqKV = int64_t(1) << 29;
  huge.headDim = 256;
  EXPECT_THROW(flare::planWarmup(huge), flare::Error);
}

// The text of a request reads back as the same request (for built-in options), and a list line
// with lists stands for every combination, the last key varying fastest.
TEST(WarmupList, TextRoundTripsAndListsExpand) {
  for (WarmupRequest r : sampleRequests()) {
    if (!r.options.module.empty())
      continue;
    SCOPED_TRACE(r.text());
    std::vector<WarmupRequest> back = flare::parseWarmupList(r.text(), "line");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].text(), r.text());
    EXPECT_EQ(back[0].label, "line:1");
    EXPECT_EQ(flare::planWarmup(back[0]).module, flare::planWarmup(r).module);
  }
  std::vector<WarmupRequest> list = flare::parseWarmupList(
      "# a model\n\nheads=8 head_dim=128 seq=512,1024 batch=1,2,4  # six\nheads=4 head_dim=64 seq_q=1 seq_kv=100\n",
      "m.txt");
  ASSERT_EQ(list.size(), 7u);
  EXPECT_EQ(list[0].text(), "dtype=bf16 batch=1 heads=8 kv_heads=8 seq=512 head_dim=128");
  EXPECT_EQ(list[1].text(), "dtype=bf16 batch=2 heads=8 kv_heads=8 seq=512 head_dim=128");
  EXPECT_EQ(list[3].text(), "dtype=bf16 batch=1 heads=8 kv_heads=8 seq=1024 head_dim=128");
  EXPECT_EQ(list[6].text(), "dtype=bf16 batch=1 heads=4 kv_heads=4 seq_q=1 seq_kv=100 head_dim=64");
  EXPECT_EQ(list[0].label, "m.txt:3");
  EXPECT_EQ(list[6].label, "m.txt:4");
}

TEST(WarmupList, EveryBadLineIsReportedWithItsNumber) {
  try {
    flare::parseWarmupList("heads=8 head_dim=128 seq=512\nheads=8 seq=512\nheads=8 head_dim=128 seq=5x\n", "m.txt");
    ADD_FAILURE() << "a bad list was accepted";
  } catch (const flare::Error &e) {
    EXPECT_EQ(std::string(e.what()), "m.txt:2: error: missing head_dim=\n"
                                     "m.txt:3: error: bad seq='5x': expected a positive integer");
  }
}

TEST(WarmupCApi, ErrorsWithoutASession) {
  flare_warmup_request request{};
  EXPECT_NE(flare_warmup(nullptr, &request, 1, 0, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_warmup: null session"), std::string::npos)
      << flare_last_error();
  uint64_t hits = 0;
  EXPECT_NE(flare_cache_counts(nullptr, &hits, nullptr), 0);
  EXPECT_NE(std::string(flare_last_error()).find("flare_cache_counts: null session"), std::string::npos);
}

/// Runs a command through the shell; its exit status and what it wrote (stdout and stderr).
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

/// flare-warmup, next to this test's executable (build/bin, or a bundle's bin/).
std::string warmupTool() {
  std::error_code ec;
  return (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "flare-warmup").string();
}

// Without a GPU, flare-warmup reads and checks the list, then stops with exit status 2 and says why
// warm-up needs the device; --check reads and checks the list only and succeeds.
TEST(WarmupTool, WithoutAGpuItExplainsAndFails) {
  if (flare::rt::gpuAvailable())
    GTEST_SKIP() << "a CUDA GPU is available, so the no-GPU path cannot be exercised here";
  const std::string tool = warmupTool();
  ASSERT_TRUE(std::filesystem::exists(tool)) << tool;
  const std::string list = (flare::test::examplesBesideExecutable() / "warmup" / "llama3-8b.txt").string();
  auto [status, output] = runCommand("'" + tool + "' '" + list + "'");
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("flare-warmup: error: no GPU: "), std::string::npos) << output;
  EXPECT_NE(output.find("architecture"), std::string::npos) << output;
  EXPECT_NE(output.find("--check"), std::string::npos) << output;
  std::tie(status, output) = runCommand("'" + tool + "' --check '" + list + "'");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("flare-warmup: 40 requests in"), std::string::npos) << output;
}

} // namespace
