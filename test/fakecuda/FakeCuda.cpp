//===- FakeCuda.cpp - A stand-in libcuda.so.1 for testing the runtime without a GPU -===//
//
// The entry points Flare's runtime resolves (lib/Runtime/CudaDriver.h), implemented on the host: one
// device ("Flare fake device", compute capability 9.0, 132 SMs, driver 12.8), a primary context,
// device memory in host memory, and a "JIT" that accepts any PTX (the image it hands back is the PTX
// behind a marker) and finds a kernel when its `.entry` is in the text. Launches do nothing.
//
// Tests load it instead of the driver by running with LD_LIBRARY_PATH=<this library's directory>
// (ctest and lit do), and steer and observe it through the flareFakeCuda* functions at the end:
// how many JITs ran and how many at once, holding JITs until the test lets them go (to show that
// compiles of different kernels overlap, and that requests for a kernel being compiled wait for it),
// and a switch that makes every JIT reject its PTX (to show how that error reaches the waiting
// requests). It is built for tests only and never installed.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

// The CUresult values and enums this file uses (cuda.h's numbers; cuda.h itself is not needed).
constexpr int kSuccess = 0, kInvalidValue = 1, kInvalidPtx = 218, kNotFound = 500;
constexpr int kAttrComputeMajor = 75, kAttrComputeMinor = 76, kAttrMultiprocessors = 16;
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;
constexpr int kMultiprocessors = 132;
constexpr int kDriverVersion = 12080;
constexpr const char *kImageMarker = "FLARE-FAKE-CUBIN\n";
/// How long a held JIT waits to be let go before it goes on by itself (a test that forgot it).
constexpr auto kHoldPatience = std::chrono::seconds(60);

struct FakeContext {
  int device = 0;
};
FakeContext primaryContext;
thread_local FakeContext *current = nullptr;

struct FakeModule {
  std::string image; ///< the PTX (behind kImageMarker for a linked image)
};
struct FakeFunction {
  FakeModule *module = nullptr;
};
struct FakeLink {
  std::string ptx;
  char *errorLog = nullptr;
  size_t errorLogBytes = 0;
};

struct JitState {
  std::mutex mutex;
  std::condition_variable changed;
  int inFlight = 0, maxInFlight = 0, done = 0, held = 0;
  bool hold = false, reject = false;
} jits;
std::atomic<int> launches{0};
std::atomic<int> dependentLaunches{0};

// cuLaunchKernelEx's configuration, as cuda.h lays it out (CUlaunchConfig, CUlaunchAttribute).
constexpr int kLaunchAttributeProgrammaticStreamSerialization = 6;
struct FakeLaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct FakeLaunchConfig {
  unsigned gridDim[3], blockDim[3], sharedMemBytes;
  void *stream;
  FakeLaunchAttribute *attrs;
  unsigned numAttrs;
};

/// One PTX compile: waits while JITs are held, then accepts or rejects the PTX.
int jit(const std::string &ptx, char *errorLog, size_t errorLogBytes) {
  std::unique_lock<std::mutex> lock(jits.mutex);
  ++jits.inFlight;
  jits.maxInFlight = std::max(jits.maxInFlight, jits.inFlight);
  if (jits.hold) {
    ++jits.held;
    jits.changed.notify_all();
    jits.changed.wait_for(lock, kHoldPatience, [] { return !jits.hold; });
    --jits.held;
  }
  --jits.inFlight;
  ++jits.done;
  const bool reject = jits.reject || ptx.empty();
  if (reject && errorLog && errorLogBytes > 0) {
    const char *text = "ptxas fatal   : the fake driver rejects this PTX";
    std::strncpy(errorLog, text, errorLogBytes - 1);
    errorLog[errorLogBytes - 1] = '\0';
  }
  return reject ? kInvalidPtx : kSuccess;
}

/// The error log buffer among JIT options, if any.
void errorLogOf(unsigned count, const int *options, void **values, char *&log, size_t &bytes) {
  for (unsigned i = 0; options && values && i < count; ++i) {
    if (options[i] == kJitErrorLogBuffer)
      log = static_cast<char *>(values[i]);
    if (options[i] == kJitErrorLogBufferSize)
      bytes = reinterpret_cast<uintptr_t>(values[i]);
  }
}

} // namespace

extern "C" {

int cuInit(unsigned) { return kSuccess; }
int cuDriverGetVersion(int *version) {
  *version = kDriverVersion;
  return kSuccess;
}
int cuGetErrorName(int error, const char **name) {
  switch (error) {
  case kSuccess:
    *name = "CUDA_SUCCESS";
    return kSuccess;
  case kInvalidValue:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return kSuccess;
  case kInvalidPtx:
    *name = "CUDA_ERROR_INVALID_PTX";
    return kSuccess;
  case kNotFound:
    *name = "CUDA_ERROR_NOT_FOUND";
    return kSuccess;
  default:
    *name = nullptr;
    return kInvalidValue;
  }
}
int cuGetErrorString(int error, const char **text) {
  *text = error == kSuccess ? "no error" : "an error of the fake driver";
  return kSuccess;
}
int cuDeviceGet(int *device, int ordinal) {
  if (ordinal != 0)
    return kInvalidValue;
  *device = 0;
  return kSuccess;
}
int cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
int cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "Flare fake device", static_cast<size_t>(length));
  return kSuccess;
}
int cuDeviceGetAttribute(int *value, int attribute, int) {
  *value = attribute == kAttrComputeMajor      ? 9
           : attribute == kAttrComputeMinor    ? 0
           : attribute == kAttrMultiprocessors ? kMultiprocessors
                                               : 0;
  return kSuccess;
}
int cuDevicePrimaryCtxRetain(void **ctx, int) {
  *ctx = &primaryContext;
  return kSuccess;
}
int cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
int cuCtxSetCurrent(void *ctx) {
  current = static_cast<FakeContext *>(ctx);
  return kSuccess;
}
int cuCtxGetCurrent(void **ctx) {
  *ctx = current;
  return kSuccess;
}
int cuCtxGetDevice(int *device) {
  *device = 0;
  return kSuccess;
}
int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *, int, size_t) {
  *blocks = 1;
  return kSuccess;
}
int cuCtxSynchronize() { return kSuccess; }
int cuMemAlloc_v2(unsigned long long *ptr, size_t bytes) {
  void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return kInvalidValue;
  *ptr = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}
int cuMemFree_v2(unsigned long long ptr) {
  std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(ptr)));
  return kSuccess;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), src, bytes);
  return kSuccess;
}
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(src)), bytes);
  return kSuccess;
}
int cuMemsetD8_v2(unsigned long long dst, unsigned char value, size_t bytes) {
  std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)), value, bytes);
  return kSuccess;
}
int cuModuleLoadDataEx(void **module, const void *image, unsigned count, int *options, void **values) {
  std::string text(static_cast<const char *>(image));
  if (text.rfind(kImageMarker, 0) != 0) {
    // PTX handed to the driver whole (kernels with register budgets): JIT-compiled here.
    char *log = nullptr;
    size_t bytes = 0;
    errorLogOf(count, options, values, log, bytes);
    if (int r = jit(text, log, bytes); r != kSuccess)
      return r;
  }
  *module = new FakeModule{std::move(text)};
  return kSuccess;
}
int cuModuleUnload(void *module) {
  delete static_cast<FakeModule *>(module);
  return kSuccess;
}
int cuLinkCreate_v2(unsigned count, int *options, void **values, void **state) {
  FakeLink *link = new FakeLink;
  errorLogOf(count, options, values, link->errorLog, link->errorLogBytes);
  *state = link;
  return kSuccess;
}
int cuLinkAddData_v2(void *state, int, void *data, size_t bytes, const char *, unsigned, int *, void **) {
  static_cast<FakeLink *>(state)->ptx.assign(static_cast<const char *>(data), bytes ? bytes - 1 : 0);
  return kSuccess;
}
int cuLinkComplete(void *state, void **image, size_t *bytes) {
  FakeLink *link = static_cast<FakeLink *>(state);
  if (int r = jit(link->ptx, link->errorLog, link->errorLogBytes); r != kSuccess)
    return r;
  link->ptx.insert(0, kImageMarker);
  *image = link->ptx.data();
  *bytes = link->ptx.size() + 1;
  return kSuccess;
}
int cuLinkDestroy(void *state) {
  delete static_cast<FakeLink *>(state);
  return kSuccess;
}
int cuModuleGetFunction(void **function, void *module, const char *name) {
  FakeModule *m = static_cast<FakeModule *>(module);
  if (m->image.find(".entry " + std::string(name) + "(") == std::string::npos)
    return kNotFound;
  *function = new FakeFunction{m}; // one per lookup, kept for the process (tests load few)
  return kSuccess;
}
int cuFuncSetAttribute(void *, int, int) { return kSuccess; }
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                   void **) {
  ++launches;
  return kSuccess;
}
/// A launch with attributes: counted as a launch, and as a dependent launch when it asks for
/// programmatic stream serialization.
int cuLaunchKernelEx(const FakeLaunchConfig *config, void *, void **, void **) {
  if (!config || (config->numAttrs && !config->attrs))
    return kInvalidValue;
  ++launches;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == kLaunchAttributeProgrammaticStreamSerialization &&
        config->attrs[i].value.programmaticStreamSerializationAllowed)
      ++dependentLaunches;
  return kSuccess;
}
int cuStreamSynchronize(void *) { return kSuccess; }
int cuEventCreate(void **event, unsigned) {
  *event = new int(0);
  return kSuccess;
}
int cuEventRecord(void *, void *) { return kSuccess; }
int cuEventSynchronize(void *) { return kSuccess; }
int cuEventDestroy_v2(void *event) {
  delete static_cast<int *>(event);
  return kSuccess;
}
int cuEventElapsedTime_v2(float *ms, void *, void *) {
  *ms = 1.f;
  return kSuccess;
}
int cuTensorMapEncodeTiled(void *map, int, unsigned, void *, const uint64_t *, const uint64_t *, const unsigned *,
                           const unsigned *, int, int, int, int) {
  std::memset(map, 0, 128);
  return kSuccess;
}

// --- Steering and observing the fake (tests only) ------------------------------------------------

/// JIT compiles finished so far.
int flareFakeCudaJits() {
  std::lock_guard<std::mutex> lock(jits.mutex);
  return jits.done;
}
/// The most JIT compiles that ran at once.
int flareFakeCudaMaxConcurrentJits() {
  std::lock_guard<std::mutex> lock(jits.mutex);
  return jits.maxInFlight;
}
/// Kernel launches so far.
int flareFakeCudaLaunches() { return launches; }
/// Launches so far that were programmatic dependent launches (cuLaunchKernelEx).
int flareFakeCudaDependentLaunches() { return dependentLaunches; }
/// Zeroes the counters.
void flareFakeCudaReset() {
  std::lock_guard<std::mutex> lock(jits.mutex);
  jits.done = jits.maxInFlight = 0;
  launches = 0;
  dependentLaunches = 0;
}
/// Holds every JIT from now on (1) until let go (0): held JITs stay in flight, so a test sees which
/// compiles run at the same time and which requests wait for them.
void flareFakeCudaHoldJits(int hold) {
  std::lock_guard<std::mutex> lock(jits.mutex);
  jits.hold = hold != 0;
  jits.changed.notify_all();
}
/// JITs being held now.
int flareFakeCudaJitsHeld() {
  std::lock_guard<std::mutex> lock(jits.mutex);
  return jits.held;
}
/// From now on every JIT rejects its PTX (CUDA_ERROR_INVALID_PTX, with a log), or accepts it again.
void flareFakeCudaRejectPtx(int reject) {
  std::lock_guard<std::mutex> lock(jits.mutex);
  jits.reject = reject != 0;
}

} // extern "C"
