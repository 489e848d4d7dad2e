//===- Target.cpp - Descriptions of the architectures Flare targets -------===//
#include "flare/Target/Target.h"

namespace flare {

std::optional<Target> Target::get(const std::string &arch) {
  Target t;
  t.arch = arch;
  if (arch == "sm_90a" || arch == "sm_90") {
    t.smVersion = 90;
    t.hasWgmma = t.hasTma = arch == "sm_90a";
    t.strengthReduction = t.hasWgmma;
    t.hasGridDependencies = true;
    t.maxSharedBytesPerCTA = 227 * 1024;
  } else if (arch == "sm_80") {
    t.smVersion = 80;
    t.maxSharedBytesPerCTA = 163 * 1024;
  } else if (arch == "sm_86" || arch == "sm_89") {
    t.smVersion = arch == "sm_86" ? 86 : 89;
    t.maxSharedBytesPerCTA = 99 * 1024;
  } else {
    return std::nullopt;
  }
  return t;
}

} // namespace flare
