// Partitions every reference case's propagated.hlo with our partitioner, runs the result on
// the case's device count, and compares with JAX's outputs; also compares communication with
// XLA's own partitioned.hlo.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "io/npy.h"
#include "partitioner/partitioner.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

struct CorpusCase {
  std::string name;
  fs::path dir;
};

void PrintTo(const CorpusCase& c, std::ostream* out) { *out << c.name; }

std::vector<CorpusCase> FindCases() {
  std::vector<CorpusCase> cases;
  const fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  for (const char* flavor : {"gspmd", "shardy"}) {
    if (!fs::is_directory(root / flavor)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(root / flavor))
      if (fs::exists(entry.path() / "propagated.hlo"))
        cases.push_back({std::string(flavor) + "_" + entry.path().filename().string(), entry.path()});
  }
  std::sort(cases.begin(), cases.end(), [](const CorpusCase& a, const CorpusCase& b) { return a.name < b.name; });
  return cases;
}

std::vector<Literal> ReadNumbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Literal> values;
  for (int i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".npy")); ++i)
    values.push_back(ReadNpy((dir / (prefix + std::to_string(i) + ".npy")).string()));
  return values;
}

class PartitionerCorpusTest : public testing::TestWithParam<CorpusCase> {};

TEST_P(PartitionerCorpusTest, PartitionedProgramMatchesReferenceAndXlaCommunication) {
  const CorpusCase& c = GetParam();
  std::unique_ptr<Module> propagated = ParseModuleFile((c.dir / "propagated.hlo").string());
  PartitionResult result = PartitionModule(*propagated);
  std::string text = PrintModule(*result.module);
  for (const std::string& warning : result.warnings) ADD_FAILURE() << c.name << ": " << warning;
  // The printed program parses again (what `gspmd partition` writes is valid input).
  std::unique_ptr<Module> reparsed = ParseModule(text, c.name + "/ours.hlo");

  SpmdRunOptions options = OptionsFromLikeModule(*reparsed, propagated.get());
  std::vector<Literal> inputs = ReadNumbered(c.dir, "in");
  std::vector<Literal> expected = ReadNumbered(c.dir, "out");
  std::vector<Literal> outputs;
  try {
    outputs = RunSpmd(*reparsed, inputs, options);
  } catch (const std::exception& error) {
    FAIL() << c.name << ": " << error.what() << "\n" << text;
  }
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-4);
    EXPECT_TRUE(comparison.matches) << c.name << " out" << i << ": " << comparison.message << "\n" << text;
  }

  std::unique_ptr<Module> xla = ParseModuleFile((c.dir / "partitioned.hlo").string());
  double ours = AnalyzeCommunication(*reparsed).comm_bytes_per_device;
  double theirs = AnalyzeCommunication(*xla).comm_bytes_per_device;
  std::cout << "[ comm     ] " << c.name << " ours=" << ours << " xla=" << theirs
            << " ratio=" << (theirs > 0 ? ours / theirs : (ours > 0 ? 999.0 : 1.0)) << "\n";
  EXPECT_LE(ours, theirs + 1e-6) << c.name << "\n" << text;
}

INSTANTIATE_TEST_SUITE_P(Corpus, PartitionerCorpusTest, testing::ValuesIn(FindCases()),
                         [](const testing::TestParamInfo<CorpusCase>& info) { return info.param.name; });

// Issue 26: every corpus program partitioned with every supported all-gather before a dot
// turned into a windowed loop still gives JAX's outputs (same tolerance as above).
class PartitionerCorpusWindowedTest : public testing::TestWithParam<CorpusCase> {};

TEST_P(PartitionerCorpusWindowedTest, AlwaysWindowedKeepsJaxOutputs) {
  const CorpusCase& c = GetParam();
  std::unique_ptr<Module> propagated = ParseModuleFile((c.dir / "propagated.hlo").string());
  PartitionOptions partition_options;
  partition_options.windowed_einsum.mode = WindowedEinsumMode::kAlways;
  PartitionResult result = PartitionModule(*propagated, partition_options);
  std::string text = PrintModule(*result.module);
  std::unique_ptr<Module> reparsed = ParseModule(text, c.name + "/windowed.hlo");
  SpmdRunOptions options = OptionsFromLikeModule(*reparsed, propagated.get());
  std::vector<Literal> inputs = ReadNumbered(c.dir, "in");
  std::vector<Literal> expected = ReadNumbered(c.dir, "out");
  std::vector<Literal> outputs;
  try {
    outputs = RunSpmd(*reparsed, inputs, options);
  } catch (const std::exception& error) {
    FAIL() << c.name << ": " << error.what() << "\n" << text;
  }
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-4);
    EXPECT_TRUE(comparison.matches) << c.name << " out" << i << ": " << comparison.message << "\n" << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, PartitionerCorpusWindowedTest, testing::ValuesIn(FindCases()),
                         [](const testing::TestParamInfo<CorpusCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gspmd
