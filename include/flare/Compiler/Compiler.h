//===- Compiler.h - In-process compilation of Flare IR to PTX ---*- C++ -*-===//
//
// The one entry point that flarec, the runtime's JIT cache and user programs share: parse a module of
// Flare IR (tile kernels today), run the registered pipeline, and return the PTX with the metadata a
// launcher needs (kernel names, block size, dynamic shared memory, argument ABI). This header pulls in
// no MLIR headers.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_COMPILER_COMPILER_H
#define FLARE_COMPILER_COMPILER_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flare {

/// Options of the compilation pipeline. Every field is part of the kernel cache key.
struct CompileOptions {
  /// Target architecture: "sm_80", "sm_86", "sm_89", "sm_90" or "sm_90a".
  std::string arch = "sm_90a";
  /// LLVM optimisation level for the NVPTX backend (0-3).
  int optLevel = 3;
  /// The NVPTX backend's straight-line strength reduction (LLVM's `slsr`, which rewrites address
  /// arithmetic of straight-line code in terms of earlier values). Unset: the target's choice
  /// (Target::strengthReduction), on for targets with wgmma, off for the others. On large mma.sync
  /// kernels it is most of the compile (head dim 256 on sm_80: 9 of 12 s, ValueTracking queries over
  /// basic blocks of thousands of per-register instructions) and leaves every forward attention
  /// example's PTX as it is; on sm_90a it pays (the forward at head dim 128 is 2-3% slower without
  /// it). bench/NOTES.md, "Compile time: the NVPTX backend without straight-line strength reduction".
  std::optional<bool> strengthReduction = std::nullopt;
  /// Kernels that copy through TMA also carry the element-wise copies that launches whose tensor maps
  /// do not encode (views that are not 16-byte aligned) take instead. Off: smaller kernels that
  /// compile faster (about a fifth less for an attention kernel); launching one with such views
  /// throws flare::Error (KernelInfo::tmaRequired). flare::attention, which checks its views, turns
  /// it off.
  bool tmaFallback = true;
  /// Generated attention kernels: the configuration (`#attn.config<...>`, dialects/Attn/AttnAttrs.td)
  /// of every attn.attention that carries none; empty: the configured choice. Every compiled
  /// attention kernel reports its configuration (KernelInfo::attentionConfig): compiling the same
  /// module with that text gives the same PTX (`flarec --attention-config`). flare::attention
  /// decides it before compiling (tile overrides and launch shape included).
  std::string attentionConfig = {};
  /// Every attn.attention becomes its backward kernels (`<name>_bwd_preprocess`, `<name>_bwd`,
  /// `<name>_bwd_dq`: dQ, dK, dV by recomputation; the attn dialect's Rationale.md) instead of its
  /// forward kernel (`flarec --grad`).
  bool backward = false;
  /// With `backward`: the deterministic backward (`flarec --grad --deterministic`): `<name>_bwd_dq`
  /// computes dQ itself, one block of query rows per program instance summing over the key blocks in
  /// order, and the main kernel adds no dQ atomics, so that two runs give identical bits. That is the
  /// backward of targets with wgmma in any case (attn::backwardSumsDqByAtomics).
  bool deterministic = false;
  /// With `backward`, for a mask of class generic (one the compiler cannot classify): the kernels
  /// visit the blocks that block lists name, which `<name>_bwd_block_mask` writes (`flarec --grad
  /// --block-lists`; the attn dialect's Rationale.md, "Block lists"). flare::attentionBackward turns
  /// it on.
  bool backwardBlockLists = false;

  /// A stable text form of every option, used in cache keys and printed in metadata.
  std::string fingerprint() const;
  /// Sets the options that `text` names, in flarec's spelling without the dashes and separated by
  /// spaces: `tma-fallback`, `strength-reduction` (=0/1 or =false/true; `strength-reduction=target`:
  /// the target's choice) and `opt-level` (=0-3), e.g.
  /// "tma-fallback=0 strength-reduction=0" (flare_kernel_load_options). Throws flare::Error naming an
  /// unknown option or a bad value; leaves the options unchanged then.
  void set(const std::string &text);
};

/// The kind of one kernel parameter in Flare's kernel ABI: a global pointer or a scalar.
enum class ArgKind { Pointer, I32, I64, F32 };
const char *argKindName(ArgKind kind);

/// A value a launcher knows before the launch: a constant, or the value of a kernel argument (an i32
/// or i64 argument as the kernel sees it, truncated to 32 bits when the kernel truncates it).
struct HostScalar {
  int arg = -1;       ///< argument index, or -1 for the constant `value`
  int64_t value = 0;  ///< the constant (arg < 0)
  bool trunc32 = false; ///< the kernel uses the argument's low 32 bits, sign-extended
};

/// A TMA tensor map the launcher encodes from the arguments (cuTensorMapEncodeTiled) and passes as a
/// hidden 128-byte parameter: a tiled view of the tensor at pointer argument `pointerArg`.
/// Dimensions run innermost first; `strides` are in elements and strides[0] is 1.
struct TensorMapInfo {
  int pointerArg = 0;
  int elemBytes = 2;
  bool floatElems = false; ///< the elements are floats (4 bytes: a reduce adds them as f32), else bits only copied
  std::vector<HostScalar> sizes, strides;
  std::vector<int> box;  ///< elements per dimension of one copy
  int swizzleBytes = 0;  ///< 0 (none), 32, 64 or 128
};

/// A kernel that splits program instances (KernelInfo::splitSlotBytes) splits a launch when it has
/// more program instances than CTAs, not a multiple of them, and at least this many steps each
/// (shorter instances gain less from an even end than the split's hand-over costs).
inline constexpr int kSplitMinSteps = 16;

/// Such a kernel also needs steps * ctas below this to split: its schedule cuts the steps of the last
/// (fewer than 2 * ctas) instances in 32-bit arithmetic.
inline constexpr int64_t kSplitMaxStepsTimesCtas = int64_t{1} << 31;

/// Whether such a kernel splits a launch of `instances` program instances of `steps` steps each on
/// `ctas` CTAs (the rule its schedule applies on the device, for launchers that choose a kernel).
constexpr bool splitsLaunch(int64_t instances, int64_t ctas, int64_t steps) {
  return ctas > 0 && instances > ctas && instances % ctas != 0 && steps >= kSplitMinSteps &&
         steps * ctas < kSplitMaxStepsTimesCtas;
}

/// What a launcher needs to know about one kernel of a compiled module.
struct KernelInfo {
  std::string name;
  int numThreads = 0;        ///< threads per CTA (num_warps * 32), a 1-D block
  int sharedBytes = 0;       ///< dynamic shared memory per CTA, in bytes
  std::vector<ArgKind> args; ///< parameters in order
  /// Tensor maps the kernel reads with TMA. When there are any, the kernel has hidden parameters after
  /// `args`: an i32 that is 1 when every map could be encoded (else the kernel copies without TMA,
  /// unless tmaRequired), then one 128-byte map per entry.
  std::vector<TensorMapInfo> tensorMaps;
  /// A persistent kernel (`#tile.schedule<persistent = true>`): launched with as many CTAs as fit on the device at once
  /// (at most one per program instance), each running program instances of the requested grid in
  /// turn. The grid goes in three hidden i32 parameters right after `args` (before the TMA ones).
  bool persistent = false;
  /// Its warpgroups move register budgets (setmaxnreg): the runtime has the driver compile the
  /// module's PTX as a whole program, where ptxas honours them (not through its linker).
  bool registerBudgets = false;
  /// Its tensor maps must encode: compiled without the copies that replace them
  /// (CompileOptions::tmaFallback off), it ignores the "maps encoded" flag and the runtime refuses
  /// launches whose maps do not encode (Kernel::usesTensorMaps tells beforehand).
  bool tmaRequired = false;
  /// It starts with tile.wait_prior_grids (on a target with grid dependencies): with
  /// FLARE_DEPENDENT_LAUNCH=1 the runtime launches it as a programmatic dependent launch where the
  /// driver has one (cuLaunchKernelEx), so that its CTAs may start while the grid before it on the
  /// stream ends, and wait for it there.
  bool dependentLaunch = false;
  /// A persistent kernel that splits program instances between CTAs (tile.split_range): the bytes of
  /// one CTA's slot of its workspace; -1 when it has none. The workspace's pointer is a hidden
  /// parameter right after the grid's: G slots, then G i32 flags that are zero before the first
  /// launch and after every one (G: the CTAs launched, at least two). The runtime keeps one per
  /// stream. 0 for a kernel whose CTAs take their instances from a counter they share
  /// (#tile.schedule<dynamic_instances>): its first two flags are the counters.
  int64_t splitSlotBytes = -1;
  /// Integer facts the generator recorded for launchers, from the kernel's `flare.<name>` attributes
  /// (e.g. "attention.block_m": query rows per program instance of a generated attention kernel).
  std::map<std::string, int64_t> hints;
  /// A generated attention kernel's configuration (`#attn.config<...>`); empty for other kernels.
  std::string attentionConfig = {};
  int64_t hint(const std::string &name, int64_t fallback = 0) const {
    auto it = hints.find(name);
    return it == hints.end() ? fallback : it->second;
  }
};

/// A compiled module: PTX text and one KernelInfo per kernel.
struct CompiledModule {
  std::string arch;
  std::string ptx;
  std::vector<KernelInfo> kernels;
  /// The device binary the driver made from the PTX when the module was first loaded (empty before
  /// that). The kernel cache keeps it on disk, so that a hit loads it without the driver's PTX JIT;
  /// a binary for another device is ignored and the PTX loaded instead.
  std::string cubin;

  /// Metadata as JSON text (everything but the PTX), and back. fromJson throws flare::Error.
  std::string metadataJson() const;
  static CompiledModule fromMetadataJson(const std::string &json, std::string ptx);
  const KernelInfo *findKernel(const std::string &name) const;
};

/// True for the architectures Flare targets ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a").
bool isSupportedArch(const std::string &arch);

/// Parses `source` (named `bufferName` in diagnostics) and compiles it to PTX. Throws flare::Error whose
/// message holds every diagnostic with its location.
CompiledModule compileToPTX(const std::string &source, const CompileOptions &options,
                            const std::string &bufferName = "<input>");

/// The canonical printed form of a module (parsed and printed generically), used as the cache key's
/// IR component so that formatting and comments do not change the key. Throws flare::Error.
std::string canonicalizeIR(const std::string &source, const std::string &bufferName = "<input>");

/// The compiler's identity for cache keys: Flare's version, a digest of the sources it was built from
/// (cmake/BuildId.cmake) and the LLVM version.
std::string compilerVersion();

} // namespace flare

#endif // FLARE_COMPILER_COMPILER_H
