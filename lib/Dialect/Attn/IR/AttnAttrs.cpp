//===- AttnAttrs.cpp - #attn.mask_class and #attn.config ------------------===//
#include "flare/Dialect/Attn/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace flare::attn;

#include "Attn/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Attn/AttnAttrs.cpp.inc"

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Attn/AttnAttrs.cpp.inc"
      >();
}

namespace {
// The integer fields of #attn.config in their printed order, with the value an omitted one takes.
struct IntField {
  const char *name;
  int64_t defaultValue;
};
constexpr IntField kIntFields[] = {
    {"block_m", 128}, {"block_n", 64}, {"warps", 8}, {"min_blocks_per_sm", 0}, {"partial_row_sums", 0}};

// Switches that only mean something beside others (a configuration names them only then, so that
// one kernel has one configuration).
struct Requirement {
  ConfigSwitch sw, needs;
  bool needsOff; // `sw` needs `needs` off instead of on
};
constexpr Requirement kRequirements[] = {
    {ConfigSwitch::DeferRescale, ConfigSwitch::Overlap, false},
    {ConfigSwitch::LastPvAfterLoops, ConfigSwitch::Overlap, false},
    {ConfigSwitch::PeelFirstStep, ConfigSwitch::Overlap, false},
    {ConfigSwitch::SplitTail, ConfigSwitch::Persistent, false},
    {ConfigSwitch::OperandsAfterFirstStage, ConfigSwitch::Persistent, false},
    {ConfigSwitch::OperandsAfterFirstStage, ConfigSwitch::Producer, false},
    {ConfigSwitch::PrefetchNextInstance, ConfigSwitch::Persistent, false},
    {ConfigSwitch::PrefetchNextInstance, ConfigSwitch::Producer, true},
    {ConfigSwitch::InvariantAInRegisters, ConfigSwitch::Persistent, false},
    {ConfigSwitch::InvariantAInRegisters, ConfigSwitch::Overlap, false},
    {ConfigSwitch::SplitKv, ConfigSwitch::Persistent, true},
    {ConfigSwitch::BlockLists, ConfigSwitch::SplitKv, true},
    {ConfigSwitch::BlockLists, ConfigSwitch::PackGqa, true},
    {ConfigSwitch::BlockLists, ConfigSwitch::SplitTail, true},
    {ConfigSwitch::DynamicInstances, ConfigSwitch::Persistent, false},
    {ConfigSwitch::DynamicInstances, ConfigSwitch::Producer, false},
    {ConfigSwitch::DynamicInstances, ConfigSwitch::PairInstances, true},
    {ConfigSwitch::DynamicInstances, ConfigSwitch::SplitTail, true},
};

bool isBlockSize(int64_t n) { return n >= 16 && n <= 256 && llvm::isPowerOf2_64(n); }
} // namespace

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t blockM, int64_t blockN,
                                 int64_t numWarps, int64_t minBlocksPerSM, int64_t partialRowSums,
                                 ConfigSwitch switches) {
  if (!isBlockSize(blockM) || !isBlockSize(blockN))
    return emitError() << "block_m and block_n must be powers of two from 16 to 256, got " << blockM << " and "
                       << blockN;
  if (numWarps < 1 || numWarps > 16 || !llvm::isPowerOf2_64(numWarps))
    return emitError() << "warps must be 1, 2, 4, 8 or 16, got " << numWarps;
  if (minBlocksPerSM < 0 || minBlocksPerSM > 32)
    return emitError() << "min_blocks_per_sm must be from 0 (ptxas decides) to 32, got " << minBlocksPerSM;
  // One sum per row (0), or G partial sums per row, each over blockN / G keys of a step, which the
  // row's lanes hold in pairs: G a power of two from 2 whose double divides blockN.
  if (partialRowSums != 0 &&
      (partialRowSums < 2 || !llvm::isPowerOf2_64(partialRowSums) || blockN % (2 * partialRowSums) != 0))
    return emitError() << "partial_row_sums=" << partialRowSums
                       << " must be 0 or a power of two from 2 whose double divides the " << blockN
                       << " keys per step";
  auto on = [&](ConfigSwitch s) { return bitEnumContainsAll(switches, s); };
  for (const Requirement &r : kRequirements)
    if (on(r.sw) && on(r.needs) == r.needsOff)
      return emitError() << stringifyConfigSwitch(r.sw) << " needs " << stringifyConfigSwitch(r.needs)
                         << (r.needsOff ? " off" : " on");
  if (!on(ConfigSwitch::PairInstances) && !on(ConfigSwitch::Persistent))
    return emitError() << "pair_instances can be off in a persistent kernel only";
  return success();
}

Attribute ConfigAttr::parse(AsmParser &parser, Type) {
  int64_t ints[std::size(kIntFields)];
  for (size_t i = 0; i < std::size(kIntFields); ++i)
    ints[i] = kIntFields[i].defaultValue;
  ConfigSwitch switches = ConfigSwitch::none;
  const SMLoc start = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalGreater())) {
    do {
      const SMLoc loc = parser.getCurrentLocation();
      std::string key;
      if (parser.parseKeywordOrString(&key))
        return {};
      if (succeeded(parser.parseOptionalEqual())) {
        auto *field = llvm::find_if(kIntFields, [&](const IntField &f) { return key == f.name; });
        if (field == std::end(kIntFields)) {
          parser.emitError(loc) << "#attn.config has no integer field '" << key << "'";
          return {};
        }
        if (parser.parseInteger(ints[field - std::begin(kIntFields)]))
          return {};
        continue;
      }
      std::optional<ConfigSwitch> sw = symbolizeConfigSwitch(key);
      if (!sw || *sw == ConfigSwitch::none) {
        parser.emitError(loc) << "#attn.config has no switch '" << key << "'";
        return {};
      }
      switches = switches | *sw;
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseGreater())
      return {};
  }
  return parser.getChecked<ConfigAttr>(start, parser.getContext(), ints[0], ints[1], ints[2], ints[3], ints[4],
                                       switches);
}

void ConfigAttr::print(AsmPrinter &printer) const {
  const int64_t ints[] = {getBlockM(), getBlockN(), getNumWarps(), getMinBlocksPerSM(), getPartialRowSums()};
  printer << "<";
  for (size_t i = 0; i < std::size(kIntFields); ++i)
    printer << (i ? ", " : "") << kIntFields[i].name << " = " << ints[i];
  for (uint32_t bit = 1; bit != 0 && bit <= static_cast<uint32_t>(getSwitches()); bit <<= 1)
    if (static_cast<uint32_t>(getSwitches()) & bit)
      printer << ", " << stringifyConfigSwitch(static_cast<ConfigSwitch>(bit));
  printer << ">";
}

bool ConfigAttr::has(ConfigSwitch s) const { return bitEnumContainsAll(getSwitches(), s); }

std::string ConfigAttr::text() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  Attribute(*this).print(os);
  return s;
}
