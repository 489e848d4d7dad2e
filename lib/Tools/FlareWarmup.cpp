//===- FlareWarmup.cpp - flare-warmup: fill the kernel cache from a list of calls -===//
//
//   flare-warmup requests.txt [--threads=N] [--device=N] [--cache-dir=DIR]
//   flare-warmup --check requests.txt
//
// Reads a warm-up list (flare/Warmup.h: one class of attention calls per line, `key=value` words, `#`
// comments), checks every line, then compiles each call's kernels into the kernel cache directory
// ($FLARE_CACHE_DIR or the default, or --cache-dir) on N threads (0: one per hardware thread), printing
// a line per kernel (compiled, or found in memory, on disk or compiled by another request) and the
// total wall time. Serving processes on this machine then find the kernels on disk.
//
// Kernels the driver compiles from PTX as a whole program (register budgets: head dim 128 on sm_90a)
// have no device binary in their entry ("ptx" on their line): other processes load them through the
// driver's own JIT cache, which warm-up fills as well while it is on (a note says so).
//
// Exit status: 0 when every request succeeded; 1 for a bad list (every bad line reported with its
// number) or a failed request; 2 when there is no GPU. The cache key holds the device's architecture
// and driver version, so warm-up runs on the machine (or kind of machine) that serves; --check reads
// and checks the list without a GPU.
//
//===----------------------------------------------------------------------===//
#include "flare/Tools/Tools.h"

#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"
#include "flare/Warmup.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>

namespace cl = llvm::cl;

namespace {

/// Exit status for a machine without a GPU (the list itself was fine).
constexpr int kNoGpuStatus = 2;
/// Characters of a cache key printed per kernel (enough to find its file, <key>.fkc).
constexpr size_t kShortKey = 12;

int error(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "flare-warmup") << message << "\n";
  return 1;
}

} // namespace

int flare::tools::flareWarmupMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory category("flare-warmup options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<warm-up list>"), cl::Required, cl::cat(category));
  cl::opt<int> threads("threads", cl::desc("worker threads (0: one per hardware thread)"), cl::init(0),
                       cl::cat(category));
  cl::opt<int> device("device", cl::desc("CUDA device"), cl::init(0), cl::cat(category));
  cl::opt<std::string> cacheDir("cache-dir", cl::desc("kernel cache directory (default: $FLARE_CACHE_DIR, else the "
                                                      "user's cache directory)"),
                                cl::value_desc("dir"), cl::init(""), cl::cat(category));
  cl::opt<bool> check("check", cl::desc("read and check the list only (no GPU needed)"), cl::init(false),
                      cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "flare-warmup: compile the attention kernels of a list of calls into the kernel "
                              "cache\n\nList format: see include/flare/Warmup.h (parseWarmupList).\n");
  if (threads < 0)
    return error("--threads=" + llvm::Twine(threads.getValue()) + " is negative");

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFileOrSTDIN(input);
  if (!file)
    return error("cannot open list file '" + input + "': " + file.getError().message());
  llvm::StringRef dir = llvm::sys::path::parent_path(input.getValue());
  std::vector<WarmupRequest> requests;
  try {
    requests = parseWarmupList((*file)->getBuffer().str(), input, dir.empty() ? "." : dir.str());
  } catch (const Error &e) {
    llvm::errs() << e.what() << "\n";
    return 1;
  }
  if (requests.empty())
    return error("'" + input + "' lists no requests");

  if (check) {
    for (const WarmupRequest &r : requests)
      llvm::outs() << r.label << ": " << r.text() << "\n";
    llvm::outs() << "flare-warmup: " << requests.size() << " requests in '" << input << "' checked\n";
    return 0;
  }

  std::string reason;
  if (!rt::gpuAvailable(&reason)) {
    llvm::WithColor::error(llvm::errs(), "flare-warmup")
        << "no GPU: " << reason << "\n"
        << "  warm-up compiles for the device that runs the kernels (a cache entry is keyed by its architecture\n"
        << "  and driver version): run it on the serving machine; --check reads and checks the list without one\n";
    return kNoGpuStatus;
  }

  try {
    rt::Context ctx(device);
    rt::KernelCache cache(ctx, cacheDir.empty() ? rt::KernelCache::defaultDir() : cacheDir.getValue());
    const unsigned workers = threads > 0 ? static_cast<unsigned>(threads.getValue())
                                         : std::max(1u, std::thread::hardware_concurrency());
    llvm::outs() << "flare-warmup: " << requests.size() << " requests on " << workers << " threads, " << ctx.name()
                 << " (" << ctx.arch() << "), cache " << cache.dir() << "\n";
    llvm::outs().flush();
    const auto start = std::chrono::steady_clock::now();
    std::vector<WarmupResult> results = warmup(cache, requests, static_cast<int>(workers));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::set<std::string> kernels, compiled, withoutBinary;
    size_t failed = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      const WarmupResult &r = results[i];
      const WarmupRequest &q = requests[i];
      if (!r.ok()) {
        ++failed;
        llvm::outs() << llvm::format("%-9s %9s  ", "FAILED", "") << r.error << "\n";
        continue;
      }
      for (size_t k = 0; k < r.kernels.size(); ++k) {
        const WarmupKernel &kernel = r.kernels[k];
        kernels.insert(kernel.cacheKey);
        if (kernel.source == rt::CacheSource::Compiled)
          compiled.insert(kernel.cacheKey);
        if (!kernel.deviceBinary)
          withoutBinary.insert(kernel.cacheKey);
        const char *source = r.duplicateOf >= 0 ? "repeated" : rt::cacheSourceName(kernel.source);
        llvm::outs() << llvm::format("%-9s %9.1f ms  ", source, k == 0 ? r.ms : 0.0)
                     << kernel.cacheKey.substr(0, kShortKey) << "  " << kernel.name << " " << kernel.config
                     << (kernel.deviceBinary ? "" : " ptx") << "  " << q.label << " " << q.text() << "\n";
      }
    }
    llvm::outs() << "flare-warmup: " << requests.size() << " requests, " << kernels.size() << " kernels ("
                 << compiled.size() << " compiled, " << kernels.size() - compiled.size()
                 << " already cached), " << llvm::format("%.2f", seconds) << " s wall on " << workers
                 << " threads";
    if (failed)
      llvm::outs() << "; " << failed << " requests FAILED";
    llvm::outs() << "\n";
    if (!withoutBinary.empty()) {
      // Their entries hold PTX only (the driver compiles them as a whole program): other processes
      // load them through the driver's own JIT cache.
      const char *disabled = std::getenv("CUDA_CACHE_DISABLE");
      const bool off = disabled && std::string(disabled) == "1";
      (off ? llvm::WithColor::warning(llvm::outs(), "flare-warmup") : llvm::WithColor::note(llvm::outs(), "flare-warmup"))
          << withoutBinary.size() << " kernels (marked ptx) are kept as PTX, which other processes load through the "
          << "driver's JIT cache ($CUDA_CACHE_PATH, else ~/.nv/ComputeCache; $CUDA_CACHE_MAXSIZE)"
          << (off ? ": CUDA_CACHE_DISABLE=1 turns it off, so every process compiles them again" : "") << "\n";
    }
    return failed ? 1 : 0;
  } catch (const std::exception &e) {
    return error(e.what());
  }
}
