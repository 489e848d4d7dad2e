//===- ExampleSource.h - Read an example kernel in a unit test --*- C++ -*-===//
#ifndef FLARE_TEST_UNIT_EXAMPLESOURCE_H
#define FLARE_TEST_UNIT_EXAMPLESOURCE_H

#include <fstream>
#include <sstream>
#include <string>

namespace flare::test {
/// The text of examples/<name>; empty when it cannot be read (the test then fails on its content).
inline std::string readExample(const std::string &name) {
  std::ifstream in(std::string(FLARE_EXAMPLES_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
} // namespace flare::test

#endif // FLARE_TEST_UNIT_EXAMPLESOURCE_H
