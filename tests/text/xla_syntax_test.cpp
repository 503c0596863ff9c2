// Every module in tests/data/hlo_syntax (XLA's syntax: all opcode families, attribute forms,
// shape-less instructions, nested operands, comments, async and host-transfer ops) parses,
// verifies, and prints to text that parses back to the same text.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlo_text_test_util.h"
#include "ir/verifier.h"

namespace gspmd {
namespace {

std::vector<std::filesystem::path> SyntaxFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(GSPMD_TEST_DATA_DIR) + "/hlo_syntax"))
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(XlaSyntaxTest, EveryModuleParsesVerifiesAndRoundTrips) {
  std::vector<std::filesystem::path> files = SyntaxFiles();
  ASSERT_GE(files.size(), 15u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::string text = ReadFile(path);
    try {
      std::unique_ptr<Module> module = ParseModule(text, path.filename().string());
      VerifyModule(*module);
      testing::Canonical(text);
    } catch (const UserError& error) {
      ADD_FAILURE() << error.what();
    }
  }
}

}  // namespace
}  // namespace gspmd
