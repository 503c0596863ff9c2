// Runs every reference case's partitioned.hlo (XLA's per-device program) on the SPMD runtime,
// with shardings and global shapes from propagated.hlo, and compares with JAX's outputs.
#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/literal_compare.h"
#include "io/npy.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

struct CorpusCase {
  std::string name;  // "gspmd_megatron_mlp"
  fs::path dir;
};

void PrintTo(const CorpusCase& c, std::ostream* out) { *out << c.name; }

std::vector<CorpusCase> FindCases() {
  std::vector<CorpusCase> cases;
  const fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  for (const char* flavor : {"gspmd", "shardy"}) {
    const fs::path folder = root / flavor;
    if (!fs::is_directory(folder)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
      if (!fs::exists(entry.path() / "partitioned.hlo")) continue;
      cases.push_back({std::string(flavor) + "_" + entry.path().filename().string(), entry.path()});
    }
  }
  std::sort(cases.begin(), cases.end(), [](const CorpusCase& a, const CorpusCase& b) { return a.name < b.name; });
  return cases;
}

// path/<prefix>0.npy, path/<prefix>1.npy, ... while they exist.
std::vector<Literal> ReadNumbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Literal> values;
  for (int i = 0;; ++i) {
    fs::path file = dir / (prefix + std::to_string(i) + ".npy");
    if (!fs::exists(file)) break;
    values.push_back(ReadNpy(file.string()));
  }
  return values;
}

class SpmdCorpusTest : public testing::TestWithParam<CorpusCase> {};

TEST_P(SpmdCorpusTest, PartitionedProgramMatchesReference) {
  const CorpusCase& c = GetParam();
  std::unique_ptr<Module> partitioned = ParseModuleFile((c.dir / "partitioned.hlo").string());
  std::unique_ptr<Module> propagated = ParseModuleFile((c.dir / "propagated.hlo").string());
  SpmdRunOptions options = OptionsFromLikeModule(*partitioned, propagated.get());
  std::vector<Literal> inputs = ReadNumbered(c.dir, "in");
  std::vector<Literal> expected = ReadNumbered(c.dir, "out");
  std::vector<Literal> outputs = RunSpmd(*partitioned, inputs, options);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-4);
    EXPECT_TRUE(comparison.matches) << "output " << i << ": " << comparison.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SpmdCorpusTest, testing::ValuesIn(FindCases()),
                         [](const testing::TestParamInfo<CorpusCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gspmd
