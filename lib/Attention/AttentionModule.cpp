//===- AttentionModule.cpp - The attn.attention modules of flare::attention ---===//
//
// The module the built-in options describe (attentionModule), and what a custom module fixes
// (detail::moduleFacts), parsed once per text.
//
//===----------------------------------------------------------------------===//
#include "AttentionInternal.h"
#include "ModuleFacts.h"

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Error.h"

#include "../Target/ParseContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <sstream>
#include <unordered_map>

namespace flare {
using detail::ModuleFacts;

namespace {

using detail::fail;

std::string typeText(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// Parses a custom attention module and reads what the launch must agree with.
ModuleFacts inspectModuleOnThisStack(const std::string &text) {
  detail::ParseContext pc(detail::attentionDialects());
  mlir::OwningOpRef<mlir::ModuleOp> module = pc.parse(text, "<module>");
  if (!module)
    pc.fail("flare::attention: the custom module does not parse");
  std::vector<attn::AttentionOp> ops;
  module->walk([&](attn::AttentionOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    fail("the custom module must hold exactly one attn.attention, found " + std::to_string(ops.size()));
  attn::AttentionOp op = ops.front();
  auto func = op->getParentOfType<mlir::func::FuncOp>();
  if (!func)
    fail("the custom module's attn.attention must sit in a func.func");
  ModuleFacts facts;
  facts.funcName = func.getName().str();
  auto q = mlir::cast<mlir::RankedTensorType>(op.getQuery().getType());
  auto k = mlir::cast<mlir::RankedTensorType>(op.getKey().getType());
  facts.elemType = typeText(q.getElementType());
  facts.headDim = q.getDimSize(3);
  facts.headDimV = mlir::cast<mlir::RankedTensorType>(op.getValue().getType()).getDimSize(3);
  facts.hasLse = static_cast<bool>(op.getLse());
  for (mlir::Value aux : op.getAux())
    facts.auxTypes.push_back(typeText(mlir::cast<mlir::RankedTensorType>(aux.getType()).getElementType()));
  for (int64_t d : q.getShape())
    facts.qShape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  for (int64_t d : k.getShape())
    facts.kShape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  facts.config = attn::AttentionFacts::of(op);
  facts.kvLens = static_cast<bool>(op.getKvLens());
  facts.varlen = op.isVarlen();
  return facts;
}

/// inspectModuleOnThisStack on a stack large enough for any text the parser accepts.
ModuleFacts inspectModule(const std::string &text) {
  ModuleFacts facts;
  detail::runOnLargeStack([&] { facts = inspectModuleOnThisStack(text); });
  return facts;
}

std::string floatText(double v) {
  std::ostringstream os;
  os.precision(9);
  os << std::scientific << v;
  return os.str();
}

} // namespace

/// inspectModule, once per distinct module text: attention() is called per step of a model, and
/// parsing the module every time would cost more than the launch.
const ModuleFacts &detail::moduleFacts(const std::string &text) {
  static std::mutex mutex;
  static std::unordered_map<std::string, ModuleFacts> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(text);
  if (it == known.end())
    it = known.emplace(text, inspectModule(text)).first; // a module that fails to parse is not kept
  return it->second;
}

std::string attentionModule(const AttentionOptions &options, DType dtype, int64_t headDim, int64_t pageSize,
                            int64_t headDimV) {
  const std::string elem = dtypeName(dtype);
  auto rows = [&](int64_t d) { return "tensor<?x?x?x" + std::to_string(d) + "x" + elem + ">"; };
  // A paged cache's K and V: [num_pages, Hkv, page_size, D] with the page size static.
  auto cache = [&](int64_t d) {
    return pageSize ? "tensor<?x?x" + std::to_string(pageSize) + "x" + std::to_string(d) + "x" + elem + ">" : rows(d);
  };
  const int64_t dv = headDimV ? headDimV : headDim;
  const std::string t = rows(headDim), kt = cache(headDim), vt = cache(dv), o = rows(dv);
  const bool lse = options.lse.data != 0;
  const bool lens = options.kvLens.data != 0;
  const bool varlen = options.cuSeqlensQ.data != 0;
  const std::string results = lse ? "(" + o + ", tensor<?x?x?xf32>)" : o;
  std::ostringstream os;
  os << "func.func @flare_attention(%q: " << t << ", %k: " << kt << ", %v: " << vt
     << (lens ? ", %lens: tensor<?xi32>" : "") << (pageSize ? ", %pages: tensor<?x?xi32>" : "")
     << (varlen ? ", %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>" : "") << ") -> " << results << " {\n";
  os << "  " << (lse ? "%o, %lse" : "%o") << " = attn.attention %q, %k, %v";
  if (lens)
    os << " kv_lens(%lens : tensor<?xi32>)";
  if (pageSize)
    os << " page_table(%pages : tensor<?x?xi32>)";
  if (varlen)
    os << " cu_seqlens(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)";
  if (options.scale > 0.f)
    os << " attributes {scale = " << floatText(options.scale) << " : f32}";
  os << "\n";
  if (options.softcap > 0.f) {
    os << "    score_mod {\n"
       << "    ^bb0(%s: f32, %b: index, %h: index, %qi: index, %kv: index):\n"
       << "      %cap = arith.constant " << floatText(options.softcap) << " : f32\n"
       << "      %x = arith.divf %s, %cap : f32\n"
       << "      %t = math.tanh %x : f32\n"
       << "      %y = arith.mulf %t, %cap : f32\n"
       << "      attn.yield %y : f32\n"
       << "    }\n";
  }
  // Mask: keys around the diagonal d(i) = i (+ Skv - Sq when aligned bottom-right).
  std::vector<std::string> conditions;
  std::ostringstream mask;
  const bool bottomRight = options.alignment == CausalAlignment::BottomRight;
  const int64_t right = options.causal ? 0 : detail::windowSide(options.windowRight); // causal: none right of the diagonal
  const int64_t left = detail::windowSide(options.windowLeft);
  if (right >= 0 || left >= 0) {
    mask << "    ^bb0(%b: index, %h: index, %qi: index, %kv: index):\n";
    std::string diag = "%qi";
    if (bottomRight) {
      mask << "      %nkv = attn.kv_len\n      %nq = attn.q_len\n"
           << "      %shift = arith.subi %nkv, %nq : index\n"
           << "      %diag = arith.addi %qi, %shift : index\n";
      diag = "%diag";
    }
    if (right >= 0) {
      mask << "      %right = arith.constant " << right << " : index\n"
           << "      %hi = arith.addi " << diag << ", %right : index\n"
           << "      %below = arith.cmpi sle, %kv, %hi : index\n";
      conditions.push_back("%below");
    }
    if (left >= 0) {
      mask << "      %left = arith.constant " << left << " : index\n"
           << "      %lo = arith.subi " << diag << ", %left : index\n"
           << "      %above = arith.cmpi sge, %kv, %lo : index\n";
      conditions.push_back("%above");
    }
    std::string keep = conditions[0];
    if (conditions.size() == 2) {
      mask << "      %keep = arith.andi %below, %above : i1\n";
      keep = "%keep";
    }
    mask << "      attn.yield " << keep << " : i1\n";
    os << "    mask_mod {\n" << mask.str() << "    }\n";
  }
  os << "    : " << t << ", " << kt << ", " << vt << " -> " << o << (lse ? ", tensor<?x?x?xf32>" : "") << "\n";
  os << "  return " << (lse ? "%o, %lse : " + o + ", tensor<?x?x?xf32>" : "%o : " + o) << "\n}\n";
  return os.str();
}

} // namespace flare
