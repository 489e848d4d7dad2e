/*===- flare_c.h - Flare's C API: attention and tile kernels from any language -===*
 *
 * A small, stable C surface over flare::attention and the runtime, for callers outside C++ (the
 * benchmark reaches it from Python through ctypes on torch tensors' device pointers). Functions that
 * can fail return 0 on success and non-zero on failure; flare_last_error() then describes the failure
 * (per thread, valid until the next failing call of that thread). The session uses the device's
 * primary context, so it shares memory and streams with other users of the driver API (e.g. PyTorch).
 *===----------------------------------------------------------------------===*/
#ifndef FLARE_FLARE_C_H
#define FLARE_FLARE_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { FLARE_BF16 = 0, FLARE_F16 = 1, FLARE_F32 = 2, FLARE_I32 = 3, FLARE_I64 = 4 };

/* A device tensor: address, dtype, rank (1 to 4), shape and strides in elements. */
typedef struct flare_tensor {
  uint64_t data;
  int32_t dtype;
  int32_t rank;
  int64_t shape[4];
  int64_t strides[4];
} flare_tensor;

typedef struct flare_attention_options {
  int32_t causal;       /* non-zero: causal */
  int32_t bottom_right; /* non-zero: the diagonal is aligned bottom-right (Skv - Sq) */
  int64_t window_left;  /* sliding window around the diagonal; negative: unbounded */
  int64_t window_right;
  float softcap; /* > 0: softcap * tanh(score / softcap) */
  float scale;   /* 0: 1 / sqrt(head_dim) */
  flare_tensor lse;     /* f32 [B, Hq, Sq]; data 0: not returned */
  const char *module;   /* a custom attn.attention module, or NULL */
  int32_t num_aux;      /* aux tensors of the custom module */
  const flare_tensor *aux;
  int32_t block_m, block_n, num_warps; /* tile configuration override; 0: the configured choice */
  int32_t overlap; /* softmax / P V overlap in the KV loop: 1 on, -1 off, 0 the configured choice */
  int32_t ping_pong; /* warpgroups issue their MMAs in turn: 1 on, -1 off, 0 the configured choice */
  int32_t producer;  /* a producer warpgroup issues the K/V copies: 1 on, -1 off, 0 the configured choice */
  int32_t persistent; /* CTAs run query blocks in turn (persistent kernel): 1 on, -1 off, 0 the configured choice */
  int32_t autotune;   /* non-zero: time the candidate configurations once per shape class, keep the fastest
                         (flare::AttentionOptions::autotune) */
} flare_attention_options;

typedef struct flare_session flare_session;
typedef struct flare_kernel flare_kernel;

const char *flare_last_error(void);

/* A context on `device` with a kernel cache (in $FLARE_CACHE_DIR, else the default directory). */
flare_session *flare_session_create(int device);
void flare_session_destroy(flare_session *session);

/* out = attention(q, k, v), see flare/Attention.h; asynchronous on `stream` (a CUstream or NULL). */
int flare_attention(flare_session *session, const flare_tensor *q, const flare_tensor *k, const flare_tensor *v,
                    const flare_tensor *out, const flare_attention_options *options, void *stream);

/* A kernel of a tile-dialect module (compiled through the session's cache), and its launch. Argument
 * kinds: 0 pointer, 1 i32, 2 i64, 3 f32; values[i] holds the argument's bits. */
flare_kernel *flare_kernel_load(flare_session *session, const char *module_text, const char *kernel_name);
void flare_kernel_destroy(flare_kernel *kernel);
int flare_kernel_launch(flare_kernel *kernel, const uint32_t grid[3], int32_t num_args, const int32_t *kinds,
                        const uint64_t *values, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* FLARE_FLARE_C_H */
