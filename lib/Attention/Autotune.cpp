//===- Autotune.cpp - flare::attention's autotuning mode -------------------===//
//
// The first autotuned call of a shape class (autotuneKey) times each candidate tile configuration
// on the call's own tensors and keeps the fastest: in a process-wide table, and as one line
// "key<TAB>configuration<TAB>ms<TAB>device" appended to autotune-v1.tsv in the kernel cache's
// directory, which later processes read once (the last line of a key wins).
//
//===----------------------------------------------------------------------===//
#include "AttentionInternal.h"

#include "flare/Dialect/Attn/HeadDim.h"
#include "flare/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

namespace flare {

namespace {
/// The fields of a configuration's text, in order.
constexpr std::pair<const char *, int AttentionTileConfig::*> kConfigFields[] = {
    {"bm", &AttentionTileConfig::blockM},         {"bn", &AttentionTileConfig::blockN},
    {"warps", &AttentionTileConfig::numWarps},    {"overlap", &AttentionTileConfig::overlap},
    {"pingpong", &AttentionTileConfig::pingPong}, {"producer", &AttentionTileConfig::producer},
    {"persistent", &AttentionTileConfig::persistent}};
} // namespace

std::string AttentionTileConfig::text() const {
  std::string out;
  for (auto [name, field] : kConfigFields)
    out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(this->*field);
  // Named only when set, so that the texts autotuning remembers keep their form.
  if (kvSplits != 0)
    out += " splits=" + std::to_string(kvSplits);
  if (blockLists != 0)
    out += " lists=" + std::to_string(blockLists);
  return out;
}

std::optional<AttentionTileConfig> AttentionTileConfig::parse(const std::string &text) {
  AttentionTileConfig c;
  std::istringstream in(text);
  for (auto [name, field] : kConfigFields) {
    std::string word;
    const std::string prefix = std::string(name) + "=";
    if (!(in >> word) || word.rfind(prefix, 0) != 0)
      return std::nullopt;
    if (!llvm::to_integer(llvm::StringRef(word).drop_front(prefix.size()), c.*field, 10))
      return std::nullopt;
  }
  // Then the optional fields, in text()'s order.
  std::string rest;
  bool more = static_cast<bool>(in >> rest);
  for (auto [name, field] : {std::pair<const char *, int AttentionTileConfig::*>{"splits=", &AttentionTileConfig::kvSplits},
                             {"lists=", &AttentionTileConfig::blockLists}}) {
    const std::string prefix = name;
    if (!more || rest.rfind(prefix, 0) != 0)
      continue;
    if (!llvm::to_integer(llvm::StringRef(rest).drop_front(prefix.size()), c.*field, 10))
      return std::nullopt;
    more = static_cast<bool>(in >> rest);
  }
  if (more)
    return std::nullopt;
  return c;
}

std::vector<AttentionTileConfig> autotuneCandidates(const std::string &arch, int64_t headDim) {
  // The configured choice first. On Hopper: at head dim 64 the producer warpgroup with 128 x 128
  // tiles and one persistent CTA per SM (level at 16k, 2026-11-30) and one warpgroup of 64 x 64
  // tiles (+4% causal at 512 tokens, 2026-11-30); at 128 the same kernel
  // launched per query block, and one warpgroup of 64 x 64 tiles with two CTAs per SM (+5% at 512
  // tokens, 2026-11-29); at 256 launched per query block (+2-9% at 1k-2k before a28).
  const AttentionTileConfig configured;
  AttentionTileConfig launched;
  launched.persistent = -1;
  AttentionTileConfig oneWarpgroup;
  oneWarpgroup.blockM = oneWarpgroup.blockN = 64;
  oneWarpgroup.numWarps = 4;
  if (!detail::hasHopperMachinery(arch))
    return {configured, oneWarpgroup};
  if (headDim <= 64) {
    AttentionTileConfig producer{128, 128, 8, 0, 0, 1, 1};
    return {configured, producer, oneWarpgroup};
  }
  if (headDim <= 128)
    return {configured, launched, oneWarpgroup};
  return {configured, launched};
}

std::string autotuneKey(const AttentionPlan &plan, const std::string &arch, const std::string &deviceName) {
  auto bucket = [](int64_t x) {
    int64_t p = 1;
    while (p < x)
      p <<= 1;
    return std::to_string(p);
  };
  std::string identity = plan.module + '\n' + arch + '\n' + deviceName;
  return llvm::utohexstr(llvm::xxh3_64bits(identity), /*LowerCase=*/true, /*Width=*/16) + "-" + arch + "-sq" +
         bucket(plan.seqQ) + "-skv" + bucket(plan.seqKV) + "-bh" + bucket(plan.batch * plan.headsQ);
}

namespace {

struct Choices {
  std::mutex mutex;
  std::unordered_map<std::string, AttentionTileConfig> byKey;
  std::set<std::string> dirsRead;
};

Choices &choices() {
  static Choices c;
  return c;
}

constexpr const char *kFileName = "autotune-v1.tsv";

/// Reads the choices stored in `dir` into the table (once per directory; unreadable lines are
/// skipped). The caller holds the table's mutex.
void readDir(Choices &c, const std::string &dir) {
  if (!c.dirsRead.insert(dir).second)
    return;
  std::ifstream in(std::filesystem::path(dir) / kFileName);
  std::string line;
  while (std::getline(in, line)) {
    llvm::SmallVector<llvm::StringRef> fields;
    llvm::StringRef(line).split(fields, '\t');
    if (fields.size() < 2)
      continue;
    if (std::optional<AttentionTileConfig> config = AttentionTileConfig::parse(fields[1].str()))
      c.byKey[fields[0].str()] = *config;
  }
}

} // namespace

std::optional<AttentionTileConfig> autotunedConfig(const std::string &key) {
  Choices &c = choices();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.byKey.find(key);
  if (it == c.byKey.end())
    return std::nullopt;
  return it->second;
}

std::optional<AttentionTileConfig> detail::rememberedChoice(rt::KernelCache &cache, const AttentionPlan &plan,
                                                            const AttentionOptions &options) {
  const std::string key = autotuneKey(plan, targetArch(cache, options), cache.context().name());
  Choices &c = choices();
  std::lock_guard<std::mutex> lock(c.mutex);
  readDir(c, cache.dir());
  if (auto it = c.byKey.find(key); it != c.byKey.end())
    return it->second;
  return std::nullopt;
}

AttentionTileConfig detail::autotunedChoice(rt::KernelCache &cache, const AttentionPlan &plan,
                                            const AttentionOptions &options, void *stream) {
  if (std::optional<AttentionTileConfig> known = rememberedChoice(cache, plan, options))
    return *known;
  rt::Context &ctx = cache.context();
  const std::string arch = targetArch(cache, options);
  const std::string key = autotuneKey(plan, arch, ctx.name());
  Choices &c = choices();
  // Each candidate: compiled (one that does not compile is skipped), launched twice to warm up,
  // then timed over three rounds of three launches; the fastest round counts.
  constexpr int kRounds = 3, kLaunchesPerRound = 3;
  AttentionTileConfig best;
  float bestMs = std::numeric_limits<float>::infinity();
  std::string firstError;
  const int64_t headDim = attn::tileHeadDim(plan.headDim, plan.headDimV);
  for (const AttentionTileConfig &candidate : autotuneCandidates(arch, headDim)) {
    try {
      AttentionKernels kernel = attentionKernel(cache, plan, candidate, options.arch);
      for (int i = 0; i < 2; ++i)
        launchAttention(kernel, plan, stream);
      float candidateMs = std::numeric_limits<float>::infinity();
      for (int round = 0; round < kRounds; ++round) {
        rt::Event start(ctx), end(ctx);
        start.record(stream);
        for (int i = 0; i < kLaunchesPerRound; ++i)
          launchAttention(kernel, plan, stream);
        end.record(stream);
        end.synchronize();
        candidateMs = std::min(candidateMs, rt::Event::elapsedMs(start, end) / kLaunchesPerRound);
      }
      if (candidateMs < bestMs) {
        bestMs = candidateMs;
        best = candidate;
      }
    } catch (const Error &e) {
      if (firstError.empty())
        firstError = candidate.text() + ": " + e.what();
    }
  }
  if (bestMs == std::numeric_limits<float>::infinity())
    throw Error("flare::attention: autotuning found no candidate that runs (" + firstError + ")");

  std::lock_guard<std::mutex> lock(c.mutex);
  c.byKey[key] = best;
  // Best effort: without a writable directory the choice lasts for this process.
  std::error_code ec;
  std::filesystem::create_directories(cache.dir(), ec);
  std::ofstream file(std::filesystem::path(cache.dir()) / kFileName, std::ios::app);
  if (file)
    file << key << '\t' << best.text() << '\t' << bestMs << '\t' << ctx.name() << '\n';
  return best;
}

} // namespace flare
