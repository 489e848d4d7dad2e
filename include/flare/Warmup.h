//===- Warmup.h - Compiling a model's attention kernels ahead of its requests -*- C++ -*-===//
//
// The first flare::attention call of a call class (dtype, shapes, options) compiles its kernel: 0.3 to
// 1.1 s on an H200. A serving process that warms up first never pays that on a request:
//
//   flare::rt::Context ctx(0);
//   flare::rt::KernelCache cache(ctx);
//   std::vector<flare::WarmupRequest> calls;
//   for (int64_t seq : {512, 1024, 2048, 4096, 8192}) {
//     flare::WarmupRequest r;
//     r.headsQ = 32, r.headsKV = 8, r.headDim = 128, r.seqQ = r.seqKV = seq;
//     r.options.causal = true;
//     calls.push_back(r);
//   }
//   for (const flare::WarmupResult &r : flare::warmup(cache, calls))   // all cores
//     if (!r.ok()) std::cerr << r.error << "\n";
//
// Warm-up compiles exactly the kernels that flare::attention compiles for a call of each request's
// class: it plans the call (planAttention, on made-up 16-byte aligned addresses: no memory is touched)
// and asks the cache for its kernel the way attention() does, so that the call later finds everything
// in the cache: in memory for the same KernelCache, on disk for every process sharing its directory
// (the command `flare-warmup list.txt` fills a directory from a list file; parseWarmupList reads one;
// see WarmupKernel::deviceBinary for the kernels that other processes load through the driver's JIT
// cache).
// A kernel depends on the shapes (how a launch splits between CTAs, the tiles of short causal
// launches), not on the addresses or strides, with one exception: a view with a zero stride (a
// broadcast) has no TMA tensor map and takes the kernel with the element-wise copies instead; warm-up
// describes contiguous tensors.
//
// With options.autotune (and no tile override), a request compiles the choice autotuning remembers
// for its shape class (in this process or in the cache directory's autotune-v1.tsv), or, before the
// first autotuned call, every candidate (autotuneCandidates): that first call then times them without
// compiling any. Warm-up itself times nothing (it launches no kernel).
//
// Requests run on `threads` worker threads (0: one per hardware thread); kernels compile in parallel,
// and two requests that need the same kernel compile it once (KernelCache). Each worker makes the
// cache's context current on itself; the calling thread's current context is left alone. Warm-up may
// run while the process already serves calls through the same cache: a call that needs a kernel being
// warmed up waits for that compile instead of starting its own.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_WARMUP_H
#define FLARE_WARMUP_H

#include "flare/Attention.h"
#include "flare/Runtime/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flare {

/// An aux tensor of a custom module's call: its element type and length.
struct WarmupAux {
  DType dtype = DType::I32;
  int64_t length = 1;
};

/// One class of flare::attention calls: q [batch, headsQ, seqQ, headDim], k and v [batch, headsKV,
/// seqKV, headDim], out like q, all of `dtype`, with `options`.
struct WarmupRequest {
  DType dtype = DType::BF16;
  int64_t batch = 1, headsQ = 1, headsKV = 1, seqQ = 1, seqKV = 1, headDim = 128;
  /// The call returns the per-row log-sum-exp (AttentionOptions::lse).
  bool lse = false;
  /// The aux tensors of a custom module (options.module), in operand order.
  std::vector<WarmupAux> aux;
  /// Everything else about the call: mask, window, softcap, scale, a custom module, arch, tile,
  /// autotune. options.lse and options.aux describe tensors by address: leave them empty and set
  /// `lse` and `aux` above (warmupRequestFor converts a call's options).
  AttentionOptions options;
  /// Where the request comes from, for messages (parseWarmupList sets "file:line"); may be empty.
  std::string label;

  /// The request as one line of a warm-up list (see parseWarmupList): "dtype=bf16 batch=1 heads=32
  /// ...", listing the options that differ from their defaults. A custom module is written as
  /// "module=<custom @name>" (the text does not fit on a line), which parseWarmupList does not accept.
  std::string text() const;
};

/// The request for the call attention(cache, q, k, v, out, options) would be (checked like that call,
/// by planAttention; addresses and strides are not kept). Throws flare::Error.
WarmupRequest warmupRequestFor(const TensorView &q, const TensorView &k, const TensorView &v, const TensorView &out,
                               const AttentionOptions &options = {});

/// The plan of a call of the request's class (planAttention on made-up addresses): checks the request
/// without a GPU. Throws flare::Error, prefixed with the label when there is one.
AttentionPlan planWarmup(const WarmupRequest &request);

/// One kernel a request needed: one cache lookup of flare::attention's for such a call.
struct WarmupKernel {
  std::string name;     ///< the kernel's name in its module
  std::string config;   ///< what was compiled: "bm=128 bn=128 threads=384 persistent split", from its metadata
  std::string cacheKey; ///< its kernel cache key (disk entry <cache dir>/<key>.fkc)
  rt::CacheSource source = rt::CacheSource::Memory; ///< compiled now, or found (memory, disk, another request)
  /// Its cache entry holds the device binary, which another process loads without any JIT. False for
  /// kernels the driver compiles from PTX as a whole program (register budgets: the head-dim-128
  /// kernels on sm_90a): another process loads those through the driver's own JIT cache, so warm-up
  /// in one process spares the others ptxas only while that cache is on and large enough
  /// ($CUDA_CACHE_PATH or ~/.nv/ComputeCache, $CUDA_CACHE_MAXSIZE; CUDA_CACHE_DISABLE=1 turns it off).
  bool deviceBinary = false;
};

/// What warm-up did for one request.
struct WarmupResult {
  /// The cache lookups of the call, in order (usually one; two or three where attention() chooses
  /// between kernels after a first lookup; every candidate with autotune before its first call).
  std::vector<WarmupKernel> kernels;
  /// Wall time of the request on its worker (waiting for a kernel another request compiles included).
  double ms = 0;
  /// Empty on success, else why the request failed (a bad request, a compile error); other requests
  /// are not affected.
  std::string error;
  /// The index of an earlier request of the same call class that this one repeats (not run again: its
  /// kernels are that request's, as memory hits), or -1.
  int duplicateOf = -1;

  bool ok() const { return error.empty(); }
  /// The kernels this request compiled.
  size_t compiled() const;
};

/// Compiles (or finds in the cache) the kernels of every request, on `threads` worker threads (0: as
/// many as the hardware runs at once; never more than there is work for) that are not the calling
/// thread. Returns one result per request, in order; a failing request is reported in its result, not
/// thrown (only a failure to start any thread is). The work is one attention() kernel choice per
/// request (per candidate with autotune); the first of each distinct module and tile configuration
/// runs before the others, so that attention()'s sharing of one compiled kernel between requests that
/// differ only in options the kernel ignores (KernelCache::alias) takes effect before those ask.
std::vector<WarmupResult> warmup(rt::KernelCache &cache, const std::vector<WarmupRequest> &requests,
                                 int threads = 0);

/// Reads a warm-up list: one line per class of calls (several when values are lists), `#` to the end
/// of a line is a comment, blank lines are skipped. A line is words `key=value`:
///
///   heads=32 kv_heads=8 head_dim=128 seq=512,1024,2048 batch=1,2 causal=1   # 6 requests
///
///   dtype      bf16 (default) or f16
///   batch      B (default 1)
///   heads      query heads Hq (required)
///   kv_heads   key/value heads Hkv (default: heads)
///   seq        Sq = Skv; or seq_q and seq_kv apart (one of the two forms is required)
///   head_dim   D: a multiple of 16 from 32 to 256 (required)
///   causal     0 or 1            align     top_left (default) or bottom_right
///   window_left, window_right    sliding window (-1: unbounded)
///   softcap    > 0: softcap * tanh(score / softcap)          scale   0: 1/sqrt(D)
///   lse        0 or 1: the call returns the log-sum-exp
///   module     a custom attn.attention module file, relative to `dir`
///   aux        dtype:length of a custom module's aux tensor, once per tensor, in order
///   arch       target architecture (default: the device's)
///   bm, bn, warps, overlap, pingpong, producer, persistent   tile override (AttentionTileConfig)
///   autotune   0 or 1
///
/// Every value except module's and aux's may be a comma-separated list; the line then stands for
/// every combination. Each request is also checked by planWarmup. Throws flare::Error listing every
/// bad line as "<name>:<line>: error: <what>".
std::vector<WarmupRequest> parseWarmupList(const std::string &text, const std::string &name = "<list>",
                                           const std::string &dir = ".");

} // namespace flare

#endif // FLARE_WARMUP_H
