// `gspmd lint`'s `plan` check: autoshard's search finds parameter annotations that make the step
// at least 10% faster, and the finding's times are `gspmd simulate`'s before and after its fix.
#include <nlohmann/json.hpp>

#include <cmath>

#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

using nlohmann::json;

// A lookup whose embedding table (2 MiB) the user split over its hidden dim while the ids are
// split over the batch: the table is gathered whole before the lookup; replicated it is not.
constexpr const char* kEmbeddingSplit = R"(HloModule embedding, num_partitions=8

ENTRY main {
  ids = s32[8192,1] parameter(0), sharding={devices=[8,1]<=[8]}
  table = f32[1024,512] parameter(1), sharding={devices=[1,8]<=[8]}
  w = f32[512,2048] parameter(2), sharding={replicated}
  e = f32[8192,512] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,512}
  ROOT y = f32[8192,2048] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[8,1]<=[8]}
}
)";

// Megatron's MLP on 8 devices: w1 split by columns, w2 by rows, one all-reduce of the output;
// compute-bound (MFU above 70% on TPU v3), so no plan is 10% faster.
constexpr const char* kMegatronMlp = R"(HloModule megatron_mlp, num_partitions=8

ENTRY main {
  x = f32[1024,8192] parameter(0), sharding={replicated}
  w1 = f32[8192,32768] parameter(1), sharding={devices=[1,8]<=[8]}
  w2 = f32[32768,8192] parameter(2), sharding={devices=[8,1]<=[8]}
  h = f32[1024,32768] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[1024,32768] tanh(h)
  ROOT y = f32[1024,8192] dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)";

// The searches price a fixed number of plans, so the finding does not depend on machine speed.
const std::vector<std::string> kFixedSearch = {"--max-evaluations", "64", "--time-limit", "60"};

// The HLO text with parameter `name`'s sharding={...} replaced by `sharding` (XLA's text).
std::string WithParameterSharding(const std::string& hlo, const std::string& name, const std::string& sharding) {
  const size_t line = hlo.find("  " + name + " = ");
  EXPECT_NE(line, std::string::npos) << name;
  if (line == std::string::npos) return hlo;
  const size_t end = hlo.find('\n', line);
  const size_t at = hlo.find(", sharding={", line);
  if (at == std::string::npos || at > end) return hlo.substr(0, end) + ", sharding=" + sharding + hlo.substr(end);
  size_t close = hlo.find('}', at);  // parameter shardings here have no nested braces
  return hlo.substr(0, at) + ", sharding=" + sharding + hlo.substr(close + 1);
}

class LintPlanTest : public CliTest {
 protected:
  json LintJson(const std::string& path, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"lint", path, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return json::parse(result.out);
  }

  double SimulatedStepTime(const std::string& path) const {
    const CommandResult result = Gspmd({"simulate", path, "--chip", "tpu-v3", "--json"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return json::parse(result.out)["step_time_s"].get<double>();
  }
};

std::vector<json> PlanFindings(const json& report) {
  std::vector<json> plans;
  for (const json& finding : report["findings"])
    if (finding["check"] == "plan") plans.push_back(finding);
  return plans;
}

void ExpectRelativelyEqual(double actual, double expected, const char* what) {
  EXPECT_LE(std::abs(actual - expected), 1e-6 * std::abs(expected)) << what << ": " << actual << " vs " << expected;
}

TEST_F(LintPlanTest, SplitEmbeddingTableIsReplicatedAndTheTimesAreSimulates) {
  const std::string path = WriteFile("embedding.hlo", kEmbeddingSplit);
  const json report = LintJson(path, kFixedSearch);
  EXPECT_EQ(report["plan_search"]["status"], "found") << report["plan_search"].dump();
  const std::vector<json> plans = PlanFindings(report);
  ASSERT_EQ(plans.size(), 1u) << report.dump(1);
  const json& plan = plans[0];
  EXPECT_EQ(plan["severity"], "warning");
  EXPECT_EQ(plan["instruction"], "table");
  EXPECT_EQ(plan["line"], 5);  // the table's line: the first parameter whose annotation changes
  EXPECT_NE(plan["fix"]["text"].get<std::string>().find("%table with sharding={replicated} (replicate; was "
                                                         "sharding={devices=[1,8]<=[8]})"),
            std::string::npos)
      << plan.dump(1);

  // The changes, applied by annotating the program as written: gspmd simulate gives the times
  // the finding states, before and after, and the fix saves at least 10%.
  std::string fixed = kEmbeddingSplit;
  bool table_replicated = false;
  for (const json& change : plan["changes"]) {
    fixed = WithParameterSharding(fixed, change["parameter"], change["after"]["sharding"]);
    if (change["parameter"] == "table") {
      table_replicated = change["replicate"].get<bool>();
      EXPECT_EQ(change["before"]["sharding"], "{devices=[1,8]<=[8]}");
      EXPECT_TRUE(change["before"]["annotated"].get<bool>());
      EXPECT_EQ(change["after"]["sharding"], "{replicated}");
    }
  }
  EXPECT_TRUE(table_replicated) << plan.dump(1);
  const double before = plan["step_time_s_before"].get<double>();
  const double after = plan["step_time_s_after"].get<double>();
  EXPECT_LE(after, 0.90 * before);
  ExpectRelativelyEqual(SimulatedStepTime(path), before, "before");
  ExpectRelativelyEqual(SimulatedStepTime(WriteFile("fixed.hlo", fixed)), after, "after");

  // The text says the same; the summary adds the time saved.
  std::vector<std::string> args = {"lint", path};
  args.insert(args.end(), kFixedSearch.begin(), kFixedSearch.end());
  const CommandResult text = Gspmd(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(path + ":5:3: warning: autoshard's search finds parameter annotations that cut the step "
                                 "time "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("[plan]\n  fix: annotate %table with sharding={replicated} (replicate; "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("per step faster with autoshard's plan"), std::string::npos) << text.out;

  // Once fixed, nothing is left to find.
  const json again = LintJson(WriteFile("fixed_again.hlo", fixed), kFixedSearch);
  EXPECT_TRUE(PlanFindings(again).empty()) << again.dump(1);
}

TEST_F(LintPlanTest, NamedMeshGivesTheFixAsPartitionSpecs) {
  std::vector<std::string> extra = kFixedSearch;
  extra.insert(extra.end(), {"--mesh", "data=8"});
  const json report = LintJson(WriteFile("embedding.hlo", kEmbeddingSplit), extra);
  const std::vector<json> plans = PlanFindings(report);
  ASSERT_EQ(plans.size(), 1u) << report.dump(1);
  bool found_table = false;
  for (const json& change : plans[0]["changes"]) {
    if (change["parameter"] != "table") continue;
    found_table = true;
    EXPECT_EQ(change["before"]["spec"], "P(None, 'data')");
    EXPECT_EQ(change["after"]["spec"], "P(None, None)");
  }
  EXPECT_TRUE(found_table) << plans[0].dump(1);
  EXPECT_NE(plans[0]["fix"]["text"].get<std::string>().find(
                "%table with sharding={replicated} P(None, None) (replicate; was sharding={devices=[1,8]<=[8]} "
                "P(None, 'data'))"),
            std::string::npos)
      << plans[0].dump(1);
}

TEST_F(LintPlanTest, MegatronMlpIsAlreadyTheBestPlan) {
  const json report = LintJson(WriteFile("megatron.hlo", kMegatronMlp), kFixedSearch);
  EXPECT_TRUE(PlanFindings(report).empty()) << report.dump(1);
  EXPECT_EQ(report["plan_search"]["status"], "none") << report["plan_search"].dump();
}

TEST_F(LintPlanTest, NoSearchGivesNoPlanFinding) {
  const json report = LintJson(WriteFile("embedding.hlo", kEmbeddingSplit), {"--no-search"});
  EXPECT_TRUE(PlanFindings(report).empty()) << report.dump(1);
  EXPECT_EQ(report["plan_search"]["status"], "off");
  EXPECT_FALSE(report["findings"].empty()) << "the other checks still run";
}

// No parameter of this program can be split 8 ways: autoshard refuses it, lint does not.
TEST_F(LintPlanTest, SearchThatFindsNoPlanReportsNothing) {
  const std::string path = WriteFile("odd.hlo", R"(HloModule odd, num_partitions=8

ENTRY main {
  a = f32[3,5] parameter(0)
  b = f32[5,7] parameter(1)
  ROOT c = f32[3,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  const json report = LintJson(path, kFixedSearch);
  EXPECT_TRUE(PlanFindings(report).empty()) << report.dump(1);
  EXPECT_EQ(report["plan_search"]["status"], "failed");
  EXPECT_NE(report["plan_search"]["message"].get<std::string>().find("divide evenly"), std::string::npos)
      << report["plan_search"].dump();
}

TEST_F(LintPlanTest, BadSearchOptionsAreRefused) {
  const std::string path = WriteFile("embedding.hlo", kEmbeddingSplit);
  for (const char* seconds : {"0", "-1"}) {
    const CommandResult result = Gspmd({"lint", path, "--time-limit", seconds});
    EXPECT_EQ(result.exit_code, 1) << seconds;
    EXPECT_NE(result.err.find(std::string("gspmd lint: error: --time-limit ") + seconds +
                              " is invalid (expected seconds > 0)"),
              std::string::npos)
        << result.err;
  }
  const CommandResult chip = Gspmd({"lint", path, "--chip", "tpu-v0"});
  EXPECT_EQ(chip.exit_code, 1);
  EXPECT_NE(chip.err.find("gspmd lint: error: --chip: unknown chip 'tpu-v0'"), std::string::npos) << chip.err;
  const CommandResult help = Gspmd({"lint", "--help"});
  EXPECT_NE(help.out.find("--no-search"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--time-limit"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace gspmd::cli_test
