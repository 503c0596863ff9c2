// The gspmd subcommands on StableHLO (.mlir) files: parse prints HLO that parses and runs the
// same, eval / run / partition / report take .mlir, errors are FILE:LINE:COL with exit code 1.
#include <gtest/gtest.h>

#include <regex>

#include "cli/cli_test_util.h"
#include "io/npy.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

const fs::path kCase = kCorpusRoot / "gspmd" / "megatron_mlp";
const fs::path kShardMap = kCorpusRoot / "shardy" / "shard_map_psum";

std::vector<std::string> WithInputs(std::vector<std::string> args, const fs::path& case_dir) {
  args.push_back("-i");
  for (const std::string& input : CaseInputs(case_dir)) args.push_back(input);
  return args;
}

TEST_F(CliTest, ParseMlirPrintsHloThatParsesAndRunsTheSame) {
  CommandResult parsed = Gspmd({"parse", (kCase / "stablehlo.mlir").string()});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  EXPECT_NE(parsed.out.find("HloModule jit_case_megatron_mlp"), std::string::npos) << parsed.out;
  const std::string hlo = WriteFile("converted.hlo", parsed.out);
  CommandResult again = Gspmd({"parse", hlo});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, parsed.out);
  const int outputs = CaseOutputCount(kCase);
  CommandResult eval = Gspmd(WithInputs({"eval", hlo, "-o", Path("eval_hlo")}, kCase));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  ExpectAllClose(Path("eval_hlo"), kCase, outputs, 1e-4);
}

TEST_F(CliTest, EvalRunPartitionAndReportTakeMlir) {
  const std::string file = (kCase / "stablehlo.mlir").string();
  const int outputs = CaseOutputCount(kCase);
  CommandResult eval = Gspmd(WithInputs({"eval", file, "-o", Path("eval")}, kCase));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  ExpectAllClose(Path("eval"), kCase, outputs, 1e-4);
  CommandResult run = Gspmd(WithInputs({"run", file, "-o", Path("run")}, kCase));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectAllClose(Path("run"), kCase, outputs, 1e-4);
  CommandResult partition = Gspmd({"partition", file, "-o", Path("ours.hlo")});
  ASSERT_EQ(partition.exit_code, 0) << partition.err;
  CommandResult report = Gspmd({"report", Path("ours.hlo")});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  CommandResult propagated = Gspmd({"partition", file, "--propagate-only"});
  ASSERT_EQ(propagated.exit_code, 0) << propagated.err;
  EXPECT_NE(propagated.out.find("sharding="), std::string::npos);
}

TEST_F(CliTest, EvalOfShardMapProgramRunsOnItsDevices) {
  const std::string file = (kShardMap / "stablehlo.mlir").string();
  CommandResult eval = Gspmd(WithInputs({"eval", file, "-o", Path("eval")}, kShardMap));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NE(eval.err.find("manual (shard_map) regions"), std::string::npos) << eval.err;
  ExpectAllClose(Path("eval"), kShardMap, CaseOutputCount(kShardMap), 1e-4);
}

TEST_F(CliTest, MlirErrorsAreLocatedAndExitOne) {
  const std::string file = WriteFile("bad.mlir", "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                                                 "  %0 = stablehlo.nonsense %x : tensor<4xf32>\n"
                                                 "  return %0 : tensor<4xf32>\n}\n");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"parse", file}, {"eval", file, "-o", Path("o1")}, {"partition", file}, {"run", file, "-o", Path("o2")}}) {
    CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 1) << args[0];
    EXPECT_EQ(result.out, "") << args[0];
    EXPECT_EQ(result.err.rfind(file + ":2:8: error: unknown operation 'stablehlo.nonsense'", 0), 0u) << result.err;
  }
  EXPECT_FALSE(fs::exists(Path("o1")));
  CommandResult missing = Gspmd({"parse", Path("missing.mlir")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("missing.mlir: error: cannot read the file"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace gspmd
