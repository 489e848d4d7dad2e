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

typedef struct flare_block_mask flare_block_mask;
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
  int32_t persistent; /* CTAs run query blocks in turn (persistent kernel): 1 on, -1 off, 0 the configured choice;
                         2 on, each CTA taking its next block from a shared counter (AttentionTileConfig::persistent) */
  int32_t autotune;   /* non-zero: time the candidate configurations once per shape class, keep the fastest
                         (flare::AttentionOptions::autotune) */
  int32_t deterministic; /* flare_attention_backward: non-zero: identical bits on every call
                            (flare::AttentionOptions::deterministic) */
  int32_t kv_splits; /* split-KV (flash-decoding): 0 decided by the launch shape, 1 never, N > 1 the keys in N parts
                        (flare::AttentionTileConfig::kvSplits) */
  flare_tensor kv_lens;    /* i32 [B]: the keys of each sequence; data 0: Skv each (flare::AttentionOptions::kvLens) */
  flare_tensor page_table; /* i32 [B, max_pages]: k and v are pages [num_pages, Hkv, page_size, D]; data 0:
                              contiguous (flare::AttentionOptions::pageTable) */
  flare_tensor cu_seqlens_q; /* i32 [B + 1]: q, out hold B sequences packed, [1, Hq, total_q, D]; data 0: not packed */
  flare_tensor cu_seqlens_k; /* i32 [B + 1]: k, v likewise (flare::AttentionOptions::cuSeqlensQ/K) */
  int64_t max_seqlen_q, max_seqlen_k; /* with cu_seqlens: the longest sequence's lengths */
  int32_t block_lists; /* block lists for a mask the compiler cannot classify: 0 or 1 where they apply, -1 off
                          (flare::AttentionTileConfig::blockLists); flare_attention_backward reads it too */
  const flare_block_mask *block_mask; /* lists from flare_block_mask_build for this call, or NULL: a call that
                                         visits block lists builds them itself (flare::AttentionOptions::blockMask) */
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

/* Builds the block lists that flare_attention(session, q, k, v, out, options) would build for itself (its
 * module, shapes, tile configuration and aux tensors' contents; out is not written), asynchronously on
 * `stream`, into *mask (flare::buildBlockMask): pass it as options->block_mask to the calls that share them.
 * Fails when that call visits no block lists. */
int flare_block_mask_build(flare_session *session, const flare_tensor *q, const flare_tensor *k, const flare_tensor *v,
                           const flare_tensor *out, const flare_attention_options *options, void *stream,
                           flare_block_mask **mask);
/* The backward's block lists: those flare_attention_backward(session, q, k, v, out, ..., lse, ..., options) would
 * build for itself (flare::buildBackwardBlockMask), into *mask: pass it as options->block_mask to the backward
 * calls that share them (flare_attention refuses it). Fails when that backward visits none. */
int flare_block_mask_build_backward(flare_session *session, const flare_tensor *q, const flare_tensor *k,
                                    const flare_tensor *v, const flare_tensor *out, const flare_tensor *lse,
                                    const flare_attention_options *options, void *stream, flare_block_mask **mask);
/* Frees the lists (after the work that reads them: the memory is released at once). NULL is ignored. */
void flare_block_mask_destroy(flare_block_mask *mask);
/* Writes new keys and values (k_new, v_new [B, Hkv, Sn, D]) into a paged cache (k_cache, v_cache
 * [num_pages, Hkv, page_size, D], page_table i32 [B, max_pages]) at positions kv_lens[b] + i, which it
 * reads and does not advance (flare::appendKV in flare/Attention.h). Asynchronous on `stream`. */
int flare_kv_append(flare_session *session, const flare_tensor *k_new, const flare_tensor *v_new,
                    const flare_tensor *k_cache, const flare_tensor *v_cache, const flare_tensor *kv_lens,
                    const flare_tensor *page_table, void *stream);

/* The gradients of flare_attention (flare::attentionBackward in flare/Attention.h): dq like q, dk like k,
 * dv like v, from the forward's out and its lse (f32 [B, Hq, Sq], required) and the output gradient dout, with
 * the forward's options (the tile and autotune fields must be 0). Asynchronous on `stream`. */
int flare_attention_backward(flare_session *session, const flare_tensor *q, const flare_tensor *k,
                             const flare_tensor *v, const flare_tensor *out, const flare_tensor *dout,
                             const flare_tensor *lse, const flare_tensor *dq, const flare_tensor *dk,
                             const flare_tensor *dv, const flare_attention_options *options, void *stream);

/* One class of flare_attention calls to compile ahead (flare/Warmup.h): q [batch, heads_q, seq_q, head_dim],
 * k and v [batch, heads_kv, seq_kv, head_dim], out like q, all of `dtype` (FLARE_BF16 or FLARE_F16). `options`
 * (NULL: the defaults) are the calls' own options; no address in them is read: a non-zero lse.data asks
 * for the LSE, and each aux tensor counts by its dtype and length (shape[0], rank 1). */
typedef struct flare_warmup_request {
  int32_t dtype;
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv, head_dim;
  const flare_attention_options *options;
} flare_warmup_request;

/* What flare_warmup did for one request. */
typedef struct flare_warmup_result {
  int32_t status;       /* 0: its kernels are in the session's cache; non-zero: it failed (see error) */
  int32_t duplicate_of; /* the index of an earlier request of the same call class (not run again), or -1 */
  int32_t kernels;      /* kernel cache lookups the call makes (more than one where it chooses between kernels,
                           or autotunes before its first call: every candidate) */
  int32_t compiled;     /* of them, compiled by this warm-up (the others were in memory or on disk, or another
                           request of this warm-up compiled them) */
  double ms;            /* wall time of the request on its worker thread */
  char error[512];      /* why it failed, NUL-terminated and cut to fit; empty on success */
} flare_warmup_result;

/* Compiles the kernels of `n` requests ahead, on `threads` worker threads (0: one per hardware thread),
 * into the session's kernel cache (memory and disk), so that later flare_attention calls of those classes
 * compile nothing. Returns 0 when every request succeeded; otherwise non-zero, with the number of failed
 * requests and the first one's error in flare_last_error(). `results` (NULL, or room for n) receives one
 * result per request either way. Needs the session's device: the cache key holds its architecture and
 * driver version. */
int flare_warmup(flare_session *session, const flare_warmup_request *requests, int32_t n, int32_t threads,
                 flare_warmup_result *results);

/* The session's kernel cache counters: lookups answered from memory or disk (`hits`, including those that
 * waited for another thread's compile of the same kernel) and lookups that compiled (`misses`). Either
 * pointer may be NULL. */
int flare_cache_counts(flare_session *session, uint64_t *hits, uint64_t *misses);

/* A kernel of a tile-dialect module (compiled through the session's cache), and its launch. Argument
 * kinds: 0 pointer, 1 i32, 2 i64, 3 f32; values[i] holds the argument's bits. */
flare_kernel *flare_kernel_load(flare_session *session, const char *module_text, const char *kernel_name);
/* flare_kernel_load with compile options in flarec's spelling without the dashes, separated by spaces:
 * "tma-fallback=0" (no element-wise copies for views whose tensor maps do not encode, as flare_attention
 * compiles its kernels; launching with such views then fails), "strength-reduction=0", "opt-level=2".
 * NULL or "" is flare_kernel_load. An unknown option or value fails with its name in flare_last_error(). */
flare_kernel *flare_kernel_load_options(flare_session *session, const char *module_text, const char *kernel_name,
                                        const char *options);
void flare_kernel_destroy(flare_kernel *kernel);
int flare_kernel_launch(flare_kernel *kernel, const uint32_t grid[3], int32_t num_args, const int32_t *kinds,
                        const uint64_t *values, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* FLARE_FLARE_C_H */
