// Tests for the `gspmd` command-line tool: runs the built binary and checks output and exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "io/npy.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

constexpr char kAddModule[] = R"(HloModule add_negate, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->(f32[2,3]{1,0}, f32[2,3]{1,0})}

ENTRY %main (x: f32[2,3], y: f32[2,3]) -> (f32[2,3], f32[2,3]) {
  %x = f32[2,3]{1,0} parameter(0)
  %y = f32[2,3]{1,0} parameter(1)
  %sum = f32[2,3]{1,0} add(f32[2,3]{1,0} %x, f32[2,3]{1,0} %y)
  %neg = f32[2,3]{1,0} negate(f32[2,3]{1,0} %x)
  ROOT %result = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(f32[2,3]{1,0} %sum, f32[2,3]{1,0} %neg)
}
)";

Literal Values(std::vector<double> values) {
  return Literal::FromDoubles(Shape(ElementType::kF32, {2, 3}), values);
}

TEST_F(CliTest, ParsePrintsCanonicalText) {
  const std::string file = WriteFile("add.hlo", kAddModule);
  CommandResult first = Gspmd({"parse", file});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("HloModule add_negate"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("negate("), std::string::npos) << first.out;
  EXPECT_EQ(first.err, "");
  // Canonical: printing the printed text again changes nothing.
  CommandResult second = Gspmd({"parse", WriteFile("again.hlo", first.out)});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
}

TEST_F(CliTest, ParseErrorHasFileLineColumn) {
  const std::string file = WriteFile("bad.hlo", "HloModule bad\n\nENTRY %main {\n  %x = f32[2 parameter(0)\n}\n");
  CommandResult result = Gspmd({"parse", file});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_TRUE(std::regex_search(result.err, std::regex("^" + std::regex_replace(file, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                                                        R"(:[0-9]+:[0-9]+: error: )")))
      << result.err;
}

TEST_F(CliTest, ParseMissingFileNamesIt) {
  const std::string file = Path("missing.hlo");
  CommandResult result = Gspmd({"parse", file});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find(file), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("error"), std::string::npos) << result.err;
}

TEST_F(CliTest, EvalWritesOneFilePerLeaf) {
  const std::string file = WriteFile("add.hlo", kAddModule);
  WriteNpy(Path("x.npy"), Values({1, 2, 3, 4, 5, 6}));
  WriteNpy(Path("y.npy"), Values({10, 20, 30, 40, 50, 60}));
  const std::string out_dir = Path("out/nested");
  CommandResult result = Gspmd({"eval", file, "-i", Path("x.npy"), Path("y.npy"), "-o", out_dir});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(ReadNpy(out_dir + "/out0.npy").BitwiseEquals(Values({11, 22, 33, 44, 55, 66})));
  EXPECT_TRUE(ReadNpy(out_dir + "/out1.npy").BitwiseEquals(Values({-1, -2, -3, -4, -5, -6})));
  EXPECT_FALSE(fs::exists(out_dir + "/out2.npy"));
  EXPECT_NE(result.out.find("out1.npy f32[2,3]"), std::string::npos) << result.out;
}

TEST_F(CliTest, EvalMatchesCorpusOnGlobalProgram) {
  const fs::path case_dir = kCorpus / "dp_matmul";
  CommandResult result = Gspmd({"eval", (case_dir / "propagated.hlo").string(), "-i", (case_dir / "in0.npy").string(),
                                (case_dir / "in1.npy").string(), "-o", Path("out")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ExpectAllClose(Path("out"), case_dir, 1, 1e-5);
}

TEST_F(CliTest, EvalRejectsBadInputs) {
  const std::string file = WriteFile("add.hlo", kAddModule);
  WriteNpy(Path("x.npy"), Values({1, 2, 3, 4, 5, 6}));
  WriteNpy(Path("wrong_shape.npy"), Literal(Shape(ElementType::kF32, {3, 2})));
  WriteNpy(Path("wrong_type.npy"), Literal(Shape(ElementType::kS32, {2, 3})));
  WriteFile("garbage.npy", "not an npy file");

  CommandResult too_few = Gspmd({"eval", file, "-i", Path("x.npy"), "-o", Path("out")});
  EXPECT_EQ(too_few.exit_code, 1);
  EXPECT_NE(too_few.err.find(file + ": error: "), std::string::npos) << too_few.err;
  EXPECT_NE(too_few.err.find("takes 2 parameter(s) but 1 input file(s)"), std::string::npos) << too_few.err;

  CommandResult shape = Gspmd({"eval", file, "-i", Path("x.npy"), Path("wrong_shape.npy"), "-o", Path("out")});
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_EQ(shape.err.rfind(Path("wrong_shape.npy") + ": error: input holds f32[3,2] but parameter 1 (%y)", 0), 0u)
      << shape.err;

  CommandResult type = Gspmd({"eval", file, "-i", Path("wrong_type.npy"), Path("x.npy"), "-o", Path("out")});
  EXPECT_EQ(type.exit_code, 1);
  EXPECT_NE(type.err.find("s32[2,3]"), std::string::npos) << type.err;

  CommandResult garbage = Gspmd({"eval", file, "-i", Path("x.npy"), Path("garbage.npy"), "-o", Path("out")});
  EXPECT_EQ(garbage.exit_code, 1);
  EXPECT_EQ(garbage.err.rfind(Path("garbage.npy") + ": error: bad magic", 0), 0u) << garbage.err;

  CommandResult missing = Gspmd({"eval", file, "-i", Path("x.npy"), Path("nope.npy"), "-o", Path("out")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind(Path("nope.npy") + ": error: cannot open file", 0), 0u) << missing.err;

  WriteFile("blocker", "a file where the output directory should go");
  CommandResult unwritable =
      Gspmd({"eval", file, "-i", Path("x.npy"), Path("x.npy"), "-o", Path("blocker") + "/sub"});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("cannot create the output directory"), std::string::npos) << unwritable.err;
}

TEST_F(CliTest, RunSpmdMatchesCorpusWithLike) {
  const fs::path case_dir = kCorpus / "dp_matmul";
  CommandResult result =
      Gspmd({"run", "--per-device", (case_dir / "partitioned.hlo").string(), "--like", (case_dir / "propagated.hlo").string(),
             "--devices", "8", "-i", (case_dir / "in0.npy").string(), (case_dir / "in1.npy").string(), "-o", Path("out")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ExpectAllClose(Path("out"), case_dir, 1, 1e-5);
}

TEST_F(CliTest, RunSpmdTransformerTrainingStep) {
  const fs::path case_dir = kCorpus / "transformer_train_1l";
  std::vector<std::string> args = {"run", "--per-device", (case_dir / "partitioned.hlo").string(), "--like",
                                   (case_dir / "propagated.hlo").string(), "-o", Path("out"), "-i"};
  for (int i = 0; i < 10; ++i) args.push_back((case_dir / ("in" + std::to_string(i) + ".npy")).string());
  CommandResult result = Gspmd(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ExpectAllClose(Path("out"), case_dir, 9, 1e-4);
}

TEST_F(CliTest, RunRejectsBadArguments) {
  const fs::path case_dir = kCorpus / "dp_matmul";
  const std::string partitioned = (case_dir / "partitioned.hlo").string();
  const std::string in0 = (case_dir / "in0.npy").string();
  const std::string in1 = (case_dir / "in1.npy").string();

  // --global reads XLA's per-device program as a global one: it takes per-device inputs, so the
  // global arrays do not fit its parameters.
  CommandResult as_global = Gspmd({"run", partitioned, "--global", "-i", in0, in1, "-o", Path("out")});
  EXPECT_EQ(as_global.exit_code, 1);
  EXPECT_NE(as_global.err.find("input holds f32[16,32] but parameter 0"), std::string::npos) << as_global.err;
  // Detected per-device, it needs its root's sharding from --like.
  CommandResult detected = Gspmd({"run", partitioned, "-i", in0, in1, "-o", Path("out")});
  EXPECT_EQ(detected.exit_code, 1);
  EXPECT_NE(detected.err.find("per-device program (detected; --global reads it as a global one)"), std::string::npos)
      << detected.err;
  EXPECT_NE(detected.err.find("expected --like GLOBAL"), std::string::npos) << detected.err;

  CommandResult like_of_global = Gspmd({"run", (case_dir / "propagated.hlo").string(), "--like", partitioned,
                                        "-i", in0, in1, "-o", Path("out")});
  EXPECT_EQ(like_of_global.exit_code, 1);
  EXPECT_NE(like_of_global.err.find("--like describes the global program a per-device FILE was partitioned from"),
            std::string::npos)
      << like_of_global.err;

  CommandResult global_mismatch = Gspmd({"run", (case_dir / "propagated.hlo").string(), "--devices", "4", "-i", in0,
                                         in1, "-o", Path("out")});
  EXPECT_EQ(global_mismatch.exit_code, 1);
  EXPECT_NE(global_mismatch.err.find("num_partitions=8"), std::string::npos) << global_mismatch.err;

  for (const std::string bad : {"abc", "0", "-3", "2.5", "99999999"}) {
    CommandResult devices = Gspmd({"run", "--per-device", partitioned, "--devices", bad, "-i", in0, in1, "-o", Path("out")});
    EXPECT_EQ(devices.exit_code, 1) << bad;
    EXPECT_NE(devices.err.find("--devices"), std::string::npos) << bad << ": " << devices.err;
  }

  CommandResult mismatch = Gspmd({"run", "--per-device", partitioned, "--devices", "4", "-i", in0, in1, "-o", Path("out")});
  EXPECT_EQ(mismatch.exit_code, 1);
  EXPECT_NE(mismatch.err.find("num_partitions=8"), std::string::npos) << mismatch.err;

  CommandResult count = Gspmd({"run", "--per-device", partitioned, "-i", in0, "-o", Path("out")});
  EXPECT_EQ(count.exit_code, 1);
  EXPECT_NE(count.err.find(partitioned + ": error: "), std::string::npos) << count.err;

  CommandResult like_missing =
      Gspmd({"run", "--per-device", partitioned, "--like", Path("nope.hlo"), "-i", in0, in1, "-o", Path("out")});
  EXPECT_EQ(like_missing.exit_code, 1);
  EXPECT_NE(like_missing.err.find(Path("nope.hlo")), std::string::npos) << like_missing.err;

  // Global inputs swapped: the executor reports the shape mismatch.
  CommandResult swapped =
      Gspmd({"run", "--per-device", partitioned, "--like", (case_dir / "propagated.hlo").string(), "-i", in1, in0, "-o",
             Path("out")});
  EXPECT_EQ(swapped.exit_code, 1);
  EXPECT_NE(swapped.err.find("error"), std::string::npos) << swapped.err;
}

TEST_F(CliTest, CompareReportsPassAndFail) {
  WriteNpy(Path("a.npy"), Values({1, 2, 3, 4, 5, 6}));
  WriteNpy(Path("b.npy"), Values({1, 2, 3, 4, 5, 6.5}));
  CommandResult same = Gspmd({"compare", Path("a.npy"), Path("a.npy")});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("PASS"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("f32[2,3]"), std::string::npos) << same.out;

  CommandResult differ = Gspmd({"compare", Path("a.npy"), Path("b.npy")});
  EXPECT_EQ(differ.exit_code, 1);
  EXPECT_NE(differ.out.find("max_abs_err=0.5"), std::string::npos) << differ.out;
  EXPECT_NE(differ.out.find("FAIL"), std::string::npos) << differ.out;

  CommandResult loose = Gspmd({"compare", Path("a.npy"), Path("b.npy"), "--rtol", "0.1"});
  EXPECT_EQ(loose.exit_code, 0) << loose.out;

  CommandResult missing = Gspmd({"compare", Path("a.npy"), Path("nope.npy")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind(Path("nope.npy") + ": error: ", 0), 0u) << missing.err;
}

TEST_F(CliTest, BadCommandLinesExitOne) {
  const std::vector<std::vector<std::string>> bad = {
      {},                                  // no subcommand
      {"frobnicate"},                      // unknown subcommand
      {"parse"},                           // missing FILE
      {"parse", "a.hlo", "--bogus"},       // unknown option
      {"eval", "a.hlo", "-i", "x.npy"},    // missing -o
      {"compare", "a.npy"},                // missing EXPECTED
      {"compare", "a.npy", "b.npy", "--rtol", "x"},
      {"partition"},                       // missing FILE
      {"report"},                          // missing FILE
      {"report", "a.hlo", "--bogus"},      // unknown option
      {"run", "a.hlo", "-i", "x.npy"},     // missing -o
  };
  for (const auto& args : bad) {
    CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 1) << (args.empty() ? "(none)" : args[0]) << ": " << result.err;
    EXPECT_FALSE(result.err.empty());
  }
}

TEST_F(CliTest, HelpWorksForEverySubcommand) {
  for (const std::string command : {"parse", "eval", "partition", "run", "report", "compare"}) {
    CommandResult result = Gspmd({command, "--help"});
    EXPECT_EQ(result.exit_code, 0) << command;
    EXPECT_NE(result.out.find("Usage"), std::string::npos) << command << ": " << result.out;
  }
  CommandResult top = Gspmd({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("compare"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("partition"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("report"), std::string::npos) << top.out;
}

}  // namespace
}  // namespace gspmd
