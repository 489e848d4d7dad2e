//===- Runtime.cpp - Contexts, buffers, modules and kernel launches -------===//
//
// Thin RAII wrappers over the dynamically loaded Driver API. Every failure becomes a flare::Error
// naming the operation and the CUresult; destructors swallow errors because they cannot report them
// (and a failed free usually means the context is already gone, which frees everything anyway).
//
//===----------------------------------------------------------------------===//
#include "flare/Runtime/Runtime.h"

#include "CudaDriver.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

using namespace flare::rt::detail;

namespace flare::rt {
namespace {

CUcontext asContext(void *ctx) { return static_cast<CUcontext>(ctx); }

/// Statically sized JIT log buffers: the driver truncates longer logs, which is still far more than
/// a human reads, and avoids a second JIT run just to size the buffers.
constexpr size_t kJitLogBytes = 64 * 1024;

/// The largest dynamic shared memory a kernel may use without opting in via cuFuncSetAttribute.
constexpr int kDefaultSharedLimit = 48 * 1024;

std::string joinKernelNames(const CompiledModule &compiled) {
  if (compiled.kernels.empty())
    return "(none)";
  std::string names;
  for (const KernelInfo &k : compiled.kernels)
    names += (names.empty() ? "" : ", ") + k.name;
  return names;
}

} // namespace

//===----------------------------------------------------------------------===//
// gpuAvailable and Context
//===----------------------------------------------------------------------===//

bool gpuAvailable(std::string *reason) {
  try {
    const CudaDriver *d = tryDriver(reason);
    if (!d)
      return false;
    int count = 0;
    CUresult r = d->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
      if (reason)
        *reason = "cuDeviceGetCount failed: " + describeResult(r);
      return false;
    }
    if (count < 1) {
      if (reason)
        *reason = "the CUDA driver is installed but reports no CUDA device";
      return false;
    }
    if (reason)
      reason->clear();
    return true;
  } catch (const std::exception &e) {
    // Only allocation failures can get here; the function promises not to throw.
    if (reason)
      *reason = std::string("could not query the CUDA driver: ") + e.what();
    return false;
  }
}

Context::Context(int device) : device_(device) {
  const CudaDriver &d = driver();
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count < 1)
    throw Error("no CUDA device found: the CUDA driver is installed but reports no device");
  if (device < 0 || device >= count)
    throw Error("CUDA device " + std::to_string(device) + " requested, but only " +
                std::to_string(count) + " device(s) are present (valid: 0.." +
                std::to_string(count - 1) + ")");

  CUdevice dev = 0;
  check(d.cuDeviceGet(&dev, device), "cuDeviceGet(" + std::to_string(device) + ")");
  cuDevice_ = dev;

  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof(name) - 1, dev), "cuDeviceGetName");
  name_ = name;
  check(d.cuDeviceGetAttribute(&ccMajor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  check(d.cuDeviceGetAttribute(&ccMinor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  check(d.cuDeviceGetAttribute(&multiprocessors_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  check(d.cuDriverGetVersion(&driverVersion_), "cuDriverGetVersion");

  CUcontext ctx = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain(device " +
                                                   std::to_string(device) + ")");
  ctx_ = ctx;
  CUresult r = d.cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    // The destructor will not run for a constructor that throws, so drop the reference here.
    (void)d.cuDevicePrimaryCtxRelease_v2(dev);
    check(r, "cuCtxSetCurrent");
  }
}

Context::~Context() {
  const CudaDriver *d = tryDriver(nullptr);
  if (!d || !ctx_)
    return;
  // Leave no thread pointing at a context we may be about to tear down.
  CUcontext current = nullptr;
  if (d->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == asContext(ctx_))
    (void)d->cuCtxSetCurrent(nullptr);
  (void)d->cuDevicePrimaryCtxRelease_v2(cuDevice_);
}

std::string Context::arch() const {
  if (ccMajor_ == 9 && ccMinor_ == 0)
    return "sm_90a";
  return "sm_" + std::to_string(ccMajor_) + std::to_string(ccMinor_);
}

void Context::synchronize() const {
  ScopedContext scope(asContext(ctx_));
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

void Context::makeCurrent() const { check(driver().cuCtxSetCurrent(asContext(ctx_)), "cuCtxSetCurrent"); }

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(Context &ctx, size_t bytes) : ctx_(ctx.handle()), bytes_(bytes) {
  if (bytes == 0)
    return; // cuMemAlloc rejects zero sizes; an empty buffer needs no memory
  ScopedContext scope(asContext(ctx_));
  CUdeviceptr ptr = 0;
  check(driver().cuMemAlloc_v2(&ptr, bytes), "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
  ptr_ = ptr;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : ctx_(other.ctx_), ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    ctx_ = other.ctx_;
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (!ptr_)
    return;
  try {
    ScopedContext scope(asContext(ctx_));
    (void)driver().cuMemFree_v2(ptr_);
  } catch (...) {
    // Nothing sensible to do: see the file comment.
  }
  ptr_ = 0;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void *host, size_t size) {
  if (size > bytes_)
    throw Error("DeviceBuffer::upload: " + std::to_string(size) + " bytes do not fit in a buffer of " +
                std::to_string(bytes_) + " bytes");
  if (size == 0)
    return;
  if (!host)
    throw Error("DeviceBuffer::upload: null host pointer");
  ScopedContext scope(asContext(ctx_));
  check(driver().cuMemcpyHtoD_v2(ptr_, host, size), "cuMemcpyHtoD(" + std::to_string(size) + " bytes)");
}

void DeviceBuffer::download(void *host, size_t size) const {
  if (size > bytes_)
    throw Error("DeviceBuffer::download: " + std::to_string(size) +
                " bytes requested from a buffer of " + std::to_string(bytes_) + " bytes");
  if (size == 0)
    return;
  if (!host)
    throw Error("DeviceBuffer::download: null host pointer");
  ScopedContext scope(asContext(ctx_));
  check(driver().cuMemcpyDtoH_v2(host, ptr_, size), "cuMemcpyDtoH(" + std::to_string(size) + " bytes)");
}

void DeviceBuffer::fillBytes(uint8_t value) {
  if (bytes_ == 0)
    return;
  ScopedContext scope(asContext(ctx_));
  check(driver().cuMemsetD8_v2(ptr_, value, bytes_), "cuMemsetD8(" + std::to_string(bytes_) + " bytes)");
}

//===----------------------------------------------------------------------===//
// KernelArgs
//===----------------------------------------------------------------------===//

KernelArgs &KernelArgs::add(ArgKind kind, const void *value, size_t size) {
  uint64_t slot = 0;
  // The driver reads each parameter from the start of its slot, so a 4-byte value goes in the first
  // 4 bytes whatever the host's endianness.
  std::memcpy(&slot, value, size);
  kinds_.push_back(kind);
  values_.push_back(slot);
  return *this;
}

//===----------------------------------------------------------------------===//
// Module and Kernel
//===----------------------------------------------------------------------===//

std::shared_ptr<Module> Module::load(Context &ctx, CompiledModule compiled) {
  if (compiled.ptx.empty())
    throw Error("Module::load: the compiled module has no PTX");
  // make_shared cannot reach the private constructor.
  return std::shared_ptr<Module>(new Module(ctx.handle(), ctx.arch(), std::move(compiled)));
}

Module::Module(void *ctx, const std::string &deviceArch, CompiledModule compiled)
    : ctx_(ctx), compiled_(std::move(compiled)) {
  const CudaDriver &d = driver();
  ScopedContext scope(asContext(ctx_));

  std::string infoLog(kJitLogBytes, '\0'), errorLog(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_LOG_VERBOSE};
  // Sizes travel in the pointer-sized option slots (and come back there as the bytes written).
  void *values[] = {infoLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes - 1)),
                    errorLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes - 1)),
                    reinterpret_cast<void *>(uintptr_t(1))};
  CUmodule module = nullptr;
  // A device binary from an earlier load (the disk cache keeps it) skips the PTX JIT; one the driver
  // refuses (made for another device) is dropped and the PTX compiled instead.
  if (!compiled_.cubin.empty() &&
      d.cuModuleLoadDataEx(&module, compiled_.cubin.data(), 0, nullptr, nullptr) != CUDA_SUCCESS) {
    module = nullptr;
    compiled_.cubin.clear();
  }
  // Else the PTX through the driver's linker, which hands back the binary it made: kept in
  // compiled_.cubin for the cache. The linker compiles relocatable code, where ptxas ignores
  // `setmaxnreg` (the register budgets of a producer warpgroup, C7504): such PTX is loaded as a
  // whole program instead, which gives no binary back (a disk-cache hit then goes through the
  // driver's own JIT cache, keyed by the PTX text). The kernels' metadata says which.
  CUresult r = CUDA_SUCCESS;
  const char *step = "cuModuleLoadDataEx";
  const bool wholeProgram = std::any_of(compiled_.kernels.begin(), compiled_.kernels.end(),
                                        [](const KernelInfo &k) { return k.registerBudgets; });
  if (!module && wholeProgram) {
    step = "cuModuleLoadDataEx (the PTX JIT, whole program)";
    r = d.cuModuleLoadDataEx(&module, compiled_.ptx.c_str(), 5, options, values);
    if (r != CUDA_SUCCESS)
      module = nullptr;
  } else if (!module) {
    CUlinkState link = nullptr;
    step = "cuLinkCreate";
    r = d.cuLinkCreate_v2(5, options, values, &link);
    if (r == CUDA_SUCCESS) {
      step = "cuLinkAddData (the PTX JIT)";
      r = d.cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, const_cast<char *>(compiled_.ptx.c_str()),
                             compiled_.ptx.size() + 1, "flare.ptx", 0, nullptr, nullptr);
    }
    void *image = nullptr;
    size_t imageBytes = 0;
    if (r == CUDA_SUCCESS) {
      step = "cuLinkComplete";
      r = d.cuLinkComplete(link, &image, &imageBytes);
    }
    if (r == CUDA_SUCCESS) {
      // The image belongs to the link state: copy it before destroying that.
      compiled_.cubin.assign(static_cast<const char *>(image), imageBytes);
      step = "cuModuleLoadDataEx";
      r = d.cuModuleLoadDataEx(&module, compiled_.cubin.data(), 0, nullptr, nullptr);
      if (r != CUDA_SUCCESS)
        compiled_.cubin.clear();
    }
    if (link)
      (void)d.cuLinkDestroy(link);
  }
  // The logs are NUL-terminated within their buffers; trust the terminator, not the returned sizes.
  infoLog.resize(std::strlen(infoLog.c_str()));
  errorLog.resize(std::strlen(errorLog.c_str()));
  jitLog_ = infoLog;
  if (r != CUDA_SUCCESS) {
    std::string detail = "JIT log:\n" + (errorLog.empty() ? std::string("(empty)") : errorLog);
    if (!infoLog.empty())
      detail += "\nJIT info log:\n" + infoLog;
    // A module built for another target is the most common cause of a rejection; say so.
    if (!compiled_.arch.empty() && compiled_.arch != deviceArch)
      detail += "\nnote: the module was compiled for " + compiled_.arch + " but the device is " +
                deviceArch;
    check(r, step, detail);
  }
  module_ = module;

  // Resolve every kernel now: a metadata/PTX mismatch is a compiler bug best reported at load time.
  functions_.reserve(compiled_.kernels.size());
  for (const KernelInfo &k : compiled_.kernels) {
    CUfunction fn = nullptr;
    CUresult fr = d.cuModuleGetFunction(&fn, module, k.name.c_str());
    if (fr != CUDA_SUCCESS) {
      (void)d.cuModuleUnload(module);
      module_ = nullptr;
      check(fr, "cuModuleGetFunction('" + k.name + "')",
            "the kernel is listed in the module metadata but not found in the PTX");
    }
    functions_.push_back(fn);
  }
  sharedLimitSet_.reset(new std::atomic<bool>[compiled_.kernels.size()]()); // all false
  residentCtas_.reset(new std::atomic<int>[compiled_.kernels.size()]());     // all 0
}

Module::~Module() {
  if (!module_)
    return;
  try {
    ScopedContext scope(asContext(ctx_));
    for (const auto &[key, ptr] : workspaces_)
      (void)driver().cuMemFree_v2(static_cast<CUdeviceptr>(ptr));
    for (const auto &[stream, buffer] : streamWorkspaces_)
      (void)driver().cuMemFree_v2(static_cast<CUdeviceptr>(buffer.first));
    (void)driver().cuModuleUnload(static_cast<CUmodule>(module_));
  } catch (...) {
    // See the file comment.
  }
}

std::uint64_t Module::splitWorkspace(size_t kernel, void *stream, int ctas) const {
  std::lock_guard<std::mutex> lock(workspaceMutex_);
  auto key = std::make_pair(kernel, stream);
  if (auto it = workspaces_.find(key); it != workspaces_.end())
    return it->second;
  const KernelInfo &k = compiled_.kernels[kernel];
  // At least two flags: a kernel without slots takes its instances from the first two as counters.
  const size_t bytes = std::max<size_t>(static_cast<size_t>(ctas) * (static_cast<size_t>(k.splitSlotBytes) + sizeof(int32_t)),
                                        2 * sizeof(int32_t));
  const CudaDriver &d = driver();
  CUdeviceptr ptr = 0;
  check(d.cuMemAlloc_v2(&ptr, bytes), "cuMemAlloc(" + std::to_string(bytes) + " B) for the split workspace of kernel '" +
                                          k.name + "'");
  // The flags start at zero; the first launch may run on any stream, so the clearing is waited for.
  CUresult r = d.cuMemsetD8_v2(ptr, 0, bytes);
  if (r == CUDA_SUCCESS)
    r = d.cuCtxSynchronize();
  if (r != CUDA_SUCCESS) {
    (void)d.cuMemFree_v2(ptr);
    check(r, "clearing the split workspace of kernel '" + k.name + "'");
  }
  workspaces_[key] = static_cast<std::uint64_t>(ptr);
  return static_cast<std::uint64_t>(ptr);
}

std::uint64_t Module::streamWorkspace(void *stream, size_t bytes) const {
  std::lock_guard<std::mutex> lock(workspaceMutex_);
  auto &[ptr, size] = streamWorkspaces_[stream];
  if (ptr && size >= bytes)
    return ptr;
  ScopedContext scope(asContext(ctx_));
  const CudaDriver &d = driver();
  if (ptr) { // launches on this stream may still read the smaller buffer
    check(d.cuCtxSynchronize(), "waiting for the work that uses a stream workspace before growing it");
    (void)d.cuMemFree_v2(static_cast<CUdeviceptr>(ptr));
    ptr = 0;
    size = 0;
  }
  CUdeviceptr fresh = 0;
  check(d.cuMemAlloc_v2(&fresh, std::max<size_t>(bytes, 1)),
        "cuMemAlloc(" + std::to_string(bytes) + " B) for a stream workspace");
  ptr = static_cast<std::uint64_t>(fresh);
  size = bytes;
  return ptr;
}

Kernel Module::kernel(const std::string &name) const {
  for (size_t i = 0; i < compiled_.kernels.size(); ++i)
    if (compiled_.kernels[i].name == name)
      return Kernel(shared_from_this(), i);
  throw Error("no kernel named '" + name + "' in the module; available kernels: " +
              joinKernelNames(compiled_));
}

namespace {

/// One CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMapBytes {
  uint64_t opaque[16];
};

/// Encodes map `t` for the launch arguments `args` into `out`; false with the reason on failure.
bool encodeTensorMap(const TensorMapInfo &t, const KernelArgs &args, TensorMapBytes &out, std::string &why) {
  const CudaDriver &d = driver();
  if (!d.cuTensorMapEncodeTiled) {
    why = "the CUDA driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12.0 or newer)";
    return false;
  }
  auto value = [&](const HostScalar &h) -> int64_t {
    if (h.arg < 0)
      return h.value;
    int64_t v = 0;
    if (args.kinds()[h.arg] == ArgKind::I32) {
      int32_t v32;
      std::memcpy(&v32, args.value(h.arg), 4);
      v = v32;
    } else {
      std::memcpy(&v, args.value(h.arg), 8);
    }
    return h.trunc32 ? static_cast<int32_t>(v) : v;
  };
  const size_t rank = t.sizes.size();
  uint64_t dims[5], strides[5];
  unsigned box[5], elementStrides[5];
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = value(t.sizes[i]), stride = value(t.strides[i]) * t.elemBytes;
    if (size < 1 || size > (int64_t(1) << 32)) {
      why = "dimension " + std::to_string(i) + " has size " + std::to_string(size) + " (TMA needs 1 to 2^32)";
      return false;
    }
    if (i > 0 && (stride <= 0 || stride % 16 != 0 || stride >= (int64_t(1) << 40))) {
      why = "dimension " + std::to_string(i) + " has a stride of " + std::to_string(stride) +
            " bytes (TMA needs a positive multiple of 16)";
      return false;
    }
    dims[i] = static_cast<uint64_t>(size);
    if (i > 0)
      strides[i - 1] = static_cast<uint64_t>(stride);
    box[i] = static_cast<unsigned>(t.box[i]);
    elementStrides[i] = 1;
  }
  uint64_t base = 0;
  std::memcpy(&base, args.value(t.pointerArg), 8);
  if (base % 16 != 0) {
    why = "the base address is not 16-byte aligned";
    return false;
  }
  // CUtensorMapDataType: UINT8 0, UINT16 1, UINT32 2, UINT64 4 (the bytes are only copied), FLOAT32 7
  // (a reduce adds the elements as floats).
  constexpr int kFloat32 = 7;
  const int dataType = t.floatElems ? kFloat32 : t.elemBytes == 1 ? 0 : t.elemBytes == 2 ? 1 : t.elemBytes == 4 ? 2 : 4;
  // CUtensorMapSwizzle: none 0, 32B 1, 64B 2, 128B 3.
  const int swizzle = t.swizzleBytes == 0 ? 0 : t.swizzleBytes == 32 ? 1 : t.swizzleBytes == 64 ? 2 : 3;
  constexpr int kInterleaveNone = 0, kL2Promotion256B = 3, kOobFillZeros = 0;
  CUresult r = d.cuTensorMapEncodeTiled(&out, dataType, static_cast<unsigned>(rank), reinterpret_cast<void *>(base),
                                        dims, strides, box, elementStrides, kInterleaveNone, swizzle,
                                        kL2Promotion256B, kOobFillZeros);
  if (r != CUDA_SUCCESS) {
    why = "cuTensorMapEncodeTiled failed: " + describeResult(r);
    return false;
  }
  return true;
}

/// Encodes every map of `k`; false with the first failure's reason.
bool encodeTensorMaps(const KernelInfo &k, const KernelArgs &args, std::vector<TensorMapBytes> &maps,
                      std::string &why) {
  maps.assign(k.tensorMaps.size(), TensorMapBytes{});
  for (size_t i = 0; i < maps.size(); ++i)
    if (!encodeTensorMap(k.tensorMaps[i], args, maps[i], why)) {
      why = "tensor map " + std::to_string(i) + ": " + why;
      return false;
    }
  return !maps.empty();
}

} // namespace

const KernelInfo &Kernel::info() const { return module_->compiled_.kernels[index_]; }

bool Kernel::usesTensorMaps(const KernelArgs &args, std::string *reason) const {
  const KernelInfo &k = info();
  std::string why = "the kernel reads no tensor maps";
  std::vector<TensorMapBytes> maps;
  bool ok = args.size() == k.args.size() && encodeTensorMaps(k, args, maps, why);
  if (args.size() != k.args.size())
    why = "wrong argument count";
  if (!ok && reason)
    *reason = why;
  return ok;
}

void *Kernel::handle() const { return module_->functions_[index_]; }

void Kernel::raiseSharedLimit() const {
  const KernelInfo &k = info();
  const CudaDriver &d = driver();
  CUfunction fn = static_cast<CUfunction>(handle());
  std::atomic<bool> &limitSet = module_->sharedLimitSet_[index_];
  if (k.sharedBytes > kDefaultSharedLimit && !limitSet.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(module_->sharedLimitMutex_);
    if (!limitSet.load(std::memory_order_relaxed)) {
      // On failure the flag stays unset, so the next launch retries and reports the error again.
      check(d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.sharedBytes),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = " + std::to_string(k.sharedBytes) +
                ") for kernel '" + k.name + "'",
            "the kernel needs more dynamic shared memory than this device allows per block");
      limitSet.store(true, std::memory_order_release);
    }
  }
}

int Kernel::residentCtas() const {
  const KernelInfo &k = info();
  std::atomic<int> &resident = module_->residentCtas_[index_];
  int fit = resident.load(std::memory_order_acquire);
  if (fit != 0)
    return fit;
  const CudaDriver &d = driver();
  ScopedContext scope(asContext(module_->ctx_));
  raiseSharedLimit(); // the occupancy of a kernel above 48 KiB counts with the raised limit
  CUfunction fn = static_cast<CUfunction>(handle());
  int perSM = 0, sms = 0;
  CUdevice dev = 0;
  check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, fn, k.numThreads, static_cast<size_t>(k.sharedBytes)),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor('" + k.name + "')");
  check(d.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  check(d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  if (perSM < 1 || sms < 1)
    throw Error("kernel '" + k.name + "': no CTA of it fits on an SM (" + std::to_string(k.numThreads) +
                " threads, " + std::to_string(k.sharedBytes) + " B of shared memory)");
  fit = perSM * sms;
  resident.store(fit, std::memory_order_release);
  return fit;
}

void Kernel::launch(Grid grid, const KernelArgs &args, void *stream) const {
  const KernelInfo &k = info();
  // Built only on failure: launch sits on benchmark hot paths.
  auto where = [&] { return "launch of kernel '" + k.name + "'"; };
  auto gridText = [&] {
    return "(" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
           std::to_string(grid.z) + ")";
  };

  if (args.size() != k.args.size())
    throw Error(where() + ": expected " + std::to_string(k.args.size()) + " argument(s), got " +
                std::to_string(args.size()));
  for (size_t i = 0; i < k.args.size(); ++i)
    if (args.kinds()[i] != k.args[i])
      throw Error(where() + ": argument " + std::to_string(i) + " has the wrong kind: expected " +
                  argKindName(k.args[i]) + ", got " + argKindName(args.kinds()[i]));
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    throw Error(where() + ": grid dimensions must be at least 1, got " + gridText());
  if (k.numThreads <= 0)
    throw Error(where() + ": the metadata gives no block size (numThreads = " +
                std::to_string(k.numThreads) + ")");
  if (k.sharedBytes < 0)
    throw Error(where() + ": negative dynamic shared memory size in the metadata");

  const CudaDriver &d = driver();
  ScopedContext scope(asContext(module_->ctx_));
  CUfunction fn = static_cast<CUfunction>(handle());

  raiseSharedLimit();

  // cuLaunchKernel copies the parameter values during the call, so pointers into a local copy do.
  std::vector<uint64_t> slots(args.size());
  std::vector<void *> params(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    std::memcpy(&slots[i], args.value(i), sizeof(uint64_t));
    params[i] = &slots[i];
  }
  // A persistent kernel: the requested grid goes to its hidden parameters, and only as many CTAs as
  // fit on the device at once are launched (each runs program instances of the grid in turn).
  unsigned ctas[3] = {grid.x, grid.y, grid.z};
  int32_t requested[3] = {};
  int fit = 0; // CTAs that fit at once (persistent kernels)
  if (k.persistent) {
    const uint64_t instances = uint64_t(grid.x) * grid.y * grid.z;
    if (instances > uint64_t(INT32_MAX))
      throw Error(where() + ": a persistent kernel runs at most 2^31 - 1 program instances, the grid " +
                  gridText() + " has " + std::to_string(instances));
    fit = residentCtas();
    for (int i = 0; i < 3; ++i) {
      requested[i] = static_cast<int32_t>(ctas[i]);
      params.push_back(&requested[i]);
    }
    ctas[0] = static_cast<unsigned>(std::min<uint64_t>(instances, static_cast<uint64_t>(fit)));
    ctas[1] = ctas[2] = 1;
  }
  // A kernel that splits program instances: its workspace (sized for every CTA that fits).
  std::uint64_t workspace = 0;
  if (k.splitSlotBytes >= 0) {
    if (!k.persistent)
      throw Error(where() + ": the metadata gives a split workspace to a kernel that is not persistent");
    workspace = module_->splitWorkspace(index_, stream, fit);
    params.push_back(&workspace);
  }
  // Hidden TMA parameters: 1 when every map encoded for these arguments (else the kernel copies
  // without TMA and the maps' bytes are never read), then the maps.
  std::vector<TensorMapBytes> maps;
  int32_t mapsEncoded = 0;
  if (!k.tensorMaps.empty()) {
    std::string why;
    mapsEncoded = encodeTensorMaps(k, args, maps, why) ? 1 : 0;
    if (!mapsEncoded && k.tmaRequired)
      throw Error(where() + ": " + why + ", and the kernel was compiled without the copies that replace " +
                  "its tensor maps (CompileOptions::tmaFallback off); compile it with them for such views");
    params.push_back(&mapsEncoded);
    for (TensorMapBytes &m : maps)
      params.push_back(&m);
  }
  void **kernelParams = params.empty() ? nullptr : params.data();
  // A kernel that waits for the grid before it (tile.wait_prior_grids) may start while that grid
  // ends: a programmatic dependent launch, where the driver has the call for it and
  // FLARE_DEPENDENT_LAUNCH=1 asks for it (read once). Off by default: split-KV decoding's combine, the
  // only such kernel yet, measured level to 0.5% slower with it (bench/NOTES.md, d10).
  static const bool allowed = [] {
    const char *v = std::getenv("FLARE_DEPENDENT_LAUNCH");
    return v && std::string(v) == "1";
  }();
  const bool dependent = allowed && k.dependentLaunch && d.cuLaunchKernelEx;
  CUresult r;
  if (dependent) {
    CUlaunchAttribute overlap{};
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = ctas[0];
    config.gridDimY = ctas[1];
    config.gridDimZ = ctas[2];
    config.blockDimX = static_cast<unsigned>(k.numThreads);
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = static_cast<unsigned>(k.sharedBytes);
    config.hStream = static_cast<CUstream>(stream);
    config.attrs = &overlap;
    config.numAttrs = 1;
    r = d.cuLaunchKernelEx(&config, fn, kernelParams, nullptr);
  } else {
    r = d.cuLaunchKernel(fn, ctas[0], ctas[1], ctas[2], static_cast<unsigned>(k.numThreads), 1, 1,
                         static_cast<unsigned>(k.sharedBytes), static_cast<CUstream>(stream), kernelParams, nullptr);
  }
  if (r != CUDA_SUCCESS)
    check(r, std::string(dependent ? "cuLaunchKernelEx" : "cuLaunchKernel") + "('" + k.name + "', grid " +
                 gridText() + ", block " + std::to_string(k.numThreads) + ", " + std::to_string(k.sharedBytes) +
                 " B dynamic shared memory" + (dependent ? ", dependent launch)" : ")"));
}

//===----------------------------------------------------------------------===//
// Event
//===----------------------------------------------------------------------===//

Event::Event(Context &ctx) : ctx_(ctx.handle()) {
  ScopedContext scope(asContext(ctx_));
  CUevent event = nullptr;
  check(driver().cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  event_ = event;
}

Event::~Event() {
  if (!event_)
    return;
  try {
    ScopedContext scope(asContext(ctx_));
    (void)driver().cuEventDestroy_v2(static_cast<CUevent>(event_));
  } catch (...) {
  }
}

void Event::record(void *stream) {
  ScopedContext scope(asContext(ctx_));
  check(driver().cuEventRecord(static_cast<CUevent>(event_), static_cast<CUstream>(stream)),
        "cuEventRecord");
}

void Event::synchronize() const {
  ScopedContext scope(asContext(ctx_));
  check(driver().cuEventSynchronize(static_cast<CUevent>(event_)), "cuEventSynchronize");
}

float Event::elapsedMs(const Event &start, const Event &end) {
  ScopedContext scope(asContext(start.ctx_));
  float ms = 0;
  check(driver().cuEventElapsedTime(&ms, static_cast<CUevent>(start.event_),
                                    static_cast<CUevent>(end.event_)),
        "cuEventElapsedTime");
  return ms;
}

} // namespace flare::rt
