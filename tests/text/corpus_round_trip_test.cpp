// Round trips of every reference HLO file: parse -> print -> parse -> print is stable, keeps
// every instruction, and XLA's own printed files (propagated, partitioned) come back
// byte-identical.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "hlo_text_test_util.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<fs::path> CorpusFiles() {
  std::vector<fs::path> files;
  fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool PrintedByXla(const fs::path& path) {
  return path.filename() == "partitioned.hlo" || path.filename() == "propagated.hlo";
}

void CheckRoundTrip(const fs::path& path) {
  SCOPED_TRACE(path.string());
  std::string text = ReadFile(path);
  std::unique_ptr<Module> first = ParseModule(text, path.string());
  std::string printed = PrintModule(*first);
  std::unique_ptr<Module> second = ParseModule(printed, path.string() + " (printed)");
  EXPECT_EQ(PrintModule(*second), printed);
  EXPECT_EQ(testing::CountInstructions(*second), testing::CountInstructions(*first));
  if (PrintedByXla(path)) EXPECT_EQ(printed, text) << "XLA's text does not print back identically";
}

TEST(CorpusRoundTripTest, EveryCorpusFileRoundTrips) {
  std::vector<fs::path> files = CorpusFiles();
  ASSERT_GE(files.size(), 40u);
  for (const fs::path& path : files) CheckRoundTrip(path);
}

TEST(CorpusRoundTripTest, TupleReferencesStayInline) {
  // while_loops writes %arg_tuple.1#0 operands; they become get-tuple-elements and print
  // back inline.
  fs::path path = fs::path(GSPMD_TEST_DATA_DIR) / "corpus/gspmd/while_loops/propagated.hlo";
  std::unique_ptr<Module> module = ParseModuleFile(path.string());
  const Instruction& add = testing::Find(*module, "add.1");
  const Instruction* gte = add.operand(0);
  EXPECT_EQ(gte->opcode(), Opcode::kGetTupleElement);
  EXPECT_TRUE(gte->printed_as_tuple_ref);
  EXPECT_EQ(gte->tuple_index, 0);
  EXPECT_EQ(gte->operand(0)->name(), "arg_tuple.1");
  EXPECT_NE(PrintInstruction(add).find("add(%arg_tuple.1#0, %constant.3)"), std::string::npos);
}

TEST(CorpusRoundTripTest, BenchmarkModulesRoundTrip) {
  fs::path dir = fs::path(GSPMD_TEST_DATA_DIR) / "../../benchmarks/data/transformer_train_32l";
  if (!fs::exists(dir)) GTEST_SKIP() << "no benchmark data at " << dir;
  for (const char* name : {"pre.hlo", "propagated.hlo", "partitioned.hlo"}) CheckRoundTrip(dir / name);
}

}  // namespace
}  // namespace gspmd
