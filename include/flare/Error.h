//===- Error.h - The error type of Flare's C++ API --------------*- C++ -*-===//
//
// Every failure that reaches a user of the C++ API (the compiler entry points and the runtime) is a
// flare::Error: a message that says what went wrong and where, plus, for driver failures, the CUresult
// code and its name (for example CUDA_ERROR_NO_DEVICE).
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_ERROR_H
#define FLARE_ERROR_H

#include <stdexcept>
#include <string>

namespace flare {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message, int cuResult = 0, std::string cuName = {})
      : std::runtime_error(message), cuResult_(cuResult), cuName_(std::move(cuName)) {}

  /// The CUresult of the failing driver call, or 0 when the error did not come from the driver.
  int cuResult() const { return cuResult_; }
  /// The CUresult's name (e.g. "CUDA_ERROR_INVALID_PTX"), empty when cuResult() is 0.
  const std::string &cuName() const { return cuName_; }

private:
  int cuResult_;
  std::string cuName_;
};

} // namespace flare

#endif // FLARE_ERROR_H
