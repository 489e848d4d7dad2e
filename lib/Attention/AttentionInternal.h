//===- AttentionInternal.h - flare::attention's pieces, shared with autotuning -*- C++ -*-===//
#ifndef FLARE_LIB_ATTENTION_ATTENTIONINTERNAL_H
#define FLARE_LIB_ATTENTION_ATTENTIONINTERNAL_H

#include "flare/Attention.h"
#include "flare/Target/Target.h"

namespace flare::detail {

/// Throws flare::Error("flare::attention: " + message): the forward API's bad-input errors.
[[noreturn]] void fail(const std::string &message);

/// What one flare::attention call launches: the generated kernel, and with split keys
/// (AttentionTileConfig::kvSplits) the number of parts and the kernel that merges them.
struct AttentionKernels {
  rt::Kernel kernel;
  int64_t splits = 1;
  std::optional<rt::Kernel> combine; ///< `<name>_combine`, when splits > 1
  /// `<name>_block_mask`, when the kernel visits block lists (BlockMask), and the kernel's
  /// configuration text (what a BlockMask passed in must have been built for).
  std::optional<rt::Kernel> classifier;
  std::string config;
};
/// The plan's kernels compiled (through `cache`) with the tile configuration `config`; `arch` empty:
/// the device's. Each cache lookup it makes (one to three: see AttentionLaunch.cpp) is appended to
/// `answers` when given, the last one being the kernels returned.
AttentionKernels attentionKernel(rt::KernelCache &cache, const AttentionPlan &plan, const AttentionTileConfig &config,
                                 const std::string &arch, std::vector<rt::CacheAnswer> *answers = nullptr);
/// A window side as the generated mask bounds it: -1 (unbounded) for a negative one and for one of
/// kMaxSequenceLength keys or more, which bounds nothing (|kv - d(i)| < kMaxSequenceLength).
inline int64_t windowSide(int64_t w) { return w < 0 || w >= kMaxSequenceLength ? -1 : w; }
/// The architecture a call compiles for: options.arch, or the device's when that is empty.
std::string targetArch(rt::KernelCache &cache, const AttentionOptions &options);
/// The architecture has warpgroup MMAs, TMA and register budgets: where the launch-shape choices
/// measured on the H200 apply (a Target question, not an arch-string comparison).
inline bool hasHopperMachinery(const std::string &arch) {
  const std::optional<Target> target = Target::get(arch);
  return target && target->hasWgmma;
}
/// flare::appendKV's arguments: new rows [B, Hkv, Sn, D] and a paged cache as flare::attention reads
/// it (AttentionOptions::pageTable, kvLens); throws flare::Error naming the bad one.
void checkKvAppend(const TensorView &kNew, const TensorView &vNew, const TensorView &kCache, const TensorView &vCache,
                   const TensorView &kvLens, const TensorView &pageTable);
/// A tensor of the backward pass (dout, dq, dk, dv): checked as an attention tensor with `like`'s
/// dtype and shape; `written` ones also for elements that share memory.
void checkGradientTensor(const TensorView &t, const TensorView &like, const char *name, bool written);
/// The generated kernels' arguments after their own pointers (forward and backward ABI alike): a
/// pointer per aux tensor, heads_q, heads_kv, seq_q, seq_kv, then each aux tensor's length.
void addAuxAndSizes(rt::KernelArgs &args, const AttentionPlan &plan, const std::vector<TensorView> &aux);
/// Launches the kernels of attentionKernel on the plan's arguments (with split keys, the parts'
/// workspace is the kernel module's, per stream).
void launchAttention(const AttentionKernels &kernels, const AttentionPlan &plan, void *stream,
                     const BlockMask *blockMask = nullptr);

/// The block lists a `..._block_mask` kernel writes for a plan's sizes (BlockMask.cpp; dialects/Attn/
/// Rationale.md, "Block lists"): a record per (batch, head, block of query rows) listing key blocks,
/// or with `overQueries` (the backward's dK/dV kernels) per block of keys listing query blocks; batch
/// and head count 1 where the mask does not read them.
struct ListShape {
  int64_t blockM = 0, blockN = 0, batches = 1, heads = 1, queryBlocks = 0, keyBlocks = 0;
  bool overQueries = false;
  size_t bytes() const;
  /// Records per (batch, head): program instances of the classifier along x.
  int64_t fixedBlocks() const { return overQueries ? keyBlocks : queryBlocks; }
  /// The classifier's launch on `args` (its grid: a program per record, and `more` after them for
  /// its second walk's); none for zero blocks.
  void launch(const rt::Kernel &classifier, const rt::KernelArgs &args, void *stream, int64_t more = 0) const;
  /// From the classifier's hints (attention.block_m / block_n, lists_per_batch / _head,
  /// lists_over_queries; with `second`, its second walk's: attention.lists2_block_m / _block_n /
  /// _over_queries); throws flare::Error for a kernel without them.
  static ListShape of(const rt::Kernel &classifier, const AttentionPlan &plan, bool second = false);
};
/// Checks that the lists `m` holds were built for a call of `plan` whose lists have `shape` and whose
/// kernels have `config` (the forward's #attn.config, the backward's compile fingerprint: `configWhat`
/// names it); `builder` names the function that builds them. Errors go through `failWith`.
void checkBlockMask(const BlockMask &m, const AttentionPlan &plan, const ListShape &shape, const std::string &config,
                    const char *configWhat, const char *builder, void (*failWith)(const std::string &));
/// A BlockMask for `plan`'s lists of `shape` (device memory allocated, not written) built with `config`.
BlockMask newBlockMask(rt::Context &context, const ListShape &shape, const AttentionPlan &plan,
                       const std::string &config);
/// The block lists `kernels` read for `plan` (BlockMask.cpp): `blockMask`'s after checking that they
/// were built for this call, else built now on `stream` into the module's per-stream workspace.
uint64_t blockListsFor(const AttentionKernels &kernels, const AttentionPlan &plan, const BlockMask *blockMask,
                       void *stream);
/// The configuration to launch for an autotuned call: the remembered choice of its shape class, or
/// the fastest candidate timed now on the call's tensors (see AttentionOptions::autotune).
AttentionTileConfig autotunedChoice(rt::KernelCache &cache, const AttentionPlan &plan, const AttentionOptions &options,
                                    void *stream);
/// The choice autotuning remembers for the plan's shape class (in this process, or in the cache
/// directory's autotune-v1.tsv, read once per directory); nullopt before the first autotuned call.
std::optional<AttentionTileConfig> rememberedChoice(rt::KernelCache &cache, const AttentionPlan &plan,
                                                    const AttentionOptions &options);

} // namespace flare::detail

#endif // FLARE_LIB_ATTENTION_ATTENTIONINTERNAL_H
