//===- ExampleFiles.h - Find and read the example kernels from a test -*- C++ -*-===//
//
// Tests read the example kernels at <directory of the test executable>/../examples: bin/ and examples/
// are siblings in the GPU bundle (scripts/bundle.sh), and the build tree links build/examples to the
// sources (examples/CMakeLists.txt), so no test depends on where the sources were built. A file that
// cannot be read throws MissingTestInput naming its path: a test never runs on an empty input.
//
//===----------------------------------------------------------------------===//
#ifndef FLARE_TEST_EXAMPLEFILES_H
#define FLARE_TEST_EXAMPLEFILES_H

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace flare::test {

/// A test input that cannot be read. Deliberately not a flare::Error, so that a test expecting
/// flare::Error from the code under test cannot mistake a missing input for it.
class MissingTestInput : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The directory of the running executable (Linux: /proc/self/exe, symbolic links resolved).
inline std::filesystem::path executableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw MissingTestInput("cannot locate the running executable (/proc/self/exe): " + ec.message());
  return exe.parent_path();
}

/// <directory of the executable>/../examples.
inline std::filesystem::path examplesBesideExecutable() { return executableDir().parent_path() / "examples"; }

/// The whole text of the file at `path`; throws MissingTestInput naming the path when it is not a
/// readable file.
inline std::string readTestInput(const std::filesystem::path &path) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path, ec) || !in)
    throw MissingTestInput("cannot read test input " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw MissingTestInput("error while reading test input " + path.string());
  return text.str();
}

} // namespace flare::test

#endif // FLARE_TEST_EXAMPLEFILES_H
