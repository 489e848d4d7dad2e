//===- KernelCache.cpp - Memory and disk caches of compiled modules -------===//
//
// A disk entry is one file, <dir>/<key>.fkc, written in full to a unique temp file in the same
// directory and renamed into place, so readers only ever see complete files from some writer. Its
// layout (header lines end in a single '\n'; numbers are plain decimal):
//
//   FLARE-KERNEL-CACHE 2                   magic and format version
//   key <key>                              the cache key the entry was stored under
//   metadata-bytes <N>                     size of the metadata JSON
//   ptx-bytes <M>                          size of the PTX
//   cubin-bytes <C>                        size of the device binary (0: none)
//   payload-xxh3 <16 lowercase hex>        XXH3-64 of "<N> <M> <C> <XXH3-64 of the payload in hex>"
//   <N bytes of metadata JSON><M bytes of PTX><C bytes of device binary>
//
// The checksum detects torn and damaged files (it is not a defence against tampering: the cache
// directory is the user's own); XXH3 reads the half megabyte of an attention kernel's entry in tens of
// microseconds, where SHA-256 took about a millisecond of every disk hit.
//
// Nothing in an entry is trusted: the header must match exactly, the key must be the one asked for
// (a renamed or copied file is not a hit), the file must end exactly after the payload, the checksum
// must match and the metadata must pass CompiledModule::fromMetadataJson. A file failing any check
// was torn by a crash, damaged, or written by something else; it is deleted and counted, and the
// caller recompiles.
//
// Concurrency: KernelCache's mutex guards its two maps only. A request not answered from memory is
// looked up (disk, else compile) by one thread per key with no lock held (SingleFlight); requests for
// that key arriving meanwhile wait for its module or its error, and an error is not remembered.
// DiskCache needs no lock: a load, store or erase touches only its own key's files (a store renames a
// private temp file into place) and its counter is atomic.
//
//===----------------------------------------------------------------------===//
#include "flare/Runtime/Runtime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <cuda.h>

#include <cstdlib>
#include <unistd.h>

namespace flare::rt {
namespace {

constexpr llvm::StringLiteral kMagicLine = "FLARE-KERNEL-CACHE 2";
constexpr llvm::StringLiteral kEntrySuffix = ".fkc";
constexpr size_t kMaxKeyLength = 128;

/// The entry checksum: XXH3 of the three sizes (so that moving the boundaries between the parts is
/// caught too) followed by the payload's own XXH3, as 16 lowercase hex digits.
std::string xxh3Hex(uint64_t metaBytes, uint64_t ptxBytes, uint64_t cubinBytes, llvm::StringRef payload) {
  std::string summary = std::to_string(metaBytes) + " " + std::to_string(ptxBytes) + " " +
                        std::to_string(cubinBytes) + " " + llvm::utohexstr(llvm::xxh3_64bits(payload));
  return llvm::utohexstr(llvm::xxh3_64bits(summary), /*LowerCase=*/true, /*Width=*/16);
}

std::string sha256Hex(llvm::StringRef data) {
  llvm::SHA256 hasher;
  hasher.update(data);
  std::array<uint8_t, 32> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

void validateKey(const std::string &key) {
  bool ok = !key.empty() && key.size() <= kMaxKeyLength;
  for (char c : key)
    ok &= llvm::isAlnum(c) || c == '_' || c == '-';
  // Keys become file names; anything else could escape the directory or collide with temp files.
  if (!ok)
    throw Error("DiskCache: invalid cache key '" + key +
                "' (expected 1-128 characters of [0-9A-Za-z_-])");
}

/// Splits off one '\n'-terminated header line that must start with `prefix`; returns its remainder.
std::optional<llvm::StringRef> takeLine(llvm::StringRef &rest, llvm::StringRef prefix) {
  size_t eol = rest.find('\n');
  if (eol == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef line = rest.take_front(eol);
  rest = rest.drop_front(eol + 1);
  if (!line.consume_front(prefix))
    return std::nullopt;
  return line;
}

/// A size field: 1-19 decimal digits and nothing else (no sign, no spaces), so it cannot overflow.
std::optional<uint64_t> parseSize(llvm::StringRef text) {
  if (text.empty() || text.size() > 19 || !llvm::all_of(text, llvm::isDigit))
    return std::nullopt;
  uint64_t value = 0;
  if (text.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Decodes an entry; nullopt with `why` set on any failed check.
std::optional<CompiledModule> decodeEntry(llvm::StringRef file, const std::string &key, std::string &why) {
  llvm::StringRef rest = file;
  auto magic = takeLine(rest, kMagicLine);
  if (!magic || !magic->empty()) {
    why = "bad magic/version line";
    return std::nullopt;
  }
  auto storedKey = takeLine(rest, "key ");
  if (!storedKey || *storedKey != key) {
    why = "entry is for a different key";
    return std::nullopt;
  }
  std::optional<uint64_t> metaBytes, ptxBytes, cubinBytes;
  std::optional<llvm::StringRef> checksum;
  if (auto field = takeLine(rest, "metadata-bytes "))
    metaBytes = parseSize(*field);
  if (auto field = metaBytes ? takeLine(rest, "ptx-bytes ") : std::nullopt)
    ptxBytes = parseSize(*field);
  if (auto field = ptxBytes ? takeLine(rest, "cubin-bytes ") : std::nullopt)
    cubinBytes = parseSize(*field);
  if (cubinBytes)
    checksum = takeLine(rest, "payload-xxh3 ");
  if (!metaBytes || !ptxBytes || !cubinBytes || !checksum || checksum->size() != 16) {
    why = "malformed header";
    return std::nullopt;
  }
  // Each size is checked against the file first, so that their sum cannot overflow 64 bits.
  if (*metaBytes > rest.size() || *ptxBytes > rest.size() || *cubinBytes > rest.size() ||
      rest.size() != *metaBytes + *ptxBytes + *cubinBytes) {
    why = "payload is " + std::to_string(rest.size()) + " bytes, header says " +
          std::to_string(*metaBytes + *ptxBytes + *cubinBytes);
    return std::nullopt;
  }
  if (xxh3Hex(*metaBytes, *ptxBytes, *cubinBytes, rest) != *checksum) {
    why = "payload checksum mismatch";
    return std::nullopt;
  }
  llvm::StringRef cubin = rest.take_back(*cubinBytes);
  rest = rest.drop_back(*cubinBytes);
  llvm::StringRef ptx = rest.drop_front(*metaBytes);
  if (ptx.empty() || ptx.contains('\0')) {
    // The driver reads PTX as a C string: an embedded NUL would silently cut it short.
    why = "empty PTX or PTX with a NUL byte";
    return std::nullopt;
  }
  try {
    CompiledModule module = CompiledModule::fromMetadataJson(rest.take_front(*metaBytes).str(), ptx.str());
    module.cubin = cubin.str();
    return module;
  } catch (const Error &e) {
    why = e.what();
    return std::nullopt;
  }
}

/// Driver results that mean "this image can never load here" (as opposed to, say, running out of
/// memory): a cached entry failing with one of these is discarded and recompiled.
bool isBadImageResult(int result) {
  switch (result) {
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_INVALID_SOURCE:
  case CUDA_ERROR_NOT_FOUND: // a kernel named in the metadata is not in the PTX
    return true;
  default:
    return false;
  }
}

/// One length-prefixed field of the cache key's hash input.
void appendKeyField(std::string &out, llvm::StringRef name, llvm::StringRef value) {
  out += name;
  out += ':';
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

} // namespace

//===----------------------------------------------------------------------===//
// DiskCache
//===----------------------------------------------------------------------===//

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty())
    throw Error("DiskCache: the cache directory must not be empty");
}

std::string DiskCache::pathFor(const std::string &key) const {
  validateKey(key);
  llvm::SmallString<256> path(dir_);
  llvm::sys::path::append(path, key + kEntrySuffix.str());
  return std::string(path);
}

std::string DiskCache::encodeEntry(const std::string &key, const std::string &metadataJson,
                                   const std::string &ptx, const std::string &cubin) {
  std::string payload = metadataJson + ptx + cubin;
  std::string out;
  out.reserve(payload.size() + 256);
  out += kMagicLine;
  out += "\nkey " + key;
  out += "\nmetadata-bytes " + std::to_string(metadataJson.size());
  out += "\nptx-bytes " + std::to_string(ptx.size());
  out += "\ncubin-bytes " + std::to_string(cubin.size());
  out += "\npayload-xxh3 " + xxh3Hex(metadataJson.size(), ptx.size(), cubin.size(), payload);
  out += '\n';
  out += payload;
  return out;
}

std::optional<CompiledModule> DiskCache::load(const std::string &key) {
  std::string path = pathFor(key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file) {
    // Missing is the ordinary miss. An unreadable file (permissions, a directory in the way) is also
    // treated as a miss but left alone: it is not known to be corrupt, and may not be ours.
    return std::nullopt;
  }
  std::string why;
  std::optional<CompiledModule> module = decodeEntry((*file)->getBuffer(), key, why);
  if (!module) {
    // Release the mapping before deleting the file.
    file->reset();
    llvm::sys::fs::remove(path);
    ++rejected_;
  }
  return module;
}

void DiskCache::store(const std::string &key, const CompiledModule &module) {
  std::string path = pathFor(key);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir_))
    throw Error("DiskCache: cannot create the cache directory '" + dir_ + "': " + ec.message());

  // The temp file lives in the target directory so that the rename stays on one file system and is
  // therefore atomic.
  int fd = -1;
  llvm::SmallString<256> tempPath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tempPath))
    throw Error("DiskCache: cannot create a temporary file next to '" + path + "': " + ec.message());

  std::string bytes = encodeEntry(key, module.metadataJson(), module.ptx, module.cubin);
  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    writeError = os.error();
    os.clear_error(); // the error is reported below, not by the stream's destructor
  }
  if (writeError) {
    llvm::sys::fs::remove(tempPath);
    throw Error("DiskCache: cannot write '" + std::string(tempPath) + "': " + writeError.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    throw Error("DiskCache: cannot rename '" + std::string(tempPath) + "' to '" + path +
                "': " + ec.message());
  }
}

bool DiskCache::erase(const std::string &key) {
  std::string path = pathFor(key);
  bool existed = llvm::sys::fs::exists(path);
  return !llvm::sys::fs::remove(path) && existed;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

KernelCache::KernelCache(Context &ctx, std::string dir) : ctx_(ctx), disk_(std::move(dir)) {}

const char *cacheSourceName(CacheSource source) {
  switch (source) {
  case CacheSource::Memory:
    return "memory";
  case CacheSource::Disk:
    return "disk";
  case CacheSource::Compiled:
    return "compiled";
  case CacheSource::Waited:
    return "waited";
  }
  return "?";
}

size_t KernelCache::hits() const { return hits_; }
size_t KernelCache::misses() const { return misses_; }
size_t KernelCache::waits() const { return waits_; }
size_t KernelCache::rejectedEntries() const { return disk_.rejected() + rejected_; }
size_t KernelCache::storeFailures() const { return storeFailures_; }

std::string KernelCache::cacheKey(const std::string &canonicalIR, const CompileOptions &options,
                                  const std::string &arch, int driverVersion) {
  // Length prefixes make the encoding injective: no choice of field values can shift bytes from one
  // field into another and produce the same hash input.
  std::string input;
  input.reserve(canonicalIR.size() + 256);
  appendKeyField(input, "flare-kernel-cache-key", "1");
  appendKeyField(input, "compiler", compilerVersion());
  appendKeyField(input, "ir", canonicalIR);
  appendKeyField(input, "options", options.fingerprint());
  appendKeyField(input, "arch", arch);
  appendKeyField(input, "driver", std::to_string(driverVersion));
  return sha256Hex(input);
}

std::string KernelCache::defaultDir() {
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string dir = env("FLARE_CACHE_DIR"); !dir.empty())
    return dir;
  llvm::SmallString<256> path;
  // The XDG spec says relative values are to be ignored.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && llvm::sys::path::is_absolute(xdg)) {
    path = xdg;
    llvm::sys::path::append(path, "flare");
    return std::string(path);
  }
  if (std::string home = env("HOME"); !home.empty()) {
    path = home;
    llvm::sys::path::append(path, ".cache", "flare");
    return std::string(path);
  }
  // Per user, so that users sharing the temp directory do not read (or fight over) each other's entries.
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, path);
  llvm::sys::path::append(path, "flare-cache-" + std::to_string(getuid()));
  return std::string(path);
}

std::string KernelCache::keyOf(const std::string &mlirSource, const CompileOptions &options,
                               const std::string &bufferName) {
  std::string sourceKey = options.fingerprint();
  sourceKey += '\0';
  sourceKey += bufferName;
  sourceKey += '\0';
  sourceKey += mlirSource;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = sourceKeys_.find(sourceKey); it != sourceKeys_.end())
      return it->second;
  }
  // Parsing takes milliseconds: not under the lock. Two threads may both parse a new source; both
  // get the same key.
  std::string key = cacheKey(canonicalizeIR(mlirSource, bufferName), options, options.arch, ctx_.driverVersion());
  std::lock_guard<std::mutex> lock(mutex_);
  sourceKeys_.emplace(std::move(sourceKey), key);
  return key;
}

std::shared_ptr<Module> KernelCache::inMemory(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(key);
  return it == modules_.end() ? nullptr : it->second;
}

std::shared_ptr<Module> KernelCache::remember(const std::string &key, std::shared_ptr<Module> module) {
  std::lock_guard<std::mutex> lock(mutex_);
  return modules_.emplace(key, std::move(module)).first->second;
}

void KernelCache::alias(const std::string &mlirSource, CompileOptions options, const std::string &bufferName,
                        std::shared_ptr<Module> module) {
  if (!module)
    throw Error("KernelCache::alias: no module");
  if (options.arch.empty())
    options.arch = ctx_.arch();
  if (module->compiled().arch != options.arch)
    throw Error("KernelCache::alias: a module for " + module->compiled().arch + " cannot answer requests for " +
                options.arch);
  const std::string key = keyOf(mlirSource, options, bufferName);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!modules_.emplace(key, module).second)
      return;
  }
  // On disk too: another process's request finds it. (A lookup of this key that was under way
  // already may store its own module as well; either entry is a valid answer.)
  storeOnDisk(key, *module);
}

void KernelCache::storeOnDisk(const std::string &key, const Module &module) {
  try {
    disk_.store(key, module.compiled());
  } catch (const Error &) {
    // A read-only or full disk costs only the reuse across processes; the module is still good.
    ++storeFailures_;
  }
}

std::shared_ptr<Module> KernelCache::loadFromDisk(const std::string &key, const std::string &arch) {
  std::optional<CompiledModule> cached = disk_.load(key); // counts what it rejects itself
  if (!cached)
    return nullptr;
  if (cached->arch != arch) {
    // The key covers the arch, so this is a damaged or forged entry that passed the checksum.
    disk_.erase(key);
    ++rejected_;
    return nullptr;
  }
  try {
    return Module::load(ctx_, std::move(*cached));
  } catch (const Error &e) {
    if (!isBadImageResult(e.cuResult()))
      throw;
    disk_.erase(key);
    ++rejected_;
    return nullptr;
  }
}

std::shared_ptr<Module> KernelCache::getOrCompile(const std::string &mlirSource, CompileOptions options,
                                                  const std::string &bufferName) {
  return lookup(mlirSource, std::move(options), bufferName).module;
}

CacheAnswer KernelCache::lookup(const std::string &mlirSource, CompileOptions options,
                                const std::string &bufferName) {
  if (options.arch.empty())
    options.arch = ctx_.arch();
  CacheAnswer answer;
  answer.key = keyOf(mlirSource, options, bufferName);
  if ((answer.module = inMemory(answer.key))) {
    ++hits_;
    return answer;
  }
  // Not in memory: one thread per key loads or compiles it, with no lock held; threads asking for the
  // same key meanwhile wait for that thread's module or error (SingleFlight). An error is not kept.
  CacheSource source = CacheSource::Memory;
  auto [module, role] = lookups_.run(answer.key, [&]() -> std::shared_ptr<Module> {
    // A lookup of this key may have finished between the check above and here.
    if (std::shared_ptr<Module> known = inMemory(answer.key))
      return known;
    if (std::shared_ptr<Module> loaded = loadFromDisk(answer.key, options.arch)) {
      source = CacheSource::Disk;
      return remember(answer.key, std::move(loaded));
    }
    CompiledModule compiled = compileToPTX(mlirSource, options, bufferName);
    ++misses_;
    source = CacheSource::Compiled;
    // Load before storing so that PTX the driver rejects never reaches the disk.
    std::shared_ptr<Module> loaded = Module::load(ctx_, std::move(compiled));
    storeOnDisk(answer.key, *loaded);
    return remember(answer.key, std::move(loaded));
  });
  answer.module = std::move(module);
  answer.source = role == SingleFlight<std::shared_ptr<Module>>::Role::Waited ? CacheSource::Waited : source;
  if (answer.source == CacheSource::Waited)
    ++waits_;
  if (answer.source != CacheSource::Compiled)
    ++hits_;
  return answer;
}

} // namespace flare::rt
