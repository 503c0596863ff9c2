// `gspmd lint` on crafted programs (one per check: the exact finding, then the suggested fix
// applied removes it and lowers its bytes) and on every corpus program (no full
// rematerialization, no conflict costing more than XLA's own partitioned program sends).
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

using nlohmann::json;

// The HLO text with instruction `name`'s sharding={...} replaced by `sharding` (or added).
std::string WithSharding(const std::string& hlo, const std::string& name, const std::string& sharding) {
  const std::string head = "  " + name + " = ";
  size_t line = hlo.find(head);
  if (line == std::string::npos) line = hlo.find("  ROOT " + name + " = ");
  EXPECT_NE(line, std::string::npos) << name;
  if (line == std::string::npos) return hlo;
  const size_t end = hlo.find('\n', line);
  const size_t at = hlo.find("sharding={", line);
  if (at == std::string::npos || at > end) return hlo.substr(0, end) + ", sharding=" + sharding + hlo.substr(end);
  size_t close = at + 9;
  for (int depth = 0;; ++close) {
    if (hlo[close] == '{') ++depth;
    if (hlo[close] == '}' && --depth == 0) break;
  }
  return hlo.substr(0, at) + "sharding=" + sharding + hlo.substr(close + 1);
}

class LintTest : public CliTest {
 protected:
  // Lints `hlo`, expects `expected` on stdout, applies the first finding's fix and lints again:
  // that finding is gone, and what it cost is lower.
  void ExpectFindingAndFix(const std::string& hlo, const std::string& expected) {
    const std::string path = WriteFile("program.hlo", hlo);
    CommandResult text = Gspmd({"lint", "--no-search", path});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    std::string expected_text = expected;
    for (size_t at; (at = expected_text.find("FILE")) != std::string::npos;) expected_text.replace(at, 4, path);
    const size_t summary = text.out.rfind('\n', text.out.size() - 2) + 1;  // the last line (lint_summary_cli_test)
    EXPECT_EQ(text.out.substr(0, summary), expected_text);
    EXPECT_NE(text.out.find(" per device avoidable\n", summary), std::string::npos) << text.out;

    CommandResult result = Gspmd({"lint", "--no-search", path, "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const json report = json::parse(result.out);
    ASSERT_FALSE(report["findings"].empty());
    const json finding = report["findings"][0];
    ASSERT_TRUE(finding.contains("fix")) << finding.dump();
    const json fix = finding["fix"];
    const bool communication = finding["check"] == "conflict" || finding["check"] == "full-remat";
    if (communication) {
      EXPECT_LT(fix["comm_bytes_per_device_after"].get<double>(), fix["comm_bytes_per_device_before"].get<double>());
    }
    EXPECT_LT(fix["bytes_per_device"].get<double>(), finding["bytes_per_device"].get<double>());

    const std::string fixed = WriteFile("fixed.hlo", WithSharding(hlo, fix["instruction"], fix["sharding"]));
    CommandResult after = Gspmd({"lint", "--no-search", fixed, "--json"});
    ASSERT_EQ(after.exit_code, 0) << after.err;
    const json fixed_report = json::parse(after.out);
    for (const json& other : fixed_report["findings"]) {
      EXPECT_FALSE(other["check"] == finding["check"] && other["instruction"] == finding["instruction"])
          << "the fix left the finding: " << other.dump();
    }
    if (communication) {
      EXPECT_LT(fixed_report["comm_bytes_per_device"].get<double>(), report["comm_bytes_per_device"].get<double>());
    }
  }
};

// The MLP's input is annotated feature-split over the data axis where the batch should be.
constexpr const char* kMlpSwapped = R"(HloModule mlp_swapped, num_partitions=8

ENTRY main {
  x = f32[64,512] parameter(0), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  w1 = f32[512,256] parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  w2 = f32[256,512] parameter(2), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  h = f32[64,256] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[64,256] tanh(h)
  ROOT out = f32[64,512] dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
}
)";

TEST_F(LintTest, MlpWithSwappedBatchAndFeatureAnnotations) {
  ExpectFindingAndFix(
      kMlpSwapped,
      "FILE:4:3: warning: %x's annotation sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate} conflicts with "
      "%out's annotation sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}: reduce-scatter at %h costs 8.00 KiB"
      " per device [conflict]\n"
      "  fix: annotate %x with sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}: communication 104 KiB"
      " -> 96.0 KiB per device\n");
}

// A transformer feed-forward block on a data x model mesh whose weights are replicated over
// the model axis.
TEST_F(LintTest, TransformerWeightsReplicatedOverTheModelAxis) {
  ExpectFindingAndFix(R"(HloModule ffn_replicated, num_partitions=8

ENTRY main {
  x = f32[64,1024] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  w_in = f32[1024,1024] parameter(1), sharding={replicated}
  w_out = f32[1024,1024] parameter(2), sharding={replicated}
  h = f32[64,1024] dot(x, w_in), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[64,1024] tanh(h)
  y = f32[64,1024] dot(g, w_out), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = f32[64,1024] add(x, y), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
}
)",
                      "FILE:5:3: warning: %w_in f32[1024,1024] sharding={replicated} holds 4.00 MiB "
                      "per device and is replicated over mesh axis 1 (size 4), which it could be split over: 3.00 MiB"
                      " more per device [replicated]\n"
                      "  fix: annotate %w_in with sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}: "
                      "1.00 MiB per device, communication 0 B -> 96.0 KiB per "
                      "device\n"
                      "FILE:5:3: warning: mesh axis 1 (size 4) of the 8-device mesh splits no value: every value is "
                      "held 4 times over; of the peak of 8.38 MiB per device, 6.28 MiB"
                      " is replication over it [unused-axis]\n"
                      "  fix: annotate %w_in with sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate} (or "
                      "use 2 devices): communication 0 B -> 96.0 KiB per device\n"
                      "FILE:6:3: warning: %w_out f32[1024,1024] sharding={replicated} holds 4.00 MiB "
                      "per device and is replicated over mesh axis 1 (size 4), which it could be split over: 3.00 MiB"
                      " more per device [replicated]\n"
                      "  fix: annotate %w_out with sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}: "
                      "1.00 MiB per device, communication 0 B -> 96.0 KiB per "
                      "device\n");
}

TEST_F(LintTest, TenOverFourUnevenSplit) {
  ExpectFindingAndFix(R"(HloModule uneven, num_partitions=4

ENTRY main {
  x = f32[10,12] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[12,6] parameter(1), sharding={replicated}
  ROOT y = f32[10,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                      "FILE:4:3: warning: %x f32[10,12] sharding={devices=[4,1]<=[4]}: dim 0 of size 10 split 4 ways "
                      "pads to 12; padding is 20.0% of the value, 24 B per device (and 1 more values laid out "
                      "from it) [uneven-padding]\n"
                      "  fix: annotate %x with sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}: padding 0 B"
                      " per device (240 B per device in all), communication 0 B -> 0 B per device\n");
}

TEST_F(LintTest, TwoConflictingAnnotationsOnOnePath) {
  ExpectFindingAndFix(R"(HloModule conflict, num_partitions=4

ENTRY main {
  x = f32[64,128] parameter(0), sharding={devices=[4,1]<=[4]}
  t = f32[64,128] tanh(x)
  c = f32[64,128] custom-call(t), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]}
  ROOT e = f32[64,128] exponential(c)
}
)",
                      "FILE:4:3: warning: %x's annotation sharding={devices=[4,1]<=[4]} conflicts with %c's "
                      "annotation sharding={devices=[1,4]<=[4]}: all-to-all at %t costs 6.00 KiB per "
                      "device [conflict]\n"
                      "  fix: annotate %x with sharding={devices=[1,4]<=[4]}: communication 6.00 KiB -> "
                      "0 B per device\n");
}

TEST_F(LintTest, UnusedMeshAxis) {
  ExpectFindingAndFix(R"(HloModule unused_axis, num_partitions=8

ENTRY main {
  x = f32[64,32] parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  w = f32[32,32] parameter(1), sharding={replicated}
  ROOT y = f32[64,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                      "FILE:4:3: warning: mesh axis 1 (size 2) of the 8-device mesh splits no value: every value is "
                      "held 2 times over; of the peak of 8.00 KiB per device, 4.00 KiB is "
                      "replication over it [unused-axis]\n"
                      "  fix: annotate %x with sharding={devices=[8,1]<=[8]} (or use 4 devices): communication 0 B"
                      " -> 0 B per device\n");
}

TEST_F(LintTest, WerrorFailsOnlyWithWarnings) {
  const std::string swapped = WriteFile("swapped.hlo", kMlpSwapped);
  CommandResult failing = Gspmd({"lint", "--no-search", swapped, "--werror"});
  EXPECT_EQ(failing.exit_code, 1);
  EXPECT_NE(failing.out.find("[conflict]"), std::string::npos);
  EXPECT_NE(failing.err.find("lint found warnings and --werror was given"), std::string::npos) << failing.err;
  const std::string fixed = WriteFile(
      "fixed.hlo", WithSharding(kMlpSwapped, "x", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
  CommandResult passing = Gspmd({"lint", "--no-search", fixed, "--werror"});
  EXPECT_EQ(passing.exit_code, 0) << passing.out << passing.err;
  EXPECT_EQ(passing.out, "no warnings: no annotation costs more than lint can tell it should\n");
}

TEST_F(LintTest, RedundantAnnotationIsANoteWhenAskedFor) {
  const std::string path = WriteFile("redundant.hlo", R"(HloModule redundant, num_partitions=4

ENTRY main {
  x = f32[64,128] parameter(0), sharding={devices=[4,1]<=[4]}
  t = f32[64,128] tanh(x)
  c = f32[64,128] custom-call(t), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  ROOT e = f32[64,128] exponential(c), sharding={devices=[4,1]<=[4]}
}
)");
  CommandResult quiet = Gspmd({"lint", "--no-search", path});
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "no warnings: no annotation costs more than lint can tell it should\n");
  CommandResult noted = Gspmd({"lint", "--no-search", path, "--redundant", "--werror"});
  EXPECT_EQ(noted.exit_code, 0) << noted.err;  // notes are not warnings
  EXPECT_NE(noted.out.find(path + ":6:3: note: %c's annotation sharding={devices=[4,1]<=[4]} is what propagation "
                                  "gives it without the annotation [redundant]"),
            std::string::npos)
      << noted.out;
}

TEST_F(LintTest, BadInput) {
  CommandResult missing = Gspmd({"lint", "--no-search", Path("absent.hlo")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("absent.hlo"), std::string::npos) << missing.err;
  const std::string per_device = (kCorpus / "megatron_mlp" / "partitioned.hlo").string();
  CommandResult partitioned = Gspmd({"lint", "--no-search", per_device});
  EXPECT_EQ(partitioned.exit_code, 1);
  EXPECT_NE(partitioned.err.find("lint needs the global program"), std::string::npos) << partitioned.err;
  CommandResult threshold = Gspmd({"lint", "--no-search", WriteFile("p.hlo", kMlpSwapped), "--padding-threshold", "150"});
  EXPECT_EQ(threshold.exit_code, 1);
  EXPECT_NE(threshold.err.find("--padding-threshold 150 is not a percentage"), std::string::npos) << threshold.err;
}

// XLA's communication per case (xla_comm.tsv: case, gspmd_bytes, ...).
std::map<std::string, double> XlaCommBytes() {
  std::map<std::string, double> bytes;
  std::ifstream in(kCorpusRoot / "xla_comm.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    bytes[line.substr(0, tab)] = std::stod(line.substr(tab + 1));
  }
  return bytes;
}

TEST_F(LintTest, CorpusHasNoFullRematerializationAndNoConflictXlaAvoids) {
  const std::map<std::string, double> xla = XlaCommBytes();
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    const fs::path pre = entry.path() / "pre.hlo";
    if (!fs::exists(pre)) continue;
    const std::string name = entry.path().filename().string();
    CommandResult result = Gspmd({"lint", "--no-search", pre.string(), "--json"});
    ASSERT_EQ(result.exit_code, 0) << name << ": " << result.err;
    double conflict_bytes = 0;
    // The parsed document is named: a range-for over a member of a temporary reads freed memory.
    const json report = json::parse(result.out);
    for (const json& finding : report["findings"]) {
      EXPECT_NE(finding["check"], "full-remat") << name << ": " << finding.dump();
      if (finding["check"] == "conflict") conflict_bytes += finding["bytes_per_device"].get<double>();
    }
    ASSERT_TRUE(xla.count(name)) << name;
    EXPECT_LE(conflict_bytes, xla.at(name)) << name << ": a conflict XLA's partitioned program does not pay for";
    ++cases;
  }
  EXPECT_EQ(cases, 15);
}

}  // namespace
}  // namespace gspmd::cli_test
