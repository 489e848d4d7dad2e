//===- ParseContext.h - Parsing Flare IR text with captured diagnostics -*- C++ -*-===//
//
// Private to libflare: the compiler, flare::attention and the float64 reference all parse IR text
// that a user handed over as a string, and all report its errors as a flare::Error carrying every
// diagnostic with its file:line:col.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_LIB_TARGET_PARSECONTEXT_H
#define FLARE_LIB_TARGET_PARSECONTEXT_H

#include "flare/Dialect/Attn/AttnDialect.h"
#include "flare/Error.h"

#include "../Support/InputLimits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace flare::detail {

/// Emits an error at the place where `source` nests deeper than kMaxIRNesting and returns false, or
/// returns true.
inline bool checkNesting(llvm::StringRef source, llvm::StringRef bufferName, mlir::MLIRContext *context) {
  std::optional<NestingExcess> excess = findNestingExcess(source, kMaxIRNesting, /*mlirSyntax=*/true);
  if (!excess)
    return true;
  mlir::emitError(mlir::FileLineColLoc::get(context, bufferName, excess->line, excess->column))
      << "the input nests brackets more than " << kMaxIRNesting << " levels deep here; Flare does not parse it";
  return false;
}

/// An MLIRContext with the dialects of `registry`, multithreading off (each compilation is small and
/// callers may compile from several threads, each with its own context), whose diagnostics are
/// captured as text.
class ParseContext {
public:
  explicit ParseContext(const mlir::DialectRegistry &registry, bool loadAllDialects = false) {
    context.appendDialectRegistry(registry);
    if (loadAllDialects)
      context.loadAllAvailableDialects();
  }

  /// Parses `source` (named `bufferName` in locations) as a module; null on failure, also for text
  /// nested deeper than kMaxIRNesting brackets (which would overflow the parser's stack). Callers
  /// parse on runOnLargeStack's thread.
  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &source, const std::string &bufferName) {
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
    if (!checkNesting(source, bufferName, &context))
      return nullptr;
    return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }

  /// Every diagnostic so far, one per line with its location.
  const std::string &diagnostics() const { return text; }

  /// Throws `what`, followed by the diagnostics when there are any.
  [[noreturn]] void fail(const std::string &what) const {
    throw Error(text.empty() ? what : what + ":\n" + text);
  }

  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};

private:
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream stream{text};
  mlir::SourceMgrDiagnosticHandler handler{sourceMgr, &context, stream};
};

/// The dialects an attention module may use outside the pipeline: attn, arith, math and func.
inline mlir::DialectRegistry attentionDialects() {
  mlir::DialectRegistry registry;
  registry.insert<attn::AttnDialect, mlir::arith::ArithDialect, mlir::math::MathDialect, mlir::func::FuncDialect>();
  return registry;
}

} // namespace flare::detail

#endif // FLARE_LIB_TARGET_PARSECONTEXT_H
