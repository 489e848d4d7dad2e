//===- Warmup.cpp - Compiling a model's attention kernels ahead of its requests -===//
//
// 1. Plan every request as the call it describes (planAttention on made-up addresses), recording
//    a bad one in its result.
// 2. Drop repeated call classes (same module, shapes, options): they copy the first one's result.
// 3. Choose the tile configurations attention() compiles for each: the one it launches with, or with
//    autotune the remembered choice or every candidate. One configuration of one request is a task:
//    one detail::attentionKernel call, which asks the cache for the kernels exactly as attention() does.
// 4. Order the tasks: the first of each distinct (module, arch, configuration) runs in a first round,
//    the others in a second. A compile of the first round lets attention() answer requests that
//    differ only in options the kernel ignores (KernelCache::alias), so the second round finds those
//    instead of compiling the same code again in parallel.
// 5. Each round runs on worker threads that make the cache's context current and take tasks in turn.
//    The cache compiles different kernels concurrently and one kernel once.
//
//===----------------------------------------------------------------------===//
#include "flare/Dialect/Attn/HeadDim.h"
#include "flare/Warmup.h"

#include "flare/Error.h"

#include "AttentionInternal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace flare {
namespace {

/// The first made-up device address, and the alignment of every made-up tensor (the kernels need
/// 16 bytes; 256 is what cuMemAlloc gives).
constexpr uint64_t kFirstFakeAddress = uint64_t(1) << 20;
constexpr uint64_t kFakeAlignment = 256;

/// Made-up device addresses for the tensors of one call: each in a span of its own (so that checks
/// like autotuning's "out must not overlap q" see what a real call would), aligned; never read.
class FakeAddresses {
public:
  uint64_t take(const std::vector<int64_t> &shape, DType dtype) {
    uint64_t bytes = dtypeBytes(dtype);
    for (int64_t d : shape)
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(std::max<int64_t>(d, 1)), &bytes))
        throw Error("flare::warmup: the request describes a tensor larger than any device memory");
    const uint64_t address = next_;
    const uint64_t span = (bytes + kFakeAlignment - 1) / kFakeAlignment * kFakeAlignment;
    if (span < bytes || __builtin_add_overflow(next_, span, &next_))
      throw Error("flare::warmup: the request describes tensors larger than any device memory");
    return address;
  }

private:
  uint64_t next_ = kFirstFakeAddress;
};

/// The tensors and options of a call of the request's class.
struct FakeCall {
  TensorView q, k, v, out;
  AttentionOptions options;
};

FakeCall fakeCall(const WarmupRequest &r) {
  if (r.options.lse.data != 0 || !r.options.aux.empty())
    throw Error("flare::warmup: describe the LSE and aux tensors by WarmupRequest::lse and ::aux, not by "
                "options.lse and options.aux (warmupRequestFor converts a call's options)");
  FakeAddresses memory;
  FakeCall call;
  auto view = [&](int64_t heads, int64_t seq) {
    TensorView t;
    t.dtype = r.dtype;
    t.shape = {r.batch, heads, seq, r.headDim};
    t.data = memory.take(t.shape, t.dtype);
    return t;
  };
  call.q = view(r.headsQ, r.seqQ);
  call.k = view(r.headsKV, r.seqKV);
  call.v = view(r.headsKV, r.seqKV);
  call.out = view(r.headsQ, r.seqQ);
  call.options = r.options;
  if (r.lse) {
    call.options.lse.dtype = DType::F32;
    call.options.lse.shape = {r.batch, r.headsQ, r.seqQ};
    call.options.lse.data = memory.take(call.options.lse.shape, DType::F32);
  }
  for (const WarmupAux &a : r.aux) {
    TensorView t;
    t.dtype = a.dtype;
    t.shape = {a.length};
    t.data = memory.take(t.shape, t.dtype);
    call.options.aux.push_back(t);
  }
  return call;
}

std::string labelled(const WarmupRequest &r, const std::string &message) {
  return r.label.empty() ? message : r.label + ": " + message;
}

/// What a request's calls have in common with another's when they are the same class of call: the
/// module (mask, modifiers, dtype, head dim, LSE), the shapes, the aux lengths and the options that
/// choose kernels.
std::string callClass(const WarmupRequest &r, const AttentionPlan &plan) {
  std::string id = plan.module;
  id += '\0' + plan.kernelName;
  for (int64_t x : {plan.batch, plan.headsQ, plan.headsKV, plan.seqQ, plan.seqKV, plan.headDim})
    id += ' ' + std::to_string(x);
  for (const WarmupAux &a : r.aux)
    id += std::string(" aux ") + dtypeName(a.dtype) + ":" + std::to_string(a.length);
  id += '\0' + r.options.arch + '\0' + r.options.tile.text() + (r.options.autotune ? " autotune" : "");
  return id;
}

/// "bm=128 bn=128 threads=384 persistent split tma": the kernel's tiles and schedule, from its metadata.
std::string kernelConfig(const KernelInfo &info) {
  std::string s = "bm=" + std::to_string(info.hint("attention.block_m")) +
                  " bn=" + std::to_string(info.hint("attention.block_n")) +
                  " threads=" + std::to_string(info.numThreads);
  if (info.persistent)
    s += " persistent";
  if (info.splitSlotBytes > 0)
    s += " split";
  else if (info.splitSlotBytes == 0)
    s += " dynamic";
  if (!info.tensorMaps.empty())
    s += info.tmaRequired ? " tma" : " tma+fallback";
  return s;
}

/// One distinct call class: its request, made-up call, plan, and the tile configurations that
/// attention() compiles for it.
struct Job {
  size_t request = 0;
  FakeCall call;
  AttentionPlan plan;
  std::vector<AttentionTileConfig> configs;
};

/// The tile configurations attention() compiles for a call of the plan's class (see attention()
/// and detail::autotunedChoice): the override, else the configured launch choice, else with autotune
/// the remembered choice or, before one exists, every candidate.
std::vector<AttentionTileConfig> configsToCompile(rt::KernelCache &cache, const Job &job) {
  const AttentionOptions &options = job.call.options;
  if (options.tile != AttentionTileConfig{})
    return {options.tile};
  if (!options.autotune)
    return {launchTileConfig(job.plan, options, detail::targetArch(cache, options))};
  if (std::optional<AttentionTileConfig> known = detail::rememberedChoice(cache, job.plan, options))
    return {*known};
  return autotuneCandidates(detail::targetArch(cache, options), attn::tileHeadDim(job.plan.headDim, job.plan.headDimV));
}

/// The kernels of one configuration of one job: one detail::attentionKernel call, as attention()
/// makes it. Autotuning's candidates are tasks of their own, so that they compile in parallel too.
struct Task {
  size_t job = 0, config = 0;
  std::vector<rt::CacheAnswer> answers;
  std::string error;
  std::chrono::steady_clock::time_point start, end;
};

/// Tasks that would compile the same module with the same tile configuration first: attention()
/// compiles one kernel of such a family, then may alias it for requests of the family that differ
/// only in options the kernel ignores.
std::string kernelFamily(const Job &job, const Task &task) {
  return job.plan.module + '\0' + job.call.options.arch + '\0' + job.configs[task.config].text();
}

void runTask(rt::KernelCache &cache, const Job &job, Task &task) {
  task.start = std::chrono::steady_clock::now();
  try {
    detail::attentionKernel(cache, job.plan, job.configs[task.config], job.call.options.arch, &task.answers);
  } catch (const std::exception &e) {
    task.error = e.what();
  }
  task.end = std::chrono::steady_clock::now();
}

/// Runs `order` (indices into `tasks`) on up to `threads` worker threads.
void runRound(rt::KernelCache &cache, const std::vector<Job> &jobs, std::vector<Task> &tasks,
              const std::vector<size_t> &order, size_t threads) {
  const size_t workers = std::min(threads, order.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    // Module loads and occupancy queries switch to the cache's context themselves; being current
    // here as well keeps any driver call on this thread in that context.
    std::string contextError;
    try {
      cache.context().makeCurrent();
    } catch (const std::exception &e) {
      contextError = e.what();
    }
    for (size_t i; (i = next.fetch_add(1)) < order.size();) {
      Task &task = tasks[order[i]];
      if (contextError.empty())
        runTask(cache, jobs[task.job], task);
      else
        task.error = contextError;
    }
  };
  // Always on threads of its own, even one: the caller's current context stays as it was.
  std::vector<std::thread> pool;
  pool.reserve(workers);
  try {
    for (size_t t = 0; t < workers; ++t)
      pool.emplace_back(work);
  } catch (...) {
    // No more threads: those started finish the round.
    for (std::thread &t : pool)
      t.join();
    if (pool.empty())
      throw;
    return;
  }
  for (std::thread &t : pool)
    t.join();
}

/// A job's result from its tasks (in configuration order). With several configurations (autotuning's
/// candidates) one that does not compile is skipped, as autotuning skips it, while another compiles.
void collect(const Job &job, const std::vector<const Task *> &tasks, WarmupResult &result) {
  std::string firstError;
  size_t failed = 0;
  auto start = tasks.front()->start, end = tasks.front()->end;
  for (const Task *task : tasks) {
    start = std::min(start, task->start);
    end = std::max(end, task->end);
    for (const rt::CacheAnswer &answer : task->answers) {
      WarmupKernel k;
      k.name = job.plan.kernelName;
      k.config = kernelConfig(answer.module->kernel(k.name).info());
      k.cacheKey = answer.key;
      k.source = answer.source;
      k.deviceBinary = !answer.module->compiled().cubin.empty();
      result.kernels.push_back(std::move(k));
    }
    if (!task->error.empty() && failed++ == 0)
      firstError = tasks.size() == 1 ? task->error : job.configs[task->config].text() + ": " + task->error;
  }
  if (failed == tasks.size())
    result.error = tasks.size() == 1 ? firstError
                                     : "flare::attention: autotuning found no candidate that compiles (" +
                                           firstError + ")";
  result.ms = std::chrono::duration<double, std::milli>(end - start).count();
}

std::string floatText(float x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(x));
  return buffer;
}

} // namespace

size_t WarmupResult::compiled() const {
  return static_cast<size_t>(std::count_if(kernels.begin(), kernels.end(), [](const WarmupKernel &k) {
    return k.source == rt::CacheSource::Compiled;
  }));
}

std::string WarmupRequest::text() const {
  std::string s = std::string("dtype=") + dtypeName(dtype) + " batch=" + std::to_string(batch) +
                  " heads=" + std::to_string(headsQ) + " kv_heads=" + std::to_string(headsKV);
  if (seqQ == seqKV)
    s += " seq=" + std::to_string(seqQ);
  else
    s += " seq_q=" + std::to_string(seqQ) + " seq_kv=" + std::to_string(seqKV);
  s += " head_dim=" + std::to_string(headDim);
  const AttentionOptions &o = options;
  if (o.module.empty()) {
    if (o.causal)
      s += " causal=1";
    if (o.alignment == CausalAlignment::BottomRight)
      s += " align=bottom_right";
    if (o.windowLeft >= 0)
      s += " window_left=" + std::to_string(o.windowLeft);
    if (o.windowRight >= 0)
      s += " window_right=" + std::to_string(o.windowRight);
    if (o.softcap != 0.f)
      s += " softcap=" + floatText(o.softcap);
    if (o.scale != 0.f)
      s += " scale=" + floatText(o.scale);
  } else {
    const size_t at = o.module.find('@');
    const size_t end = at == std::string::npos ? at : o.module.find_first_of("( \n", at);
    s += " module=<custom " + (at == std::string::npos ? std::string("module") : o.module.substr(at, end - at)) + ">";
  }
  if (lse)
    s += " lse=1";
  for (const WarmupAux &a : aux)
    s += std::string(" aux=") + dtypeName(a.dtype) + ":" + std::to_string(a.length);
  if (!o.arch.empty())
    s += " arch=" + o.arch;
  if (o.tile != AttentionTileConfig{})
    s += " " + o.tile.text(); // the list's own words: bm, bn, warps, overlap, pingpong, producer, persistent
  if (o.autotune)
    s += " autotune=1";
  return s;
}

WarmupRequest warmupRequestFor(const TensorView &q, const TensorView &k, const TensorView &v, const TensorView &out,
                               const AttentionOptions &options) {
  AttentionPlan plan = planAttention(q, k, v, out, options);
  WarmupRequest r;
  r.dtype = q.dtype;
  r.batch = plan.batch;
  r.headsQ = plan.headsQ;
  r.headsKV = plan.headsKV;
  r.seqQ = plan.seqQ;
  r.seqKV = plan.seqKV;
  r.headDim = plan.headDim;
  r.lse = plan.hasLse;
  for (const TensorView &a : options.aux)
    r.aux.push_back({a.dtype, a.shape.at(0)});
  r.options = options;
  r.options.lse = TensorView{};
  r.options.aux.clear();
  return r;
}

AttentionPlan planWarmup(const WarmupRequest &request) {
  try {
    FakeCall call = fakeCall(request);
    return planAttention(call.q, call.k, call.v, call.out, call.options);
  } catch (const Error &e) {
    if (request.label.empty())
      throw;
    throw Error(labelled(request, e.what()));
  }
}

std::vector<WarmupResult> warmup(rt::KernelCache &cache, const std::vector<WarmupRequest> &requests, int threads) {
  std::vector<WarmupResult> results(requests.size());
  std::vector<Job> jobs;
  std::unordered_map<std::string, size_t> firstOfClass; // call class -> request index
  for (size_t i = 0; i < requests.size(); ++i) {
    try {
      Job job;
      job.request = i;
      job.call = fakeCall(requests[i]);
      job.plan = planAttention(job.call.q, job.call.k, job.call.v, job.call.out, job.call.options);
      auto [known, added] = firstOfClass.emplace(callClass(requests[i], job.plan), i);
      if (!added) {
        results[i].duplicateOf = static_cast<int>(known->second);
        continue;
      }
      job.configs = configsToCompile(cache, job);
      jobs.push_back(std::move(job));
    } catch (const std::exception &e) {
      results[i].error = labelled(requests[i], e.what());
    }
  }
  std::vector<Task> tasks;
  std::vector<std::vector<size_t>> tasksOfJob(jobs.size());
  std::unordered_set<std::string> families;
  std::vector<size_t> firstRound, secondRound; // indices into tasks
  for (size_t j = 0; j < jobs.size(); ++j)
    for (size_t c = 0; c < jobs[j].configs.size(); ++c) {
      Task task;
      task.job = j;
      task.config = c;
      tasksOfJob[j].push_back(tasks.size());
      (families.insert(kernelFamily(jobs[j], task)).second ? firstRound : secondRound).push_back(tasks.size());
      tasks.push_back(std::move(task));
    }
  const size_t workers =
      threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
  runRound(cache, jobs, tasks, firstRound, workers);
  runRound(cache, jobs, tasks, secondRound, workers);

  for (size_t j = 0; j < jobs.size(); ++j) {
    std::vector<const Task *> mine;
    for (size_t t : tasksOfJob[j])
      mine.push_back(&tasks[t]);
    WarmupResult &result = results[jobs[j].request];
    collect(jobs[j], mine, result);
    if (!result.ok())
      result.error = labelled(requests[jobs[j].request], result.error);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    WarmupResult &r = results[i];
    if (r.duplicateOf < 0)
      continue;
    const WarmupResult &first = results[r.duplicateOf];
    r.kernels = first.kernels;
    for (WarmupKernel &k : r.kernels)
      k.source = rt::CacheSource::Memory;
    if (!first.ok()) {
      // first.error begins with its request's label when it has one.
      const std::string what = requests[r.duplicateOf].label.empty()
                                   ? "request " + std::to_string(r.duplicateOf) + ": " + first.error
                                   : first.error;
      r.error = labelled(requests[i], "the same call class as " + what);
    }
  }
  return results;
}

} // namespace flare
