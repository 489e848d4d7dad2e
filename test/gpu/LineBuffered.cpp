//===- LineBuffered.cpp - The GPU tests' progress lines reach a log as they are printed ===//
//
// The tests print a line per example and shape before compiling and launching it. Written to a file
// or a pipe, stdout is fully buffered, and a run stopped by a time limit (or a hung launch) would
// lose the lines that say where it was; line buffering keeps them.
//
//===----------------------------------------------------------------------===//
#include <cstdio>

namespace {
const int kLineBuffered = std::setvbuf(stdout, nullptr, _IOLBF, 0);
} // namespace
