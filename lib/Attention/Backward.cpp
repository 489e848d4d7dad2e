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

namespace {
/// The backward's plan from the forward's (the module and sizes) and the options: its kernels, how
/// dQ is summed, its lists and its workspace. Tensors other than the forward's are the caller's.
AttentionBackwardPlan planKernels(AttentionPlan forward, const AttentionOptions &options, const TensorView &q,
                                  const TensorView &k, const TensorView &v, const TensorView &out,
                                  const TensorView &lse) {
  AttentionBackwardPlan plan;
  plan.forward = std::move(forward);
  plan.q = q.data;
  plan.k = k.data;
  plan.v = v.data;
  plan.out = out.data;
  plan.lse = lse.data;
  const AttentionPlan &p = plan.forward;
  const std::string &name = p.kernelName;
  plan.preprocessKernel = name + "_bwd_preprocess";
  plan.mainKernel = name + "_bwd";
  plan.dqKernel = name + "_bwd_dq";
  // How dQ is summed (attn::backwardSumsDqByAtomics); an empty arch (the device's, not known here)
  // counts the sums.
  const std::optional<Target> target = options.arch.empty() ? std::nullopt : Target::get(options.arch);
  plan.dqByAtomics = target ? attn::backwardSumsDqByAtomics(*target, options.deterministic) : !options.deterministic;
  // The generator sizes the backward's tiles by the wider of the two head dims.
  const int64_t tileDim = attn::tileHeadDim(p.headDim, p.headDimV);
  const attn::AttentionFacts facts = detail::moduleFacts(p.module).config;
  if (target && attn::backwardSplitsDkDv(*target, tileDim, plan.dqByAtomics, facts.auxPerElement))
    plan.dvKernel = name + "_bwd_dv";
  plan.workspaceBytes = deltaBytes(p);
  if (plan.dqByAtomics)
    plan.workspaceBytes += static_cast<size_t>(p.batch) * p.headsQ * p.seqQ * p.headDim * sizeof(float);
  // Block lists for a mask the compiler cannot classify, unless the call turns them off.
  plan.blockLists = options.tile.blockLists >= 0 && facts.maskClass == attn::MaskClass::Generic;
  if (plan.blockLists) {
    plan.listsKernel = name + "_bwd_block_mask";
    plan.dqLists = !plan.dqByAtomics;
  }
  return plan;
}

/// The forward's plan of a backward call (lse is the forward's, required).
AttentionPlan planForward(const TensorView &q, const TensorView &k, const TensorView &v, const TensorView &out,
                          const TensorView &lse, const AttentionOptions &options) {
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
  forward.blockMask = nullptr; // the backward's own are checked by the backward
  return planAttention(q, k, v, out, forward); // q, k, v, out, lse, the module and its aux
}

/// The backward kernels of a plan, compiled for `arch` (the device's when empty), with or without the
/// element-wise copies for tensor maps that do not encode.
std::shared_ptr<rt::Module> backwardModule(rt::KernelCache &cache, const AttentionBackwardPlan &plan,
                                           const std::string &arch, bool tmaFallback, std::string *fingerprint = nullptr) {
  CompileOptions compile;
  compile.arch = arch;
  compile.backward = true;
  // The kernels the plan decided on: where dQ has a kernel of its own anyway (sm_90a), a request for
  // determinism compiles the same kernels, so both share one cache entry.
  compile.deterministic = !plan.dqByAtomics;
  compile.backwardBlockLists = plan.blockLists;
  compile.tmaFallback = tmaFallback;
  if (fingerprint)
    *fingerprint = compile.fingerprint();
  return cache.lookup(plan.forward.module, compile, "<flare::attentionBackward>").module;
}

/// The backward ABI's arguments (the attn dialect's Rationale.md): pointers, aux, sizes, aux lengths,
/// strides, and with block lists their two pointers.
rt::KernelArgs backwardArgs(const AttentionBackwardPlan &plan, const std::vector<TensorView> &aux, uint64_t workspace,
                            uint64_t keyLists, uint64_t queryLists) {
  const AttentionPlan &p = plan.forward;
  rt::KernelArgs args;
  args.addPointer(plan.q).addPointer(plan.k).addPointer(plan.v).addPointer(plan.out).addPointer(plan.dout);
  args.addPointer(plan.lse).addPointer(workspace).addPointer(plan.dqByAtomics ? workspace + deltaBytes(p) : 0);
  args.addPointer(plan.dq).addPointer(plan.dk).addPointer(plan.dv);
  detail::addAuxAndSizes(args, p, aux);
  for (size_t i = 0; i < 24; ++i)
    args.addI64(i < plan.strides.size() ? plan.strides[i] : 0);
  if (plan.blockLists)
    args.addPointer(keyLists).addPointer(queryLists);
  return args;
}
} // namespace

AttentionBackwardPlan planAttentionBackward(const TensorView &q, const TensorView &k, const TensorView &v,
                                            const TensorView &out, const TensorView &dout, const TensorView &lse,
                                            const TensorView &dq, const TensorView &dk, const TensorView &dv,
                                            const AttentionOptions &options) {
  AttentionPlan forward = planForward(q, k, v, out, lse, options);
  detail::checkGradientTensor(dout, out, "dout", /*written=*/false);
  detail::checkGradientTensor(dq, q, "dq", /*written=*/true);
  detail::checkGradientTensor(dk, k, "dk", /*written=*/true);
  detail::checkGradientTensor(dv, v, "dv", /*written=*/true);
  AttentionBackwardPlan plan = planKernels(std::move(forward), options, q, k, v, out, lse);
  plan.dout = dout.data;
  plan.dq = dq.data;
  plan.dk = dk.data;
  plan.dv = dv.data;
  for (const TensorView *t : {&q, &k, &v, &out, &dout, &dq, &dk, &dv}) {
    std::vector<int64_t> s = t->effectiveStrides();
    plan.strides.insert(plan.strides.end(), {s[0], s[1], s[2]});
  }
  return plan;
}

BlockMask buildBackwardBlockMask(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                                 const TensorView &out, const TensorView &lse, const AttentionOptions &options,
                                 void *stream) {
  AttentionOptions resolved = options;
  if (resolved.arch.empty())
    resolved.arch = cache.context().arch();
  const AttentionBackwardPlan plan = planKernels(planForward(q, k, v, out, lse, resolved), resolved, q, k, v, out, lse);
  if (!plan.blockLists)
    fail("buildBackwardBlockMask: this backward visits no block lists: its mask is classified by the compiler "
         "(mask class other than generic), or options.tile.blockLists is -1");
  // Without the fallback copies, as attentionBackward compiles them (the classifiers copy nothing).
  std::string fingerprint;
  const std::shared_ptr<rt::Module> module = backwardModule(cache, plan, resolved.arch, false, &fingerprint);
  const rt::Kernel classifier = module->kernel(plan.listsKernel);
  const detail::ListShape keys = detail::ListShape::of(classifier, plan.forward);
  BlockMask m = detail::newBlockMask(cache.context(), keys, plan.forward, fingerprint);
  m.backward = true;
  std::optional<detail::ListShape> queries;
  if (plan.dqLists) {
    queries = detail::ListShape::of(classifier, plan.forward, /*second=*/true);
    m.dqLists = std::make_shared<rt::DeviceBuffer>(cache.context(), queries->bytes());
  }
  const rt::KernelArgs args = backwardArgs(plan, options.aux, 0, m.lists->ptr(), m.dqLists ? m.dqLists->ptr() : 0);
  keys.launch(classifier, args, stream, queries ? queries->fixedBlocks() : 0);
  return m;
}

void attentionBackward(rt::KernelCache &cache, const TensorView &q, const TensorView &k, const TensorView &v,
                       const TensorView &out, const TensorView &dout, const TensorView &lse, const TensorView &dq,
                       const TensorView &dk, const TensorView &dv, const AttentionOptions &options, void *stream) {
  AttentionOptions resolved = options;
  if (resolved.arch.empty())
    resolved.arch = cache.context().arch();
  const AttentionBackwardPlan plan = planAttentionBackward(q, k, v, out, dout, lse, dq, dk, dv, resolved);
  const AttentionPlan &p = plan.forward;
  // The views are checked as the forward's (16-byte aligned, so their tensor maps encode): the kernels
  // without the element-wise copies for maps that do not, as flare::attention's (smaller and faster at
  // every head dim: bench/NOTES.md b13, b15). A driver that cannot encode maps gets the kernels with them.
  std::string fingerprint;
  std::shared_ptr<rt::Module> module = backwardModule(cache, plan, resolved.arch, false, &fingerprint);
  // Lists built before (a backward BlockMask: checked against this call), else built here into the
  // workspace after the f32 part, 256-byte aligned (their size is the classifiers' tiles').
  const BlockMask *given = plan.blockLists && options.blockMask && options.blockMask->backward ? options.blockMask : nullptr;
  if (given) {
    detail::checkBlockMask(*given, p, detail::ListShape::of(module->kernel(plan.listsKernel), p), fingerprint,
                           "backward compilation", "flare::buildBackwardBlockMask", fail);
    if (plan.dqLists && !given->dqLists)
      fail("options.blockMask holds no lists for the dQ kernel (build it with flare::buildBackwardBlockMask)");
  }
  std::optional<detail::ListShape> keyLists, queryLists;
  size_t bytes = plan.workspaceBytes;
  auto listsAt = [&](bool wanted, bool second, std::optional<detail::ListShape> &shape) -> size_t {
    if (!wanted || given)
      return 0;
    shape = detail::ListShape::of(module->kernel(plan.listsKernel), p, second);
    const size_t at = (bytes + 255) / 256 * 256;
    bytes = at + shape->bytes();
    return at;
  };
  const size_t keyListsAt = listsAt(plan.blockLists, false, keyLists);
  const size_t queryListsAt = listsAt(plan.dqLists, true, queryLists);
  const uint64_t workspace = module->streamWorkspace(stream, bytes);
  const uint64_t keyListsPtr = given ? given->lists->ptr() : workspace + keyListsAt;
  const uint64_t queryListsPtr = given ? (given->dqLists ? given->dqLists->ptr() : 0)
                                       : (queryLists ? workspace + queryListsAt : 0);
  const rt::KernelArgs args = backwardArgs(plan, options.aux, workspace, keyListsPtr, queryListsPtr);
  const bool mapsEncode = llvm::all_of(
      std::initializer_list<const std::string *>{&plan.preprocessKernel, &plan.mainKernel, &plan.dvKernel, &plan.dqKernel},
      [&](const std::string *name) {
        if (name->empty())
          return true;
        rt::Kernel kernel = module->kernel(*name);
        return !kernel.info().tmaRequired || kernel.usesTensorMaps(args);
      });
  if (!mapsEncode) // same workspace: its size is the plan's
    module = backwardModule(cache, plan, resolved.arch, true);

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
    keyLists->launch(module->kernel(plan.listsKernel), args, stream, queryLists ? queryLists->fixedBlocks() : 0);
  launch(plan.preprocessKernel, "attention.block_m", p.seqQ, p.headsQ);
  launch(plan.mainKernel, "attention.block_n", p.seqKV, p.headsKV);
  if (!plan.dvKernel.empty())
    launch(plan.dvKernel, "attention.block_n", p.seqKV, p.headsKV);
  launch(plan.dqKernel, "attention.block_m", p.seqQ, p.headsQ);
}

} // namespace flare
