//===- ExampleSource.h - Read an example kernel in a unit test --*- C++ -*-===//
#ifndef FLARE_TEST_UNIT_EXAMPLESOURCE_H
#define FLARE_TEST_UNIT_EXAMPLESOURCE_H

#include "../ExampleFiles.h"

#include <string>

namespace flare::test {
/// The text of examples/<name>, beside the test's bin/ directory; throws MissingTestInput naming the
/// path when it cannot be read.
inline std::string readExample(const std::string &name) { return readTestInput(examplesBesideExecutable() / name); }
} // namespace flare::test

#endif // FLARE_TEST_UNIT_EXAMPLESOURCE_H
