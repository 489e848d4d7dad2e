//===- WarmupList.cpp - The text format of warm-up lists (flare-warmup's input) -===//
//
// One line per class of attention calls, `key=value` words, `#` comments; a comma-separated value
// makes the line stand for every combination (see parseWarmupList in flare/Warmup.h for the keys).
// Every error names its line; all of a list's errors are reported at once.
//
//===----------------------------------------------------------------------===//
#include "flare/Warmup.h"

#include "flare/Compiler/Compiler.h"
#include "flare/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace flare {
namespace {

/// A line may stand for at most this many requests (a typo in a list should not mean millions).
constexpr size_t kMaxRequestsPerLine = 4096;

std::optional<int64_t> parseInt(llvm::StringRef text) {
  int64_t value = 0;
  if (text.empty() || !llvm::to_integer(text, value, 10))
    return std::nullopt;
  return value;
}

std::optional<float> parseFloat(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  const float value = std::strtof(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<DType> parseDType(llvm::StringRef text) {
  for (DType d : {DType::BF16, DType::F16, DType::F32, DType::I32, DType::I64})
    if (text == dtypeName(d))
      return d;
  return std::nullopt;
}

/// Sets one key of a request from one value; returns what is wrong with the value, or "".
using Setter = std::function<std::string(WarmupRequest &, const std::string &)>;

Setter positive(int64_t WarmupRequest::*field) {
  return [field](WarmupRequest &r, const std::string &v) -> std::string {
    std::optional<int64_t> n = parseInt(v);
    if (!n || *n < 1)
      return "expected a positive integer";
    r.*field = *n;
    return "";
  };
}

Setter flag(bool AttentionOptions::*field) {
  return [field](WarmupRequest &r, const std::string &v) -> std::string {
    if (v != "0" && v != "1")
      return "expected 0 or 1";
    r.options.*field = v == "1";
    return "";
  };
}

Setter window(int64_t AttentionOptions::*field) {
  return [field](WarmupRequest &r, const std::string &v) -> std::string {
    std::optional<int64_t> n = parseInt(v);
    if (!n || *n < -1)
      return "expected a number of keys, or -1 (unbounded)";
    r.options.*field = *n;
    return "";
  };
}

Setter nonNegativeFloat(float AttentionOptions::*field) {
  return [field](WarmupRequest &r, const std::string &v) -> std::string {
    std::optional<float> x = parseFloat(v);
    if (!x || *x < 0.f)
      return "expected a finite number >= 0";
    r.options.*field = *x;
    return "";
  };
}

Setter tileSize(int AttentionTileConfig::*field) {
  return [field](WarmupRequest &r, const std::string &v) -> std::string {
    std::optional<int64_t> n = parseInt(v);
    if (!n || *n < 0 || *n > 1024)
      return "expected 0 (the configured choice) or a size";
    r.options.tile.*field = static_cast<int>(*n);
    return "";
  };
}

Setter tileSwitch(int AttentionTileConfig::*field) {
  return [field](WarmupRequest &r, const std::string &v) -> std::string {
    if (v != "-1" && v != "0" && v != "1")
      return "expected 1 (on), -1 (off) or 0 (the configured choice)";
    r.options.tile.*field = v == "1" ? 1 : v == "-1" ? -1 : 0;
    return "";
  };
}

/// The keys of a line and how each sets a request. `module` is read by the caller (it names a file).
const std::map<std::string, Setter> &setters() {
  static const std::map<std::string, Setter> table = {
      {"dtype",
       [](WarmupRequest &r, const std::string &v) -> std::string {
         if (v != "bf16" && v != "f16")
           return "expected bf16 or f16";
         r.dtype = *parseDType(v);
         return "";
       }},
      {"batch", positive(&WarmupRequest::batch)},
      {"heads", positive(&WarmupRequest::headsQ)},
      {"kv_heads", positive(&WarmupRequest::headsKV)},
      {"seq",
       [](WarmupRequest &r, const std::string &v) -> std::string {
         std::optional<int64_t> n = parseInt(v);
         if (!n || *n < 1)
           return "expected a positive integer";
         r.seqQ = r.seqKV = *n;
         return "";
       }},
      {"seq_q", positive(&WarmupRequest::seqQ)},
      {"seq_kv", positive(&WarmupRequest::seqKV)},
      {"head_dim", positive(&WarmupRequest::headDim)},
      {"causal", flag(&AttentionOptions::causal)},
      {"align",
       [](WarmupRequest &r, const std::string &v) -> std::string {
         if (v != "top_left" && v != "bottom_right")
           return "expected top_left or bottom_right";
         r.options.alignment = v == "top_left" ? CausalAlignment::TopLeft : CausalAlignment::BottomRight;
         return "";
       }},
      {"window_left", window(&AttentionOptions::windowLeft)},
      {"window_right", window(&AttentionOptions::windowRight)},
      {"softcap", nonNegativeFloat(&AttentionOptions::softcap)},
      {"scale", nonNegativeFloat(&AttentionOptions::scale)},
      {"lse",
       [](WarmupRequest &r, const std::string &v) -> std::string {
         if (v != "0" && v != "1")
           return "expected 0 or 1";
         r.lse = v == "1";
         return "";
       }},
      {"aux",
       [](WarmupRequest &r, const std::string &v) -> std::string {
         auto [type, length] = llvm::StringRef(v).split(':');
         std::optional<DType> dtype = parseDType(type);
         std::optional<int64_t> n = parseInt(length);
         if (!dtype || !n || *n < 1)
           return "expected dtype:length, e.g. i32:4096";
         r.aux.push_back({*dtype, *n});
         return "";
       }},
      {"arch",
       [](WarmupRequest &r, const std::string &v) -> std::string {
         if (!isSupportedArch(v))
           return "expected sm_80, sm_86, sm_89, sm_90 or sm_90a";
         r.options.arch = v;
         return "";
       }},
      {"bm", tileSize(&AttentionTileConfig::blockM)},
      {"bn", tileSize(&AttentionTileConfig::blockN)},
      {"warps", tileSize(&AttentionTileConfig::numWarps)},
      {"overlap", tileSwitch(&AttentionTileConfig::overlap)},
      {"pingpong", tileSwitch(&AttentionTileConfig::pingPong)},
      {"producer", tileSwitch(&AttentionTileConfig::producer)},
      {"persistent", tileSwitch(&AttentionTileConfig::persistent)},
      {"autotune", flag(&AttentionOptions::autotune)},
  };
  return table;
}

std::string knownKeys() {
  std::string s = "module";
  for (const auto &[key, setter] : setters())
    s += ", " + key;
  return s;
}

/// One key of a line with its values (one, or a comma-separated list).
struct Field {
  std::string key;
  std::vector<std::string> values;
};

/// The requests of one line, or its errors (appended to `errors`, without the location).
std::vector<WarmupRequest> parseLine(llvm::StringRef line, const std::string &dir, const std::string &label,
                                     std::vector<std::string> &errors) {
  llvm::SmallVector<llvm::StringRef> words;
  line.split(words, ' ', -1, /*KeepEmpty=*/false);
  if (words.empty())
    return {}; // a blank or comment line
  std::vector<Field> fields;
  std::set<std::string> seen;
  std::string moduleText;
  const size_t errorsBefore = errors.size();
  for (llvm::StringRef word : words) {
    auto [key, value] = word.split('=');
    if (key.empty() || !word.contains('=')) {
      errors.push_back("expected key=value, got '" + word.str() + "'");
      continue;
    }
    if (value.empty()) {
      errors.push_back("'" + key.str() + "' has no value");
      continue;
    }
    if (key != "aux" && !seen.insert(key.str()).second) {
      errors.push_back("'" + key.str() + "' is given twice");
      continue;
    }
    if (key == "module") {
      llvm::SmallString<256> path;
      if (llvm::sys::path::is_relative(value))
        path = dir;
      llvm::sys::path::append(path, value);
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
      if (!file)
        errors.push_back("cannot read module file '" + std::string(path) + "': " + file.getError().message());
      else
        moduleText = (*file)->getBuffer().str();
      continue;
    }
    auto setter = setters().find(key.str());
    if (setter == setters().end()) {
      errors.push_back("unknown key '" + key.str() + "' (expected one of: " + knownKeys() + ")");
      continue;
    }
    Field field{key.str(), {}};
    llvm::SmallVector<llvm::StringRef> values;
    // aux's value holds no list: one aux=dtype:length word per tensor.
    if (key == "aux")
      values.push_back(value);
    else
      value.split(values, ',', -1, /*KeepEmpty=*/true);
    for (llvm::StringRef v : values) {
      WarmupRequest scratch;
      std::string why = v.empty() ? "empty value in the list" : setter->second(scratch, v.str());
      if (!why.empty())
        errors.push_back("bad " + key.str() + "='" + value.str() + "': " + why);
      field.values.push_back(v.str());
    }
    fields.push_back(std::move(field));
  }
  if (errors.size() != errorsBefore)
    return {};
  if (!seen.count("heads"))
    errors.push_back("missing heads=");
  if (!seen.count("head_dim"))
    errors.push_back("missing head_dim=");
  const bool seq = seen.count("seq"), seqQ = seen.count("seq_q"), seqKV = seen.count("seq_kv");
  if (seq && (seqQ || seqKV))
    errors.push_back("give seq= or seq_q= and seq_kv=, not both");
  else if (!seq && !(seqQ && seqKV))
    errors.push_back(seqQ || seqKV ? "give both seq_q= and seq_kv= (or seq= for both)"
                                   : "missing seq= (or seq_q= and seq_kv=)");
  size_t count = 1;
  for (const Field &f : fields)
    if ((count *= f.values.size()) > kMaxRequestsPerLine) {
      errors.push_back("the line stands for more than " + std::to_string(kMaxRequestsPerLine) + " requests");
      break;
    }
  if (errors.size() != errorsBefore)
    return {};

  std::vector<WarmupRequest> requests;
  std::set<std::string> planErrors;
  for (size_t combination = 0; combination < count; ++combination) {
    WarmupRequest r;
    r.label = label;
    r.options.module = moduleText;
    size_t rest = combination;
    for (size_t i = fields.size(); i-- > 0;) { // the last field varies fastest
      const Field &f = fields[i];
      (void)setters().at(f.key)(r, f.values[rest % f.values.size()]);
      rest /= f.values.size();
    }
    if (!seen.count("kv_heads"))
      r.headsKV = r.headsQ;
    try {
      WarmupRequest unlabelled = r;
      unlabelled.label.clear();
      planWarmup(unlabelled);
    } catch (const Error &e) {
      // Once per distinct message: a bad value in a list fails every combination alike.
      if (planErrors.insert(e.what()).second)
        errors.push_back(std::string(e.what()) + " (" + r.text() + ")");
      continue;
    }
    requests.push_back(std::move(r));
  }
  return requests;
}

} // namespace

std::vector<WarmupRequest> parseWarmupList(const std::string &text, const std::string &name, const std::string &dir) {
  std::vector<WarmupRequest> requests;
  std::vector<std::string> errors;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].split('#').first.rtrim("\r");
    std::string spaced = line.str();
    for (char &c : spaced)
      if (c == '\t' || c == '\r')
        c = ' ';
    const std::string label = name + ":" + std::to_string(i + 1);
    std::vector<std::string> lineErrors;
    std::vector<WarmupRequest> lineRequests = parseLine(spaced, dir, label, lineErrors);
    for (const std::string &e : lineErrors)
      errors.push_back(label + ": error: " + e);
    for (WarmupRequest &r : lineRequests)
      requests.push_back(std::move(r));
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string &e : errors)
      message += (message.empty() ? "" : "\n") + e;
    throw Error(message);
  }
  return requests;
}

} // namespace flare
