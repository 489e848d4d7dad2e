//===- Attention.h - flare::attention: FlashAttention from C++ --*- C++ -*-===//
//
// The high-level entry point: describe the tensors (device pointer, dtype, shape, strides) and the
// options, and Flare writes the attn.attention IR for them, generates and compiles the fused kernel
// once (through the kernel cache: in memory, then on disk) and launches it.
//
//   flare::rt::Context ctx(0);
//   flare::rt::KernelCache cache(ctx);
//   flare::AttentionOptions opt;
//   opt.causal = true;
//   flare::attention(cache, q, k, v, out, opt, stream);
//
// Every argument is checked before anything is compiled or launched; a bad one is a flare::Error that
// names the tensor and what is wrong. This header pulls in no MLIR headers.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_ATTENTION_H
#define FLARE_ATTENTION_H

#include "flare/Runtime/Runtime.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flare {

/// The longest sequence (Sq or Skv) flare::attention accepts: generated kernels compute query and key
/// indices and mask bounds in 32-bit arithmetic, with headroom.
inline constexpr int64_t kMaxSequenceLength = (int64_t{1} << 28) - 1;
/// The most batch entries and query heads of one call (the launch grid's limits).
inline constexpr int64_t kMaxBatchOrHeads = 65535;
/// The most query rows of a call whose keys flare::attention splits by itself (decoding, speculative
/// decoding; AttentionTileConfig::kvSplits).
inline constexpr int64_t kSplitKvMaxQueries = 64;
/// The most parts a split-KV launch takes.
inline constexpr int64_t kMaxKvSplits = 256;

enum class DType { BF16, F16, F32, I32, I64 };
const char *dtypeName(DType dtype);
size_t dtypeBytes(DType dtype);

/// A tensor in device memory. Strides are in elements; empty strides mean contiguous row-major.
struct TensorView {
  uint64_t data = 0; ///< device address (a CUdeviceptr)
  DType dtype = DType::BF16;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  /// The strides, with empty ones expanded to contiguous row-major (saturating at INT64_MAX).
  std::vector<int64_t> effectiveStrides() const;
};

enum class CausalAlignment {
  TopLeft,    ///< query i sees keys j <= i (PyTorch's is_causal)
  BottomRight ///< query i sees keys j <= i + Skv - Sq (FlashAttention's convention for Sq != Skv)
};

/// One tile configuration of the generated kernel (AttentionOptions::tile, the autotuner's
/// candidates); every field 0 means the configured choice (flare::attn::chooseAttentionConfig). For
/// tuning: not every combination compiles. planAttention accepts block sizes that are powers of two
/// from 16 to 256, warps in {1, 2, 4, 8, 16} and switches in {-1, 0, 1}.
struct AttentionTileConfig {
  /// Query rows per program, keys per step, warps.
  int blockM = 0, blockN = 0, numWarps = 0;
  /// Overlap of the softmax with the previous block's P V product: 1 on, -1 off, 0 configured.
  int overlap = 0;
  /// The two warpgroups issue their MMAs in turn: 1 on, -1 off, 0 configured.
  int pingPong = 0;
  /// A producer warpgroup issues the K/V copies: 1 on, -1 off, 0 configured.
  int producer = 0;
  /// A persistent kernel (one CTA per SM runs query blocks in turn): 1 on (CTA c of G runs blocks c,
  /// c + G, ...), -1 off, 0 configured; 2 on, each CTA taking its next query block from a counter the
  /// CTAs share as it starts it (where a producer warpgroup runs: #attn.config's dynamic_instances),
  /// instead of every G-th one. The configured choice takes the counter for block lists and for packed
  /// sequences (cuSeqlensQ) where a producer warpgroup runs, whose blocks past their sequence's end it
  /// then never hands to a CTA.
  int persistent = 0;
  /// Split-KV (flash-decoding): the keys of each block of query rows split into this many parts,
  /// run by program instances of their own, whose partial outputs and LSEs a second kernel merges
  /// (the workspace is the runtime's, per stream). 0: decided by the launch shape (calls of at most
  /// kSplitKvMaxQueries queries whose program instances fill less than half the GPU's SMs split into
  /// as many parts as fill one wave, each of at least two key blocks); 1: never; N > 1: N parts.
  int kvSplits = 0;
  /// Block lists (BlockMask) for a mask with a part the compiler cannot classify (document ids,
  /// block tables: mask class generic): 1 or 0 (configured: wherever they apply, i.e. not with
  /// kvLens, a paged cache, cuSeqlens, split keys or packed GQA rows), -1 off (every key block the
  /// mask's linear part may keep is visited and masked element by element). The one field
  /// flare::attentionBackward reads (its own lists, built by each call; -1 off).
  int blockLists = 0;
  bool operator==(const AttentionTileConfig &o) const {
    return blockM == o.blockM && blockN == o.blockN && numWarps == o.numWarps && overlap == o.overlap &&
           pingPong == o.pingPong && producer == o.producer && persistent == o.persistent &&
           kvSplits == o.kvSplits && blockLists == o.blockLists;
  }
  bool operator!=(const AttentionTileConfig &o) const { return !(*this == o); }
  /// "bm=128 bn=64 warps=8 overlap=0 pingpong=0 producer=0 persistent=0" (then " splits=N" and
  /// " lists=N" when kvSplits / blockLists are set); parse() reads it back.
  std::string text() const;
  static std::optional<AttentionTileConfig> parse(const std::string &text);
};

struct BlockMask;

struct AttentionOptions {
  bool causal = false;
  CausalAlignment alignment = CausalAlignment::TopLeft;
  /// Sliding window around the (aligned) diagonal d(i): query i sees keys d(i) - windowLeft ..
  /// d(i) + windowRight; a negative value leaves that side unbounded, and so does one of
  /// kMaxSequenceLength or more (no key is that far from any diagonal). `causal` means windowRight = 0
  /// (FlashAttention's window_size = (left, 0)).
  int64_t windowLeft = -1, windowRight = -1;
  /// > 0: scores become softcap * tanh(score / softcap) (Gemma 2 uses 50).
  float softcap = 0.f;
  /// Softmax scale; 0 means 1 / sqrt(head_dim).
  float scale = 0.f;
  /// Where to write the per-row log-sum-exp (f32 [B, Hq, Sq], contiguous); data == 0: not returned.
  TensorView lse;
  /// A custom attention: the text of a module with one func.func holding one attn.attention (its own
  /// score_mod/mask_mod; see examples/attention). When set, causal/window/softcap/scale are ignored
  /// and the module decides. Its head dimension and element type must match the tensors.
  std::string module;
  /// The aux tensors of a custom module (1-D, contiguous), in operand order.
  std::vector<TensorView> aux;
  /// Per-sequence key counts (decoding, serving): i32 [B], contiguous, on the device. Sequence b has
  /// the keys j < kvLens[b] (clamped into [0, Skv]); a length of 0 gives rows of zeros (LSE -inf).
  /// Rows of the sequence's last key block past its length (at most 127 rows, inside its allocation
  /// or last page) may be read and weigh exactly 0: they must hold finite values (a cache allocated
  /// with zeros, stale keys). data == 0: every sequence has Skv keys.
  TensorView kvLens;
  /// A paged KV cache (needs kvLens): i32 [B, max_pages] on the device, unit stride along its rows.
  /// k and v are then [num_pages, Hkv, page_size, D] (page_size a multiple of 16 up to 256, the
  /// same shape and strides for both), and key j of sequence b is row j % page_size of page
  /// pageTable[b][j / page_size]; Skv is max_pages x page_size. Any layout whose page stride is a
  /// multiple of its row stride: [num_pages, page_size, Hkv, D] in memory (vLLM's and FlashAttention's
  /// cache layout) as strides (page_size*Hkv*D, D, Hkv*D, 1), or [num_pages, Hkv, page_size, D]
  /// contiguous. Entries of a sequence's row past its last used page are never read. data == 0: K
  /// and V are contiguous [B, Hkv, Skv, D].
  TensorView pageTable;
  /// Variable-length batches (FlashAttention's varlen; prefill of packed prompts): i32 [B + 1] offsets,
  /// contiguous, on the device. q, out (and lse) hold the B sequences' queries packed along the
  /// sequence dimension, [1, Hq, total_q, D] ([total_q, Hq, D] memory is the strides (.., D, Hq*D, 1)),
  /// and k, v their keys, [1, Hkv, total_k, D]; sequence b is rows cuSeqlensQ[b] .. cuSeqlensQ[b+1]-1
  /// of q and out and cuSeqlensK[b] .. of k and v (offsets non-decreasing from 0 up to the totals;
  /// zero-length sequences allowed). Causal masks, windows and modifiers apply per sequence; rows of
  /// out outside every sequence are not written. maxSeqlenQ / maxSeqlenK: the longest sequence's
  /// lengths (they size the launch; a longer sequence is computed only up to maxSeqlenQ rows). lse
  /// is then f32 [1, Hq, total_q]. Both data == 0: no packing.
  TensorView cuSeqlensQ, cuSeqlensK;
  int64_t maxSeqlenQ = 0, maxSeqlenK = 0;
  /// Block lists built before (buildBlockMask) for this call's module, shapes and tile
  /// configuration, and the current contents of its aux tensors: the call reads them instead of
  /// building its own. nullptr: a call whose kernel visits block lists builds them itself first, into
  /// a workspace the runtime keeps per stream (one more launch; its cost: bench/NOTES.md, "Block
  /// lists"). flare::attentionBackward reads one built by buildBackwardBlockMask, ignores one built by
  /// buildBlockMask, and without one builds its lists (per block of keys, and per dQ block of query
  /// rows) in each call, unless tile.blockLists is -1.
  const BlockMask *blockMask = nullptr;
  /// Target architecture; empty means the device's.
  std::string arch;
  /// Tile configuration override (all zero: the configured choice).
  AttentionTileConfig tile;
  /// Autotuning (when `tile` overrides nothing): the first call of a shape class
  /// (see autotuneKey) times the configured tile configuration and the alternatives of
  /// autotuneCandidates on this call's own tensors, launches the fastest and remembers it, in this
  /// process and in the kernel cache's directory (autotune-v1.tsv), for every later call of the
  /// class. That first call synchronises the context and writes `out` (and `lse`) once per timed
  /// launch: `out` must not overlap q, k or v.
  bool autotune = false;
  /// flare::attentionBackward only: two calls give identical bits (dQ by a kernel of its own, each
  /// block of query rows summed over the key blocks in order, instead of f32 atomics). That is the
  /// backward on targets with wgmma in any case (it is the faster there); elsewhere it costs speed.
  /// The forward is deterministic as is.
  bool deterministic = false;
};

/// What attention() would launch, computed without a GPU: the IR, the kernel's name and the launch.
struct AttentionPlan {
  std::string module;     ///< the attn.attention module compiled for this call
  std::string kernelName; ///< the func / kernel name inside it
  int64_t batch = 0, headsQ = 0, headsKV = 0, seqQ = 0, seqKV = 0, headDim = 0;
  /// V's and out's head dim (headDim, Q's and K's, unless they differ: multi-head latent attention).
  int64_t headDimV = 0;
  /// Keys per page of a paged cache (AttentionOptions::pageTable), else 0.
  int64_t pageSize = 0;
  /// Packed sequences (AttentionOptions::cuSeqlensQ): the rows of q and of k (the kernel's seq_q and
  /// seq_kv arguments), while batch, seqQ and seqKV are the number of sequences and the longest's
  /// lengths. 0: not packed.
  int64_t totalQ = 0, totalKV = 0;
  rt::KernelArgs args;    ///< the kernel's arguments (Flare's attention kernel ABI)
  bool hasLse = false;
  /// Query heads share KV heads and a group's rows (head in group, query) lie at one stride in q and
  /// out (one query per head, or a head stride of Sq rows): calls of at most kSplitKvMaxQueries
  /// queries run them as the rows of one program instance (pack_gqa), reading each K/V block once
  /// per group.
  bool packableGqa = false;
};

/// Checks every argument and builds the plan (throws flare::Error on bad input). Needs no GPU.
AttentionPlan planAttention(const TensorView &q, const TensorView &k, const TensorView &v, const TensorView &out,
                            const AttentionOptions &options = {});

/// The key blocks that each block of query rows visits, for a mask with a part the compiler cannot
/// classify (mask class generic: document ids, block tables, anything read from aux tensors):
/// FlexAttention's BlockMask, but derived from the module's own mask_mod by a generated kernel
/// (`<name>_block_mask`) that evaluates the mask once on every element of the key blocks its linear
/// part may keep and records which are kept in part and which entirely. The attention kernel then
/// visits the listed blocks only, full ones without mask code (dialects/Attn/Rationale.md, "Block
/// lists"). Build it once per (module, shapes, tile configuration, aux contents) and pass it to every
/// call that shares them (the layers of one model step): AttentionOptions::blockMask.
struct BlockMask {
  /// The lists (device memory, i32): one record of 2 + keyBlocks per (batch, head, block of query
  /// rows), [partial count, full count, slots]: the partial blocks' indices from the front of the
  /// slots, the full blocks' from the back, each ascending from its end.
  std::shared_ptr<rt::DeviceBuffer> lists;
  /// The tiles the lists are for: query rows and keys per block.
  int64_t blockM = 0, blockN = 0;
  /// Records: batches x heads x queryBlocks; batches (heads) is 1 where mask_mod does not read the
  /// batch (head) index: one list serves them all.
  int64_t batches = 0, heads = 0, queryBlocks = 0, keyBlocks = 0;
  /// What it was built for, checked by the calls that read it.
  std::string module, config; ///< the attn.attention module and the kernel's #attn.config
  int64_t batch = 0, headsQ = 0, seqQ = 0, seqKV = 0;
  /// Built by buildBackwardBlockMask for attentionBackward: `lists` then holds a record per (batch,
  /// head, block of blockN keys) of 2 + queryBlocks slots listing query blocks of blockM rows (the
  /// dK/dV kernels'), `dqLists` (where dQ has a kernel of its own) the dQ kernel's key blocks per
  /// block of its query rows, and `config` the backward's compile options (CompileOptions::
  /// fingerprint). flare::attention refuses it; attentionBackward ignores a forward one.
  bool backward = false;
  std::shared_ptr<rt::DeviceBuffer> dqLists;
};

/// Builds the block lists of the call attention(cache, q, k, v, out, options) would make (its
/// module, shapes, tile configuration and aux tensors; out is not written), asynchronously on
/// `stream`. Throws flare::Error when that call visits no block lists (its mask is classified by the
/// compiler, or the launch takes a form without them: kvLens, a paged cache, cuSeqlens, split keys).
BlockMask buildBlockMask(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                         const TensorView &out, const AttentionOptions &options = {}, void *stream = nullptr);
/// Builds the block lists attentionBackward(cache, q, k, v, out, dout, lse, dq, dk, dv, options) would
/// build for itself (per block of keys for dK and dV, per block of query rows for dQ), asynchronously
/// on `stream`: pass it as options.blockMask to the backward calls that share the module, shapes and
/// aux contents (every layer of a training step), as FlexAttention's BlockMask is built once. Throws
/// flare::Error when that backward visits no lists (a mask the compiler classifies, or
/// options.tile.blockLists = -1).
BlockMask buildBackwardBlockMask(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                                 const TensorView &out, const TensorView &lse, const AttentionOptions &options = {},
                                 void *stream = nullptr);

/// What appendKV launches, computed without a GPU: the tile kernel, its arguments and its grid (new
/// rows, Hkv, B).
struct KvAppendPlan {
  std::string module, kernelName;
  rt::KernelArgs args;
  rt::Grid grid;
};
/// Checks appendKV's arguments (throws flare::Error naming the bad one) and builds its launch.
KvAppendPlan planKvAppend(const TensorView &kNew, const TensorView &vNew, const TensorView &kCache,
                          const TensorView &vCache, const TensorView &kvLens, const TensorView &pageTable);
/// Writes new keys and values into a paged cache (the layout AttentionOptions::pageTable describes):
/// row i of kNew and vNew [B, Hkv, Sn, D] becomes position kvLens[b] + i of sequence b, row
/// (kvLens[b] + i) % page_size of page pageTable[b][(kvLens[b] + i) / page_size]. kvLens is read,
/// not advanced: the caller adds Sn to it (on the device) before attending to the new keys. A
/// position past the table's max_pages x page_size, or a page id outside [0, num_pages), writes
/// nothing. The kernel is a tile-dialect program (kvAppendModule), compiled once through `cache`;
/// asynchronous on `stream`; `arch` empty: the device's.
void appendKV(rt::KernelCache &cache, const TensorView &kNew, const TensorView &vNew, const TensorView &kCache,
              const TensorView &vCache, const TensorView &kvLens, const TensorView &pageTable, void *stream = nullptr,
              const std::string &arch = "");
/// appendKV's tile kernel for `dtype` and `headDim`.
std::string kvAppendModule(DType dtype, int64_t headDim);

/// The attn.attention module that the built-in options (causal, window, softcap, scale, LSE, kvLens)
/// describe for `dtype` and `headDim` (Q's and K's; V's and out's `headDimV`, 0: the same), over a
/// paged cache of `pageSize` keys per page when not 0; planAttention compiles exactly this text.
std::string attentionModule(const AttentionOptions &options, DType dtype, int64_t headDim, int64_t pageSize = 0,
                            int64_t headDimV = 0);

/// The configurations autotuning times for `headDim` on `arch`: the configured choice first, then
/// alternatives measured close to it somewhere (bench/NOTES.md). A candidate that does not compile
/// is skipped.
std::vector<AttentionTileConfig> autotuneCandidates(const std::string &arch, int64_t headDim);

/// The tile configuration that a call setting none (and not autotuning) launches on `arch`: all zero
/// (the configured choice for its head dim and mask), except where a launch shape measured faster
/// with another: a causal launch at head dim 64 of at most 512 keys on sm_90a takes one warpgroup of
/// 64 x 64 tiles (bench/NOTES.md a71: +3.6-3.9% at 512 keys, slower from 1k).
AttentionTileConfig launchTileConfig(const AttentionPlan &plan, const AttentionOptions &options,
                                     const std::string &arch);

/// The shape class autotuning keeps one choice for: the module (head dim, element type, mask and
/// modifiers), the architecture, the device, and Sq, Skv and B x Hq rounded up to powers of two.
std::string autotuneKey(const AttentionPlan &plan, const std::string &arch, const std::string &deviceName);

/// The choice autotuning made for `key` in this process, or read from a kernel cache's directory;
/// nullopt before either.
std::optional<AttentionTileConfig> autotunedConfig(const std::string &key);

/// out = attention(q, k, v) with q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] and out
/// [B, Hq, Sq, Dv]; bf16 or f16, D and Dv multiples of 16 from 32 to 256 (Dv = D but for multi-head
/// latent attention; a head dim between powers of two is padded inside the kernel), Hq a multiple of
/// Hkv. Compiles through `cache` on first use, then launches
/// asynchronously on `stream` (a CUstream; nullptr: the default stream). A warm call (its kernels
/// compiled, its stream's workspaces sized by an earlier call of that size on the stream) allocates
/// nothing and does not synchronise: it can be captured into a CUDA graph, as attentionBackward's can.
void attention(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
               const TensorView &out, const AttentionOptions &options = {}, void *stream = nullptr);

/// What attentionBackward would launch, computed without a GPU: the forward's plan (module, sizes) and
/// the three backward kernels of that module (`flarec --grad`: dialects/Attn/Rationale.md, "The
/// backward kernels").
struct AttentionBackwardPlan {
  AttentionPlan forward;
  std::string preprocessKernel, mainKernel, dqKernel;
  /// dV's kernel where dK and dV have one each (attn::backwardSplitsDkDv; launched after mainKernel,
  /// which then computes dK alone); empty otherwise, and when options.arch is empty.
  std::string dvKernel;
  /// The backward ABI's tensors (device addresses) and strides; the workspace is the runtime's.
  uint64_t q = 0, k = 0, v = 0, out = 0, dout = 0, lse = 0, dq = 0, dk = 0, dv = 0;
  std::vector<int64_t> strides; ///< (batch, head, row) of q, k, v, out, dout, dq, dk, dv
  /// The main kernel sums dQ by f32 atomics (attn::backwardSumsDqByAtomics: without wgmma and not
  /// deterministic; counted when options.arch is empty) instead of a dQ kernel of its own.
  bool dqByAtomics = false;
  /// For a mask the compiler cannot classify (unless options.tile.blockLists is -1): the kernels visit
  /// block lists that `listsKernel` writes first, into the workspace after the f32 part: the query
  /// blocks of each block of keys, and with `dqLists` (where dQ has a kernel of its own) the key blocks
  /// of each of the dQ kernel's blocks of query rows, in one launch (dialects/Attn/Rationale.md,
  /// "Block lists").
  bool blockLists = false, dqLists = false;
  std::string listsKernel;
  /// Bytes of the f32 workspace one call uses: D [B, Hq, Sq], and the dQ sums [B, Hq, Sq, D] with
  /// dqByAtomics (the block lists' bytes come after, sized by their kernels' tiles).
  size_t workspaceBytes = 0;
};

/// Checks every argument of attentionBackward and builds its plan (throws flare::Error). Needs no GPU.
AttentionBackwardPlan planAttentionBackward(const TensorView &q, const TensorView &k, const TensorView &v,
                                            const TensorView &out, const TensorView &dout, const TensorView &lse,
                                            const TensorView &dq, const TensorView &dk, const TensorView &dv,
                                            const AttentionOptions &options = {});

/// The gradients of out = attention(q, k, v) (the same options: causal, window, softcap, scale, a custom
/// module with its aux tensors) for the output gradient `dout`, from the forward's `out` and its `lse`
/// (f32 [B, Hq, Sq], AttentionOptions::lse of the forward call): dq like q, dk like k and dv like v (V's
/// head dim may differ from Q's and K's, as in the forward), in q's dtype.
/// Recomputes the scores block by block (no N x N matrix); score_mod's derivative is generated from its
/// region, aux tensors are constants of it. GQA's dk and dv sum over the query heads of each group.
/// Rows that kept no key get zero gradients. Asynchronous on `stream`; dq is written by a last kernel
/// from f32 sums that the runtime keeps per (context, stream), grown when a call needs more (that call
/// allocates, and frees the smaller buffer after synchronising the context), reused after: warm calls
/// allocate nothing. options.tile and options.autotune apply to the forward only and must be unset.
/// options.deterministic: identical bits on every call (what sm_90a gives in any case).
void attentionBackward(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                       const TensorView &out, const TensorView &dout, const TensorView &lse, const TensorView &dq,
                       const TensorView &dk, const TensorView &dv, const AttentionOptions &options = {},
                       void *stream = nullptr);

} // namespace flare

#endif // FLARE_ATTENTION_H
