//===- GpuTestUtil.h - Shared pieces of the GPU tests -----------*- C++ -*-===//
//
// A fixture that skips (saying why) without a GPU and otherwise owns a context and a private kernel
// cache; the example kernels (ExampleFiles.h); random inputs; bf16 conversions; the poison pattern
// written into outputs before launches; the small-shapes switch for runs under compute-sanitizer; the
// driver's stream-capture and graph entry points.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TEST_GPU_GPUTESTUTIL_H
#define FLARE_TEST_GPU_GPUTESTUTIL_H

#include "flare/Attention.h"
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"

#include "../ExampleFiles.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <unistd.h>

namespace flare::test {

/// The example kernels: $FLARE_EXAMPLES_DIR when set (scripts/run-examples.sh sets it), else the
/// examples/ directory beside the test's bin/ directory.
inline std::filesystem::path examplesDir() {
  if (const char *dir = std::getenv("FLARE_EXAMPLES_DIR"))
    return dir;
  return examplesBesideExecutable();
}

/// The text of <examples>/<name>; throws MissingTestInput naming the path when it cannot be read.
inline std::string readExample(const std::string &name) { return readTestInput(examplesDir() / name); }

/// FLARE_GPU_TESTS_SMALL=1 (scripts/compute-sanitize.sh sets it): every test still compiles and
/// launches each of its kernels, but only on its small shapes and with few repeated launches, so that
/// tools that slow kernels down a hundredfold or more (compute-sanitizer's racecheck) finish in minutes.
inline bool smallShapes() {
  const char *v = std::getenv("FLARE_GPU_TESTS_SMALL");
  return v && *v && std::string(v) != "0";
}

/// `all`, or just `small` under smallShapes().
template <typename T> std::vector<T> pickShapes(std::vector<T> all, std::vector<T> small) {
  return smallShapes() ? std::move(small) : std::move(all);
}

/// Outputs are filled with 0xFF bytes before a launch: a NaN in f32 and bf16 alike.
constexpr uint8_t kPoisonByte = 0xFF;
inline bool isPoison(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits == 0xFFFFFFFFu;
}
inline bool isPoison(uint16_t bf16) { return bf16 == 0xFFFF; }

/// bf16 as its 16 bits; conversions round to nearest even.
inline uint16_t toBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
inline float fromBF16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// 16-bit floats as their bits: bf16 (round to nearest even) or IEEE f16 (the compiler's conversion).
inline uint16_t encode16(float x, DType dtype) {
  if (dtype == DType::BF16)
    return toBF16(x);
  _Float16 h = static_cast<_Float16>(x);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
inline float decode16(uint16_t bits, DType dtype) {
  if (dtype == DType::BF16)
    return fromBF16(bits);
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

inline std::vector<float> randomFloats(size_t n, std::mt19937 &rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}
inline std::vector<uint16_t> randomBF16(size_t n, std::mt19937 &rng, float lo, float hi) {
  std::vector<uint16_t> v(n);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (uint16_t &x : v)
    x = toBF16(dist(rng));
  return v;
}

class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string reason;
    if (!flare::rt::gpuAvailable(&reason))
      GTEST_SKIP() << "no GPU: " << reason;
    ctx = std::make_unique<flare::rt::Context>(0);
    cacheDir = std::filesystem::temp_directory_path() / ("flare-gpu-test-cache-" + std::to_string(::getpid()));
    cache = std::make_unique<flare::rt::KernelCache>(*ctx, cacheDir.string());
  }
  void TearDown() override {
    cache.reset();
    ctx.reset();
    if (!cacheDir.empty())
      std::filesystem::remove_all(cacheDir);
  }
  flare::rt::Kernel kernel(const std::string &example, const std::string &name, std::string arch = {}) {
    flare::CompileOptions options;
    options.arch = arch.empty() ? ctx->arch() : arch;
    return cache->getOrCompile(readExample(example), options, example)->kernel(name);
  }
  /// The device's own architecture, plus sm_80 on newer GPUs: sm_80 PTX runs there too (the driver
  /// compiles it), which checks the mma.sync path on the same hardware.
  std::vector<std::string> archsToTest() const {
    std::vector<std::string> archs = {ctx->arch()};
    if (ctx->ccMajor() > 8)
      archs.push_back("sm_80");
    return archs;
  }
  flare::rt::DeviceBuffer poisoned(size_t bytes) {
    flare::rt::DeviceBuffer buf(*ctx, bytes);
    buf.fillBytes(kPoisonByte);
    return buf;
  }

  std::unique_ptr<flare::rt::Context> ctx;
  std::filesystem::path cacheDir;
  std::unique_ptr<flare::rt::KernelCache> cache;
  std::mt19937 rng{20261129};
};

/// The driver's stream and graph entry points (the versioned symbols cuda.h's macros name), from the
/// libcuda the context loaded. Handles are opaque pointers; results are CUresult values (0: success).
struct GraphDriver {
  int (*streamCreate)(void **, unsigned) = nullptr;
  int (*streamDestroy)(void *) = nullptr;
  int (*streamSynchronize)(void *) = nullptr;
  int (*beginCapture)(void *, int) = nullptr;
  int (*endCapture)(void *, void **) = nullptr;
  int (*instantiate)(void **, void *, unsigned long long) = nullptr;
  int (*launch)(void *, void *) = nullptr;
  int (*execDestroy)(void *) = nullptr;
  int (*graphDestroy)(void *) = nullptr;
  std::string missing; // the first symbol not found
  GraphDriver() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    auto get = [&](auto &fn, const char *name) {
      fn = lib ? reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name)) : nullptr;
      if (!fn && missing.empty())
        missing = name;
    };
    get(streamCreate, "cuStreamCreate");
    get(streamDestroy, "cuStreamDestroy_v2");
    get(streamSynchronize, "cuStreamSynchronize");
    get(beginCapture, "cuStreamBeginCapture_v2");
    get(endCapture, "cuStreamEndCapture");
    get(instantiate, "cuGraphInstantiateWithFlags");
    get(launch, "cuGraphLaunch");
    get(execDestroy, "cuGraphExecDestroy");
    get(graphDestroy, "cuGraphDestroy");
  }

  /// An instantiated graph, destroyed with its executable.
  struct Graph {
    GraphDriver *drv = nullptr;
    void *graph = nullptr, *exec = nullptr;
    Graph() = default;
    Graph(const Graph &) = delete;
    Graph &operator=(const Graph &) = delete;
    ~Graph() {
      if (exec)
        drv->execDestroy(exec);
      if (graph)
        drv->graphDestroy(graph);
    }
  };
  /// Captures what `calls` enqueue on `stream` in the driver's global capture mode (an allocation or
  /// a synchronisation while capturing fails the capture) and instantiates it into `out`. Returns
  /// what failed (a flare::Error of the calls, or a driver call's result), empty on success.
  std::string capture(void *stream, const std::function<void()> &calls, Graph &out) {
    out.drv = this;
    if (int rc = beginCapture(stream, /*CU_STREAM_CAPTURE_MODE_GLOBAL*/ 0))
      return "cuStreamBeginCapture failed: " + std::to_string(rc);
    try {
      calls();
    } catch (const flare::Error &e) {
      void *broken = nullptr;
      endCapture(stream, &broken);
      if (broken)
        graphDestroy(broken);
      return std::string("a warm call failed under stream capture: ") + e.what();
    }
    if (int rc = endCapture(stream, &out.graph))
      return "cuStreamEndCapture failed: " + std::to_string(rc);
    if (int rc = instantiate(&out.exec, out.graph, 0))
      return "cuGraphInstantiateWithFlags failed: " + std::to_string(rc);
    return {};
  }
};

} // namespace flare::test

#endif // FLARE_TEST_GPU_GPUTESTUTIL_H
