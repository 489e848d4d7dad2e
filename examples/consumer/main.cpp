//===- main.cpp - A program using Flare's public API, no GPU needed -------===//
//
// Built against an installed Flare (CMake: find_package(Flare), Flare::flare; or pkg-config flare), it
//   1. writes a vector-add tile kernel with flare::tile::KernelBuilder, compiles it to PTX with
//      flare::compileToPTX and prints the kernel's launch metadata;
//   2. plans a causal grouped-query attention call with flare::planAttention on made-up device
//      addresses (checked, never dereferenced: planning needs no GPU);
//   3. asks flare::rt::gpuAvailable() whether kernels could be launched here, and prints why not.
// Exits 0 when all three work, GPU or not; 1 with the message of a flare::Error otherwise.
//
//===----------------------------------------------------------------------===//
#include <flare/Attention.h>
#include <flare/Compiler/Compiler.h>
#include <flare/Error.h>
#include <flare/Runtime/Runtime.h>
#include <flare/Tile/Builder.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

/// Elements of one program instance of the vector add (examples/tile/vector_add.mlir).
constexpr int64_t kBlock = 1024;

std::string vectorAddKernel() {
  using flare::tile::DType;
  flare::tile::KernelBuilder k("vector_add", /*numWarps=*/4);
  auto x = k.ptrArg(DType::F32), y = k.ptrArg(DType::F32), z = k.ptrArg(DType::F32);
  auto n = k.i32Arg();
  auto start = k.programId(0) * k.i32(kBlock);
  auto xv = k.makeView(x, {n}, {k.i32(1)}), yv = k.makeView(y, {n}, {k.i32(1)}), zv = k.makeView(z, {n}, {k.i32(1)});
  k.store(zv, {start}, k.load(xv, {start}, {kBlock}) + k.load(yv, {start}, {kBlock}));
  return k.finish();
}

void compileTileKernel() {
  flare::CompileOptions options;
  options.arch = "sm_90a";
  flare::CompiledModule module = flare::compileToPTX(vectorAddKernel(), options, "vector_add");
  std::printf("compiled a tile kernel for %s: %zu bytes of PTX\n", module.arch.c_str(), module.ptx.size());
  for (const flare::KernelInfo &kernel : module.kernels) {
    std::string args;
    for (flare::ArgKind kind : kernel.args)
      args += std::string(args.empty() ? "" : ", ") + flare::argKindName(kind);
    std::printf("  kernel %s: %d threads, %d bytes of dynamic shared memory, arguments (%s)\n",
                kernel.name.c_str(), kernel.numThreads, kernel.sharedBytes, args.c_str());
  }
}

void planAttentionCall() {
  const int64_t batch = 2, headsQ = 8, headsKV = 2, seq = 1024, headDim = 128;
  // Made-up device addresses, 256-byte aligned like real allocations (16 bytes are required).
  const uint64_t bytesQ = batch * headsQ * seq * headDim * 2, bytesKV = batch * headsKV * seq * headDim * 2;
  const uint64_t q = 0x7f0000000000, k = q + bytesQ, v = k + bytesKV, out = v + bytesKV;
  flare::TensorView qView{q, flare::DType::BF16, {batch, headsQ, seq, headDim}, {}};
  flare::TensorView kView{k, flare::DType::BF16, {batch, headsKV, seq, headDim}, {}};
  flare::TensorView vView{v, flare::DType::BF16, {batch, headsKV, seq, headDim}, {}};
  flare::TensorView outView{out, flare::DType::BF16, {batch, headsQ, seq, headDim}, {}};
  flare::AttentionOptions options;
  options.causal = true;
  flare::AttentionPlan plan = flare::planAttention(qView, kView, vView, outView, options);
  std::printf("planned causal attention: kernel %s, B=%lld Hq=%lld Hkv=%lld Sq=%lld Skv=%lld D=%lld, "
              "%zu kernel arguments, %zu bytes of attn IR\n",
              plan.kernelName.c_str(), static_cast<long long>(plan.batch), static_cast<long long>(plan.headsQ),
              static_cast<long long>(plan.headsKV), static_cast<long long>(plan.seqQ),
              static_cast<long long>(plan.seqKV), static_cast<long long>(plan.headDim), plan.args.size(),
              plan.module.size());
}

void reportGpu() {
  std::string reason;
  if (flare::rt::gpuAvailable(&reason))
    std::printf("GPU available: kernels can be launched here\n");
  else
    std::printf("no GPU: %s\n", reason.c_str());
}

} // namespace

int main() {
  try {
    std::printf("Flare %s\n", flare::compilerVersion().c_str());
    compileTileKernel();
    planAttentionCall();
    reportGpu();
  } catch (const flare::Error &error) {
    std::fprintf(stderr, "flare-consumer: %s\n", error.what());
    return 1;
  }
  return 0;
}
