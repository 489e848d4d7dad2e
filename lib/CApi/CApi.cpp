//===- CApi.cpp - Flare's C API over flare::attention and the runtime -----===//
#include "flare/flare_c.h"

#include "flare/Attention.h"
#include "flare/Error.h"
#include "flare/Runtime/Runtime.h"

#include <cstring>
#include <memory>
#include <string>

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
    if (!session || !q || !k || !v || !out)
      throw flare::Error("flare_attention: null session or tensor");
    flare::AttentionOptions opt;
    if (options) {
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
      for (int32_t i = 0; i < options->num_aux; ++i)
        opt.aux.push_back(toView(options->aux[i], "aux"));
      opt.tile = {options->block_m, options->block_n, options->num_warps, options->overlap,
                  options->ping_pong, options->producer, options->persistent};
      opt.autotune = options->autotune != 0;
    }
    flare::attention(*session->cache, toView(*q, "q"), toView(*k, "k"), toView(*v, "v"), toView(*out, "out"), opt,
                     stream);
  });
}

flare_kernel *flare_kernel_load(flare_session *session, const char *module_text, const char *kernel_name) {
  std::unique_ptr<flare_kernel> k;
  if (guarded([&] {
        if (!session || !module_text || !kernel_name)
          throw flare::Error("flare_kernel_load: null argument");
        k.reset(new flare_kernel{session->cache->getOrCompile(module_text)->kernel(kernel_name)});
      }))
    return nullptr;
  return k.release();
}

void flare_kernel_destroy(flare_kernel *kernel) { delete kernel; }

int flare_kernel_launch(flare_kernel *kernel, const uint32_t grid[3], int32_t num_args, const int32_t *kinds,
                        const uint64_t *values, void *stream) {
  return guarded([&] {
    if (!kernel || !grid || (num_args > 0 && (!kinds || !values)))
      throw flare::Error("flare_kernel_launch: null argument");
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
