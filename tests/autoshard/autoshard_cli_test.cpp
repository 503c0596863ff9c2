// `gspmd autoshard --iopddl`: the answer as the last line, --json, and its errors.
#include <gtest/gtest.h>

#include "autoshard_test_util.h"
#include "cli/cli_test_util.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

std::string LastLine(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
  return trimmed.substr(trimmed.rfind('\n') + 1);
}

TEST_F(CliTest, AutoshardPrintsTheAnswerLast) {
  const std::string example = (autoshard::test::kIopddlData / "example.json").string();
  const CommandResult result = Gspmd({"autoshard", "--iopddl", example, "--time-limit", "5"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(LastLine(result.out), "[0, 0, 2, 1, 0]");
  EXPECT_NE(result.out.find("best cost: 445 (feasible)"), std::string::npos) << result.out;
  const CommandResult json = Gspmd({"autoshard", "--iopddl", example, "--time-limit", "5", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json figures = nlohmann::json::parse(json.out.substr(0, json.out.find('\n')));
  EXPECT_EQ(figures["cost"], "445");
  EXPECT_EQ(figures["feasible"], true);
  EXPECT_EQ(LastLine(json.out), "[0, 0, 2, 1, 0]");
}

// The program mode: JSON figures, the written program, --explain's alternatives.
TEST_F(CliTest, AutoshardWritesAPlanForAnUnannotatedProgram) {
  const std::string program = WriteFile("mlp.hlo", R"(HloModule mlp

ENTRY %main (x: f32[64,256], w1: f32[256,1024], w2: f32[1024,256]) -> f32[64,256] {
  %x = f32[64,256]{1,0} parameter(0)
  %w1 = f32[256,1024]{1,0} parameter(1)
  %w2 = f32[1024,256]{1,0} parameter(2)
  %h = f32[64,1024]{1,0} dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %y = f32[64,256]{1,0} dot(%h, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  const std::string out = Path("plan.hlo");
  const CommandResult json = Gspmd({"autoshard", program, "--devices", "8", "--json", "-o", out});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json figures = nlohmann::json::parse(json.out);
  for (const char* key : {"mesh", "step_time_s", "mfu", "peak_bytes_per_device", "fits_memory", "solve_time_s",
                          "lower_bound_s", "meshes", "plan"})
    EXPECT_TRUE(figures.contains(key)) << key;
  EXPECT_EQ(figures["meshes"].size(), 4u);  // x=8, x=2,y=4, x=4,y=2, x=2,y=2,z=2
  EXPECT_TRUE(figures["fits_memory"].get<bool>());
  // The written program goes through simulate like any input, to the predicted step time.
  const CommandResult simulated = Gspmd({"simulate", out, "--chip", "tpu-v3", "--json"});
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(simulated.out)["step_time_s"].get<double>(),
                   figures["step_time_s"].get<double>());
  const CommandResult explained = Gspmd({"autoshard", program, "--mesh", "x=8", "--explain"});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("why (the alternatives weighed for each group"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("    * "), std::string::npos) << explained.out;
  const CommandResult budget = Gspmd({"autoshard", program, "--mesh", "x=8", "--memory-budget", "1KiB"});
  EXPECT_EQ(budget.exit_code, 1);
  EXPECT_NE(budget.err.find("no plan found fits the memory budget of 1024 bytes"), std::string::npos) << budget.err;
  const CommandResult bad_size = Gspmd({"autoshard", program, "--mesh", "x=8", "--memory-budget", "lots"});
  EXPECT_EQ(bad_size.exit_code, 1);
  EXPECT_NE(bad_size.err.find("expected a positive size such as 16GiB"), std::string::npos) << bad_size.err;
}

TEST_F(CliTest, AutoshardErrors) {
  const CommandResult no_problem = Gspmd({"autoshard", "--time-limit", "1"});
  EXPECT_EQ(no_problem.exit_code, 1);
  EXPECT_NE(no_problem.err.find("expected a program FILE (HLO text or .mlir) or --iopddl"), std::string::npos) << no_problem.err;
  const std::string cut = WriteFile("cut.json", "{\"problem\": {\"nodes\": {\"intervals\": [[0, 1], [");
  const CommandResult truncated = Gspmd({"autoshard", "--iopddl", cut, "--time-limit", "1"});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_NE(truncated.err.find(cut + ": error: the JSON text ends early"), std::string::npos) << truncated.err;
  const CommandResult bad_limit = Gspmd({"autoshard", "--iopddl", cut, "--time-limit", "0"});
  EXPECT_EQ(bad_limit.exit_code, 1);
  EXPECT_NE(bad_limit.err.find("--time-limit 0 is invalid"), std::string::npos) << bad_limit.err;
}

}  // namespace
}  // namespace gspmd
