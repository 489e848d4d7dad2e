//===- CudaDriver.cpp - dlopen'ing libcuda and checking its results -------===//
//
// The driver is loaded at most once per process, inside a function-local static (whose initialisation
// C++ makes thread-safe), and never unloaded: objects destroyed during process exit may still call
// into it, and unloading libcuda while contexts exist is not supported by the driver anyway.
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"

#include "flare/Error.h"

#include <dlfcn.h>

#include <string>

namespace flare::rt::detail {
namespace {

constexpr const char *kDriverLibrary = "libcuda.so.1";

/// The outcome of the one attempt to load and initialise the driver.
struct LoadResult {
  CudaDriver table;
  bool ok = false;
  std::string message; ///< why loading failed; empty when ok
  CUresult initResult = CUDA_SUCCESS;
  std::string initName;
};

std::string dlerrorText() {
  const char *text = dlerror();
  return text ? text : "no error text from the dynamic loader";
}

/// Resolves one symbol; records the first failure in `missing`.
template <typename Fn> void resolve(void *handle, const char *symbol, Fn &slot, std::string &missing) {
  slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!slot && missing.empty())
    missing = symbol;
}

LoadResult loadDriver() {
  LoadResult result;
  // RTLD_LOCAL: the driver's own symbols must not satisfy anything else in the process.
  void *handle = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    result.message = std::string("CUDA driver not found: ") + kDriverLibrary +
                     " could not be loaded (" + dlerrorText() +
                     "); install the NVIDIA driver or run on a machine with a GPU";
    return result;
  }

  CudaDriver &d = result.table;
  std::string missing;
#define FLARE_CUDA_RESOLVE(name) resolve(handle, #name, d.name, missing);
  FLARE_CUDA_REQUIRED_FUNCTIONS(FLARE_CUDA_RESOLVE)
#undef FLARE_CUDA_RESOLVE
  // The _v2 timing entry point is recent; older drivers only have the original, same-signature one.
  resolve(handle, "cuEventElapsedTime_v2", d.cuEventElapsedTime, missing);
  if (!d.cuEventElapsedTime) {
    missing.clear();
    resolve(handle, "cuEventElapsedTime", d.cuEventElapsedTime, missing);
  }
  // Optional: without it (drivers before CUDA 12) dependent launches are ordinary ones.
  d.cuLaunchKernelEx = reinterpret_cast<decltype(d.cuLaunchKernelEx)>(dlsym(handle, "cuLaunchKernelEx"));
  // Optional: without it (drivers before CUDA 12) kernels copy without TMA.
  d.cuTensorMapEncodeTiled =
      reinterpret_cast<CudaDriver::TensorMapEncodeTiledFn>(dlsym(handle, "cuTensorMapEncodeTiled"));
  if (!missing.empty()) {
    result.message = std::string("CUDA driver ") + kDriverLibrary + " lacks the entry point " + missing +
                     " (the installed driver is too old for Flare)";
    return result;
  }

  CUresult init = d.cuInit(0);
  if (init != CUDA_SUCCESS) {
    // cuInit's failures (no device, driver/kernel-module mismatch, ...) are reported with the driver's
    // own name for the code, which the table can already give us.
    const char *name = nullptr, *text = nullptr;
    if (d.cuGetErrorName(init, &name) != CUDA_SUCCESS || !name)
      name = "CUDA_ERROR_UNKNOWN_CODE";
    if (d.cuGetErrorString(init, &text) != CUDA_SUCCESS || !text)
      text = "no description";
    result.initResult = init;
    result.initName = name;
    result.message = std::string("cuInit failed: ") + name + " (" + text + ")";
    if (init == CUDA_ERROR_NO_DEVICE)
      result.message += "; the CUDA driver is installed but no CUDA device is visible";
    return result;
  }
  result.ok = true;
  return result;
}

const LoadResult &loaded() {
  static const LoadResult result = loadDriver();
  return result;
}

} // namespace

const CudaDriver &driver() {
  const LoadResult &r = loaded();
  if (!r.ok)
    throw Error(r.message, static_cast<int>(r.initResult), r.initName);
  return r.table;
}

const CudaDriver *tryDriver(std::string *reason) {
  const LoadResult &r = loaded();
  if (!r.ok) {
    if (reason)
      *reason = r.message;
    return nullptr;
  }
  return &r.table;
}

std::string resultName(CUresult result) {
  const CudaDriver *d = tryDriver(nullptr);
  const char *name = nullptr;
  if (d && d->cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
    return name;
  return "CUDA_ERROR_" + std::to_string(static_cast<int>(result));
}

std::string describeResult(CUresult result) {
  const CudaDriver *d = tryDriver(nullptr);
  const char *text = nullptr;
  std::string out = resultName(result);
  if (d && d->cuGetErrorString(result, &text) == CUDA_SUCCESS && text)
    out += std::string(" (") + text + ")";
  else
    out += " (unrecognised CUresult " + std::to_string(static_cast<int>(result)) + ")";
  return out;
}

void check(CUresult result, const char *what) { check(result, std::string(what)); }

void check(CUresult result, const std::string &what, const std::string &detail) {
  if (result == CUDA_SUCCESS)
    return;
  std::string message = what + " failed: " + describeResult(result);
  if (!detail.empty())
    message += "\n" + detail;
  throw Error(message, static_cast<int>(result), resultName(result));
}

ScopedContext::ScopedContext(CUcontext ctx) {
  const CudaDriver &d = driver();
  check(d.cuCtxGetCurrent(&previous_), "cuCtxGetCurrent");
  if (previous_ == ctx)
    return;
  check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  switched_ = true;
}

ScopedContext::~ScopedContext() {
  // A failure to restore cannot be reported from a destructor; the next driver call on this thread
  // will surface any real problem with the context.
  if (switched_)
    (void)driver().cuCtxSetCurrent(previous_);
}

} // namespace flare::rt::detail
