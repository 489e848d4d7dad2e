//===- Backward.cpp - flare::attentionBackward: dQ, dK, dV by recomputation ===//
//
// Checks the arguments, compiles the forward's attn.attention module with CompileOptions::backward
// (its three generated kernels, dialects/Attn/Rationale.md "The backward kernels") and launches
// them in order on the caller's stream with the module's per-stream f32 workspace.
//
//===----------------------------------------------------------------------===//
#include "AttentionInternal.h"
#include "ModuleFacts.h"

#include "flare/Dialect/Attn/Config.h"
#include "flare/Error.h"

namespace flare {

namespace {
[[noreturn]] void fail(const std::string &message) { throw Error("flare::attentionBackward: " + message); }

/// The f32 workspace's layout: D [B, Hq, Sq], then (256-byte aligned) the dQ sums [B, Hq, Sq, D]
/// where the main kernel sums dQ by atomics (elsewhere the dQ kernel sums in registers).
size_t deltaBytes(const AttentionPlan &p) {
  const size_t rows = static_cast<size_t>(p.batch) * p.headsQ * p.seqQ;
  return (rows * sizeof(float) + 255) / 256 * 256;
}
} // namespace

AttentionBackwardPlan planAttentionBackward(const TensorView &q, const TensorView &k, const TensorView &v,
                                            const TensorView &out, const TensorView &dout, const TensorView &lse,
                                            const TensorView &dq, const TensorView &dk, const TensorView &dv,
                                            const AttentionOptions &options) {
  AttentionTileConfig tile = options.tile;
  tile.blockLists = 0; // the one tile field the backward reads
  if (options.autotune || !(tile == AttentionTileConfig{}))
    fail("options.tile and options.autotune choose the forward's kernel; leave them unset for the backward "
         "(but for tile.blockLists = -1: no block lists)");
  if (options.kvLens.data || options.pageTable.data)
    fail("options.kvLens and options.pageTable describe caches for inference: the backward takes contiguous K and V "
         "of Skv keys each");
  if (lse.data == 0)
    fail("lse (the forward's log-sum-exp, f32 [B, Hq, Sq]) is required");
  AttentionOptions forward = options;
  forward.lse = lse;
  AttentionBackwardPlan plan;
  plan.forward = planAttention(q, k, v, out, forward); // q, k, v, out, lse, the module and its aux
  detail::checkGradientTensor(dout, out, "dout", /*written=*/false);
  detail::checkGradientTensor(dq, q, "dq", /*written=*/true);
  detail::checkGradientTensor(dk, k, "dk", /*written=*/true);
  detail::checkGradientTensor(dv, v, "dv", /*written=*/true);
  const std::string &name = plan.forward.kernelName;
  plan.preprocessKernel = name + "_bwd_preprocess";
  plan.mainKernel = name + "_bwd";
  plan.dqKernel = name + "_bwd_dq";
  plan.dout = dout.data;
  plan.lse = lse.data;
  plan.dq = dq.data;
  plan.dk = dk.data;
  plan.dv = dv.data;
  for (const TensorView *t : {&q, &k, &v, &out, &dout, &dq, &dk, &dv}) {
    std::vector<int64_t> s = t->effectiveStrides();
    plan.strides.insert(plan.strides.end(), {s[0], s[1], s[2]});
  }
  const AttentionPlan &p = plan.forward;
  // How dQ is summed (attn::backwardSumsDqByAtomics); an empty arch (the device's, not known here)
  // counts the sums.
  const std::optional<Target> target = options.arch.empty() ? std::nullopt : Target::get(options.arch);
  plan.dqByAtomics = target ? attn::backwardSumsDqByAtomics(*target, options.deterministic) : !options.deterministic;
  // The generator sizes the backward's tiles by the wider of the two head dims.
  const int64_t tileDim = attn::tileHeadDim(plan.forward.headDim, plan.forward.headDimV);
  if (target && attn::backwardSplitsDkDv(*target, tileDim, plan.dqByAtomics,
                                        detail::moduleFacts(p.module).config.auxPerElement))
    plan.dvKernel = name + "_bwd_dv";
  plan.workspaceBytes = deltaBytes(p);
  if (plan.dqByAtomics)
    plan.workspaceBytes += static_cast<size_t>(p.batch) * p.headsQ * p.seqQ * p.headDim * sizeof(float);
  // Block lists for a mask the compiler cannot classify, unless the call turns them off.
  plan.blockLists = options.tile.blockLists >= 0 && detail::moduleFacts(p.module).config.maskClass == attn::MaskClass::Generic;
  if (plan.blockLists) {
    plan.keyListsKernel = name + "_bwd_block_mask";
    if (!plan.dqByAtomics)
      plan.queryListsKernel = name + "_bwd_dq_block_mask";
  }
  return plan;
}

void attentionBackward(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                       const TensorView &out, const TensorView &dout, const TensorView &lse, const TensorView &dq,
                       const TensorView &dk, const TensorView &dv, const AttentionOptions &options, void *stream) {
  AttentionOptions resolved = options;
  if (resolved.arch.empty())
    resolved.arch = cache.context().arch();
  const AttentionBackwardPlan plan = planAttentionBackward(q, k, v, out, dout, lse, dq, dk, dv, resolved);
  const AttentionPlan &p = plan.forward;
  CompileOptions compile;
  compile.arch = resolved.arch;
  compile.backward = true;
  // The kernels the plan decided on: where dQ has a kernel of its own anyway (sm_90a), a request for
  // determinism compiles the same kernels, so both share one cache entry.
  compile.deterministic = !plan.dqByAtomics;
  compile.backwardBlockLists = plan.blockLists;
  // The views are checked as the forward's (16-byte aligned, so their tensor maps encode): the kernels
  // without the element-wise copies for maps that do not, as flare::attention's (smaller and faster at
  // every head dim: bench/NOTES.md b13, b15). A driver that cannot encode maps gets the kernels with them.
  compile.tmaFallback = false;
  const char *const bufferName = "<flare::attentionBackward>";
  std::shared_ptr<rt::Module> module = cache.lookup(p.module, compile, bufferName).module;
  // The block lists (their size is the classifiers' tiles') after the f32 workspace, 256-byte aligned.
  std::optional<detail::ListShape> keyLists, queryLists;
  size_t bytes = plan.workspaceBytes;
  auto listsAt = [&](const std::string &kernel, std::optional<detail::ListShape> &shape) -> size_t {
    if (kernel.empty())
      return 0;
    shape = detail::ListShape::of(module->kernel(kernel), p);
    const size_t at = (bytes + 255) / 256 * 256;
    bytes = at + shape->bytes();
    return at;
  };
  const size_t keyListsAt = listsAt(plan.keyListsKernel, keyLists);
  const size_t queryListsAt = listsAt(plan.queryListsKernel, queryLists);
  const uint64_t workspace = module->streamWorkspace(stream, bytes);

  // The backward ABI (the attn dialect's Rationale.md): pointers, aux, sizes, aux lengths, strides.
  rt::KernelArgs args;
  args.addPointer(q.data).addPointer(k.data).addPointer(v.data).addPointer(out.data).addPointer(plan.dout);
  args.addPointer(plan.lse).addPointer(workspace).addPointer(plan.dqByAtomics ? workspace + deltaBytes(p) : 0);
  args.addPointer(plan.dq).addPointer(plan.dk).addPointer(plan.dv);
  detail::addAuxAndSizes(args, p, options.aux);
  for (int64_t s : plan.strides)
    args.addI64(s);
  if (plan.blockLists)
    args.addPointer(workspace + keyListsAt).addPointer(queryLists ? workspace + queryListsAt : 0);
  const bool mapsEncode = llvm::all_of(
      std::initializer_list<const std::string *>{&plan.preprocessKernel, &plan.mainKernel, &plan.dvKernel, &plan.dqKernel},
      [&](const std::string *name) {
        if (name->empty())
          return true;
        rt::Kernel kernel = module->kernel(*name);
        return !kernel.info().tmaRequired || kernel.usesTensorMaps(args);
      });
  if (!mapsEncode) {
    compile.tmaFallback = true;
    module = cache.lookup(p.module, compile, bufferName).module; // same workspace: its size is the plan's
  }

  auto launch = [&](const std::string &kernelName, const char *hint, int64_t rows, int64_t heads) {
    rt::Kernel kernel = module->kernel(kernelName);
    const int64_t block = kernel.info().hint(hint);
    if (block <= 0)
      fail("kernel '" + kernelName + "' has no " + hint + " hint: not a generated backward kernel");
    rt::Grid grid;
    grid.x = static_cast<unsigned>((rows + block - 1) / block);
    grid.y = static_cast<unsigned>(heads);
    grid.z = static_cast<unsigned>(p.batch);
    kernel.launch(grid, args, stream);
  };
  if (keyLists)
    keyLists->launch(module->kernel(plan.keyListsKernel), args, stream);
  if (queryLists)
    queryLists->launch(module->kernel(plan.queryListsKernel), args, stream);
  launch(plan.preprocessKernel, "attention.block_m", p.seqQ, p.headsQ);
  launch(plan.mainKernel, "attention.block_n", p.seqKV, p.headsKV);
  if (!plan.dvKernel.empty())
    launch(plan.dvKernel, "attention.block_n", p.seqKV, p.headsKV);
  launch(plan.dqKernel, "attention.block_m", p.seqQ, p.headsQ);
}

} // namespace flare
