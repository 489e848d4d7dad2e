//===- BlockMask.cpp - block lists for masks the compiler cannot classify --===//
//
// A kernel configured with `block_lists` reads, per block of query rows, the key blocks it visits
// from lists that its module's `<name>_block_mask` kernel writes (dialects/Attn/Rationale.md, "Block
// lists"). Here: their size and launch, a BlockMask built once for many calls, and the lists a call
// builds for itself when it is given none.
//
//===----------------------------------------------------------------------===//
#include "AttentionInternal.h"

#include "flare/Attention.h"
#include "flare/Error.h"

namespace flare {
namespace {

using detail::fail;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void launchClassifier(const rt::Kernel &classifier, const detail::ListShape &shape, const AttentionPlan &plan,
                      uint64_t lists, void *stream) {
  rt::KernelArgs args = plan.args;
  args.addPointer(lists);
  shape.launch(classifier, args, stream);
}

} // namespace

size_t detail::ListShape::bytes() const {
  const int64_t records = batches * heads * (overQueries ? keyBlocks : queryBlocks);
  return static_cast<size_t>(records * (2 + (overQueries ? queryBlocks : keyBlocks))) * sizeof(int32_t);
}

void detail::ListShape::launch(const rt::Kernel &classifier, const rt::KernelArgs &args, void *stream,
                               int64_t more) const {
  const int64_t blocks = fixedBlocks() + more;
  if (blocks == 0)
    return;
  classifier.launch({static_cast<unsigned>(blocks), static_cast<unsigned>(heads), static_cast<unsigned>(batches)},
                    args, stream);
}

detail::ListShape detail::ListShape::of(const rt::Kernel &classifier, const AttentionPlan &plan, bool second) {
  const auto &info = classifier.info();
  const std::string prefix = second ? "attention.lists2_" : "attention.";
  ListShape s;
  s.blockM = info.hint(prefix + "block_m");
  s.blockN = info.hint(prefix + "block_n");
  if (s.blockM <= 0 || s.blockN <= 0)
    fail("kernel '" + info.name + "' has no " + prefix + "block_m / block_n hints");
  s.overQueries = info.hint(second ? "attention.lists2_over_queries" : "attention.lists_over_queries") > 0;
  s.batches = info.hint("attention.lists_per_batch") > 0 ? plan.batch : 1;
  s.heads = info.hint("attention.lists_per_head") > 0 ? plan.headsQ : 1;
  s.queryBlocks = ceilDiv(plan.seqQ, s.blockM);
  s.keyBlocks = ceilDiv(plan.seqKV, s.blockN);
  return s;
}

uint64_t detail::blockListsFor(const AttentionKernels &kernels, const AttentionPlan &plan, const BlockMask *blockMask,
                               void *stream) {
  const detail::ListShape shape = detail::ListShape::of(*kernels.classifier, plan);
  if (!blockMask) {
    const uint64_t lists = kernels.kernel.module().streamWorkspace(stream, shape.bytes());
    launchClassifier(*kernels.classifier, shape, plan, lists, stream);
    return lists;
  }
  const BlockMask &m = *blockMask;
  if (m.backward)
    fail("options.blockMask holds the backward's lists (flare::buildBackwardBlockMask): the forward reads those "
         "of flare::buildBlockMask");
  checkBlockMask(m, plan, shape, kernels.config, "tile configuration", "flare::buildBlockMask", fail);
  return m.lists->ptr();
}

void detail::checkBlockMask(const BlockMask &m, const AttentionPlan &plan, const ListShape &shape,
                            const std::string &config, const char *configWhat, const char *builder,
                            void (*failWith)(const std::string &)) {
  if (!m.lists || m.lists->ptr() == 0)
    failWith(std::string("options.blockMask holds no lists (build it with ") + builder + ")");
  auto mismatch = [&](const std::string &what) {
    failWith("options.blockMask was built for another " + what + " than this call's; build it with this call's "
             "tensors and options (" + builder + ")");
  };
  if (m.module != plan.module)
    mismatch("attention module (mask, modifiers, head dim, dtype)");
  if (m.config != config)
    mismatch(std::string(configWhat) + " (" + m.config + ", the call's " + config + ")");
  if (m.seqQ != plan.seqQ || m.seqKV != plan.seqKV)
    mismatch("sequence length (" + std::to_string(m.seqQ) + " x " + std::to_string(m.seqKV) + ", the call's " +
             std::to_string(plan.seqQ) + " x " + std::to_string(plan.seqKV) + ")");
  if (m.batches != shape.batches || m.heads != shape.heads || (m.batches > 1 && m.batch != plan.batch) ||
      (m.heads > 1 && m.headsQ != plan.headsQ))
    mismatch("batch size or number of query heads");
  if (m.lists->bytes() < shape.bytes())
    mismatch("shape (its lists are smaller than this call's)");
}

BlockMask detail::newBlockMask(rt::Context &context, const ListShape &shape, const AttentionPlan &plan,
                               const std::string &config) {
  BlockMask m;
  m.lists = std::make_shared<rt::DeviceBuffer>(context, shape.bytes());
  m.blockM = shape.blockM;
  m.blockN = shape.blockN;
  m.batches = shape.batches;
  m.heads = shape.heads;
  m.queryBlocks = shape.queryBlocks;
  m.keyBlocks = shape.keyBlocks;
  m.module = plan.module;
  m.config = config;
  m.batch = plan.batch;
  m.headsQ = plan.headsQ;
  m.seqQ = plan.seqQ;
  m.seqKV = plan.seqKV;
  return m;
}

BlockMask buildBlockMask(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                         const TensorView &out, const AttentionOptions &options, void *stream) {
  const AttentionPlan plan = planAttention(q, k, v, out, options);
  AttentionTileConfig config = options.tile;
  if (config == AttentionTileConfig{})
    config = options.autotune ? detail::autotunedChoice(cache, plan, options, stream)
                              : launchTileConfig(plan, options, detail::targetArch(cache, options));
  const detail::AttentionKernels kernels = detail::attentionKernel(cache, plan, config, options.arch);
  if (!kernels.classifier)
    fail("buildBlockMask: this call's kernel visits no block lists: its mask is classified by the compiler "
         "(mask class other than generic), or the call takes a form without them (kvLens, a paged cache, "
         "cuSeqlens, split keys, packed GQA rows, or tile.blockLists = -1)");
  const detail::ListShape shape = detail::ListShape::of(*kernels.classifier, plan);
  BlockMask m = detail::newBlockMask(cache.context(), shape, plan, kernels.config);
  launchClassifier(*kernels.classifier, shape, plan, m.lists->ptr(), stream);
  return m;
}

} // namespace flare
