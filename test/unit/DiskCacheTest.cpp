//===- DiskCacheTest.cpp - The on-disk kernel cache and cache keys --------===//
//
// A cache that trusts a damaged entry launches garbage, so every kind of damage must read as a miss,
// be counted, and remove the file. None of this needs a GPU.
//
//===----------------------------------------------------------------------===//
#include "flare/Runtime/Runtime.h"

#include "TestKernels.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

using namespace flare;
using flare::test::kernelInfo;
using namespace flare::rt;
namespace fs = std::filesystem;

namespace {

const std::string kKey = std::string(64, 'a');
const std::string kOtherKey = std::string(64, 'b');

CompiledModule sampleModule(const std::string &kernelName = "vec_add") {
  CompiledModule m;
  m.arch = "sm_90a";
  m.ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry " + kernelName + "()\n{\n ret;\n}\n";
  m.kernels.push_back(kernelInfo(kernelName, 128, 0, {ArgKind::Pointer, ArgKind::Pointer, ArgKind::I32}));
  return m;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

class DiskCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("flare-diskcache-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    if (fs::exists(dir_))
      for (const auto &e : fs::directory_iterator(dir_))
        names.push_back(e.path().filename().string());
    return names;
  }

  fs::path dir_;
};

} // namespace

TEST_F(DiskCacheTest, RoundTrip) {
  DiskCache cache(dir_.string());
  CompiledModule m = sampleModule();
  cache.store(kKey, m);
  std::optional<CompiledModule> back = cache.load(kKey);
  ASSERT_TRUE(back.has_value()) << "stored entry for key " << kKey << " did not load";
  EXPECT_EQ(back->arch, m.arch);
  EXPECT_EQ(back->ptx, m.ptx);
  ASSERT_EQ(back->kernels.size(), 1u);
  EXPECT_EQ(back->kernels[0].name, "vec_add");
  EXPECT_EQ(back->kernels[0].numThreads, 128);
  EXPECT_EQ(back->kernels[0].args, m.kernels[0].args);
  EXPECT_TRUE(back->cubin.empty()) << "a module stored without a device binary came back with one";
  EXPECT_EQ(cache.rejected(), 0u);
  // Loading does not consume the entry.
  EXPECT_TRUE(cache.load(kKey).has_value());
}

TEST_F(DiskCacheTest, DeviceBinaryRoundTrips) {
  DiskCache cache(dir_.string());
  CompiledModule m = sampleModule();
  // Device binaries are arbitrary bytes: NULs, newlines and high bytes included.
  m.cubin = std::string("\x7f" "ELF\0\x01\n\xff", 8) + std::string(1000, '\0') + "tail";
  cache.store(kKey, m);
  std::optional<CompiledModule> back = cache.load(kKey);
  ASSERT_TRUE(back.has_value()) << "entry with a device binary did not load";
  EXPECT_EQ(back->ptx, m.ptx);
  EXPECT_EQ(back->cubin, m.cubin);
  EXPECT_EQ(cache.rejected(), 0u);
}

TEST_F(DiskCacheTest, MissOnEmptyOrMissingDirectory) {
  DiskCache cache(dir_.string());
  EXPECT_FALSE(cache.load(kKey).has_value()) << "hit in a directory that does not exist";
  cache.store(kKey, sampleModule());
  EXPECT_FALSE(cache.load(kOtherKey).has_value()) << "hit for a key that was never stored";
  EXPECT_EQ(cache.rejected(), 0u) << "a plain miss was counted as a rejection";
}

TEST_F(DiskCacheTest, CorruptEntriesAreRejectedCountedAndRemoved) {
  const std::string good = DiskCache::encodeEntry(kKey, sampleModule().metadataJson(), sampleModule().ptx);
  auto replaceFirst = [](std::string s, const std::string &from, const std::string &to) {
    size_t at = s.find(from);
    return at == std::string::npos ? std::string("<pattern not found>") : s.replace(at, from.size(), to);
  };
  // The checksum's first hex digit replaced by a different one.
  std::string changedChecksum = good;
  size_t digit = good.find("payload-xxh3 ") + std::string("payload-xxh3 ").size();
  changedChecksum[digit] = good[digit] == '0' ? '1' : '0';
  const std::string ptxSizeLine = "ptx-bytes " + std::to_string(sampleModule().ptx.size());

  // Each case: a label and the bytes to place at pathFor(kKey).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty file", ""},
      {"truncated payload", good.substr(0, good.size() - 10)},
      {"truncated inside the header", good.substr(0, 30)},
      {"trailing bytes after the payload", good + "x"},
      {"flipped last payload byte", good.substr(0, good.size() - 1) + char(good.back() ^ 0x01)},
      {"changed checksum digit", changedChecksum},
      {"wrong key inside the file", DiskCache::encodeEntry(kOtherKey, sampleModule().metadataJson(),
                                                           sampleModule().ptx)},
      {"garbage JSON with a valid checksum", DiskCache::encodeEntry(kKey, "{not json", sampleModule().ptx)},
      {"JSON missing fields with a valid checksum",
       DiskCache::encodeEntry(kKey, R"({"version": 1})", sampleModule().ptx)},
      {"empty PTX with a valid checksum", DiskCache::encodeEntry(kKey, sampleModule().metadataJson(), "")},
      {"PTX size field off by one",
       replaceFirst(good, ptxSizeLine, "ptx-bytes " + std::to_string(sampleModule().ptx.size() + 1))},
      {"size field with a sign", replaceFirst(good, "ptx-bytes ", "ptx-bytes +")},
      {"bad magic", replaceFirst(good, "FLARE-KERNEL-CACHE 2", "FLARE-KERNEL-CACHE 3")},
      {"entry of format version 1", replaceFirst(good, "FLARE-KERNEL-CACHE 2", "FLARE-KERNEL-CACHE 1")},
      {"device binary size larger than the file", replaceFirst(good, "cubin-bytes 0", "cubin-bytes 99999999")},
      {"device binary size taken from the PTX",
       replaceFirst(replaceFirst(good, "cubin-bytes 0", "cubin-bytes 10"), ptxSizeLine,
                    "ptx-bytes " + std::to_string(sampleModule().ptx.size() - 10))},
      {"random text", "hello, I am not a cache entry\n"},
      // The JSON reader recurses per level: 200,000 levels would overflow the stack.
      {"deeply nested JSON with a valid checksum",
       DiskCache::encodeEntry(kKey, std::string(200000, '[') + std::string(200000, ']'), sampleModule().ptx)},
  };

  for (const auto &[label, bytes] : cases) {
    SCOPED_TRACE("corruption case: " + label);
    ASSERT_NE(bytes, "<pattern not found>") << "test setup failed to build the input";
    ASSERT_NE(bytes, good) << "test setup left the entry intact";
    DiskCache cache(dir_.string());
    cache.store(kKey, sampleModule()); // creates the directory
    const std::string path = cache.pathFor(kKey);
    writeFile(path, bytes);

    EXPECT_FALSE(cache.load(kKey).has_value()) << "corrupt entry was trusted";
    EXPECT_EQ(cache.rejected(), 1u) << "rejection not counted";
    EXPECT_FALSE(fs::exists(path)) << "corrupt file was not removed";
    // A second lookup is an ordinary miss.
    EXPECT_FALSE(cache.load(kKey).has_value());
    EXPECT_EQ(cache.rejected(), 1u);
  }
}

TEST_F(DiskCacheTest, EntryCopiedToAnotherKeyIsRejected) {
  DiskCache cache(dir_.string());
  cache.store(kKey, sampleModule());
  fs::copy_file(cache.pathFor(kKey), cache.pathFor(kOtherKey));
  EXPECT_FALSE(cache.load(kOtherKey).has_value()) << "entry stored under " << kKey << " served for "
                                                  << kOtherKey;
  EXPECT_EQ(cache.rejected(), 1u);
  EXPECT_TRUE(cache.load(kKey).has_value()) << "the original entry was damaged";
}

TEST_F(DiskCacheTest, StoreReplacesExistingEntry) {
  DiskCache cache(dir_.string());
  cache.store(kKey, sampleModule("first"));
  cache.store(kKey, sampleModule("second"));
  std::optional<CompiledModule> back = cache.load(kKey);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->kernels.size(), 1u);
  EXPECT_EQ(back->kernels[0].name, "second") << "store did not replace the entry for " << kKey;
  EXPECT_EQ(listDir().size(), 1u);
}

TEST_F(DiskCacheTest, NoTemporaryFileLingers) {
  DiskCache cache(dir_.string());
  cache.store(kKey, sampleModule());
  cache.store(kOtherKey, sampleModule());
  std::vector<std::string> names = listDir();
  std::sort(names.begin(), names.end());
  std::vector<std::string> expected = {fs::path(cache.pathFor(kKey)).filename().string(),
                                       fs::path(cache.pathFor(kOtherKey)).filename().string()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected) << "unexpected files in the cache directory";
}

TEST_F(DiskCacheTest, StoreCreatesNestedDirectories) {
  fs::path nested = dir_ / "a" / "b";
  DiskCache cache(nested.string());
  cache.store(kKey, sampleModule());
  EXPECT_TRUE(fs::exists(cache.pathFor(kKey))) << cache.pathFor(kKey);
}

TEST_F(DiskCacheTest, StoreFailureThrows) {
  // A directory that cannot exist, because a regular file sits where a parent directory should be.
  fs::create_directories(dir_);
  writeFile((dir_ / "file").string(), "x");
  DiskCache cache((dir_ / "file" / "sub").string());
  EXPECT_THROW(cache.store(kKey, sampleModule()), Error) << "dir: " << cache.dir();
}

TEST_F(DiskCacheTest, PathsAndKeys) {
  DiskCache cache(dir_.string());
  EXPECT_NE(cache.pathFor(kKey), cache.pathFor(kOtherKey));
  EXPECT_EQ(fs::path(cache.pathFor(kKey)).parent_path(), dir_) << cache.pathFor(kKey);
  for (const std::string &bad :
       std::vector<std::string>{"", "../escape", "a/b", "key with spaces", std::string(129, 'a')}) {
    EXPECT_THROW(cache.pathFor(bad), Error) << "accepted key '" << bad << "'";
    EXPECT_THROW(cache.load(bad), Error) << "accepted key '" << bad << "'";
  }
}

TEST_F(DiskCacheTest, Erase) {
  DiskCache cache(dir_.string());
  cache.store(kKey, sampleModule());
  EXPECT_TRUE(cache.erase(kKey));
  EXPECT_FALSE(cache.erase(kKey)) << "erased a missing entry";
  EXPECT_FALSE(cache.load(kKey).has_value());
  EXPECT_EQ(cache.rejected(), 0u);
}

TEST(KernelCacheKeyTest, KeyIsHexAndCoversEveryInput) {
  CompileOptions opts;
  const std::string ir = "module {}";
  const std::string base = KernelCache::cacheKey(ir, opts, "sm_90a", 12080);
  ASSERT_EQ(base.size(), 64u) << base;
  EXPECT_EQ(base.find_first_not_of("0123456789abcdef"), std::string::npos) << base;
  EXPECT_EQ(base, KernelCache::cacheKey(ir, opts, "sm_90a", 12080)) << "key is not deterministic";

  CompileOptions otherOpt = opts;
  otherOpt.optLevel = 2;
  CompileOptions otherArchOpt = opts;
  otherArchOpt.arch = "sm_80";
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"different IR", KernelCache::cacheKey("module { }", opts, "sm_90a", 12080)},
      {"different optLevel", KernelCache::cacheKey(ir, otherOpt, "sm_90a", 12080)},
      {"different options.arch", KernelCache::cacheKey(ir, otherArchOpt, "sm_90a", 12080)},
      {"different arch", KernelCache::cacheKey(ir, opts, "sm_90", 12080)},
      {"different driver", KernelCache::cacheKey(ir, opts, "sm_90a", 12090)},
  };
  for (const auto &[label, key] : variants)
    EXPECT_NE(key, base) << label << " gives the same key";
}

// The compiler's identity in the key names this build (a digest of its sources), not only a release
// number: entries a different build of the compiler made are never served.
TEST(KernelCacheKeyTest, CompilerVersionNamesTheBuild) {
  const std::string version = compilerVersion();
  const size_t plus = version.find('+');
  ASSERT_NE(plus, std::string::npos) << version;
  const std::string id = version.substr(plus + 1, 16);
  EXPECT_EQ(id.size(), 16u) << version;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << version;
  EXPECT_EQ(version.substr(plus + 17, 6), "+llvm-") << version;
}

TEST(KernelCacheKeyTest, DefaultDirFollowsEnvironment) {
  // Save and restore the variables this test changes.
  struct SavedEnv {
    std::string name;
    std::optional<std::string> value;
  };
  std::vector<SavedEnv> saved;
  for (const char *name : {"FLARE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char *v = std::getenv(name);
    saved.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
  }

  setenv("FLARE_CACHE_DIR", "/custom/flare", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(KernelCache::defaultDir(), "/custom/flare") << "FLARE_CACHE_DIR ignored";
  unsetenv("FLARE_CACHE_DIR");
  EXPECT_EQ(KernelCache::defaultDir(), "/xdg/flare") << "XDG_CACHE_HOME ignored";
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(KernelCache::defaultDir(), "/home/someone/.cache/flare") << "HOME ignored";
  unsetenv("HOME");
  EXPECT_FALSE(KernelCache::defaultDir().empty()) << "no fallback without HOME";

  for (const SavedEnv &s : saved) {
    if (s.value)
      setenv(s.name.c_str(), s.value->c_str(), 1);
    else
      unsetenv(s.name.c_str());
  }
}
