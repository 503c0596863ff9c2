// `gspmd report --html` loaded in headless Chromium (Debian's `chromium`): for the 32-layer
// training step the charts have drawn elements, the page's script ran, and the page's totals
// equal `gspmd report --json`; for an MoE preset the all-to-alls lead the chart by estimated
// time, by the layers `gspmd simulate` charges them to; neither page scrolls sideways at 1,280
// px. Screenshots are saved under the build folder. Also: names of ops read from MLIR.
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <sstream>

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

// Runs headless Chromium on `page` with `mode` (--dump-dom or --screenshot=PATH) in a window
// 1,280 px wide (a laptop screen), killed after 120 s so a browser that hangs fails the test
// instead of stalling it. Root (CI) needs --no-sandbox; the profile lives in a fresh folder.
int RunChromium(const std::string& chromium, const fs::path& profile, const std::string& mode, const fs::path& page,
                const fs::path& out) {
  const std::string command = "timeout -k 10 120 " + chromium +
                              " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
                              " --hide-scrollbars --window-size=1280,2400 --user-data-dir=" + Quote(profile.string()) +
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

// The text of the element with id `id` in `dom` (up to its first child).
std::string TextOf(const std::string& dom, const std::string& id) {
  std::smatch match;
  if (!std::regex_search(dom, match, std::regex("id=\"" + id + "\"[^>]*>([^<]*)<"))) return "(absent)";
  return match[1];
}

// A copy of `page` that records, once loaded, how wide its content is
// (<body data-scroll-width="...">, which --dump-dom shows).
fs::path WithWidthProbe(const fs::path& page, const fs::path& copy) {
  std::string text = ReadText(page);
  const size_t end = text.rfind("</body>");
  text.insert(end == std::string::npos ? text.size() : end,
              "<script>window.addEventListener('load', () => { document.body.dataset.scrollWidth = "
              "document.documentElement.scrollWidth; });</script>");
  std::ofstream(copy) << text;
  return copy;
}

// The page's width as WithWidthProbe recorded it in `dom` (-1 when the probe did not run).
int ScrollWidth(const std::string& dom) {
  std::smatch match;
  if (!std::regex_search(dom, match, std::regex("data-scroll-width=\"(\\d+)\""))) return -1;
  return std::stoi(match[1]);
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// A bar of the communication chart, in the page's order.
struct Bar {
  std::string kind;
  std::string layer;
  double seconds = 0;
};

std::vector<Bar> ChartBars(const std::string& dom) {
  const std::regex pattern("<rect class=\"bar\"[^>]* data-kind=\"([^\"]*)\" data-layer=\"([^\"]*)\"[^>]* "
                           "data-seconds=\"([^\"]*)\"");
  std::vector<Bar> bars;
  std::istringstream lines(dom);
  std::smatch match;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, match, pattern)) bars.push_back({match[1], match[2], std::stod(match[3])});
  return bars;
}

// The estimated seconds of the communication table's rows summed by their layer column.
std::map<std::string, double> TableSecondsByLayer(const std::string& dom) {
  const std::regex pattern("<tr><td class=\"name\">[^<]*</td><td class=\"name\">([^<]*)</td><td class=\"name\">"
                           "[^<]*</td><td data-value=\"[^\"]*\">[^<]*</td><td data-value=\"[^\"]*\">[^<]*</td>"
                           "<td data-value=\"([^\"]*)\">");
  std::map<std::string, double> seconds;
  std::istringstream lines(dom);
  std::smatch match;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, match, pattern)) seconds[match[1]] += std::stod(match[2]);
  return seconds;
}

class HtmlReportBrowserTest : public CliTest {};

TEST_F(HtmlReportBrowserTest, ThirtyTwoLayerReportDrawsAndMatchesJson) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is needed for this test: install Debian's `chromium` "
                                    "(scripts/install-deps.sh does)";
  const std::string program = (kBench32 / "partitioned.hlo").string();
  ASSERT_TRUE(fs::exists(program)) << program;
  const std::string page = Path("report.html");
  CommandResult html = Gspmd({"report", program, "-o", page});
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
  ASSERT_EQ(RunChromium(chromium, dir_ / "profile", "--dump-dom", WithWidthProbe(page, dir_ / "probe.html"), dom_path), 0)
      << ReadText(dom_path.string() + ".err");
  const std::string dom = ReadText(dom_path);
  EXPECT_EQ(html.out, "wrote " + page + "\n");
  const int width = ScrollWidth(dom);
  EXPECT_GT(width, 0) << "the width probe did not run";
  EXPECT_LE(width, 1280) << "the page scrolls sideways at 1,280 px";
  EXPECT_GE(Count(dom, "<rect class=\"bar\""), 5u);  // one per layer (here: top op_name component) and kind
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
  // The script spells bytes as the page (and every command) does.
  EXPECT_EQ(TextOf(dom, "table-bytes-sum"), TextOf(dom, "total-comm-bytes"));

  const fs::path shots = fs::path(GSPMD_BINARY).parent_path() / "browser_test";
  fs::create_directories(shots);
  const fs::path screenshot = shots / "report_transformer_train_32l.png";
  fs::remove(screenshot);
  EXPECT_EQ(RunChromium(chromium, dir_ / "profile", "--screenshot=" + screenshot.string(), page, dir_ / "shot.txt"), 0)
      << ReadText((dir_ / "shot.txt").string() + ".err");
  ASSERT_TRUE(fs::exists(screenshot));
  EXPECT_GT(fs::file_size(screenshot), 10000u);
}

// On GShard's 128-expert preset the 24 all-to-alls (4 in each MoE layer) take most of the
// estimated communication time but send fewer bytes than the all-reduces: with a chip the
// chart ranks by time, so they lead it, one bar per layer as `gspmd simulate --breakdown
// layer` names them, and each layer's time on the page is the time simulate charges it.
TEST_F(HtmlReportBrowserTest, MoePresetChartLeadsWithAllToAllsByLayer) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is needed for this test";
  const std::string program = Path("moe.hlo");
  CommandResult model = Gspmd({"model", "--preset", "gshard-128e-12l", "-o", program});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const std::string page = Path("moe.html");
  CommandResult html = Gspmd({"report", program, "--global", "--chip", "tpu-v4", "-o", page});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_EQ(html.out, "wrote " + page + "\n");
  CommandResult simulated = Gspmd({"simulate", program, "--chip", "tpu-v4", "--breakdown", "layer", "--json"});
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  const nlohmann::json simulation = nlohmann::json::parse(simulated.out);

  const fs::path dom_path = dir_ / "dom.html";
  ASSERT_EQ(RunChromium(chromium, dir_ / "profile", "--dump-dom", WithWidthProbe(page, dir_ / "probe.html"), dom_path), 0)
      << ReadText(dom_path.string() + ".err");
  const std::string dom = ReadText(dom_path);
  const int width = ScrollWidth(dom);
  EXPECT_GT(width, 0) << "the width probe did not run";
  EXPECT_LE(width, 1280) << "the page scrolls sideways at 1,280 px";

  const std::vector<Bar> bars = ChartBars(dom);
  ASSERT_GE(bars.size(), 10u);
  std::vector<std::string> all_to_all_layers;
  for (const Bar& bar : bars)
    if (bar.kind == "all-to-all") all_to_all_layers.push_back(bar.layer);
  EXPECT_EQ(all_to_all_layers, (std::vector<std::string>{"layer_1", "layer_11", "layer_3", "layer_5", "layer_7", "layer_9"}));
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(bars[i].kind, "all-to-all") << "bar " << i << ": " << bars[i].layer;
  for (size_t i = 1; i < bars.size(); ++i) EXPECT_LE(bars[i].seconds, bars[i - 1].seconds) << "bar " << i;
  EXPECT_EQ(dom.find(">%dot."), std::string::npos) << "a collective labelled by an HLO name";

  const std::map<std::string, double> page_seconds = TableSecondsByLayer(dom);
  size_t compared = 0;
  for (const nlohmann::json& entry : simulation["breakdown"]) {
    const double comm_s = entry["comm_s"].get<double>();
    if (comm_s == 0) continue;
    const std::string layer = entry["source"].get<std::string>();
    ASSERT_TRUE(page_seconds.count(layer)) << layer << " is not a layer on the page";
    EXPECT_NEAR(page_seconds.at(layer), comm_s, 1e-6 * comm_s) << layer;
    ++compared;
  }
  EXPECT_EQ(compared, page_seconds.size());

  const fs::path shots = fs::path(GSPMD_BINARY).parent_path() / "browser_test";
  fs::create_directories(shots);
  const fs::path screenshot = shots / "report_gshard_128e_12l.png";
  fs::remove(screenshot);
  EXPECT_EQ(RunChromium(chromium, dir_ / "profile", "--screenshot=" + screenshot.string(), page, dir_ / "shot.txt"), 0)
      << ReadText((dir_ / "shot.txt").string() + ".err");
  ASSERT_TRUE(fs::exists(screenshot));
  EXPECT_GT(fs::file_size(screenshot), 10000u);
}

// MLIR names values, not ops ("%124 = stablehlo.dot_general ..."): without a loc a collective
// is named by the op it was made for and the line it is on, with a loc by its file and line
// or by the op name the loc gives (never "%%124", the value name behind a second "%").
TEST_F(HtmlReportBrowserTest, MlirOpsAreNamedWithOrWithoutLoc) {
  const std::string program =
      "module @m attributes {mhlo.num_partitions = 2 : i32} {\n"
      "  func.func public @main(%arg0: tensor<4x8xf32> {mhlo.sharding = \"{devices=[1,2]<=[2]}\"}, %arg1: "
      "tensor<8x4xf32> {mhlo.sharding = \"{devices=[2,1]<=[2]}\"}) -> (tensor<4x4xf32> {mhlo.sharding = "
      "\"{replicated}\"}) {\n"
      "    %0 = stablehlo.add %arg0, %arg0 : tensor<4x8xf32>\n"
      "    %124 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, "
      "tensor<8x4xf32>) -> tensor<4x4xf32>LOC\n"
      "    return %124 : tensor<4x4xf32>\n"
      "  }\n"
      "}\n";
  auto with_loc = [&](const std::string& loc) { return std::regex_replace(program, std::regex("LOC"), loc); };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "<tr><td class=\"name\">dot %124 (line 4)</td><td class=\"name\">dot %124 (line 4)</td>"},
      {" loc(\"model.py\":42:0)", "<tr><td class=\"name\">dot %124 (model.py:42)</td>"},
      {" loc(\"jit(f)/layer_3/dot_general\"(\"model.py\":42:0))",
       "<tr><td class=\"name\">layer_3/dot_general</td><td class=\"name\">layer_3</td>"},
  };
  for (const auto& [loc, row] : cases) {
    const std::string input = WriteFile("f.mlir", with_loc(loc));
    const std::string page = Path("f.html");
    CommandResult result = Gspmd({"report", input, "--global", "-o", page});
    ASSERT_EQ(result.exit_code, 0) << loc << ": " << result.err;
    const std::string source = ReadText(page);
    EXPECT_NE(source.find(row), std::string::npos) << loc << ": " << source.substr(source.find("<table id=\"comm-table\""), 600);
    EXPECT_EQ(source.find("%%"), std::string::npos) << loc;
  }
}

TEST_F(HtmlReportBrowserTest, UnwritableOutputIsAnError) {
  const std::string program = (kCorpus / "megatron_mlp" / "partitioned.hlo").string();
  CommandResult result = Gspmd({"report", program, "-o", "/nonexistent-dir/report.html"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("/nonexistent-dir/report.html"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST_F(HtmlReportBrowserTest, GlobalProgramGetsLintFindings) {
  const std::string program = (kCorpus / "uneven_internal_10_over_4" / "pre.hlo").string();
  const std::string page = Path("uneven.html");
  CommandResult result = Gspmd({"report", program, "--global", "--chip", "tpu-v4", "-o", page});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string source = ReadText(page);
  EXPECT_NE(source.find("<th data-type=\"number\">est. time</th>"), std::string::npos);
  EXPECT_NE(source.find(" us</td>"), std::string::npos) << "times in human units";
  EXPECT_NE(source.find("<pre class=\"finding\">"), std::string::npos);
  EXPECT_NE(source.find("[uneven-padding]"), std::string::npos);
}

}  // namespace
}  // namespace gspmd::cli_test
