// The CLI refusing a likely mistake instead of answering wrongly, and its messages for one (issue 30):
// each case is a command line a user could plausibly type, with what gspmd must say back.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "io/npy.h"
#include "ir/literal.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

const fs::path kCase = kCorpus / "dp_matmul";

std::string CaseFile(const std::string& name) { return (kCase / name).string(); }

bool StartsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class MisuseCliTest : public CliTest {
 protected:
  // `gspmd ARGS... < stdin_file`, stdout and stderr captured as Gspmd does.
  CommandResult GspmdReading(const std::string& stdin_file, const std::vector<std::string>& args) const {
    std::string command = Quote(GSPMD_BINARY);
    for (const std::string& arg : args) command += " " + Quote(arg);
    command += " <" + Quote(stdin_file) + " >" + Quote(Path("stdout.txt")) + " 2>" + Quote(Path("stderr.txt"));
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadText(Path("stdout.txt"));
    result.err = ReadText(Path("stderr.txt"));
    return result;
  }

  // Expects exit code 1, nothing on stdout and one line on stderr starting with `prefix`.
  std::string ExpectRefused(const std::vector<std::string>& args, const std::string& prefix) const {
    const CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_TRUE(StartsWith(result.err, prefix)) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
    return result.err;
  }
};

// ---- silent wrong answers, now refused ----

TEST_F(MisuseCliTest, PartitionRefusesPerDevicePrograms) {
  // XLA's partitioned.hlo, and our own output: partitioning them again would read their shard
  // shapes as global shapes.
  const std::string xla = ExpectRefused({"partition", CaseFile("partitioned.hlo")},
                                        CaseFile("partitioned.hlo") + ": error: partitioning needs a global program");
  EXPECT_TRUE(Contains(xla, "use gspmd report, gspmd simulate or gspmd run on it (--global partitions it anyway)")) << xla;

  ASSERT_EQ(Gspmd({"partition", CaseFile("pre.hlo"), "-o", Path("ours.hlo")}).exit_code, 0);
  ExpectRefused({"partition", Path("ours.hlo")}, Path("ours.hlo") + ": error: partitioning needs a global program");
  ExpectRefused({"partition", Path("ours.hlo"), "--propagate-only"},
                Path("ours.hlo") + ": error: propagation needs a global program");
}

TEST_F(MisuseCliTest, ReportPartitionsAGlobalProgramFirstAndSaysSo) {
  // It has no collectives yet: the report used to say "comm_bytes_per_device: 0" and exit 0.
  const CommandResult report = Gspmd({"report", CaseFile("pre.hlo")});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.err, CaseFile("pre.hlo").insert(0, "gspmd report: ") +
                            ": global program (detected; --per-device reads it as one device's), partitioned for 8 "
                            "devices first\n");
  EXPECT_TRUE(StartsWith(report.out, "comm_bytes_per_device: ")) << report.out;
  EXPECT_FALSE(StartsWith(report.out, "comm_bytes_per_device: 0\n")) << report.out;
}

TEST_F(MisuseCliTest, RunSpmdWithoutLikeNeedsARootSharding) {
  // XLA's partitioned.hlo drops the root sharding: without --like its outputs would be written
  // with their per-device shapes (f32[2,64] for f32[16,64]).
  const std::string err = ExpectRefused(
      {"run", "--per-device", CaseFile("partitioned.hlo"), "-i", CaseFile("in0.npy"), CaseFile("in1.npy"), "-o", Path("out")},
      CaseFile("partitioned.hlo") + ": error: the root %");
  EXPECT_TRUE(Contains(err, "global output shapes cannot be known")) << err;
  EXPECT_TRUE(Contains(err, "--like")) << err;
  EXPECT_FALSE(fs::exists(Path("out")));

  const CommandResult with_like = Gspmd({"run", "--per-device", CaseFile("partitioned.hlo"), "--like", CaseFile("propagated.hlo"),
                                         "-i", CaseFile("in0.npy"), CaseFile("in1.npy"), "-o", Path("out")});
  ASSERT_EQ(with_like.exit_code, 0) << with_like.err;
  EXPECT_EQ(with_like.out, Path("out") + "/out0.npy f32[16,64]\n");
}

TEST_F(MisuseCliTest, AnOptionThatWouldBeIgnoredIsRefused) {
  const std::string err = ExpectRefused({"report", CaseFile("partitioned.hlo"), "--chip", "tpu-v3"}, "gspmd report: error: --chip ");
  EXPECT_TRUE(Contains(err, "expected -o OUT.html")) << err;
  // Options of one output or mode that the other would ignore.
  ExpectRefused({"show", CaseFile("pre.hlo"), "--json", "--color", "always"}, "error: show: --json cannot be used with --color");
  ExpectRefused({"show", CaseFile("pre.hlo"), "--summary", "--color", "never"},
                "error: show: --summary cannot be used with --color");
  ExpectRefused({"simulate", CaseFile("pre.hlo"), "--chip", "tpu-v3", "--json", "--top", "3"},
                "error: simulate: --top cannot be used with --json");
  ExpectRefused({"autoshard", "--iopddl", "p.json", "--mesh", "x=8"}, "error: autoshard: --mesh cannot be used with --iopddl");
  ExpectRefused({"autoshard", CaseFile("pre.hlo"), "--seed", "3"}, "error: autoshard: --seed needs --iopddl");
}

// ---- messages ----

TEST_F(MisuseCliTest, ADirectoryIsNotAFile) {
  const std::string dir = dir_.string();
  ExpectRefused({"partition", dir}, dir + ": error: is a directory (expected a readable HLO text file)\n");
  ExpectRefused({"parse", dir}, dir + ": error: is a directory (expected a readable HLO text file)\n");
  ExpectRefused({"eval", CaseFile("pre.hlo"), "-i", dir, CaseFile("in1.npy"), "-o", Path("out")},
                dir + ": error: is a directory (expected a .npy file)\n");
  ExpectRefused({"compare", dir, CaseFile("in0.npy")}, dir + ": error: is a directory (expected a .npy file)\n");
}

TEST_F(MisuseCliTest, MlirIsReadWhateverTheFileIsCalled) {
  const CommandResult expected = Gspmd({"partition", CaseFile("stablehlo.mlir")});
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  fs::copy_file(kCase / "stablehlo.mlir", dir_ / "lowered.txt");
  const CommandResult as_txt = Gspmd({"partition", Path("lowered.txt")});
  EXPECT_EQ(as_txt.exit_code, 0) << as_txt.err;
  EXPECT_EQ(as_txt.out, expected.out);

  // Text that does not start like MLIR but has StableHLO ops in it: the HLO error, with a hint.
  const std::string garbled = WriteFile("garbled.txt", "garbage\n" + ReadText(kCase / "stablehlo.mlir"));
  const std::string err = ExpectRefused({"parse", garbled}, garbled + ":");
  EXPECT_TRUE(Contains(err, "looks like MLIR (StableHLO)")) << err;
  EXPECT_TRUE(Contains(err, ".mlir")) << err;
}

TEST_F(MisuseCliTest, AWrongElementTypeSaysHowToCast) {
  WriteNpy(Path("x64.npy"), ReadNpy(CaseFile("in0.npy")).Convert(ElementType::kF64));
  const std::string err = ExpectRefused({"eval", CaseFile("pre.hlo"), "-i", Path("x64.npy"), CaseFile("in1.npy"), "-o", Path("out")},
                                        Path("x64.npy") + ": error: input holds f64[16,32] but parameter 0");
  EXPECT_TRUE(Contains(err, "x.astype(np.float32)")) << err;
  const std::string run_err =
      ExpectRefused({"run", CaseFile("pre.hlo"), "-i", Path("x64.npy"), CaseFile("in1.npy"), "-o", Path("out")},
                    Path("x64.npy") + ": error: input holds f64[16,32] but parameter 0");
  EXPECT_TRUE(Contains(run_err, "x.astype(np.float32)")) << run_err;
}

TEST_F(MisuseCliTest, CompareCallsATypeDifferenceATypeDifference) {
  WriteNpy(Path("x64.npy"), ReadNpy(CaseFile("in0.npy")).Convert(ElementType::kF64));
  const CommandResult result = Gspmd({"compare", Path("x64.npy"), CaseFile("in0.npy")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, Path("x64.npy") + " vs " + CaseFile("in0.npy") +
                            ": f64[16,32] FAIL: element type f64 differs from expected f32 (the dims match)\n");
  EXPECT_EQ(result.err, "");  // the FAIL line says it all
}

TEST_F(MisuseCliTest, BFloat16IsSpelledEitherWay) {
  const CommandResult short_name = Gspmd({"simulate", CaseFile("pre.hlo"), "--chip", "tpu-v3", "--compute-type", "bf16"});
  ASSERT_EQ(short_name.exit_code, 0) << short_name.err;
  for (const char* option : {"--compute-type", "--mixed-precision"}) {
    const CommandResult jax_name = Gspmd({"simulate", CaseFile("pre.hlo"), "--chip", "tpu-v3", option, "bfloat16"});
    EXPECT_EQ(jax_name.exit_code, 0) << option << ": " << jax_name.err;
  }
  EXPECT_EQ(Gspmd({"simulate", CaseFile("pre.hlo"), "--chip", "tpu-v3", "--compute-type", "bfloat16"}).out, short_name.out);
}

TEST_F(MisuseCliTest, DashIsStandardInputAndOutput) {
  const CommandResult from_file = Gspmd({"partition", CaseFile("pre.hlo")});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  const CommandResult from_stdin = GspmdReading(CaseFile("pre.hlo"), {"partition", "-", "-o", "-"});
  EXPECT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, from_file.out);
  EXPECT_FALSE(fs::exists(Path("-")));

  // StableHLO on stdin is told apart by its first line.
  const CommandResult mlir = GspmdReading(CaseFile("stablehlo.mlir"), {"report", "-", "--global", "--json"});
  EXPECT_EQ(mlir.exit_code, 0) << mlir.err;
  EXPECT_EQ(mlir.out, Gspmd({"report", CaseFile("stablehlo.mlir"), "--global", "--json"}).out);

  const CommandResult parsed = GspmdReading(CaseFile("pre.hlo"), {"parse", "-"});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
  const CommandResult propagated = GspmdReading(CaseFile("pre.hlo"), {"partition", "-", "--propagate-only"});
  EXPECT_EQ(propagated.exit_code, 0) << propagated.err;
  EXPECT_EQ(propagated.out, Gspmd({"partition", CaseFile("pre.hlo"), "--propagate-only"}).out);

  // Errors name it.
  const std::string bad = WriteFile("bad.hlo", "HloModule bad\n\nENTRY %main {\n  %x = f32[2 parameter(0)\n}\n");
  const CommandResult error = GspmdReading(bad, {"partition", "-"});
  EXPECT_EQ(error.exit_code, 1);
  EXPECT_TRUE(StartsWith(error.err, "<stdin>:4:")) << error.err;
}

TEST_F(MisuseCliTest, ErrorsThatSayNoPlaceNameTheCommand) {
  ExpectRefused({"model", "nomodel"}, "error: model: unknown model 'nomodel' (known: ");
  ExpectRefused({"simulate", CaseFile("pre.hlo"), "--chip", "nochip"}, "error: simulate: unknown chip 'nochip'");
  ExpectRefused({"partition", CaseFile("pre.hlo"), "--propagate-to-parameters", "yes"},
                "error: partition: --propagate-to-parameters: expected true, false or a comma-separated list");
}

}  // namespace
}  // namespace gspmd
