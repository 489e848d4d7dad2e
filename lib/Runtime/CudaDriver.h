//===- CudaDriver.h - The CUDA Driver API, loaded at run time ---*- C++ -*-===//
//
// Flare never links libcuda: a build machine without a GPU must still build and test everything, and a
// program that never launches a kernel must not need a driver. Instead libcuda.so.1 is dlopen'ed the
// first time a runtime entry point needs it and every function is resolved by its exact, versioned
// symbol name (cuMemAlloc_v2, not cuMemAlloc: cuda.h renames the unversioned spellings with macros, and
// the unversioned symbols in libcuda keep the old, incompatible ABIs).
//
// This header is private to the runtime; it includes cuda.h for the types and constants only.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_RUNTIME_CUDADRIVER_H
#define FLARE_LIB_RUNTIME_CUDADRIVER_H

#include <cuda.h>

#include <cstdint>
#include <string>

namespace flare::rt::detail {

// Every entry point the runtime uses, by its exported symbol name. A missing symbol makes loading fail
// (the driver is too old for Flare), except for those resolved by hand in CudaDriver.cpp.
#define FLARE_CUDA_REQUIRED_FUNCTIONS(X)                                                                \
  X(cuInit)                                                                                             \
  X(cuDriverGetVersion)                                                                                 \
  X(cuGetErrorName)                                                                                     \
  X(cuGetErrorString)                                                                                   \
  X(cuDeviceGet)                                                                                        \
  X(cuDeviceGetCount)                                                                                   \
  X(cuDeviceGetName)                                                                                    \
  X(cuDeviceGetAttribute)                                                                               \
  X(cuDevicePrimaryCtxRetain)                                                                           \
  X(cuDevicePrimaryCtxRelease_v2)                                                                       \
  X(cuCtxSetCurrent)                                                                                    \
  X(cuCtxGetCurrent)                                                                                    \
  X(cuCtxGetDevice)                                                                                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                        \
  X(cuCtxSynchronize)                                                                                   \
  X(cuMemAlloc_v2)                                                                                      \
  X(cuMemFree_v2)                                                                                       \
  X(cuMemcpyHtoD_v2)                                                                                    \
  X(cuMemcpyDtoH_v2)                                                                                    \
  X(cuMemsetD8_v2)                                                                                      \
  X(cuModuleLoadDataEx)                                                                                 \
  X(cuModuleUnload)                                                                                     \
  X(cuLinkCreate_v2)                                                                                    \
  X(cuLinkAddData_v2)                                                                                   \
  X(cuLinkComplete)                                                                                     \
  X(cuLinkDestroy)                                                                                      \
  X(cuModuleGetFunction)                                                                                \
  X(cuFuncSetAttribute)                                                                                 \
  X(cuLaunchKernel)                                                                                     \
  X(cuStreamSynchronize)                                                                                \
  X(cuEventCreate)                                                                                      \
  X(cuEventRecord)                                                                                      \
  X(cuEventSynchronize)                                                                                 \
  X(cuEventDestroy_v2)

/// The resolved function table. Members are named exactly like the symbols they hold.
struct CudaDriver {
#define FLARE_CUDA_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  FLARE_CUDA_REQUIRED_FUNCTIONS(FLARE_CUDA_DECLARE_MEMBER)
#undef FLARE_CUDA_DECLARE_MEMBER

  /// cuEventElapsedTime_v2 where the driver has it (CUDA 12.8+), else the original cuEventElapsedTime:
  /// both take (float *ms, CUevent start, CUevent end).
  decltype(&::cuEventElapsedTime_v2) cuEventElapsedTime = nullptr;

  /// cuLaunchKernelEx (CUDA 12.0+; null on older drivers): a launch with attributes, here a
  /// programmatic dependent launch (KernelInfo::dependentLaunch); without it such kernels launch as
  /// any other.
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;

  /// cuTensorMapEncodeTiled (CUDA 12.0+; null on older drivers). Declared here rather than taken from
  /// cuda.h so that headers older than 12.0 still build: the map is 128 opaque bytes (64-byte aligned),
  /// the enums are ints (CUtensorMapDataType, ...Interleave, ...Swizzle, ...L2promotion, ...FloatOOBfill).
  using TensorMapEncodeTiledFn = CUresult (*)(void *tensorMap, int dataType, unsigned rank, void *globalAddress,
                                              const uint64_t *globalDim, const uint64_t *globalStrides,
                                              const unsigned *boxDim, const unsigned *elementStrides, int interleave,
                                              int swizzle, int l2Promotion, int oobFill);
  TensorMapEncodeTiledFn cuTensorMapEncodeTiled = nullptr;
};

/// The driver table, loaded (once, thread-safely) and initialised with cuInit(0). Throws flare::Error
/// when libcuda.so.1 cannot be loaded, lacks an entry point, or cuInit fails; the same error is
/// rethrown on every later call, so a missing driver is reported identically everywhere.
const CudaDriver &driver();

/// Like driver(), but reports failure through `reason` (when non-null) and returns nullptr instead of
/// throwing.
const CudaDriver *tryDriver(std::string *reason);

/// "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)": the name and description of a CUresult,
/// with a numeric fallback for codes the driver does not know.
std::string describeResult(CUresult result);

/// The CUresult's name alone, e.g. "CUDA_ERROR_INVALID_PTX".
std::string resultName(CUresult result);

/// Throws flare::Error("<what> failed: NAME (description)", result, NAME) unless result is
/// CUDA_SUCCESS. `detail`, when non-empty, is appended on a new line (a JIT log, say).
void check(CUresult result, const char *what);
void check(CUresult result, const std::string &what, const std::string &detail = {});

/// Makes `ctx` current on this thread for the guard's lifetime and restores the previous context
/// afterwards. Buffers and modules may be touched from threads (or after other contexts were made
/// current) where their own context is not current; this keeps every call on the right context
/// without leaving a changed current context behind. Does nothing when `ctx` is already current.
class ScopedContext {
public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

} // namespace flare::rt::detail

#endif // FLARE_LIB_RUNTIME_CUDADRIVER_H
