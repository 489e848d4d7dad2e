//===- Runtime.h - Loading and launching Flare kernels on a GPU -*- C++ -*-===//
//
// The public runtime API: a device context, device buffers, compiled modules and their kernels, a
// launcher that checks arguments against the compiler's kernel metadata, and a two-level (memory and
// disk) cache of compiled modules. It talks to the GPU through the CUDA Driver API, which it loads at
// run time (libcuda.so.1), so programs built against it start, and report a clear flare::Error, on
// machines without a driver or GPU.
//
// This header includes only the standard library and Flare headers; driver handles are kept as
// opaque pointers so that cuda.h is not needed to use it.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_RUNTIME_RUNTIME_H
#define FLARE_RUNTIME_RUNTIME_H

#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"
#include "flare/Runtime/SingleFlight.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace flare::rt {

/// True when the CUDA driver loads, cuInit succeeds and at least one device is present. Otherwise
/// false, with the reason in `*reason` when given. Never throws.
bool gpuAvailable(std::string *reason = nullptr);

/// The primary context of one device, retained for this object's lifetime and made current on the
/// constructing thread. Buffers, modules and events created from a Context must not outlive it.
class Context {
public:
  explicit Context(int device = 0);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  int device() const { return device_; }
  const std::string &name() const { return name_; }
  int ccMajor() const { return ccMajor_; }
  int ccMinor() const { return ccMinor_; }
  /// Streaming multiprocessors of the device.
  int multiprocessors() const { return multiprocessors_; }
  /// The compile target for this device: "sm_90a" for compute capability 9.0 (Flare uses the
  /// Hopper-specific instructions there), otherwise "sm_<major><minor>".
  std::string arch() const;
  /// cuDriverGetVersion's value, e.g. 12080 for CUDA 12.8.
  int driverVersion() const { return driverVersion_; }

  /// Waits for all work on this context (cuCtxSynchronize); launch errors surface here.
  void synchronize() const;
  /// Makes this context current on the calling thread (needed once per thread that uses the driver
  /// directly; Flare's own calls switch contexts as needed).
  void makeCurrent() const;
  /// The CUcontext, for interoperating with other driver-API code.
  void *handle() const { return ctx_; }

private:
  int device_ = 0;
  int cuDevice_ = 0;
  void *ctx_ = nullptr;
  std::string name_;
  int ccMajor_ = 0, ccMinor_ = 0;
  int multiprocessors_ = 0;
  int driverVersion_ = 0;
};

/// A device allocation, freed on destruction. Move-only. A zero-byte buffer is valid and has ptr() 0.
class DeviceBuffer {
public:
  DeviceBuffer(Context &ctx, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  /// The device address (a CUdeviceptr).
  uint64_t ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

  /// Copies `size` bytes from the host into the start of the buffer (synchronous). Throws when `size`
  /// exceeds bytes().
  void upload(const void *host, size_t size);
  /// Copies the first `size` bytes of the buffer to the host, after all preceding work on the legacy
  /// default stream has finished. Throws when `size` exceeds bytes().
  void download(void *host, size_t size) const;
  /// Sets every byte of the buffer to `value`.
  void fillBytes(uint8_t value);

  template <class T> static DeviceBuffer fromHost(Context &ctx, const std::vector<T> &host) {
    static_assert(std::is_trivially_copyable<T>::value, "fromHost copies raw bytes");
    DeviceBuffer buffer(ctx, host.size() * sizeof(T));
    buffer.upload(host.data(), buffer.bytes());
    return buffer;
  }

  template <class T> std::vector<T> toHost(size_t count) const {
    static_assert(std::is_trivially_copyable<T>::value, "toHost copies raw bytes");
    if (count > bytes_ / sizeof(T))
      throw Error("DeviceBuffer::toHost: " + std::to_string(count) + " elements of " +
                  std::to_string(sizeof(T)) + " bytes do not fit in a buffer of " +
                  std::to_string(bytes_) + " bytes");
    std::vector<T> host(count);
    download(host.data(), count * sizeof(T));
    return host;
  }

private:
  void release() noexcept;

  void *ctx_ = nullptr; // the owning CUcontext, made current around every driver call
  uint64_t ptr_ = 0;
  size_t bytes_ = 0;
};

/// The arguments of one launch, in parameter order, each with its ABI kind. Adders return *this so
/// that arguments can be chained.
class KernelArgs {
public:
  KernelArgs &addPointer(const DeviceBuffer &buffer) { return addPointer(buffer.ptr()); }
  KernelArgs &addPointer(uint64_t devicePtr) { return add(ArgKind::Pointer, &devicePtr, 8); }
  KernelArgs &addI32(int32_t value) { return add(ArgKind::I32, &value, 4); }
  KernelArgs &addI64(int64_t value) { return add(ArgKind::I64, &value, 8); }
  KernelArgs &addF32(float value) { return add(ArgKind::F32, &value, 4); }

  size_t size() const { return kinds_.size(); }
  const std::vector<ArgKind> &kinds() const { return kinds_; }
  /// The value of argument `index`, stored in the first 4 or 8 bytes of an 8-byte slot.
  const void *value(size_t index) const { return &values_.at(index); }
  void clear() {
    kinds_.clear();
    values_.clear();
  }

private:
  KernelArgs &add(ArgKind kind, const void *value, size_t size);

  std::vector<ArgKind> kinds_;
  std::vector<uint64_t> values_; // one 8-byte, 8-aligned slot per argument
};

/// A launch grid in CTAs. Every dimension must be at least 1.
struct Grid {
  unsigned x = 1, y = 1, z = 1;
};

class Module;

/// One kernel of a loaded module. Cheap to copy; keeps its module loaded.
class Kernel {
public:
  const KernelInfo &info() const;
  /// Launches on `stream` (a CUstream; nullptr is the legacy default stream) with the block size and
  /// dynamic shared memory from info(). Checks the arguments against info().args first. A persistent
  /// kernel (info().persistent) runs the program instances of `grid` on as many CTAs as fit on the
  /// device at once. Asynchronous: errors during execution surface at the next synchronisation.
  void launch(Grid grid, const KernelArgs &args, void *stream = nullptr) const;
  /// A persistent kernel's CTAs that fit on the device at once (what launch() starts at most; the
  /// driver's occupancy, asked once per kernel).
  int residentCtas() const;
  /// The CUfunction.
  void *handle() const;
  /// Whether a launch with `args` copies through TMA: true when every tensor map of info() encodes for
  /// these arguments (16-byte aligned base and strides, a driver with TMA); otherwise false with the
  /// reason in `*reason`, and the launch copies without TMA. False for kernels without tensor maps.
  bool usesTensorMaps(const KernelArgs &args, std::string *reason = nullptr) const;
  /// The module the kernel belongs to (its per-stream workspaces).
  const Module &module() const { return *module_; }

private:
  friend class Module;
  Kernel(std::shared_ptr<const Module> module, size_t index)
      : module_(std::move(module)), index_(index) {}
  /// Raises the kernel's dynamic shared memory limit to info().sharedBytes (once; needed above 48
  /// KiB before a launch or an occupancy query).
  void raiseSharedLimit() const;

  std::shared_ptr<const Module> module_;
  size_t index_ = 0;
};

/// A CompiledModule loaded into a context (cuModuleLoadDataEx); unloaded on destruction.
class Module : public std::enable_shared_from_this<Module> {
public:
  /// JIT-compiles the PTX for the context's device. Throws flare::Error with the JIT error log when the
  /// driver rejects the PTX, or when a kernel named in the metadata is not in the PTX.
  static std::shared_ptr<Module> load(Context &ctx, CompiledModule compiled);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// The kernel called `name`; throws (listing the available names) when there is none.
  Kernel kernel(const std::string &name) const;
  const CompiledModule &compiled() const { return compiled_; }
  /// The driver's informational JIT log (register usage and the like with verbose logging).
  const std::string &jitLog() const { return jitLog_; }
  /// Device memory of at least `bytes` (a CUdeviceptr) that this module's launches on `stream` use as
  /// scratch (e.g. the backward pass's f32 dQ sums), kept per stream and freed with the module: the
  /// first call of a stream, or one that needs more, allocates (a larger buffer replaces the old one
  /// after the context is synchronised); later calls return the same memory without driver calls.
  std::uint64_t streamWorkspace(void *stream, size_t bytes) const;

private:
  friend class Kernel;
  Module(void *ctx, const std::string &deviceArch, CompiledModule compiled);

  void *ctx_ = nullptr;    // CUcontext
  void *module_ = nullptr; // CUmodule
  CompiledModule compiled_;
  std::string jitLog_;
  std::vector<void *> functions_; // CUfunction per compiled_.kernels entry
  // Raising a kernel's dynamic shared memory limit is needed once per function, on its first launch.
  // (A flag and a mutex rather than std::once_flag: libstdc++'s call_once aborts when the callable
  // throws, and a failing cuFuncSetAttribute must surface as a flare::Error.)
  std::unique_ptr<std::atomic<bool>[]> sharedLimitSet_;
  mutable std::mutex sharedLimitMutex_;
  // A persistent kernel's CTAs that fit on the device at once (0: not asked yet), per kernel.
  std::unique_ptr<std::atomic<int>[]> residentCtas_;
  // The workspace of a kernel that splits program instances (KernelInfo::splitSlotBytes), per kernel
  // and stream (launches on one stream run one after the other, each leaving its flags zero).
  std::uint64_t splitWorkspace(size_t kernel, void *stream, int ctas) const;
  mutable std::mutex workspaceMutex_;
  mutable std::map<std::pair<size_t, void *>, std::uint64_t> workspaces_; // CUdeviceptr
  mutable std::map<void *, std::pair<std::uint64_t, size_t>> streamWorkspaces_; // stream -> (CUdeviceptr, bytes)
};

/// A CUDA event for timing work on a stream.
class Event {
public:
  explicit Event(Context &ctx);
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  void record(void *stream = nullptr);
  void synchronize() const;
  /// Milliseconds between two recorded events (both must have completed; see synchronize()).
  static float elapsedMs(const Event &start, const Event &end);

private:
  void *ctx_ = nullptr;
  void *event_ = nullptr;
};

/// An on-disk store of compiled modules, one file per cache key (see KernelCache.cpp for the file
/// format). Writes are atomic (temp file + rename), so concurrent processes may share a directory, and
/// threads may use one DiskCache object at once (the kernel cache loads and stores different keys
/// concurrently).
class DiskCache {
public:
  explicit DiskCache(std::string dir);

  /// The entry for `key`, or nullopt when there is none or it fails any check (the bad file is then
  /// deleted and counted in rejected()). Keys are 1-128 characters of [0-9A-Za-z_-]; anything else
  /// throws flare::Error.
  std::optional<CompiledModule> load(const std::string &key);
  /// Writes the entry for `key`, replacing any existing one; creates the directory. Throws
  /// flare::Error on I/O failure.
  void store(const std::string &key, const CompiledModule &module);
  std::string pathFor(const std::string &key) const;
  /// Deletes the entry for `key` if there is one; true when a file was removed.
  bool erase(const std::string &key);
  const std::string &dir() const { return dir_; }
  /// How many corrupt or mismatching entries load() has found (and deleted).
  size_t rejected() const { return rejected_; }

  /// The exact bytes of an entry file; store() writes this. Public so that tests can build entries
  /// with arbitrary (for instance malformed) metadata.
  static std::string encodeEntry(const std::string &key, const std::string &metadataJson,
                                 const std::string &ptx, const std::string &cubin = {});

private:
  std::string dir_;
  std::atomic<size_t> rejected_{0};
};

/// How KernelCache::lookup answered a request.
enum class CacheSource {
  Memory,   ///< the cache object had the module
  Disk,     ///< loaded from the cache directory
  Compiled, ///< compiled (and stored) by this request
  Waited    ///< another thread was looking the same kernel up (compiling it, say): this request waited
            ///< for that answer
};
/// "memory", "disk", "compiled", "waited".
const char *cacheSourceName(CacheSource source);

/// One answered request: the module, where it came from, and its cache key (the name of its disk
/// entry, <dir>/<key>.fkc).
struct CacheAnswer {
  std::shared_ptr<Module> module;
  CacheSource source = CacheSource::Memory;
  std::string key;
};

/// Compiles Flare IR once per (compiler, canonical IR, options, arch, driver) and keeps the loaded
/// module: in memory for this object's lifetime and on disk across processes.
///
/// Thread-safe, and concurrent: requests for different kernels compile (or load from disk) at the
/// same time, each on its own thread, and requests for one kernel arriving while it compiles wait for
/// that compile instead of starting their own (see SingleFlight.h). When it fails, every waiting
/// request throws its error and nothing is remembered: the next request compiles again. The lock
/// guards only the in-memory maps, never a compile, a disk access or a driver call.
class KernelCache {
public:
  explicit KernelCache(Context &ctx, std::string dir = defaultDir());

  /// The loaded module for `mlirSource`. An empty options.arch means ctx.arch(). Compile errors
  /// propagate as flare::Error.
  std::shared_ptr<Module> getOrCompile(const std::string &mlirSource, CompileOptions options = {},
                                       const std::string &bufferName = "<input>");
  /// getOrCompile, also saying where the module came from and under which key.
  CacheAnswer lookup(const std::string &mlirSource, CompileOptions options = {},
                     const std::string &bufferName = "<input>");

  /// Answers later requests for (`mlirSource`, `options`) with `module`, in memory and on disk,
  /// unless such a request was answered before in this cache object. For a caller that knows
  /// that these options compile to the same code as the ones `module` was compiled with (a compile
  /// option the kernel ignores), so that the second request compiles nothing.
  void alias(const std::string &mlirSource, CompileOptions options, const std::string &bufferName,
             std::shared_ptr<Module> module);

  /// Lookups answered from memory or disk, including those that waited for another thread's
  /// lookup of the same kernel (they compiled nothing themselves).
  size_t hits() const;
  /// Lookups that had to compile.
  size_t misses() const;
  /// Of the hits, the lookups that waited for another thread's lookup of the same kernel.
  size_t waits() const;
  /// Lookups waiting now for another thread's lookup (a compile, say) of the same kernel.
  size_t waiting() const { return lookups_.waiting(); }
  /// Corrupt or unusable disk entries found (and deleted).
  size_t rejectedEntries() const;
  /// Compiled modules that could not be written to disk (the cache keeps working without the disk).
  size_t storeFailures() const;

  /// Hex SHA-256 over compilerVersion(), the canonical IR, options.fingerprint(), arch and the driver
  /// version, each length-prefixed so that no two different inputs hash the same text.
  static std::string cacheKey(const std::string &canonicalIR, const CompileOptions &options,
                              const std::string &arch, int driverVersion);
  /// $FLARE_CACHE_DIR, else $XDG_CACHE_HOME/flare, else $HOME/.cache/flare, else a per-user
  /// directory in the system temp directory.
  static std::string defaultDir();
  /// The context it loads modules into, and its directory on disk.
  Context &context() const { return ctx_; }
  const std::string &dir() const { return disk_.dir(); }

private:
  /// The cache key of a request (its IR canonicalized outside the lock, once per source text).
  std::string keyOf(const std::string &mlirSource, const CompileOptions &options, const std::string &bufferName);
  /// The module of `key` in memory, or null.
  std::shared_ptr<Module> inMemory(const std::string &key) const;
  /// Keeps `module` in memory under `key` unless a module is there already; returns the one kept.
  std::shared_ptr<Module> remember(const std::string &key, std::shared_ptr<Module> module);
  /// Writes `module` to the disk under `key` (a failure is only counted).
  void storeOnDisk(const std::string &key, const Module &module);
  /// The module of `key` from the disk, loaded; null when there is none or it is unusable (then erased).
  std::shared_ptr<Module> loadFromDisk(const std::string &key, const std::string &arch);

  Context &ctx_;
  mutable std::mutex mutex_; // guards modules_ and sourceKeys_
  DiskCache disk_;
  std::unordered_map<std::string, std::shared_ptr<Module>> modules_; // by cache key
  // Exact source text (+ options) -> cache key, so that a repeated lookup skips re-parsing.
  std::unordered_map<std::string, std::string> sourceKeys_;
  // Lookups of keys not in memory that are under way (from disk or compiling), by cache key.
  SingleFlight<std::shared_ptr<Module>> lookups_;
  // Atomic so the accessors never take a lock. rejected_: entries found unusable after the disk
  // cache's own checks passed (another architecture, an image the driver refuses).
  std::atomic<size_t> hits_{0}, misses_{0}, waits_{0}, rejected_{0}, storeFailures_{0};
};

} // namespace flare::rt

#endif // FLARE_RUNTIME_RUNTIME_H
