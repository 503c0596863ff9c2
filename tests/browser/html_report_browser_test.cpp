// `gspmd report --html` of the 32-layer training step loaded in headless Chromium (Debian's
// `chromium`): the charts have drawn elements, the page's script ran, and the page's totals
// equal `gspmd report --json`. A screenshot is saved under the build folder.
#include <nlohmann/json.hpp>

#include <regex>

#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

const fs::path kBench32 = fs::path(GSPMD_TEST_DATA_DIR) / ".." / ".." / "benchmarks" / "data" / "transformer_train_32l";

// The path of `chromium` on PATH ("" when absent).
std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const std::string command = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return name;
  }
  return "";
}

// Runs headless Chromium on `page` with `mode` (--dump-dom or --screenshot=PATH), killed after
// 120 s so a browser that hangs fails the test instead of stalling it. Root (CI) needs
// --no-sandbox; the profile lives in a fresh folder.
int RunChromium(const std::string& chromium, const fs::path& profile, const std::string& mode, const fs::path& page,
                const fs::path& out) {
  const std::string command = "timeout -k 10 120 " + chromium +
                              " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
                              " --hide-scrollbars --window-size=1200,2400 --user-data-dir=" + Quote(profile.string()) +
                              " " + Quote(mode) + " " + Quote("file://" + fs::absolute(page).string()) + " >" +
                              Quote(out.string()) + " 2>" + Quote(out.string() + ".err");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// data-value="..." of the element with id `id` in `dom`.
std::string DataValue(const std::string& dom, const std::string& id) {
  std::smatch match;
  const std::regex pattern("id=\"" + id + "\"[^>]*data-value=\"([^\"]*)\"");
  if (!std::regex_search(dom, match, pattern)) return "(absent)";
  return match[1];
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

class HtmlReportBrowserTest : public CliTest {};

TEST_F(HtmlReportBrowserTest, ThirtyTwoLayerReportDrawsAndMatchesJson) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is needed for this test: install Debian's `chromium` "
                                    "(scripts/install-deps.sh does)";
  const std::string program = (kBench32 / "partitioned.hlo").string();
  ASSERT_TRUE(fs::exists(program)) << program;
  const std::string page = Path("report.html");
  CommandResult html = Gspmd({"report", program, "--html", page});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string source = ReadText(page);
  EXPECT_EQ(source.find("http://"), source.find("http://www.w3.org/2000/svg"))  // the SVG namespace only
      << "the page must not fetch anything";
  EXPECT_EQ(source.find("<script src"), std::string::npos);
  EXPECT_EQ(source.find("<link"), std::string::npos);
  CommandResult json_result = Gspmd({"report", program, "--json"});
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  const nlohmann::json report = nlohmann::json::parse(json_result.out);

  const fs::path dom_path = dir_ / "dom.html";
  ASSERT_EQ(RunChromium(chromium, dir_ / "profile", "--dump-dom", page, dom_path), 0)
      << ReadText(dom_path.string() + ".err");
  const std::string dom = ReadText(dom_path);
  EXPECT_GT(Count(dom, "<rect class=\"bar\""), 5u);
  EXPECT_GT(Count(dom, "<rect class=\"tile\""), 100u);
  EXPECT_EQ(Count(dom, "<polyline class=\"live\""), 1u);
  EXPECT_EQ(Count(dom, "<circle class=\"peak\""), 1u);
  EXPECT_GT(Count(dom, "<tr><td class=\"name\">"), 10u);

  const double comm = std::stod(DataValue(dom, "total-comm-bytes"));
  EXPECT_DOUBLE_EQ(comm, report["comm_bytes_per_device"].get<double>());
  EXPECT_EQ(DataValue(dom, "total-peak-bytes"), std::to_string(report["peak_bytes_per_device"].get<int64_t>()));
  int64_t collectives = 0;
  for (const auto& [kind, stats] : report["collectives"].items()) collectives += stats.get<int64_t>();
  EXPECT_EQ(DataValue(dom, "total-collectives"), std::to_string(collectives));
  // Set by the page's script from the table's rows: the script ran and the table adds up.
  const std::string table_sum = DataValue(dom, "table-bytes-sum");
  ASSERT_NE(table_sum, "(absent)") << "the page's script did not run";
  EXPECT_NEAR(std::stod(table_sum), comm, 1e-6 * comm);

  const fs::path shots = fs::path(GSPMD_BINARY).parent_path() / "browser_test";
  fs::create_directories(shots);
  const fs::path screenshot = shots / "report_transformer_train_32l.png";
  fs::remove(screenshot);
  EXPECT_EQ(RunChromium(chromium, dir_ / "profile", "--screenshot=" + screenshot.string(), page, dir_ / "shot.txt"), 0)
      << ReadText((dir_ / "shot.txt").string() + ".err");
  ASSERT_TRUE(fs::exists(screenshot));
  EXPECT_GT(fs::file_size(screenshot), 10000u);
}

TEST_F(HtmlReportBrowserTest, UnwritableOutputIsAnError) {
  const std::string program = (kCorpus / "megatron_mlp" / "partitioned.hlo").string();
  CommandResult result = Gspmd({"report", program, "--html", "/nonexistent-dir/report.html"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("/nonexistent-dir/report.html"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST_F(HtmlReportBrowserTest, GlobalProgramGetsLintFindings) {
  const std::string program = (kCorpus / "uneven_internal_10_over_4" / "pre.hlo").string();
  const std::string page = Path("uneven.html");
  CommandResult result = Gspmd({"report", program, "--partition", "--chip", "tpu-v4", "--html", page});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string source = ReadText(page);
  EXPECT_NE(source.find("<th data-type=\"number\">est. time (us)</th>"), std::string::npos);
  EXPECT_NE(source.find("<pre class=\"finding\">"), std::string::npos);
  EXPECT_NE(source.find("[uneven-padding]"), std::string::npos);
}

}  // namespace
}  // namespace gspmd::cli_test
