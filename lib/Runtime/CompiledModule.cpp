//===- CompiledModule.cpp - Compile options and module metadata as JSON ---===//
//
// The metadata JSON travels between the compiler, flarec's output, the disk cache and launchers, so
// fromMetadataJson treats it as untrusted input: every field is checked for presence, type and range,
// and anything unexpected is a flare::Error naming the offending field. The format:
//
//   {
//     "version": 1,
//     "arch": "sm_90a",
//     "kernels": [
//       {"name": "attn_fwd", "numThreads": 128, "sharedBytes": 98304, "args": ["ptr", "i32", "f32"]}
//     ]
//   }
//
// A kernel that reads through TMA also has "tensorMaps" (flare::TensorMapInfo), each like
//   {"pointer": 1, "elemBytes": 2, "sizes": [{"const": 128}, {"arg": 8}], "strides": [{"const": 1},
//    {"arg": 14, "bits": 32}], "box": [64, 128], "swizzle": 128}
// ("float": true for f32 elements that a TMA reduce adds: TensorMapInfo::floatElems),
// and "tmaRequired": true when it has no copies for maps that do not encode (KernelInfo::tmaRequired),
// a persistent kernel "persistent": true (KernelInfo::persistent), and one that moves register
// budgets between its warpgroups "registerBudgets": true (KernelInfo::registerBudgets), and one
// that splits program instances between CTAs "splitSlotBytes": 65536 (KernelInfo::splitSlotBytes),
// and one that waits for the grid before it "dependentLaunch": true (KernelInfo::dependentLaunch).
//
//===----------------------------------------------------------------------===//
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"
#include "flare/Target/Target.h"

#include "../Support/InputLimits.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <set>
#include <sstream>

namespace flare {
namespace {

constexpr int64_t kMetadataVersion = 1;
/// CUDA's hard limit on threads per block.
constexpr int64_t kMaxThreadsPerBlock = 1024;
/// Far above any GPU's shared memory; rejects garbage without tracking per-arch limits here.
constexpr int64_t kMaxSharedBytes = 16 * 1024 * 1024;

constexpr ArgKind kAllArgKinds[] = {ArgKind::Pointer, ArgKind::I32, ArgKind::I64, ArgKind::F32};

[[noreturn]] void fail(const std::string &what) {
  throw Error("invalid module metadata JSON: " + what);
}

const char *typeName(const llvm::json::Value &v) {
  switch (v.kind()) {
  case llvm::json::Value::Null:
    return "null";
  case llvm::json::Value::Boolean:
    return "a boolean";
  case llvm::json::Value::Number:
    return "a number";
  case llvm::json::Value::String:
    return "a string";
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::Object:
    return "an object";
  }
  return "an unknown value";
}

const llvm::json::Value &require(const llvm::json::Object &obj, llvm::StringRef key,
                                 const std::string &where) {
  const llvm::json::Value *v = obj.get(key);
  if (!v)
    fail(where + " has no \"" + key.str() + "\" field");
  return *v;
}

std::string requireString(const llvm::json::Object &obj, llvm::StringRef key, const std::string &where) {
  const llvm::json::Value &v = require(obj, key, where);
  std::optional<llvm::StringRef> s = v.getAsString();
  if (!s)
    fail(where + "." + key.str() + " must be a string, not " + typeName(v));
  return s->str();
}

/// `v` as an int64_t when it is an integer that fits. (llvm::json::Value::getAsInteger alone admits the
/// double 2^63 -- its bound, double(INT64_MAX), rounds up to it -- and converts it to int64_t, which is
/// undefined behaviour; JSON text like 9223372036854775807.1 parses to that double.)
std::optional<int64_t> asInteger(const llvm::json::Value &v) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  std::optional<double> d = v.getAsNumber();
  // Only doubles and negative integers lack getAsUINT64; of them, keep those inside [-2^63, 2^63).
  if (d && !v.getAsUINT64() && !(*d >= -kTwoTo63 && *d < kTwoTo63))
    return std::nullopt;
  return v.getAsInteger();
}

int64_t requireInt(const llvm::json::Object &obj, llvm::StringRef key, const std::string &where,
                   int64_t min, int64_t max) {
  const llvm::json::Value &v = require(obj, key, where);
  std::optional<int64_t> i = asInteger(v);
  if (!i)
    fail(where + "." + key.str() + " must be an integer, not " + typeName(v));
  if (*i < min || *i > max)
    fail(where + "." + key.str() + " = " + std::to_string(*i) + " is outside [" + std::to_string(min) +
         ", " + std::to_string(max) + "]");
  return *i;
}

const llvm::json::Array &requireArray(const llvm::json::Object &obj, llvm::StringRef key,
                                      const std::string &where) {
  const llvm::json::Value &v = require(obj, key, where);
  const llvm::json::Array *a = v.getAsArray();
  if (!a)
    fail(where + "." + key.str() + " must be an array, not " + typeName(v));
  return *a;
}

/// Unknown fields are rejected: they mean a writer newer than this reader (which should have bumped
/// the version) or a typo, and either way the metadata cannot be trusted to mean what we think.
void rejectUnknownKeys(const llvm::json::Object &obj, std::initializer_list<llvm::StringRef> known,
                       const std::string &where) {
  for (const auto &entry : obj) {
    llvm::StringRef key = entry.first;
    bool ok = false;
    for (llvm::StringRef k : known)
      ok |= key == k;
    if (!ok)
      fail(where + " has an unknown field \"" + key.str() + "\"");
  }
}

ArgKind parseArgKind(const llvm::json::Value &v, const std::string &where) {
  std::optional<llvm::StringRef> s = v.getAsString();
  if (!s)
    fail(where + " must be a string, not " + typeName(v));
  for (ArgKind kind : kAllArgKinds)
    if (*s == argKindName(kind))
      return kind;
  fail(where + " = \"" + s->str() + "\" is not an argument kind (ptr, i32, i64, f32)");
}

/// TMA's limits (cuTensorMapEncodeTiled): ranks 1-5, boxes of at most 256 elements per dimension.
constexpr int kMaxTensorMapRank = 5;
constexpr int64_t kMaxBoxDim = 256;

HostScalar parseHostScalar(const llvm::json::Value &v, const std::string &where, size_t numArgs) {
  const llvm::json::Object *obj = v.getAsObject();
  if (!obj)
    fail(where + " must be an object, not " + typeName(v));
  rejectUnknownKeys(*obj, {"const", "arg", "bits"}, where);
  HostScalar h;
  if (obj->get("const")) {
    if (obj->get("arg") || obj->get("bits"))
      fail(where + " has both \"const\" and \"arg\"");
    h.value = requireInt(*obj, "const", where, INT64_MIN, INT64_MAX);
    return h;
  }
  h.arg = static_cast<int>(requireInt(*obj, "arg", where, 0, static_cast<int64_t>(numArgs) - 1));
  if (obj->get("bits"))
    h.trunc32 = requireInt(*obj, "bits", where, 32, 32) == 32;
  return h;
}

TensorMapInfo parseTensorMap(const llvm::json::Value &v, const std::string &where, const std::vector<ArgKind> &args) {
  const llvm::json::Object *obj = v.getAsObject();
  if (!obj)
    fail(where + " must be an object, not " + typeName(v));
  rejectUnknownKeys(*obj, {"pointer", "elemBytes", "float", "sizes", "strides", "box", "swizzle"}, where);
  TensorMapInfo t;
  t.pointerArg = static_cast<int>(requireInt(*obj, "pointer", where, 0, static_cast<int64_t>(args.size()) - 1));
  if (args[t.pointerArg] != ArgKind::Pointer)
    fail(where + ".pointer names argument " + std::to_string(t.pointerArg) + ", which is not a pointer");
  t.elemBytes = static_cast<int>(requireInt(*obj, "elemBytes", where, 1, 8));
  if (t.elemBytes & (t.elemBytes - 1))
    fail(where + ".elemBytes = " + std::to_string(t.elemBytes) + " is not 1, 2, 4 or 8");
  if (const llvm::json::Value *f = obj->get("float")) {
    std::optional<bool> isFloat = f->getAsBoolean();
    if (!isFloat || (*isFloat && t.elemBytes != 4))
      fail(where + ".float must be a boolean, true only for 4-byte elements");
    t.floatElems = *isFloat;
  }
  using Field = std::pair<const char *, std::vector<HostScalar> *>;
  for (auto [key, out] : {Field{"sizes", &t.sizes}, Field{"strides", &t.strides}}) {
    const llvm::json::Array &a = requireArray(*obj, key, where);
    for (size_t i = 0; i < a.size(); ++i) {
      std::string at = where + "." + key + "[" + std::to_string(i) + "]";
      HostScalar h = parseHostScalar(a[i], at, args.size());
      if (h.arg >= 0 && args[h.arg] != ArgKind::I32 && args[h.arg] != ArgKind::I64)
        fail(at + " names argument " + std::to_string(h.arg) + ", which is not an integer");
      out->push_back(h);
    }
  }
  const llvm::json::Array &box = requireArray(*obj, "box", where);
  for (size_t i = 0; i < box.size(); ++i) {
    std::optional<int64_t> n = asInteger(box[i]);
    if (!n || *n < 1 || *n > kMaxBoxDim)
      fail(where + ".box[" + std::to_string(i) + "] must be an integer in [1, " + std::to_string(kMaxBoxDim) + "]");
    t.box.push_back(static_cast<int>(*n));
  }
  const size_t rank = t.sizes.size();
  if (rank < 1 || rank > kMaxTensorMapRank || t.strides.size() != rank || t.box.size() != rank)
    fail(where + " needs sizes, strides and box of one rank in [1, " + std::to_string(kMaxTensorMapRank) + "]");
  t.swizzleBytes = static_cast<int>(requireInt(*obj, "swizzle", where, 0, 128));
  if (t.swizzleBytes != 0 && t.swizzleBytes != 32 && t.swizzleBytes != 64 && t.swizzleBytes != 128)
    fail(where + ".swizzle = " + std::to_string(t.swizzleBytes) + " is not 0, 32, 64 or 128");
  return t;
}

KernelInfo parseKernel(const llvm::json::Value &v, const std::string &where) {
  const llvm::json::Object *obj = v.getAsObject();
  if (!obj)
    fail(where + " must be an object, not " + typeName(v));
  rejectUnknownKeys(*obj,
                    {"name", "numThreads", "sharedBytes", "args", "hints", "tensorMaps", "persistent", "registerBudgets",
                     "tmaRequired", "dependentLaunch", "splitSlotBytes", "attentionConfig"},
                    where);
  KernelInfo k;
  k.name = requireString(*obj, "name", where);
  if (k.name.empty())
    fail(where + ".name is empty");
  k.numThreads = static_cast<int>(requireInt(*obj, "numThreads", where, 1, kMaxThreadsPerBlock));
  k.sharedBytes = static_cast<int>(requireInt(*obj, "sharedBytes", where, 0, kMaxSharedBytes));
  const llvm::json::Array &args = requireArray(*obj, "args", where);
  for (size_t i = 0; i < args.size(); ++i)
    k.args.push_back(parseArgKind(args[i], where + ".args[" + std::to_string(i) + "]"));
  if (const llvm::json::Value *hints = obj->get("hints")) {
    const llvm::json::Object *h = hints->getAsObject();
    if (!h)
      fail(where + ".hints must be an object, not " + typeName(*hints));
    for (const auto &[key, value] : *h) {
      std::optional<int64_t> n = asInteger(value);
      if (!n)
        fail(where + ".hints." + key.str() + " must be an integer, not " + typeName(value));
      k.hints[key.str()] = *n;
    }
  }
  for (auto [key, field] : {std::pair<const char *, bool *>{"persistent", &k.persistent},
                             {"registerBudgets", &k.registerBudgets}, {"tmaRequired", &k.tmaRequired},
                             {"dependentLaunch", &k.dependentLaunch}})
    if (const llvm::json::Value *value = obj->get(key)) {
      std::optional<bool> flag = value->getAsBoolean();
      if (!flag)
        fail(where + "." + key + " must be a boolean, not " + typeName(*value));
      *field = *flag;
    }
  if (obj->get("attentionConfig"))
    k.attentionConfig = requireString(*obj, "attentionConfig", where);
  if (obj->get("splitSlotBytes")) {
    k.splitSlotBytes = requireInt(*obj, "splitSlotBytes", where, 0, int64_t(1) << 30);
    if (!k.persistent)
      fail(where + ".splitSlotBytes is only valid for a persistent kernel");
  }
  if (obj->get("tensorMaps")) {
    const llvm::json::Array &maps = requireArray(*obj, "tensorMaps", where);
    for (size_t i = 0; i < maps.size(); ++i)
      k.tensorMaps.push_back(parseTensorMap(maps[i], where + ".tensorMaps[" + std::to_string(i) + "]", k.args));
  }
  if (k.tmaRequired && k.tensorMaps.empty())
    fail(where + ".tmaRequired is only valid for a kernel with tensorMaps");
  return k;
}

} // namespace

std::string CompileOptions::fingerprint() const {
  std::string text = "arch=" + arch + ";O=" + std::to_string(optLevel);
  if (!tmaFallback)
    text += ";tma-fallback=0";
  if (strengthReduction) // unset: the target's choice, which the arch names
    text += *strengthReduction ? ";slsr=1" : ";slsr=0";
  if (!attentionConfig.empty())
    text += ";config=" + attentionConfig;
  if (backward)
    text += deterministic ? ";grad;deterministic" : ";grad";
  if (backward && backwardBlockLists)
    text += ";grad-lists";
  return text;
}

void CompileOptions::set(const std::string &text) {
  CompileOptions next = *this;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    auto flag = [&](bool &field) {
      if (value == "1" || value == "true")
        field = true;
      else if (value == "0" || value == "false")
        field = false;
      else
        throw Error("compile option '" + word + "': " + key + " takes 0/1 or false/true");
    };
    if (key == "tma-fallback") {
      flag(next.tmaFallback);
    } else if (key == "strength-reduction" && value == "target") {
      next.strengthReduction.reset();
    } else if (key == "strength-reduction") {
      bool on = false;
      flag(on);
      next.strengthReduction = on;
    } else if (key == "opt-level") {
      if (value.size() != 1 || value[0] < '0' || value[0] > '3')
        throw Error("compile option '" + word + "': opt-level takes 0 to 3");
      next.optLevel = value[0] - '0';
    } else {
      throw Error("unknown compile option '" + word + "' (known: tma-fallback, strength-reduction, opt-level)");
    }
  }
  *this = std::move(next);
}

const char *argKindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Pointer:
    return "ptr";
  case ArgKind::I32:
    return "i32";
  case ArgKind::I64:
    return "i64";
  case ArgKind::F32:
    return "f32";
  }
  return "unknown";
}

bool isSupportedArch(const std::string &arch) {
  return Target::get(arch).has_value();
}

std::string CompiledModule::metadataJson() const {
  // Written field by field (not via json::Object, which orders keys by hash) so the text is stable
  // and reads in a sensible order.
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("version", kMetadataVersion);
    j.attribute("arch", arch);
    j.attributeArray("kernels", [&] {
      for (const KernelInfo &k : kernels) {
        j.object([&] {
          j.attribute("name", k.name);
          j.attribute("numThreads", k.numThreads);
          j.attribute("sharedBytes", k.sharedBytes);
          j.attributeArray("args", [&] {
            for (ArgKind a : k.args)
              j.value(argKindName(a));
          });
          if (k.persistent)
            j.attribute("persistent", true);
          if (k.registerBudgets)
            j.attribute("registerBudgets", true);
          if (k.tmaRequired)
            j.attribute("tmaRequired", true);
          if (k.dependentLaunch)
            j.attribute("dependentLaunch", true);
          if (k.splitSlotBytes >= 0)
            j.attribute("splitSlotBytes", k.splitSlotBytes);
          if (!k.attentionConfig.empty())
            j.attribute("attentionConfig", k.attentionConfig);
          if (!k.hints.empty())
            j.attributeObject("hints", [&] {
              for (const auto &[name, value] : k.hints)
                j.attribute(name, value);
            });
          if (!k.tensorMaps.empty())
            j.attributeArray("tensorMaps", [&] {
              for (const TensorMapInfo &t : k.tensorMaps)
                j.object([&] {
                  j.attribute("pointer", t.pointerArg);
                  j.attribute("elemBytes", t.elemBytes);
                  if (t.floatElems)
                    j.attribute("float", true);
                  auto scalars = [&](const char *key, const std::vector<HostScalar> &values) {
                    j.attributeArray(key, [&] {
                      for (const HostScalar &h : values)
                        j.object([&] {
                          if (h.arg < 0) {
                            j.attribute("const", h.value);
                            return;
                          }
                          j.attribute("arg", h.arg);
                          if (h.trunc32)
                            j.attribute("bits", 32);
                        });
                    });
                  };
                  scalars("sizes", t.sizes);
                  scalars("strides", t.strides);
                  j.attributeArray("box", [&] {
                    for (int n : t.box)
                      j.value(n);
                  });
                  j.attribute("swizzle", t.swizzleBytes);
                });
            });
        });
      }
    });
  });
  os.flush();
  return text;
}

CompiledModule CompiledModule::fromMetadataJson(const std::string &json, std::string ptx) {
  // The JSON reader recurses once per nesting level: deeper text than metadata ever has is refused
  // before it could exhaust the stack.
  if (std::optional<detail::NestingExcess> excess =
          detail::findNestingExcess(json, detail::kMaxJsonNesting, /*mlirSyntax=*/false))
    fail("nests deeper than " + std::to_string(detail::kMaxJsonNesting) + " levels (line " +
         std::to_string(excess->line) + ", column " + std::to_string(excess->column) + ")");
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed)
    fail("not valid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    fail("the top level must be an object, not " + std::string(typeName(*parsed)));
  const std::string where = "metadata";
  rejectUnknownKeys(*root, {"version", "arch", "kernels"}, where);

  int64_t version = requireInt(*root, "version", where, 0, INT32_MAX);
  if (version != kMetadataVersion)
    fail("metadata.version is " + std::to_string(version) + ", this Flare reads version " +
         std::to_string(kMetadataVersion));

  CompiledModule m;
  m.arch = requireString(*root, "arch", where);
  if (!isSupportedArch(m.arch))
    fail("metadata.arch = \"" + m.arch + "\" is not a supported architecture");

  const llvm::json::Array &kernels = requireArray(*root, "kernels", where);
  std::set<std::string> seen;
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelInfo k = parseKernel(kernels[i], "metadata.kernels[" + std::to_string(i) + "]");
    if (!seen.insert(k.name).second)
      fail("kernel \"" + k.name + "\" appears more than once");
    m.kernels.push_back(std::move(k));
  }
  m.ptx = std::move(ptx);
  return m;
}

const KernelInfo *CompiledModule::findKernel(const std::string &name) const {
  for (const KernelInfo &k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

} // namespace flare
