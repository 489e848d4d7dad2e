//===- ExampleFilesTest.cpp - Tests find the example kernels beside bin/ ---===//
#include "flare/Error.h"

#include "ExampleSource.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <type_traits>

namespace {

using flare::test::MissingTestInput;

TEST(ExampleFiles, ExamplesSitBesideTheTestsBinDirectory) {
  const std::filesystem::path dir = flare::test::examplesBesideExecutable();
  EXPECT_EQ(dir.filename(), "examples");
  EXPECT_EQ(dir.parent_path(), flare::test::executableDir().parent_path());
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "tile" / "softmax.mlir")) << dir;
  EXPECT_NE(flare::test::readExample("tile/softmax.mlir").find("func.func"), std::string::npos);
}

TEST(ExampleFiles, AMissingInputThrowsNamingItsPath) {
  const std::string missing = "tile/no_such_kernel.mlir";
  try {
    flare::test::readExample(missing);
    FAIL() << "read a missing example";
  } catch (const MissingTestInput &e) {
    EXPECT_NE(std::string(e.what()).find((flare::test::examplesBesideExecutable() / missing).string()),
              std::string::npos)
        << e.what();
  }
  // A directory is no input either.
  EXPECT_THROW(flare::test::readExample("tile"), MissingTestInput);
}

// Tests that expect flare::Error from the code under test must not pass on a missing input.
static_assert(!std::is_base_of<flare::Error, MissingTestInput>::value, "a missing input is not a flare::Error");

} // namespace
