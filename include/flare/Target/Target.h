//===- Target.h - What Flare knows of a GPU architecture --------*- C++ -*-===//
//
// One description per architecture Flare compiles for, so that passes and the runtime ask questions
// ("has wgmma?", "how much shared memory may a CTA use?") instead of comparing arch strings. No MLIR
// headers.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TARGET_TARGET_H
#define FLARE_TARGET_TARGET_H

#include <cstdint>
#include <optional>
#include <string>

namespace flare {

struct Target {
  std::string arch;          ///< "sm_80", "sm_86", "sm_89", "sm_90" or "sm_90a"
  int smVersion = 0;         ///< 80, 86, 89, 90
  /// Warpgroup MMAs (wgmma), TMA copies, mbarrier transaction counts and setmaxnreg: the
  /// architecture-specific sm_90a only.
  bool hasWgmma = false;
  bool hasTma = false;
  /// Programmatic dependent launches (griddepcontrol): sm_90 and later.
  bool hasGridDependencies = false;
  /// Dynamic shared memory one CTA may use, in bytes.
  int64_t maxSharedBytesPerCTA = 0;
  /// The NVPTX backend's straight-line strength reduction by default (CompileOptions::
  /// strengthReduction unset): where wgmma is, whose kernels it makes faster (the forward at head dim
  /// 128 by 2-3% on an H100); not on mma.sync targets, where it is most of a large kernel's compile
  /// and leaves the forward attention kernels' PTX as it is (bench/NOTES.md).
  bool strengthReduction = false;

  /// The description of `arch`; nullopt for an architecture Flare does not target.
  static std::optional<Target> get(const std::string &arch);
};

} // namespace flare

#endif // FLARE_TARGET_TARGET_H
