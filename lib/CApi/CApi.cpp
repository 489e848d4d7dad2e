//===- CApi.cpp - Flare's C API over flare::attention and the runtime -----===//
#include "flare/flare_c.h"

#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"
#include "flare/Warmup.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

struct flare_block_mask {
  flare::BlockMask mask;
};

struct flare_session {
  std::unique_ptr<flare::rt::Context> ctx;
  std::unique_ptr<flare::rt::KernelCache> cache;
};

struct flare_kernel {
  flare::rt::Kernel kernel;
};

namespace {

thread_local std::string lastError;

/// Runs `body`, turning every exception into a non-zero return and flare_last_error().
template <class F> int guarded(F &&body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    lastError = e.what();
  } catch (...) {
    lastError = "unknown error";
  }
  return 1;
}

flare::TensorView toView(const flare_tensor &t, const char *name) {
  if (t.rank < 1 || t.rank > 4)
    throw flare::Error(std::string("flare_c: ") + name + " has rank " + std::to_string(t.rank) + " (1 to 4)");
  if (t.dtype < FLARE_BF16 || t.dtype > FLARE_I64)
    throw flare::Error(std::string("flare_c: ") + name + " has an unknown dtype " + std::to_string(t.dtype));
  flare::TensorView v;
  v.data = t.data;
  v.dtype = static_cast<flare::DType>(t.dtype);
  v.shape.assign(t.shape, t.shape + t.rank);
  v.strides.assign(t.strides, t.strides + t.rank);
  return v;
}

flare::AttentionOptions toOptions(const flare_attention_options *options) {
  flare::AttentionOptions opt;
  if (!options)
    return opt;
  opt.causal = options->causal != 0;
  opt.alignment = options->bottom_right ? flare::CausalAlignment::BottomRight : flare::CausalAlignment::TopLeft;
  opt.windowLeft = options->window_left;
  opt.windowRight = options->window_right;
  opt.softcap = options->softcap;
  opt.scale = options->scale;
  if (options->lse.data)
    opt.lse = toView(options->lse, "lse");
  if (options->module)
    opt.module = options->module;
  if (options->num_aux < 0 || (options->num_aux > 0 && !options->aux))
    throw flare::Error("flare_c: num_aux is " + std::to_string(options->num_aux) + " but aux is " +
                       (options->aux ? "set" : "NULL"));
  for (int32_t i = 0; i < options->num_aux; ++i)
    opt.aux.push_back(toView(options->aux[i], "aux"));
  opt.tile = {options->block_m, options->block_n, options->num_warps, options->overlap,
              options->ping_pong, options->producer, options->persistent, options->kv_splits,
              options->block_lists};
  opt.blockMask = options->block_mask ? &options->block_mask->mask : nullptr;
  if (options->kv_lens.data)
    opt.kvLens = toView(options->kv_lens, "kv_lens");
  if (options->page_table.data)
    opt.pageTable = toView(options->page_table, "page_table");
  if (options->cu_seqlens_q.data)
    opt.cuSeqlensQ = toView(options->cu_seqlens_q, "cu_seqlens_q");
  if (options->cu_seqlens_k.data)
    opt.cuSeqlensK = toView(options->cu_seqlens_k, "cu_seqlens_k");
  opt.maxSeqlenQ = options->max_seqlen_q;
  opt.maxSeqlenK = options->max_seqlen_k;
  opt.autotune = options->autotune != 0;
  opt.deterministic = options->deterministic != 0;
  return opt;
}

/// The C++ request of a C one: the options' LSE and aux tensors become flags and lengths.
flare::WarmupRequest toWarmupRequest(const flare_warmup_request &r) {
  if (r.dtype != FLARE_BF16 && r.dtype != FLARE_F16)
    throw flare::Error("flare_warmup: dtype " + std::to_string(r.dtype) + " is not FLARE_BF16 or FLARE_F16");
  flare::WarmupRequest w;
  w.dtype = static_cast<flare::DType>(r.dtype);
  w.batch = r.batch;
  w.headsQ = r.heads_q;
  w.headsKV = r.heads_kv;
  w.seqQ = r.seq_q;
  w.seqKV = r.seq_kv;
  w.headDim = r.head_dim;
  if (!r.options)
    return w;
  // No address is read: the LSE is asked for by a non-zero lse.data, aux tensors count by type and length.
  flare_attention_options rest = *r.options;
  rest.lse = flare_tensor{};
  rest.num_aux = 0;
  rest.aux = nullptr;
  w.options = toOptions(&rest);
  w.lse = r.options->lse.data != 0;
  if (r.options->num_aux > 0 && !r.options->aux)
    throw flare::Error("flare_warmup: num_aux is " + std::to_string(r.options->num_aux) + " but aux is NULL");
  for (int32_t i = 0; i < r.options->num_aux; ++i) {
    const flare_tensor &a = r.options->aux[i];
    if (a.rank != 1 || a.dtype < FLARE_BF16 || a.dtype > FLARE_I64)
      throw flare::Error("flare_warmup: aux[" + std::to_string(i) + "] must be 1-D (rank 1) of a known dtype, got rank " +
                         std::to_string(a.rank) + ", dtype " + std::to_string(a.dtype));
    w.aux.push_back({static_cast<flare::DType>(a.dtype), a.shape[0]});
  }
  return w;
}

void copyError(char (&to)[512], const std::string &from) {
  const size_t n = std::min(from.size(), sizeof(to) - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

} // namespace

extern "C" {

const char *flare_last_error(void) { return lastError.c_str(); }

flare_session *flare_session_create(int device) {
  std::unique_ptr<flare_session> s(new flare_session);
  if (guarded([&] {
        s->ctx = std::make_unique<flare::rt::Context>(device);
        s->cache = std::make_unique<flare::rt::KernelCache>(*s->ctx);
      }))
    return nullptr;
  return s.release();
}

void flare_session_destroy(flare_session *session) {
  if (session) {
    session->cache.reset();
    session->ctx.reset();
    delete session;
  }
}

int flare_attention(flare_session *session, const flare_tensor *q, const flare_tensor *k, const flare_tensor *v,
                    const flare_tensor *out, const flare_attention_options *options, void *stream) {
  return guarded([&] {
    // Every pointer is checked before anything is read through it: the options' first.
    flare::AttentionOptions opt = toOptions(options);
    if (!session || !q || !k || !v || !out)
      throw flare::Error("flare_attention: null session or tensor");
    flare::attention(*session->cache, toView(*q, "q"), toView(*k, "k"), toView(*v, "v"), toView(*out, "out"), opt,
                     stream);
  });
}

int flare_block_mask_build(flare_session *session, const flare_tensor *q, const flare_tensor *k, const flare_tensor *v,
                           const flare_tensor *out, const flare_attention_options *options, void *stream,
                           flare_block_mask **mask) {
  return guarded([&] {
    flare::AttentionOptions opt = toOptions(options);
    if (!session || !q || !k || !v || !out || !mask)
      throw flare::Error("flare_block_mask_build: null session, tensor or result");
    auto built = std::make_unique<flare_block_mask>();
    built->mask = flare::buildBlockMask(*session->cache, toView(*q, "q"), toView(*k, "k"), toView(*v, "v"),
                                        toView(*out, "out"), opt, stream);
    *mask = built.release();
  });
}

int flare_block_mask_build_backward(flare_session *session, const flare_tensor *q, const flare_tensor *k,
                                    const flare_tensor *v, const flare_tensor *out, const flare_tensor *lse,
                                    const flare_attention_options *options, void *stream, flare_block_mask **mask) {
  return guarded([&] {
    flare::AttentionOptions opt = toOptions(options);
    if (!session || !q || !k || !v || !out || !lse || !mask)
      throw flare::Error("flare_block_mask_build_backward: null session, tensor or result");
    auto built = std::make_unique<flare_block_mask>();
    built->mask = flare::buildBackwardBlockMask(*session->cache, toView(*q, "q"), toView(*k, "k"), toView(*v, "v"),
                                                toView(*out, "out"), toView(*lse, "lse"), opt, stream);
    *mask = built.release();
  });
}

void flare_block_mask_destroy(flare_block_mask *mask) { delete mask; }

int flare_kv_append(flare_session *session, const flare_tensor *k_new, const flare_tensor *v_new,
                    const flare_tensor *k_cache, const flare_tensor *v_cache, const flare_tensor *kv_lens,
                    const flare_tensor *page_table, void *stream) {
  return guarded([&] {
    if (!session || !k_new || !v_new || !k_cache || !v_cache || !kv_lens || !page_table)
      throw flare::Error("flare_kv_append: null session or tensor");
    flare::appendKV(*session->cache, toView(*k_new, "k_new"), toView(*v_new, "v_new"), toView(*k_cache, "k_cache"),
                    toView(*v_cache, "v_cache"), toView(*kv_lens, "kv_lens"), toView(*page_table, "page_table"),
                    stream);
  });
}

int flare_attention_backward(flare_session *session, const flare_tensor *q, const flare_tensor *k,
                             const flare_tensor *v, const flare_tensor *out, const flare_tensor *dout,
                             const flare_tensor *lse, const flare_tensor *dq, const flare_tensor *dk,
                             const flare_tensor *dv, const flare_attention_options *options, void *stream) {
  return guarded([&] {
    flare::AttentionOptions opt = toOptions(options);
    if (!session || !q || !k || !v || !out || !dout || !lse || !dq || !dk || !dv)
      throw flare::Error("flare_attention_backward: null session or tensor");
    flare::attentionBackward(*session->cache, toView(*q, "q"), toView(*k, "k"), toView(*v, "v"), toView(*out, "out"),
                             toView(*dout, "dout"), toView(*lse, "lse"), toView(*dq, "dq"), toView(*dk, "dk"),
                             toView(*dv, "dv"), opt, stream);
  });
}

int flare_warmup(flare_session *session, const flare_warmup_request *requests, int32_t n, int32_t threads,
                 flare_warmup_result *results) {
  return guarded([&] {
    if (!session || (n > 0 && !requests))
      throw flare::Error("flare_warmup: null session or requests");
    if (n < 0 || threads < 0)
      throw flare::Error("flare_warmup: negative count (" + std::to_string(n) + ") or threads (" +
                         std::to_string(threads) + ")");
    // A request that does not convert fails alone, like one that does not compile.
    std::vector<flare::WarmupRequest> converted;
    std::vector<int32_t> index(n, -1); // request -> converted, or -1
    std::vector<std::string> conversionErrors(n);
    for (int32_t i = 0; i < n; ++i) {
      try {
        converted.push_back(toWarmupRequest(requests[i]));
        converted.back().label = "request " + std::to_string(i);
        index[i] = static_cast<int32_t>(converted.size() - 1);
      } catch (const std::exception &e) {
        conversionErrors[i] = "request " + std::to_string(i) + ": " + e.what();
      }
    }
    std::vector<flare::WarmupResult> done = flare::warmup(*session->cache, converted, threads);
    int32_t failed = 0;
    std::string firstError;
    for (int32_t i = 0; i < n; ++i) {
      flare_warmup_result r{};
      r.duplicate_of = -1;
      std::string error = conversionErrors[i];
      if (index[i] >= 0) {
        const flare::WarmupResult &w = done[index[i]];
        error = w.error;
        // Back to the caller's numbering (converted requests skip the ones that failed to convert).
        if (w.duplicateOf >= 0)
          r.duplicate_of = static_cast<int32_t>(std::find(index.begin(), index.end(), w.duplicateOf) - index.begin());
        r.kernels = static_cast<int32_t>(w.kernels.size());
        r.compiled = static_cast<int32_t>(w.compiled());
        r.ms = w.ms;
      }
      r.status = error.empty() ? 0 : 1;
      copyError(r.error, error);
      if (!error.empty() && failed++ == 0)
        firstError = error;
      if (results)
        results[i] = r;
    }
    if (failed)
      throw flare::Error("flare_warmup: " + std::to_string(failed) + " of " + std::to_string(n) +
                         " requests failed; the first: " + firstError);
  });
}

int flare_cache_counts(flare_session *session, uint64_t *hits, uint64_t *misses) {
  return guarded([&] {
    if (!session)
      throw flare::Error("flare_cache_counts: null session");
    if (hits)
      *hits = session->cache->hits();
    if (misses)
      *misses = session->cache->misses();
  });
}

namespace {
/// flare_kernel_load and flare_kernel_load_options (`api`, named in the errors; `options` may be null).
flare_kernel *loadKernel(const char *api, flare_session *session, const char *module_text, const char *kernel_name,
                         const char *options) {
  std::unique_ptr<flare_kernel> k;
  if (guarded([&] {
        if (!session || !module_text || !kernel_name)
          throw flare::Error(std::string(api) + ": null argument");
        flare::CompileOptions compile;
        compile.arch.clear(); // the session's device
        if (options)
          compile.set(options);
        k.reset(new flare_kernel{session->cache->getOrCompile(module_text, compile)->kernel(kernel_name)});
      }))
    return nullptr;
  return k.release();
}
} // namespace

flare_kernel *flare_kernel_load(flare_session *session, const char *module_text, const char *kernel_name) {
  return loadKernel("flare_kernel_load", session, module_text, kernel_name, nullptr);
}

flare_kernel *flare_kernel_load_options(flare_session *session, const char *module_text, const char *kernel_name,
                                        const char *options) {
  return loadKernel("flare_kernel_load_options", session, module_text, kernel_name, options);
}

void flare_kernel_destroy(flare_kernel *kernel) { delete kernel; }

int flare_kernel_launch(flare_kernel *kernel, const uint32_t grid[3], int32_t num_args, const int32_t *kinds,
                        const uint64_t *values, void *stream) {
  return guarded([&] {
    if (!kernel || !grid || (num_args > 0 && (!kinds || !values)))
      throw flare::Error("flare_kernel_launch: null argument");
    if (num_args < 0)
      throw flare::Error("flare_kernel_launch: negative argument count " + std::to_string(num_args));
    flare::rt::KernelArgs args;
    for (int32_t i = 0; i < num_args; ++i) {
      uint64_t bits = values[i];
      switch (kinds[i]) {
      case 0:
        args.addPointer(bits);
        break;
      case 1:
        args.addI32(static_cast<int32_t>(static_cast<uint32_t>(bits)));
        break;
      case 2:
        args.addI64(static_cast<int64_t>(bits));
        break;
      case 3: {
        float f;
        uint32_t word = static_cast<uint32_t>(bits);
        std::memcpy(&f, &word, 4);
        args.addF32(f);
        break;
      }
      default:
        throw flare::Error("flare_kernel_launch: argument " + std::to_string(i) + " has unknown kind " +
                           std::to_string(kinds[i]));
      }
    }
    kernel->kernel.launch({grid[0], grid[1], grid[2]}, args, stream);
  });
}

} // extern "C"
