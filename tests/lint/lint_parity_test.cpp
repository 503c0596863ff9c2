// `gspmd lint` of a program's StableHLO export and of its HLO text find the same things (kinds,
// counts, bytes; names may differ), on every corpus case of both exports; and a contracting-split
// input its dot needs whole is a conflict even when only a bigger annotation avoids the gather.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

using nlohmann::json;

class LintParityTest : public CliTest {
 protected:
  // (check, bytes per device) of every finding, sorted.
  std::vector<std::pair<std::string, long long>> Findings(const fs::path& file) {
    CommandResult result = Gspmd({"lint", "--no-search", file.string(), "--json"});
    EXPECT_EQ(result.exit_code, 0) << file << ": " << result.err;
    std::vector<std::pair<std::string, long long>> findings;
    if (result.exit_code != 0) return findings;
    const json report = json::parse(result.out);
    for (const json& finding : report["findings"])
      findings.emplace_back(finding["check"].get<std::string>(),
                            std::llround(finding["bytes_per_device"].get<double>()));
    std::sort(findings.begin(), findings.end());
    return findings;
  }
};

std::string Describe(const std::vector<std::pair<std::string, long long>>& findings) {
  std::string text;
  for (const auto& [check, bytes] : findings) text += "[" + check + "] " + std::to_string(bytes) + " bytes; ";
  return text.empty() ? "none" : text;
}

TEST_F(LintParityTest, StableHloAndHloTextOfEveryCorpusCaseGiveTheSameFindings) {
  int cases = 0;
  for (const char* exporter : {"gspmd", "shardy"}) {
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(kCorpusRoot / exporter)) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      if (!fs::exists(dir / "pre.hlo") || !fs::exists(dir / "stablehlo.mlir")) continue;
      const auto hlo = Findings(dir / "pre.hlo");
      const auto mlir = Findings(dir / "stablehlo.mlir");
      EXPECT_EQ(hlo, mlir) << exporter << "/" << dir.filename().string() << ": pre.hlo " << Describe(hlo)
                           << "\n  stablehlo.mlir " << Describe(mlir);
      ++cases;
    }
  }
  EXPECT_GE(cases, 17);
}

// The cases the StableHLO path used to miss: each has a conflict in both forms.
TEST_F(LintParityTest, ConflictsFoundThroughStableHlo) {
  for (const char* name : {"embed_vocab_sharded", "moe_top2_alltoall", "reshard_variety", "concat_pad_slice_roll"}) {
    const auto mlir = Findings(kCorpus / name / "stablehlo.mlir");
    EXPECT_TRUE(std::any_of(mlir.begin(), mlir.end(), [](const auto& f) { return f.first == "conflict"; }))
        << name << ": " << Describe(mlir);
  }
}

// x is split over its contracting dim, w over its output dim: the dot needs x whole, and no
// annotation of x's size avoids gathering it. Reported with both annotations and the cost, and
// the fix that holds x whole says what it costs in memory.
TEST_F(LintParityTest, ContractingSplitInputTheDotNeedsWhole) {
  const std::string path = WriteFile("contracting.hlo", R"(HloModule contracting_input, num_partitions=8

ENTRY main {
  x = f32[64,512] parameter(0), sharding={devices=[1,8]<=[8]}
  w = f32[512,256] parameter(1), sharding={devices=[1,8]<=[8]}
  ROOT y = f32[64,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  CommandResult result = Gspmd({"lint", "--no-search", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(path + ":4:3: warning: %x's annotation sharding={devices=[1,8]<=[8]} conflicts with "
                                   "%w's annotation sharding={devices=[1,8]<=[8]}: all-gather at %y costs 112 KiB"
                                   " per device [conflict]\n"
                                   "  fix: annotate %x with sharding={replicated}: communication 112 KiB"
                                   " -> 0 B per device, memory 16.0 KiB -> "
                                   "128 KiB per device for %x\n"),
            std::string::npos)
      << result.out;
  const json report = json::parse(Gspmd({"lint", "--no-search", path, "--json"}).out);
  ASSERT_EQ(report["findings"].size(), 1u) << report.dump();
  EXPECT_EQ(report["findings"][0]["check"], "conflict");
  EXPECT_EQ(report["findings"][0]["fix"]["sharding"], "{replicated}");
}

}  // namespace
}  // namespace gspmd::cli_test
