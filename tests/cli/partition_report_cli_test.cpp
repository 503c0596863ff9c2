// Tests of `gspmd partition`, `gspmd report` and `gspmd run` without --spmd: the CLI contract
// of the partitioner (per-device module text, communication report, global runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "io/npy.h"
#include "ir/literal.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

// One row of tests/data/corpus/xla_comm.tsv: XLA's bytes per device for a case.
struct XlaCommRow {
  std::string name;
  double gspmd_bytes = 0;
  double shardy_bytes = 0;
  nlohmann::json gspmd_collectives;
};

std::vector<XlaCommRow> ReadXlaComm() {
  std::vector<XlaCommRow> rows;
  std::istringstream lines(ReadText(kCorpusRoot / "xla_comm.tsv"));
  std::string line;
  std::getline(lines, line);  // header
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    XlaCommRow row;
    std::string gspmd, shardy, collectives;
    std::getline(fields, row.name, '\t');
    std::getline(fields, gspmd, '\t');
    std::getline(fields, shardy, '\t');
    std::getline(fields, collectives);
    row.gspmd_bytes = std::stod(gspmd);
    row.shardy_bytes = std::stod(shardy);
    row.gspmd_collectives = nlohmann::json::parse(collectives);
    rows.push_back(row);
  }
  return rows;
}

// Every corpus case folder (gspmd/ and shardy/) that has propagated.hlo.
std::vector<fs::path> CorpusCases() {
  std::vector<fs::path> cases;
  for (const char* flavor : {"gspmd", "shardy"}) {
    if (!fs::is_directory(kCorpusRoot / flavor)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(kCorpusRoot / flavor))
      if (fs::exists(entry.path() / "propagated.hlo")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

class PartitionCliTest : public CliTest {
 protected:
  // `gspmd report --json FILE`, parsed.
  nlohmann::json ReportJson(const std::string& file) const {
    CommandResult result = Gspmd({"report", "--json", file});
    EXPECT_EQ(result.exit_code, 0) << file << ": " << result.err;
    return nlohmann::json::parse(result.out);
  }
};

constexpr char kUnevenRoot[] = R"(HloModule uneven_root, num_partitions=4

ENTRY %main (x: f32[10,3], y: s32[7]) -> (f32[10,3], s32[7]) {
  %x = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = s32[7]{0} parameter(1), sharding={devices=[4]<=[4]}
  %e = f32[10,3]{1,0} exponential(%x), sharding={devices=[4,1]<=[4]}
  %n = s32[7]{0} negate(%y), sharding={devices=[4]<=[4]}
  ROOT %t = (f32[10,3]{1,0}, s32[7]{0}) tuple(%e, %n), sharding={{devices=[4,1]<=[4]}, {devices=[4]<=[4]}}
}
)";

Literal Ramp(const Shape& shape, double scale) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e) literal.SetFromDouble(e, scale * static_cast<double>(e));
  return literal;
}

// ---- partition ----

TEST_F(PartitionCliTest, PartitionPrintsThePerDeviceModule) {
  const fs::path case_dir = kCorpus / "megatron_mlp";
  CommandResult result = Gspmd({"partition", (case_dir / "propagated.hlo").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // No warnings: only the summary line (its form is tested in summaries_cli_test.cpp).
  EXPECT_EQ(result.err.rfind("partitioned ", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.out.find("num_partitions=8"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("all-reduce("), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("channel_id="), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("use_global_device_ids=true"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("<=["), std::string::npos) << result.out;  // iota replica groups
  EXPECT_NE(result.out.find("gspmd.global_result_shapes=\"f32[8,16,32]\""), std::string::npos) << result.out;
  // The per-device dot works on a quarter of the hidden dim of a half of the batch.
  EXPECT_NE(result.out.find("f32[4,16,32]"), std::string::npos) << result.out;

  // What partition prints parses again, and -o writes the same text.
  CommandResult parsed = Gspmd({"parse", WriteFile("ours.hlo", result.out)});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
  CommandResult to_file = Gspmd({"partition", (case_dir / "propagated.hlo").string(), "-o", Path("out.hlo")});
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(ReadText(Path("out.hlo")), result.out);
}

TEST_F(PartitionCliTest, PartitionDerivesTheDeviceCountFromTheShardings) {
  std::string text = kUnevenRoot;
  text.replace(text.find(", num_partitions=4"), std::string(", num_partitions=4").size(), "");
  CommandResult result = Gspmd({"partition", WriteFile("no_count.hlo", text)});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("num_partitions=4"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("f32[3,3]"), std::string::npos) << result.out;  // ceil(10/4) rows

  CommandResult same = Gspmd({"partition", Path("no_count.hlo"), "--devices", "4"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out, result.out);

  // The shardings tile over 4 devices: 8 partitions cannot hold them.
  CommandResult more = Gspmd({"partition", Path("no_count.hlo"), "--devices", "8"});
  EXPECT_EQ(more.exit_code, 1);
  EXPECT_NE(more.err.find("tiles over 4 devices but the program is partitioned onto 8"), std::string::npos)
      << more.err;
}

TEST_F(PartitionCliTest, PartitionRejectsBadArguments) {
  const std::string propagated = (kCorpus / "dp_matmul" / "propagated.hlo").string();
  CommandResult mismatch = Gspmd({"partition", propagated, "--devices", "4"});
  EXPECT_EQ(mismatch.exit_code, 1);
  EXPECT_NE(mismatch.err.find("num_partitions=8"), std::string::npos) << mismatch.err;
  EXPECT_EQ(mismatch.out, "");

  for (const std::string bad : {"abc", "0", "-1", "1.5"}) {
    CommandResult devices = Gspmd({"partition", propagated, "--devices", bad});
    EXPECT_EQ(devices.exit_code, 1) << bad;
    EXPECT_NE(devices.err.find("--devices '" + bad + "'"), std::string::npos) << devices.err;
  }

  CommandResult explain = Gspmd({"partition", propagated, "--explain"});
  EXPECT_EQ(explain.exit_code, 1);
  EXPECT_NE(explain.err.find("--explain needs --propagate-only"), std::string::npos) << explain.err;

  CommandResult missing = Gspmd({"partition", Path("nope.hlo")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(Path("nope.hlo")), std::string::npos) << missing.err;

  // A sharding naming device 7 on a 4-partition module.
  const std::string too_few = WriteFile("too_few.hlo", R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8]) -> f32[8] {
  ROOT %x = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
}
)");
  CommandResult devices = Gspmd({"partition", too_few});
  EXPECT_EQ(devices.exit_code, 1);
  EXPECT_EQ(devices.err.rfind(too_few + ":", 0), 0u) << devices.err;
  EXPECT_NE(devices.err.find("device 7"), std::string::npos) << devices.err;

  CommandResult unwritable = Gspmd({"partition", propagated, "-o", Path("no_dir") + "/x/y.hlo"});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("cannot write"), std::string::npos) << unwritable.err;
}

TEST_F(PartitionCliTest, PropagateOnlyPrintsAShardedGlobalModule) {
  const fs::path case_dir = kCorpus / "contract_matmul_allreduce";
  CommandResult result = Gspmd({"partition", "--propagate-only", (case_dir / "pre.hlo").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("all-reduce("), std::string::npos) << result.out;  // not partitioned
  // Every dot has a sharding after propagation.
  std::istringstream lines(result.out);
  std::string line;
  int dots = 0;
  while (std::getline(lines, line)) {
    if (line.find(" dot(") == std::string::npos) continue;
    ++dots;
    EXPECT_NE(line.find("sharding="), std::string::npos) << line;
  }
  EXPECT_GT(dots, 0) << result.out;

  CommandResult explained = Gspmd({"partition", "--propagate-only", "--explain", (case_dir / "pre.hlo").string()});
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  CommandResult parsed = Gspmd({"parse", WriteFile("explained.hlo", explained.out)});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
}

// ---- report ----

TEST_F(PartitionCliTest, ReportJsonOnXlaProgramsGivesXlaCommBytes) {
  int checked = 0;
  for (const XlaCommRow& row : ReadXlaComm()) {
    const fs::path gspmd_case = kCorpus / row.name / "partitioned.hlo";
    if (fs::exists(gspmd_case)) {
      nlohmann::json report = ReportJson(gspmd_case.string());
      EXPECT_NEAR(report["comm_bytes_per_device"].get<double>(), row.gspmd_bytes, 1e-6) << row.name;
      EXPECT_EQ(report["collectives"], row.gspmd_collectives) << row.name;
      EXPECT_GT(report["peak_bytes_per_device"].get<double>(), 0) << row.name;
      ++checked;
    }
    const fs::path shardy_case = kCorpusRoot / "shardy" / row.name / "partitioned.hlo";
    if (fs::exists(shardy_case)) {
      nlohmann::json report = ReportJson(shardy_case.string());
      EXPECT_NEAR(report["comm_bytes_per_device"].get<double>(), row.shardy_bytes, 1e-6) << "shardy " << row.name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 14);
}

TEST_F(PartitionCliTest, ReportTextByDefault) {
  CommandResult result = Gspmd({"report", (kCorpus / "uneven_internal_10_over_4" / "partitioned.hlo").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("comm_bytes_per_device: 252 B\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("all-gather: count=1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("all-reduce: count=1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("peak_bytes_per_device: "), std::string::npos) << result.out;
}

TEST_F(PartitionCliTest, ReportCountsLoopBodiesByTripCount) {
  const std::string file = WriteFile("loop.hlo", R"(HloModule loop, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%body (p: (s32[], f32[16])) -> (s32[], f32[16]) {
  %p = (s32[], f32[16]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %v = f32[16]{0} get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %ar = f32[16]{0} all-reduce(%v), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=%sum
  ROOT %t = (s32[], f32[16]{0}) tuple(%next, %ar)
}

%cond (q: (s32[], f32[16])) -> pred[] {
  %q = (s32[], f32[16]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %five = s32[] constant(5)
  ROOT %lt = pred[] compare(%j, %five), direction=LT
}

ENTRY %main (x: f32[16]) -> f32[16] {
  %x = f32[16]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[16]{0}) tuple(%zero, %x)
  %w = (s32[], f32[16]{0}) while(%init), condition=%cond, body=%body
  ROOT %out = f32[16]{0} get-tuple-element(%w), index=1
}
)");
  nlohmann::json report = ReportJson(file);
  EXPECT_EQ(report["collectives"]["all-reduce"], 5) << report.dump();
  // 5 x 2(n-1)/n x 64 bytes with n = 4.
  EXPECT_NEAR(report["comm_bytes_per_device"].get<double>(), 5 * 1.5 * 64, 1e-6) << report.dump();
}

TEST_F(PartitionCliTest, ReportRejectsBadFiles) {
  CommandResult missing = Gspmd({"report", Path("nope.hlo")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(Path("nope.hlo")), std::string::npos) << missing.err;

  const std::string bad = WriteFile("bad.hlo", "HloModule bad\n\nENTRY %main {\n  %x = f32[2 parameter(0)\n}\n");
  CommandResult parse_error = Gspmd({"report", "--json", bad});
  EXPECT_EQ(parse_error.exit_code, 1);
  EXPECT_EQ(parse_error.out, "");
  EXPECT_EQ(parse_error.err.rfind(bad + ":", 0), 0u) << parse_error.err;
}

// ---- our programs, through the CLI, as the acceptance checks run them ----

TEST_F(PartitionCliTest, OurProgramsCommunicateNoMoreThanXla) {
  for (const fs::path& case_dir : CorpusCases()) {
    const std::string name = case_dir.parent_path().filename().string() + "/" + case_dir.filename().string();
    const std::string ours = Path("ours.hlo");
    CommandResult partition = Gspmd({"partition", (case_dir / "propagated.hlo").string(), "-o", ours});
    ASSERT_EQ(partition.exit_code, 0) << name << ": " << partition.err;
    EXPECT_EQ(partition.err.find("involuntary"), std::string::npos) << name << ": " << partition.err;
    const double our_bytes = ReportJson(ours)["comm_bytes_per_device"].get<double>();
    const double xla_bytes = ReportJson((case_dir / "partitioned.hlo").string())["comm_bytes_per_device"].get<double>();
    EXPECT_LE(our_bytes, xla_bytes + 1e-6) << name;
  }
}

TEST_F(PartitionCliTest, RunWithoutSpmdReproducesEveryCorpusCase) {
  for (const fs::path& case_dir : CorpusCases()) {
    const std::string name = case_dir.parent_path().filename().string() + "_" + case_dir.filename().string();
    std::vector<std::string> args = {"run", (case_dir / "propagated.hlo").string(), "-o", Path(name), "-i"};
    for (const std::string& input : CaseInputs(case_dir)) args.push_back(input);
    CommandResult result = Gspmd(args);
    ASSERT_EQ(result.exit_code, 0) << name << ": " << result.err;
    EXPECT_EQ(result.err.find("involuntary"), std::string::npos) << name << ": " << result.err;
    ExpectAllClose(Path(name), case_dir, CaseOutputCount(case_dir), 1e-4);
  }
}

TEST_F(PartitionCliTest, RunWithDevicesOnAModuleWithoutACount) {
  std::string text = kUnevenRoot;
  text.replace(text.find(", num_partitions=4"), std::string(", num_partitions=4").size(), "");
  const std::string file = WriteFile("no_count.hlo", text);
  WriteNpy(Path("x.npy"), Ramp(Shape(ElementType::kF32, {10, 3}), 0.01));
  WriteNpy(Path("y.npy"), Ramp(Shape(ElementType::kS32, {7}), 3));
  CommandResult reference = Gspmd({"eval", file, "-i", Path("x.npy"), Path("y.npy"), "-o", Path("expected")});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  CommandResult result = Gspmd({"run", file, "--devices", "4", "-i", Path("x.npy"), Path("y.npy"), "-o", Path("out")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ExpectAllClose(Path("out"), Path("expected"), 2, 1e-6);

  CommandResult six = Gspmd({"run", file, "--devices", "6", "-i", Path("x.npy"), Path("y.npy"), "-o", Path("six")});
  EXPECT_EQ(six.exit_code, 1);
  EXPECT_NE(six.err.find("partitioned onto 6"), std::string::npos) << six.err;
}

// ---- the per-device module describes itself ----

TEST_F(PartitionCliTest, PartitionedUnevenOutputsRunWithoutLike) {
  const std::string file = WriteFile("uneven.hlo", kUnevenRoot);
  WriteNpy(Path("x.npy"), Ramp(Shape(ElementType::kF32, {10, 3}), 0.01));
  WriteNpy(Path("y.npy"), Ramp(Shape(ElementType::kS32, {7}), 3));
  CommandResult reference = Gspmd({"eval", file, "-i", Path("x.npy"), Path("y.npy"), "-o", Path("expected")});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  CommandResult partition = Gspmd({"partition", file, "-o", Path("per_device.hlo")});
  ASSERT_EQ(partition.exit_code, 0) << partition.err;
  const std::string per_device = ReadText(Path("per_device.hlo"));
  EXPECT_NE(per_device.find("gspmd.global_result_shapes=\"(f32[10,3], s32[7])\""), std::string::npos) << per_device;

  CommandResult run = Gspmd({"run", "--per-device", Path("per_device.hlo"), "-i", Path("x.npy"), Path("y.npy"), "-o",
                             Path("out")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("out0.npy f32[10,3]"), std::string::npos) << run.out;  // cropped, not 12 rows
  EXPECT_NE(run.out.find("out1.npy s32[7]"), std::string::npos) << run.out;
  ExpectAllClose(Path("out"), Path("expected"), 2, 1e-6);
}

TEST_F(PartitionCliTest, PartitionedCorpusCaseRunsWithoutLike) {
  const fs::path case_dir = kCorpus / "uneven_internal_10_over_4";
  CommandResult partition = Gspmd({"partition", (case_dir / "propagated.hlo").string(), "-o", Path("ours.hlo")});
  ASSERT_EQ(partition.exit_code, 0) << partition.err;
  std::vector<std::string> args = {"run", "--per-device", Path("ours.hlo"), "-o", Path("out"), "-i"};
  for (const std::string& input : CaseInputs(case_dir)) args.push_back(input);
  CommandResult run = Gspmd(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectAllClose(Path("out"), case_dir, CaseOutputCount(case_dir), 1e-4);
}

TEST_F(PartitionCliTest, BrokenRecordedResultShapesAreReported) {
  CommandResult partition = Gspmd({"partition", WriteFile("uneven.hlo", kUnevenRoot)});
  ASSERT_EQ(partition.exit_code, 0) << partition.err;
  std::string text = partition.out;
  const std::string recorded = "\"(f32[10,3], s32[7])\"";
  ASSERT_NE(text.find(recorded), std::string::npos) << text;
  text.replace(text.find(recorded), recorded.size(), "\"(f32[10,3])\"");
  WriteNpy(Path("x.npy"), Ramp(Shape(ElementType::kF32, {10, 3}), 0.01));
  WriteNpy(Path("y.npy"), Ramp(Shape(ElementType::kS32, {7}), 3));
  CommandResult run = Gspmd({"run", "--per-device", WriteFile("broken.hlo", text), "-i", Path("x.npy"), Path("y.npy"),
                             "-o", Path("out")});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("gspmd.global_result_shapes"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace gspmd
