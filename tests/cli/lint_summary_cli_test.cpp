// `gspmd lint` ends with one summary line (warnings by kind, bytes per device avoidable; a clean
// program says so), and findings alike but for their names (one per layer) print as one group.
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

using nlohmann::json;

class LintSummaryCliTest : public CliTest {};

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

std::string LastLine(const std::string& text) {
  const size_t start = text.rfind('\n', text.size() - 2);
  return text.substr(start == std::string::npos ? 0 : start + 1);
}

TEST_F(LintSummaryCliTest, CleanProgramSaysSo) {
  const std::string path = WriteFile("clean.hlo", R"(HloModule clean, num_partitions=4

ENTRY main {
  x = f32[64,128] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT t = f32[64,128] tanh(x)
}
)");
  CommandResult result = Gspmd({"lint", "--no-search", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "no warnings: no annotation costs more than lint can tell it should\n");
  const json report = json::parse(Gspmd({"lint", "--no-search", path, "--json"}).out);
  EXPECT_EQ(report["summary"]["warnings"], 0);
  EXPECT_TRUE(report["findings"].empty());
}

// Four layers, each with the same replicated weight: one group of four and the total.
TEST_F(LintSummaryCliTest, IdenticalFindingsOverLayersAreOneGroup) {
  std::string hlo = "HloModule layers, num_partitions=4\n\nENTRY main {\n"
                    "  x = f32[64,1024] parameter(0), sharding={devices=[4,1]<=[4]}\n";
  std::string previous = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string l = std::to_string(i);
    hlo += "  w" + l + " = f32[1024,1024] parameter(" + std::to_string(i + 1) + "), sharding={replicated}\n";
    hlo += "  h" + l + " = f32[64,1024] dot(" + previous + ", w" + l +
           "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    previous = "h" + l;
  }
  hlo += "  ROOT out = f32[64,1024] tanh(" + previous + ")\n}\n";
  const std::string path = WriteFile("layers.hlo", hlo);
  CommandResult result = Gspmd({"lint", "--no-search", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(Count(result.out, "[replicated]"), 1u) << result.out;
  EXPECT_NE(result.out.find("  and 3 more alike (%w1, %w2, %w3): 4 in all, 12.0 MiB per device "
                            "together\n"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(LastLine(result.out),
            "4 warnings (by kind: replicated 4), 12.0 MiB per device avoidable\n");

  const json report = json::parse(Gspmd({"lint", "--no-search", path, "--json"}).out);
  EXPECT_EQ(report["findings"].size(), 4u);  // every finding, as before
  ASSERT_EQ(report["groups"].size(), 1u) << report["groups"].dump();
  EXPECT_EQ(report["groups"][0]["findings"].size(), 4u);
  EXPECT_EQ(report["summary"]["warnings"], 4);
  EXPECT_EQ(report["summary"]["by_kind"]["replicated"], 4);
  EXPECT_EQ(report["summary"]["avoidable_bytes_per_device"].get<double>(), 12582912.0);
}

// A paper preset: its near-identical [replicated] warnings (15 at 3 of its 12 layers; 50 at
// all 12, whose lint took 90 s under ASan in CI) print as at most 10 findings.
TEST_F(LintSummaryCliTest, PaperPresetPrintsAFewGroupsAndATotal) {
  const std::string path = Path("gshard.hlo");
  CommandResult model = Gspmd({"model", "--preset", "gshard-128e-12l", "--set", "layers=3", "-o", path});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  CommandResult result = Gspmd({"lint", "--no-search", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LE(Count(result.out, ": warning: "), 10u) << result.out;
  EXPECT_GE(Count(result.out, " more alike ("), 1u) << result.out;
  const std::string last = LastLine(result.out);
  EXPECT_NE(last.find(" warnings (by kind: "), std::string::npos) << last;
  EXPECT_NE(last.find("replicated "), std::string::npos) << last;
  EXPECT_NE(last.find(" per device avoidable\n"), std::string::npos) << last;
}

}  // namespace
}  // namespace gspmd::cli_test
