//===- CompiledModuleTest.cpp - Metadata JSON, options and arch checks ----===//
//
// The metadata JSON is read back from disk and from tools, so the parser must accept exactly what
// metadataJson() writes and reject everything malformed with a flare::Error rather than a crash or a
// half-filled module.
//
//===----------------------------------------------------------------------===//
#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"

#include "TestKernels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace flare;
using flare::test::kernelInfo;

namespace {

CompiledModule sampleModule() {
  CompiledModule m;
  m.arch = "sm_90a";
  m.ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n";
  m.kernels.push_back(kernelInfo("attn_fwd", 128, 98304,
                                  {ArgKind::Pointer, ArgKind::Pointer, ArgKind::I32, ArgKind::I64, ArgKind::F32}));
  m.kernels.push_back(kernelInfo("no_args", 32, 0, {}));
  return m;
}

/// A kernel reading one tensor map: a [rows, 128] view of argument 0 at a per-program base
/// (coordinate x stride argument 3), its row count argument 1 and row stride argument 2 (truncated).
KernelInfo tmaKernel() {
  KernelInfo k = kernelInfo("tma", 256, 65536, {ArgKind::Pointer, ArgKind::I32, ArgKind::I64, ArgKind::I64});
  TensorMapInfo t;
  t.pointerArg = 0;
  t.elemBytes = 2;
  t.sizes = {{-1, 128, false}, {1, 0, false}, {-1, int64_t(1) << 31, false}};
  t.strides = {{-1, 1, false}, {2, 0, true}, {3, 0, false}};
  t.box = {64, 128, 1};
  t.swizzleBytes = 128;
  k.tensorMaps.push_back(t);
  // A second map: f32 sums a TMA reduce adds into (float elements, 32 columns per 128-byte box row).
  t.elemBytes = 4;
  t.floatElems = true;
  t.box = {32, 64, 1};
  k.tensorMaps.push_back(t);
  return k;
}

bool sameScalars(const std::vector<HostScalar> &a, const std::vector<HostScalar> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].arg != b[i].arg || a[i].value != b[i].value || a[i].trunc32 != b[i].trunc32)
      return false;
  return true;
}

void expectSameModule(const CompiledModule &a, const CompiledModule &b) {
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.ptx, b.ptx);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    SCOPED_TRACE("kernel " + a.kernels[i].name);
    EXPECT_EQ(a.kernels[i].name, b.kernels[i].name);
    EXPECT_EQ(a.kernels[i].numThreads, b.kernels[i].numThreads);
    EXPECT_EQ(a.kernels[i].sharedBytes, b.kernels[i].sharedBytes);
    EXPECT_EQ(a.kernels[i].args, b.kernels[i].args);
    EXPECT_EQ(a.kernels[i].persistent, b.kernels[i].persistent);
    EXPECT_EQ(a.kernels[i].registerBudgets, b.kernels[i].registerBudgets);
    EXPECT_EQ(a.kernels[i].tmaRequired, b.kernels[i].tmaRequired);
    EXPECT_EQ(a.kernels[i].dependentLaunch, b.kernels[i].dependentLaunch);
    EXPECT_EQ(a.kernels[i].splitSlotBytes, b.kernels[i].splitSlotBytes);
    EXPECT_EQ(a.kernels[i].hints, b.kernels[i].hints);
    EXPECT_EQ(a.kernels[i].attentionConfig, b.kernels[i].attentionConfig);
    ASSERT_EQ(a.kernels[i].tensorMaps.size(), b.kernels[i].tensorMaps.size());
    for (size_t j = 0; j < a.kernels[i].tensorMaps.size(); ++j) {
      const TensorMapInfo &x = a.kernels[i].tensorMaps[j], &y = b.kernels[i].tensorMaps[j];
      EXPECT_EQ(x.pointerArg, y.pointerArg);
      EXPECT_EQ(x.elemBytes, y.elemBytes);
      EXPECT_EQ(x.floatElems, y.floatElems);
      EXPECT_TRUE(sameScalars(x.sizes, y.sizes));
      EXPECT_TRUE(sameScalars(x.strides, y.strides));
      EXPECT_EQ(x.box, y.box);
      EXPECT_EQ(x.swizzleBytes, y.swizzleBytes);
    }
  }
}

/// A valid document with one kernel; the malformed cases below each break one thing of it.
std::string kernelJson(const std::string &kernelBody) {
  return R"({"version": 1, "arch": "sm_90a", "kernels": [)" + kernelBody + "]}";
}

const char *kGoodKernel = R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": ["ptr", "i32"]})";

} // namespace

TEST(CompiledModuleTest, JsonRoundTrip) {
  CompiledModule m = sampleModule();
  std::string json = m.metadataJson();
  SCOPED_TRACE("metadata JSON: " + json);
  CompiledModule back = CompiledModule::fromMetadataJson(json, m.ptx);
  expectSameModule(m, back);
  // The PTX is carried beside the metadata, not inside it.
  EXPECT_EQ(json.find(".target"), std::string::npos);
  // Writing is deterministic.
  EXPECT_EQ(json, back.metadataJson());
}

TEST(CompiledModuleTest, JsonRoundTripWithTensorMaps) {
  CompiledModule m = sampleModule();
  m.kernels.push_back(tmaKernel());
  std::string json = m.metadataJson();
  SCOPED_TRACE("metadata JSON: " + json);
  EXPECT_NE(json.find(R"("bits": 32)"), std::string::npos);
  EXPECT_NE(json.find(R"("float": true)"), std::string::npos);
  EXPECT_EQ(json.find(R"("float": true)"), json.rfind(R"("float": true)")); // the f32 map's only
  CompiledModule back = CompiledModule::fromMetadataJson(json, m.ptx);
  expectSameModule(m, back);
  EXPECT_FALSE(back.kernels.back().tensorMaps[0].floatElems);
  EXPECT_TRUE(back.kernels.back().tensorMaps[1].floatElems);
}

// The kernels' boolean flags ("persistent", "registerBudgets", "tmaRequired", "dependentLaunch") are written only when
// set and come back on the kernel that had them.
TEST(CompiledModuleTest, JsonRoundTripOfKernelFlags) {
  for (auto [key, field] : {std::pair<const char *, bool KernelInfo::*>{"persistent", &KernelInfo::persistent},
                            {"registerBudgets", &KernelInfo::registerBudgets},
                            {"tmaRequired", &KernelInfo::tmaRequired},
                            {"dependentLaunch", &KernelInfo::dependentLaunch}}) {
    CompiledModule m = sampleModule();
    m.kernels.push_back(tmaKernel());
    m.kernels.back().*field = true;
    std::string json = m.metadataJson();
    SCOPED_TRACE(std::string(key) + ", metadata JSON: " + json);
    EXPECT_NE(json.find("\"" + std::string(key) + "\": true"), std::string::npos);
    CompiledModule back = CompiledModule::fromMetadataJson(json, m.ptx);
    expectSameModule(m, back);
    EXPECT_TRUE(back.kernels.back().*field);
    EXPECT_FALSE(back.kernels.front().*field);
  }
}

// A persistent kernel's split workspace slot ("splitSlotBytes", -1 and absent when it splits no
// program instances) comes back on the kernel that had it.
TEST(CompiledModuleTest, JsonRoundTripOfSplitSlotBytes) {
  CompiledModule m = sampleModule();
  m.kernels.push_back(tmaKernel());
  m.kernels.back().persistent = true;
  m.kernels.back().splitSlotBytes = 69632;
  std::string json = m.metadataJson();
  SCOPED_TRACE("metadata JSON: " + json);
  EXPECT_NE(json.find(R"("splitSlotBytes": 69632)"), std::string::npos);
  EXPECT_EQ(json.find("splitSlotBytes"), json.rfind("splitSlotBytes")); // only the kernel that has one
  CompiledModule back = CompiledModule::fromMetadataJson(json, m.ptx);
  expectSameModule(m, back);
  EXPECT_EQ(back.kernels.front().splitSlotBytes, -1);
}

// A generated attention kernel's configuration ("attentionConfig", absent for other kernels) comes
// back on its kernel as text; a value that is not a string is an error.
TEST(CompiledModuleTest, JsonRoundTripOfAttentionConfig) {
  CompiledModule m = sampleModule();
  m.kernels.push_back(tmaKernel());
  m.kernels.back().attentionConfig = "#attn.config<block_m = 64, block_n = 32, warps = 4, pair_instances>";
  std::string json = m.metadataJson();
  SCOPED_TRACE("metadata JSON: " + json);
  EXPECT_EQ(json.find("attentionConfig"), json.rfind("attentionConfig")); // only the kernel that has one
  CompiledModule back = CompiledModule::fromMetadataJson(json, m.ptx);
  expectSameModule(m, back);
  EXPECT_EQ(back.kernels.back().attentionConfig, m.kernels.back().attentionConfig);
  EXPECT_TRUE(back.kernels.front().attentionConfig.empty());
  EXPECT_THROW(CompiledModule::fromMetadataJson(
                   kernelJson(R"({"name": "k", "numThreads": 32, "sharedBytes": 0, "args": [], "attentionConfig": 7})"),
                   "ptx"),
               Error);
}

TEST(CompiledModuleTest, MalformedTensorMapsThrow) {
  auto withMap = [](const std::string &map) {
    return kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": ["ptr", "i32", "f32"],
                          "tensorMaps": [)" + map + "]}");
  };
  const std::string good = R"({"pointer": 0, "elemBytes": 2, "sizes": [{"const": 64}, {"arg": 1}],
                              "strides": [{"const": 1}, {"arg": 1, "bits": 32}], "box": [64, 128], "swizzle": 128})";
  EXPECT_NO_THROW(CompiledModule::fromMetadataJson(withMap(good), "ptx"));
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return withMap(s);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pointer names a scalar", replace(R"("pointer": 0)", R"("pointer": 1)")},
      {"pointer out of range", replace(R"("pointer": 0)", R"("pointer": 9)")},
      {"size names a float argument", replace(R"({"arg": 1}])", R"({"arg": 2}])")},
      {"odd element size", replace(R"("elemBytes": 2)", R"("elemBytes": 3)")},
      {"box of zero", replace("[64, 128]", "[0, 128]")},
      {"box over 256", replace("[64, 128]", "[64, 512]")},
      {"rank mismatch", replace("[64, 128]", "[64]")},
      {"bad swizzle", replace(R"("swizzle": 128)", R"("swizzle": 96)")},
      {"const and arg", replace(R"({"const": 64})", R"({"const": 64, "arg": 1})")},
      {"bits other than 32", replace(R"("bits": 32)", R"("bits": 16)")},
      {"float of 2-byte elements", replace(R"("elemBytes": 2)", R"("elemBytes": 2, "float": true)")},
      {"float not a boolean", replace(R"("elemBytes": 2)", R"("elemBytes": 4, "float": 1)")},
      {"unknown map field", replace(R"("swizzle": 128)", R"("swizzle": 128, "l2": 1)")},
  };
  for (const auto &[label, json] : cases) {
    SCOPED_TRACE("case '" + label + "', input: " + json);
    EXPECT_THROW(CompiledModule::fromMetadataJson(json, "ptx"), Error);
  }
}

TEST(CompiledModuleTest, JsonRoundTripOfModuleWithoutKernels) {
  CompiledModule m;
  m.arch = "sm_80";
  m.ptx = "// empty\n";
  CompiledModule back = CompiledModule::fromMetadataJson(m.metadataJson(), m.ptx);
  expectSameModule(m, back);
}

TEST(CompiledModuleTest, HandWrittenJsonIsAccepted) {
  CompiledModule m = CompiledModule::fromMetadataJson(kernelJson(kGoodKernel), "ptx text");
  EXPECT_EQ(m.arch, "sm_90a");
  EXPECT_EQ(m.ptx, "ptx text");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].name, "k");
  EXPECT_EQ(m.kernels[0].numThreads, 128);
  EXPECT_EQ(m.kernels[0].args, (std::vector<ArgKind>{ArgKind::Pointer, ArgKind::I32}));
}

TEST(CompiledModuleTest, MalformedJsonThrows) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty text", ""},
      {"truncated object", R"({"version": 1, "arch": "sm_90a")"},
      {"not JSON at all", "this is not json"},
      {"top level array", "[]"},
      {"top level null", "null"},
      {"missing version", R"({"arch": "sm_90a", "kernels": []})"},
      {"wrong version", R"({"version": 2, "arch": "sm_90a", "kernels": []})"},
      {"version as string", R"({"version": "1", "arch": "sm_90a", "kernels": []})"},
      {"missing arch", R"({"version": 1, "kernels": []})"},
      {"arch as number", R"({"version": 1, "arch": 90, "kernels": []})"},
      {"unsupported arch", R"({"version": 1, "arch": "sm_75", "kernels": []})"},
      {"missing kernels", R"({"version": 1, "arch": "sm_90a"})"},
      {"kernels as object", R"({"version": 1, "arch": "sm_90a", "kernels": {}})"},
      {"unknown top-level field", R"({"version": 1, "arch": "sm_90a", "kernels": [], "extra": 0})"},
      {"kernel not an object", kernelJson("42")},
      {"kernel missing name", kernelJson(R"({"numThreads": 128, "sharedBytes": 0, "args": []})")},
      {"kernel empty name", kernelJson(R"({"name": "", "numThreads": 128, "sharedBytes": 0, "args": []})")},
      {"kernel name as number",
       kernelJson(R"({"name": 7, "numThreads": 128, "sharedBytes": 0, "args": []})")},
      {"missing numThreads", kernelJson(R"({"name": "k", "sharedBytes": 0, "args": []})")},
      {"numThreads as string",
       kernelJson(R"({"name": "k", "numThreads": "128", "sharedBytes": 0, "args": []})")},
      {"numThreads zero", kernelJson(R"({"name": "k", "numThreads": 0, "sharedBytes": 0, "args": []})")},
      {"numThreads too large",
       kernelJson(R"({"name": "k", "numThreads": 2048, "sharedBytes": 0, "args": []})")},
      {"numThreads fractional",
       kernelJson(R"({"name": "k", "numThreads": 1.5, "sharedBytes": 0, "args": []})")},
      {"missing sharedBytes", kernelJson(R"({"name": "k", "numThreads": 128, "args": []})")},
      {"negative sharedBytes",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": -1, "args": []})")},
      {"missing args", kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0})")},
      {"args as string", kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": "ptr"})")},
      {"unknown arg kind",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": ["f64"]})")},
      {"arg kind as number",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [1]})")},
      {"persistent as number",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "persistent": 1})")},
      {"dependentLaunch as number",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "dependentLaunch": 1})")},
      {"registerBudgets as string",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "registerBudgets": "yes"})")},
      {"tmaRequired as string",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "tmaRequired": "yes"})")},
      {"tmaRequired without tensor maps",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "tmaRequired": true})")},
      {"splitSlotBytes negative", kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [],
                                                  "persistent": true, "splitSlotBytes": -4})")},
      {"splitSlotBytes without persistent",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "splitSlotBytes": 64})")},
      {"unknown kernel field",
       kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": [], "regs": 3})")},
      {"duplicate kernel names", kernelJson(std::string(kGoodKernel) + ", " + kGoodKernel)},
      {"arrays nested 100,000 deep", std::string(100000, '[') + std::string(100000, ']')},
      {"objects nested 33 deep", [] {
         std::string s;
         for (int i = 0; i < 33; ++i)
           s += R"({"a": )";
         return s + "1" + std::string(33, '}');
       }()},
      // 9223372036854775807.1 parses to the double 2^63, one past INT64_MAX (a fuzzer finding: it was
      // converted to int64_t, which is undefined behaviour).
      {"version 2^63 as a double", R"({"version": 9223372036854775807.1})"},
      {"numThreads 2^63 as a double",
       kernelJson(R"({"name": "k", "numThreads": 9223372036854775807.1, "sharedBytes": 0, "args": []})")},
  };
  for (const auto &[label, json] : cases) {
    SCOPED_TRACE("case '" + label + "', input: " + json);
    try {
      CompiledModule::fromMetadataJson(json, "ptx");
      ADD_FAILURE() << "accepted malformed metadata";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("metadata"), std::string::npos) << e.what();
      EXPECT_EQ(e.cuResult(), 0);
    } catch (const std::exception &e) {
      ADD_FAILURE() << "threw something other than flare::Error: " << e.what();
    }
  }
}

TEST(CompiledModuleTest, HintsTakeEveryInt64AndNothingBeyond) {
  // Integers and integral doubles in [-2^63, 2^63) are hints; 2^63 and more are not, however written.
  CompiledModule m = CompiledModule::fromMetadataJson(
      kernelJson(R"({"name": "k", "numThreads": 32, "sharedBytes": 0, "args": [], "hints": {"min":
                     -9223372036854775808, "max": 9223372036854775807, "minAsDouble": -9223372036854775808.0,
                     "two": 2.0}})"),
      "ptx");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].hint("min"), INT64_MIN);
  EXPECT_EQ(m.kernels[0].hint("max"), INT64_MAX);
  EXPECT_EQ(m.kernels[0].hint("minAsDouble"), INT64_MIN);
  EXPECT_EQ(m.kernels[0].hint("two"), 2);
  for (const char *big : {"9223372036854775807.1", "9223372036854775808", "1e19", "-1e19", "1e400"}) {
    std::string json = kernelJson(std::string(R"({"name": "k", "numThreads": 32, "sharedBytes": 0, "args": [],
                                                  "hints": {"big": )") + big + "}}");
    SCOPED_TRACE(json);
    EXPECT_THROW(CompiledModule::fromMetadataJson(json, "ptx"), Error);
  }
}

TEST(CompiledModuleTest, ErrorNamesTheBadField) {
  std::string json = kernelJson(R"({"name": "k", "numThreads": 128, "sharedBytes": 0, "args": ["ptr", "f64"]})");
  try {
    CompiledModule::fromMetadataJson(json, "ptx");
    FAIL() << "accepted unknown arg kind in " << json;
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("kernels[0].args[1]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f64"), std::string::npos) << msg;
  }
}

TEST(CompiledModuleTest, OptionTextSetsTheNamedOptions) {
  CompileOptions o;
  o.set("tma-fallback=0  strength-reduction=false opt-level=2");
  EXPECT_FALSE(o.tmaFallback);
  EXPECT_EQ(o.strengthReduction, false);
  EXPECT_EQ(o.optLevel, 2);
  o.set("tma-fallback=true");
  EXPECT_TRUE(o.tmaFallback);
  EXPECT_EQ(o.strengthReduction, false) << "an option the text does not name keeps its value";
  o.set("strength-reduction=target");
  EXPECT_FALSE(o.strengthReduction.has_value()) << "the target's choice";
  o.set("strength-reduction=0");
  o.set("");
  EXPECT_EQ(o.fingerprint(), [] {
    CompileOptions e;
    e.strengthReduction = false;
    e.optLevel = 2;
    return e.fingerprint();
  }());
  // A bad word fails with its name, and leaves every option as it was (the good words before it too).
  for (const char *bad : {"tma-fallback=2", "opt-level=4", "opt-level=", "slsr=0", "tma-fallback"}) {
    CompileOptions before = o;
    try {
      o.set(std::string("strength-reduction=1 ") + bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    EXPECT_EQ(o.fingerprint(), before.fingerprint()) << bad;
  }
}

TEST(CompiledModuleTest, FingerprintChangesWithEachOption) {
  CompileOptions base;
  CompileOptions otherArch = base;
  otherArch.arch = "sm_80";
  CompileOptions otherOpt = base;
  otherOpt.optLevel = 1;
  EXPECT_EQ(base.fingerprint(), CompileOptions().fingerprint()) << "fingerprint is not deterministic";
  EXPECT_NE(base.fingerprint(), otherArch.fingerprint()) << "arch change not reflected";
  EXPECT_NE(base.fingerprint(), otherOpt.fingerprint()) << "optLevel change not reflected";
  EXPECT_NE(otherArch.fingerprint(), otherOpt.fingerprint());
  EXPECT_NE(base.fingerprint().find(base.arch), std::string::npos) << base.fingerprint();
  // Settings that change the generated kernel: each is its own cache entry.
  std::vector<std::string> seen = {base.fingerprint()};
  auto expectNew = [&](const CompileOptions &o, const char *what) {
    for (const std::string &f : seen)
      EXPECT_NE(o.fingerprint(), f) << what << " not reflected (or equal to another setting): " << o.fingerprint();
    seen.push_back(o.fingerprint());
  };
  CompileOptions noFallback = base;
  noFallback.tmaFallback = false;
  expectNew(noFallback, "tmaFallback");
  CompileOptions noSlsr = base;
  noSlsr.strengthReduction = false;
  expectNew(noSlsr, "strengthReduction");
  CompileOptions slsr = base;
  slsr.strengthReduction = true; // the same kernel as unset on sm_90a, but asked for by name
  expectNew(slsr, "strengthReduction = true");
  for (const char *config : {"#attn.config<pair_instances>", "#attn.config<block_n = 32, pair_instances>"}) {
    CompileOptions given = base;
    given.attentionConfig = config;
    expectNew(given, config);
  }
  CompileOptions backward = base;
  backward.backward = true;
  expectNew(backward, "backward");
  backward.deterministic = true;
  expectNew(backward, "deterministic");
  backward.backwardBlockLists = true;
  expectNew(backward, "backwardBlockLists");
  // deterministic and backwardBlockLists alone change nothing (they are options of the backward):
  // the same entry.
  CompileOptions forward = base;
  forward.deterministic = true;
  forward.backwardBlockLists = true;
  EXPECT_EQ(forward.fingerprint(), base.fingerprint());
}

TEST(CompiledModuleTest, SupportedArchs) {
  for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"})
    EXPECT_TRUE(isSupportedArch(arch)) << "rejected " << arch;
  for (const char *arch : {"", "sm_75", "sm_100", "SM_90", "sm_90a ", "sm90", "compute_90"})
    EXPECT_FALSE(isSupportedArch(arch)) << "accepted '" << arch << "'";
}

TEST(CompiledModuleTest, ArgKindNamesAreDistinct) {
  std::set<std::string> names;
  for (ArgKind k : {ArgKind::Pointer, ArgKind::I32, ArgKind::I64, ArgKind::F32}) {
    ASSERT_NE(argKindName(k), nullptr);
    names.insert(argKindName(k));
  }
  EXPECT_EQ(names.size(), 4u);
}

TEST(CompiledModuleTest, FindKernel) {
  CompiledModule m = sampleModule();
  const KernelInfo *k = m.findKernel("no_args");
  ASSERT_NE(k, nullptr) << "no_args not found";
  EXPECT_EQ(k->numThreads, 32);
  EXPECT_EQ(m.findKernel("missing"), nullptr) << "found a kernel named 'missing'";
}
