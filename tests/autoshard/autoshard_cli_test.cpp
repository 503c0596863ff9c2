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
