//===- InputLimits.cpp - Bounds on the text Flare parses, and a stack for it ===//
#include "InputLimits.h"

#include <pthread.h>

#include <array>
#include <exception>

namespace flare::detail {

std::optional<NestingExcess> findNestingExcess(llvm::StringRef text, size_t limit, bool mlirSyntax) {
  // One counter per bracket kind: a closing bracket of one kind never cancels an opening one of
  // another, so a malformed text cannot hide its depth; the parser stops at the first mismatch anyway.
  std::array<size_t, 4> open{};
  unsigned line = 1, column = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      continue;
    }
    if (c == '"') { // a string literal, with backslash escapes, ends at its quote or the line
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i, ++column)
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n') {
          ++i;
          ++column;
        }
      ++column;
      if (i < n && text[i] == '\n') {
        ++line;
        column = 0;
      }
      continue;
    }
    if (mlirSyntax && c == '/' && i + 1 < n && text[i + 1] == '/') { // a comment, to the end of the line
      while (i + 1 < n && text[i + 1] != '\n')
        ++i;
      continue;
    }
    int kind = -1;
    bool opens = false;
    switch (c) {
    case '(': kind = 0, opens = true; break;
    case ')': kind = 0; break;
    case '[': kind = 1, opens = true; break;
    case ']': kind = 1; break;
    case '{': kind = 2, opens = true; break;
    case '}': kind = 2; break;
    case '<':
      if (mlirSyntax)
        kind = 3, opens = true;
      break;
    case '>':
      if (mlirSyntax && !(i > 0 && text[i - 1] == '-') && !(i + 1 < n && text[i + 1] == '='))
        kind = 3;
      break;
    default:
      break;
    }
    if (kind < 0)
      continue;
    size_t &count = open[static_cast<size_t>(kind)];
    if (!opens) {
      count -= count > 0;
      continue;
    }
    ++count;
    if (open[0] + open[1] + open[2] + open[3] > limit)
      return NestingExcess{line, column};
  }
  return std::nullopt;
}

namespace {
struct StackJob {
  llvm::function_ref<void()> body;
  std::exception_ptr error;
};

void *runJob(void *arg) {
  auto *job = static_cast<StackJob *>(arg);
  try {
    job->body();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}
} // namespace

void runOnLargeStack(llvm::function_ref<void()> body) {
  StackJob job{body, nullptr};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = pthread_attr_init(&attr) == 0;
  if (started) {
    started = pthread_attr_setstacksize(&attr, kCompilerStackBytes) == 0 &&
              pthread_create(&thread, &attr, runJob, &job) == 0;
    pthread_attr_destroy(&attr);
  }
  if (started)
    pthread_join(thread, nullptr);
  else // no thread to be had (a process at its limit): the caller's stack, still within the nesting bound
    runJob(&job);
  if (job.error)
    std::rethrow_exception(job.error);
}

} // namespace flare::detail
