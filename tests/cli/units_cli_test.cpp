// One figure reads the same in every command's text (support/units.h): the communication per
// device of a corpus program in lint, report, its HTML page and simulate; no command prints
// fractional bytes, decimal units (kB, MB, GB) or exact byte counts beside the rounded ones.
#include <nlohmann/json.hpp>

#include <regex>

#include "cli/cli_test_util.h"
#include "support/units.h"

namespace gspmd::cli_test {
namespace {

using nlohmann::json;

class UnitsCliTest : public CliTest {};

// The first spelling of bytes, times or fractions that the formatter never produces, with the
// text around it; "" when there is none.
std::string ForeignUnits(const std::string& text) {
  static const std::regex foreign(
      "[0-9]\\.[0-9]+ (bytes|B)\\b"              // fractional bytes ("2925763246.1 bytes")
      "|\\([0-9]+ bytes\\)"                       // an exact count beside a rounded one
      "|[0-9] ?(kB|KB|MB|GB|TB|PB)\\b(?!/s)"     // decimal units (bandwidths are quoted in GB/s)
      "|[0-9]\\.[0-9]{3,} (KiB|MiB|GiB|TiB|s|ms|us|ns)\\b"  // more than three digits
      "|\u00b5s");                                // one spelling of microseconds: us
  std::smatch match;
  if (!std::regex_search(text, match, foreign)) return "";
  const size_t at = static_cast<size_t>(match.position(0));
  const size_t from = at < 60 ? 0 : at - 60;
  return "'" + match.str(0) + "' in ..." + text.substr(from, 140) + "...";
}

// The case's global program, which every command takes (partitioning it first).
std::string Global(const std::string& name) { return (kCorpus / name / "pre.hlo").string(); }

TEST_F(UnitsCliTest, CommunicationPerDeviceReadsTheSameInLintReportAndSimulate) {
  // A case with a conflict lint can fix: its fix says "communication BEFORE -> AFTER", BEFORE
  // being the program's communication per device as it stands.
  const std::string program = Global("reshard_variety");
  const CommandResult report_json = Gspmd({"report", program, "--json"});
  ASSERT_EQ(report_json.exit_code, 0) << report_json.err;
  const double exact = json::parse(report_json.out)["comm_bytes_per_device"].get<double>();
  ASSERT_GE(exact, 1024) << "a figure in KiB or more, so its rounding shows";
  const std::string figure = FormatBytes(exact);

  const CommandResult report = Gspmd({"report", program});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("comm_bytes_per_device: " + figure + "\n"), std::string::npos) << figure << "\n"
                                                                                           << report.out;

  const CommandResult simulate = Gspmd({"simulate", program, "--chip", "tpu-v4"});
  ASSERT_EQ(simulate.exit_code, 0) << simulate.err;
  EXPECT_NE(simulate.out.find("communication    " + figure + " sent\n"), std::string::npos) << figure << "\n"
                                                                                             << simulate.out;
  const CommandResult simulate_json = Gspmd({"simulate", program, "--chip", "tpu-v4", "--json"});
  ASSERT_EQ(simulate_json.exit_code, 0) << simulate_json.err;
  EXPECT_EQ(json::parse(simulate_json.out)["comm_bytes_per_device"].get<double>(), exact) << "exact in JSON";

  const CommandResult lint = Gspmd({"lint", "--no-search", program});
  ASSERT_EQ(lint.exit_code, 0) << lint.err;
  EXPECT_NE(lint.out.find("communication " + figure + " -> "), std::string::npos) << figure << "\n" << lint.out;

  const std::string page = Path("report.html");
  const CommandResult html = Gspmd({"report", program, "-o", page});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  std::smatch total;
  const std::string source = ReadText(page);
  ASSERT_TRUE(std::regex_search(source, total, std::regex("id=\"total-comm-bytes\" data-value=\"([^\"]*)\">([^<]*)<")));
  EXPECT_EQ(std::stod(total[1]), exact) << "exact in the page's data";
  EXPECT_EQ(total[2], figure);
}

TEST_F(UnitsCliTest, NoCommandPrintsFractionalBytesOrDecimalUnits) {
  // f32[10,7] split 3 ways pads each device's share of 93.3 bytes to 112: 18.7 bytes of
  // padding, which lint used to print as such.
  const std::string uneven = WriteFile("uneven.hlo", R"(HloModule uneven, num_partitions=3

ENTRY main {
  x = f32[10,7] parameter(0), sharding={devices=[3,1]<=[3]}
  ROOT t = f32[10,7] tanh(x)
}
)");
  const CommandResult lint = Gspmd({"lint", "--no-search", uneven});
  ASSERT_EQ(lint.exit_code, 0) << lint.err;
  EXPECT_NE(lint.out.find("padding is 20.0% of the value, 19 B per device"), std::string::npos) << lint.out;
  EXPECT_EQ(ForeignUnits(lint.out), "");
  const json lint_json = json::parse(Gspmd({"lint", "--no-search", uneven, "--json"}).out);
  ASSERT_FALSE(lint_json["findings"].empty());
  EXPECT_NEAR(lint_json["findings"][0]["bytes_per_device"].get<double>(), 112 - 280.0 / 3, 1e-9) << "exact in JSON";

  for (const char* name : {"uneven_internal_10_over_4", "moe_top2_alltoall", "transformer_train_1l", "reshard_variety"}) {
    const std::string program = Global(name);
    const std::vector<std::vector<std::string>> commands = {
        {"lint", "--no-search", program},
        {"report", program},
        {"simulate", program, "--chip", "tpu-v4"},
        {"simulate", program, "--chip", "h100", "--breakdown", "layer"},
        {"show", program},
        {"show", program, "--summary"},
        {"partition", program, "-o", Path("per_device.hlo")},  // its summary line on stderr
    };
    for (const std::vector<std::string>& command : commands) {
      const CommandResult result = Gspmd(command);
      ASSERT_EQ(result.exit_code, 0) << name << " " << command[0] << ": " << result.err;
      EXPECT_EQ(ForeignUnits(result.out), "") << name << " " << command[0];
      EXPECT_EQ(ForeignUnits(result.err), "") << name << " " << command[0];
    }
  }
}

TEST_F(UnitsCliTest, AutoshardSpellsFiguresAsTheOtherCommands) {
  const std::string program = Global("megatron_mlp");
  const CommandResult result =
      Gspmd({"autoshard", program, "--devices", "8", "--chip", "tpu-v3", "--max-evaluations", "4", "--explain"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(ForeignUnits(result.out), "");
  // "memory budget 16.0 GiB per device": the chip's HBM as simulate prints it.
  EXPECT_NE(result.out.find("memory budget " + FormatBytes(16.0 * (1LL << 30)) + " per device"), std::string::npos)
      << result.out;
}

}  // namespace
}  // namespace gspmd::cli_test
