// Every reference case's stablehlo.mlir (both exports, GSPMD and Shardy): the converted program
// reproduces JAX's outputs on one device (shard_map programs on their devices) and after
// propagation, partitioning and running on the case's devices; its communication is no more
// than XLA's partitioned.hlo; and its printed HLO parses again to the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "analysis/comm_report.h"
#include "frontend/stablehlo_test_util.h"
#include "io/npy.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"

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
      if (fs::exists(entry.path() / "stablehlo.mlir"))
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

bool HasManualRegion(const Module& module) {
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == Opcode::kCustomCall &&
          (instruction->custom_call_target == "SPMDFullToShardShape" ||
           instruction->custom_call_target.find("GlobalToLocalShape") != std::string::npos))
        return true;
  return false;
}

void ExpectOutputs(const std::vector<Literal>& outputs, const std::vector<Literal>& expected, const std::string& what) {
  ASSERT_EQ(outputs.size(), expected.size()) << what;
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-4);
    EXPECT_TRUE(comparison.matches) << what << " out" << i << ": " << comparison.message;
  }
}

class StableHloCorpusTest : public testing::TestWithParam<CorpusCase> {};

TEST_P(StableHloCorpusTest, ConvertedProgramMatchesJaxAndXla) {
  const CorpusCase& c = GetParam();
  const std::string file = (c.dir / "stablehlo.mlir").string();
  std::unique_ptr<Module> module = ParseStableHloFile(file);
  std::vector<Literal> inputs = ReadNumbered(c.dir, "in");
  std::vector<Literal> expected = ReadNumbered(c.dir, "out");

  // One device (the reference interpreter), and the printed HLO read back.
  const bool manual = HasManualRegion(*module);
  if (!manual) {
    ExpectOutputs(FlattenTuple(EvaluateModule(*module, inputs)), expected, "eval");
    std::unique_ptr<Module> reparsed = ParseModule(PrintModule(*module), c.name + ".hlo");
    ExpectOutputs(FlattenTuple(EvaluateModule(*reparsed, inputs)), expected, "eval of the printed HLO");
  }

  // Propagated, partitioned and run on the case's devices.
  PropagateShardings(*module);
  PartitionResult partitioned = PartitionModule(*module);
  for (const std::string& warning : partitioned.warnings) ADD_FAILURE() << c.name << ": " << warning;
  SpmdRunOptions options = OptionsFromLikeModule(*partitioned.module, module.get());
  ExpectOutputs(RunSpmd(*partitioned.module, inputs, options), expected, "run");

  std::unique_ptr<Module> xla = ParseModuleFile((c.dir / "partitioned.hlo").string());
  double ours = AnalyzeCommunication(*partitioned.module).comm_bytes_per_device;
  double theirs = AnalyzeCommunication(*xla).comm_bytes_per_device;
  std::cout << "[ comm     ] " << c.name << " ours=" << ours << " xla=" << theirs << "\n";
  EXPECT_LE(ours, theirs + 1e-6) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, StableHloCorpusTest, testing::ValuesIn(FindCases()),
                         [](const testing::TestParamInfo<CorpusCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gspmd
