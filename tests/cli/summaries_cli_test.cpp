// Summaries instead of walls of text (issue 30): `show --summary` and the picture cap, the one
// stderr line of `partition`, `train --save` named files and index.json, the 100-column
// progress, and --json on show, compare and train.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "io/npy.h"

namespace gspmd::cli_test {
namespace {

using json = nlohmann::json;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class SummariesCliTest : public CliTest {};

// ---- partition ----

TEST_F(SummariesCliTest, PartitionSaysWhatItMadeInOneStderrLine) {
  const std::string file = (kCorpus / "megatron_mlp" / "propagated.hlo").string();
  const CommandResult result = Gspmd({"partition", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // The counts are the report's: the same program through `gspmd report`.
  const CommandResult report = Gspmd({"report", WriteFile("per_device.hlo", result.out), "--json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json counts = json::parse(report.out)["collectives"];
  int64_t total = 0;
  std::string kinds;
  for (const auto& [kind, count] : counts.items()) {
    total += count.get<int64_t>();
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(count.get<int64_t>()) + " " + kind;
  }
  ASSERT_GT(total, 0);
  const std::regex line("partitioned " + std::regex_replace(file, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                        " for 8 devices: " + std::to_string(total) + " collectives? \\(" + kinds +
                        "\\), [0-9.]+ (B|KiB|MiB) per device communicated\n");
  EXPECT_TRUE(std::regex_match(result.err, line)) << result.err;

  // -o names the file written; --propagate-only writes no per-device program and says nothing.
  const CommandResult to_file = Gspmd({"partition", file, "-o", Path("out.hlo")});
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(to_file.err.rfind("partitioned " + file + " into " + Path("out.hlo") + " for 8 devices: ", 0), 0u)
      << to_file.err;
  const CommandResult propagated = Gspmd({"partition", file, "--propagate-only"});
  ASSERT_EQ(propagated.exit_code, 0) << propagated.err;
  EXPECT_EQ(propagated.err, "");

  // Nothing to communicate.
  const std::string local = WriteFile("local.hlo", R"(HloModule local, num_partitions=2
ENTRY main {
  x = f32[8] parameter(0), sharding={devices=[2]<=[2]}
  ROOT n = f32[8] negate(x), sharding={devices=[2]<=[2]}
}
)");
  const CommandResult quiet = Gspmd({"partition", local});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "partitioned " + local + " for 2 devices: no collectives, nothing communicated\n");
}

// ---- show ----

constexpr const char* kSmallProgram = R"(HloModule show, num_partitions=8

ENTRY main {
  a = f32[8,16] parameter(0), sharding={devices=[2,4]<=[8]}
  b = f32[8,16] parameter(1), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  ROOT t = (f32[8,16], f32[8,16]) tuple(a, b), sharding={{devices=[2,4]<=[8]}, {replicated}}
}
)";

TEST_F(SummariesCliTest, ShowSummaryListsOneLinePerValue) {
  const std::string file = WriteFile("small.hlo", kSmallProgram);
  const CommandResult result = Gspmd({"show", file, "--summary"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "mesh: 8 devices\n"
            "parameter 0 %a  f32[8,16] {devices=[2,4]<=[8]}: 8 tiles of f32[4,4] per device\n"
            "parameter 1 %b  f32[8,16] {devices=[2,2,2]<=[8] last_tile_dim_replicate}: 4 tiles of f32[4,8] per "
            "device, each on 2 devices\n"
            "result 0 %a     f32[8,16] {devices=[2,4]<=[8]}: 8 tiles of f32[4,4] per device\n"
            "result 1 %b     f32[8,16] {replicated}: 1 tile of f32[8,16] per device (replicated)\n"
            "total: 4 values, 2.00 KiB global, 768 B per device\n");
}

TEST_F(SummariesCliTest, ShowJsonHasNameShapeShardingAndTilesPerValue) {
  const std::string file = WriteFile("small.hlo", kSmallProgram);
  const CommandResult result = Gspmd({"show", file, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const json shown = json::parse(result.out);
  EXPECT_EQ(shown["devices"], 8);
  ASSERT_EQ(shown["values"].size(), 4u);
  const json& a = shown["values"][0];
  EXPECT_EQ(a["name"], "a");
  EXPECT_EQ(a["role"], "parameter 0");
  EXPECT_EQ(a["shape"], "f32[8,16]");
  EXPECT_EQ(a["dims"], json::array({8, 16}));
  EXPECT_EQ(a["dtype"], "f32");
  EXPECT_EQ(a["sharding"], "{devices=[2,4]<=[8]}");
  EXPECT_EQ(a["tiles"], 8);
  EXPECT_EQ(a["tile_shape"], "f32[4,4]");
  EXPECT_EQ(a["bytes_per_device"], 64);
  EXPECT_FALSE(a.contains("leaf"));
  // The root tuple's elements by the values they hold, laid out as the root's sharding says.
  const json& element = shown["values"][3];
  EXPECT_EQ(element["name"], "b");
  EXPECT_EQ(element["role"], "result 1");
  EXPECT_EQ(element["sharding"], "{replicated}");
  EXPECT_EQ(element["devices_per_tile"], 8);
  EXPECT_FALSE(element.contains("leaf"));
  // A tuple that is not built at the root lists its leaves under its own name.
  const json leaves = json::parse(Gspmd({"show", file, "--json", "--value", "t"}).out);
  ASSERT_EQ(leaves["values"].size(), 2u);
  EXPECT_EQ(leaves["values"][1]["name"], "t");
  EXPECT_EQ(leaves["values"][1]["leaf"], json::array({1}));
  // --value picks values; --json with --summary is refused.
  const json one = json::parse(Gspmd({"show", file, "--json", "--value", "b"}).out);
  ASSERT_EQ(one["values"].size(), 1u);
  EXPECT_EQ(one["values"][0]["role"], "");
  EXPECT_EQ(one["values"][0]["devices_per_tile"], 2);
  const CommandResult both = Gspmd({"show", file, "--json", "--summary"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("--json and --summary"), std::string::npos) << both.err;
}

// A paper preset has hundreds of values: show draws the first 40 and says how to see the rest.
TEST_F(SummariesCliTest, ShowCapsThePicturesOfALargeProgram) {
  const std::string file = Path("preset.hlo");
  const CommandResult model = Gspmd({"model", "--preset", "gshard-128e-12l", "-o", file});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const CommandResult pictures = Gspmd({"show", file});
  ASSERT_EQ(pictures.exit_code, 0) << pictures.err;
  const std::vector<std::string> lines = Lines(pictures.out);
  EXPECT_LT(lines.size(), 300u);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(std::regex_match(lines.back(), std::regex(R"(\.\.\. [0-9]+ more values; use --value NAME or --summary)")))
      << lines.back();
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& line) { return line.rfind("parameter ", 0) == 0; }),
            40);

  const CommandResult summary = Gspmd({"show", file, "--summary"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const std::vector<std::string> listed = Lines(summary.out);
  const json shown = json::parse(Gspmd({"show", file, "--json"}).out);
  // "mesh:", one line per value, "total:".
  EXPECT_EQ(listed.size(), shown["values"].size() + 2);
  EXPECT_EQ(listed.back().rfind("total: " + std::to_string(shown["values"].size()) + " values, ", 0), 0u)
      << listed.back();
  // The hint's count: entry parameters and the result beyond the 40 drawn.
  int64_t parameters = 0;
  for (const json& value : shown["values"])
    if (value["role"].get<std::string>().rfind("parameter ", 0) == 0) ++parameters;
  EXPECT_EQ(lines.back(), "... " + std::to_string(parameters + 1 - 40) + " more values; use --value NAME or --summary");
}

// ---- compare ----

TEST_F(SummariesCliTest, CompareJson) {
  Literal expected(Shape(ElementType::kF32, {2, 2}));
  Literal actual(Shape(ElementType::kF32, {2, 2}));
  for (int64_t i = 0; i < 4; ++i) {
    expected.SetFromDouble(i, static_cast<double>(i + 1));
    actual.SetFromDouble(i, static_cast<double>(i + 1) + (i == 3 ? 0.5 : 0.0));
  }
  WriteNpy(Path("a.npy"), actual);
  WriteNpy(Path("e.npy"), expected);
  const CommandResult fail = Gspmd({"compare", Path("a.npy"), Path("e.npy"), "--json"});
  EXPECT_EQ(fail.exit_code, 1) << fail.err;
  const json failed = json::parse(fail.out);
  EXPECT_EQ(failed["shape"], "f32[2,2]");
  EXPECT_EQ(failed["dtype"], "f32");
  EXPECT_DOUBLE_EQ(failed["max_abs_err"].get<double>(), 0.5);
  EXPECT_NEAR(failed["rel_err"].get<double>(), 0.5 / std::sqrt(30.0), 1e-9);
  EXPECT_EQ(failed["pass"], false);
  EXPECT_TRUE(failed.contains("rtol"));
  EXPECT_TRUE(failed.contains("atol"));
  const CommandResult pass = Gspmd({"compare", Path("a.npy"), Path("e.npy"), "--json", "--rtol", "0.1"});
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  const json passed = json::parse(pass.out);
  EXPECT_EQ(passed["pass"], true);
  EXPECT_DOUBLE_EQ(passed["rtol"].get<double>(), 0.1);
  // Shapes that differ: no error figures.
  WriteNpy(Path("v.npy"), Literal(Shape(ElementType::kF32, {4})));
  const json other = json::parse(Gspmd({"compare", Path("v.npy"), Path("e.npy"), "--json"}).out);
  EXPECT_EQ(other["pass"], false);
  EXPECT_TRUE(other["rel_err"].is_null());
  EXPECT_EQ(other["expected_shape"], "f32[2,2]");
}

// ---- train ----

class TrainSummaryTest : public SummariesCliTest {
 protected:
  // A two-layer MoE step: weights and optimizer state carried, loss and MoE metrics first.
  std::string Model() {
    const std::string hlo = Path("moe.hlo");
    const CommandResult model = Gspmd({"model", "gshard_moe", "--set", "layers=2", "-o", hlo});
    EXPECT_EQ(model.exit_code, 0) << model.err;
    return hlo;
  }
};

TEST_F(TrainSummaryTest, SaveNamesFilesByTheParametersTheyUpdate) {
  const std::string hlo = Model();
  const CommandResult r = Gspmd({"train", hlo, "--steps", "2", "--progress", "lines", "--save", Path("saved")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json index = json::parse(ReadText(Path("saved/index.json")));
  const json& outputs = index["outputs"];
  ASSERT_GT(outputs.size(), 3u);
  // One line about the files, not one per file.
  EXPECT_NE(r.out.find("saved " + std::to_string(outputs.size()) + " arrays to " + Path("saved") +
                       " (and index.json naming them)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(".npy"), std::string::npos) << r.out;
  EXPECT_EQ(outputs[0]["file"], "loss.npy");
  EXPECT_EQ(ReadNpy(Path("saved/loss.npy")).shape().rank(), 0);
  std::vector<std::string> files;
  int64_t carried = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const json& output = outputs[i];
    EXPECT_EQ(output["output"], static_cast<int64_t>(i));
    const std::string file = output["file"];
    files.push_back(file);
    EXPECT_TRUE(std::regex_match(file, std::regex(R"([A-Za-z0-9_.-]+\.npy)"))) << file;
    EXPECT_EQ(ReadNpy(Path("saved/" + file)).shape().ToString(false), output["shape"]) << file;
    if (output["input"].is_null()) continue;
    ++carried;
    EXPECT_EQ(file, output["name"].get<std::string>() + ".npy");  // model parameter names need no change
    EXPECT_EQ(file.rfind("out", 0), std::string::npos) << file;
  }
  EXPECT_GT(carried, 0);
  std::sort(files.begin(), files.end());
  EXPECT_EQ(std::adjacent_find(files.begin(), files.end()), files.end());  // unique

  // Quiet: nothing at all on stdout, the same files.
  const CommandResult quiet = Gspmd({"train", hlo, "--steps", "1", "--progress", "quiet", "--save", Path("q")});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  EXPECT_TRUE(fs::exists(Path("q/index.json")));
  EXPECT_TRUE(fs::exists(Path("q/loss.npy")));
}

// Outputs that are metrics are named by the metric; one that is neither carried nor a metric is
// out<i>; characters outside [A-Za-z0-9_.-] become '_', and a name already taken gets the
// output index.
TEST_F(TrainSummaryTest, SaveSanitizesAndDeduplicatesNames) {
  const std::string hlo = WriteFile("step.hlo", R"(HloModule step, frontend_attributes={gspmd.metrics="w_a,acc/top 1"}

ENTRY main {
  w.a = f32[2] parameter(0)
  w_a = f32[2] parameter(1)
  s0 = f32[] constant(2)
  s1 = f32[] constant(3)
  one = f32[] constant(1)
  ones = f32[2] broadcast(one), dimensions={}
  n0 = f32[2] add(w.a, ones)
  n1 = f32[2] add(w_a, ones)
  d = f32[2] multiply(w.a, w_a)
  ROOT t = (f32[], f32[], f32[2], f32[2], f32[2]) tuple(s0, s1, n0, n1, d)
}
)");
  WriteNpy(Path("w0.npy"), Literal(Shape(ElementType::kF32, {2})));
  WriteNpy(Path("w1.npy"), Literal(Shape(ElementType::kF32, {2})));
  const CommandResult r = Gspmd({"train", hlo, "--steps", "1", "--carry", "2:0,3:1", "--progress", "quiet", "-i",
                                 Path("w0.npy"), Path("w1.npy"), "--save", Path("saved")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json outputs = json::parse(ReadText(Path("saved/index.json")))["outputs"];
  ASSERT_EQ(outputs.size(), 5u);
  const std::vector<std::string> files = {"w_a.npy", "acc_top_1.npy", "w.a.npy", "w_a_3.npy", "out4.npy"};
  const std::vector<std::string> names = {"w_a", "acc/top 1", "w.a", "w_a", "out4"};
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(outputs[i]["file"], files[i]) << i;
    EXPECT_EQ(outputs[i]["name"], names[i]) << i;
    EXPECT_TRUE(fs::exists(Path("saved/" + files[i]))) << files[i];
  }
  EXPECT_TRUE(outputs[0]["input"].is_null());
  EXPECT_EQ(outputs[2]["input"], 0);
  EXPECT_EQ(outputs[3]["input"], 1);
  EXPECT_TRUE(outputs[4]["input"].is_null());
}

// Every line train prints but those naming the user's files fits 100 columns, in each mode, on
// a model with several metrics and the check on.
TEST_F(TrainSummaryTest, ProgressFitsOneHundredColumns) {
  const std::string hlo = Model();
  for (const std::string mode : {"lines", "bar"}) {
    SCOPED_TRACE(mode);
    const CommandResult r = Gspmd({"train", hlo, "--steps", "3", "--check", "--progress", mode, "--save",
                                   Path("saved_" + mode)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> lines;
    for (const std::string& line : Lines(r.out)) {
      // The bar redraws its line: each drawing counts on its own.
      std::string rest = line;
      for (size_t at; (at = rest.find("\r\033[K")) != std::string::npos; rest = rest.substr(at + 4))
        if (at > 0) lines.push_back(rest.substr(0, at));
      lines.push_back(rest);
    }
    ASSERT_GT(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines[0].rfind("train " + hlo, 0), 0u) << lines[0];
    EXPECT_EQ(lines.back(), "saved 57 arrays to " + Path("saved_" + mode) + " (and index.json naming them)");
    // Those two lines name the user's files; the others fit.
    for (size_t i = 1; i + 1 < lines.size(); ++i)
      EXPECT_LE(lines[i].size(), 100u) << "line " << i << ": " << lines[i];
    EXPECT_NE(r.out.find("step 3/3"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" loss "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("every step matched one device"), std::string::npos) << r.out;
    // Every metric of the MoE step still shows.
    for (const std::string metric : {" loss ", " accuracy ", " aux_loss ", " dropped_tokens "})
      EXPECT_NE(r.out.find(metric), std::string::npos) << metric << "\n" << r.out;
    if (std::string(mode) == "lines") EXPECT_NE(r.out.find("  check ok"), std::string::npos) << r.out;
  }
}

TEST_F(TrainSummaryTest, TrainJson) {
  const std::string hlo = Model();
  const CommandResult r =
      Gspmd({"train", hlo, "--steps", "3", "--check", "--json", "--save", Path("saved"), "--plot", Path("loss.svg")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json run = json::parse(r.out);  // stdout is the object alone
  EXPECT_EQ(run["steps"], 3);
  EXPECT_EQ(run["devices"], 8);
  EXPECT_EQ(run["model"], "gshard_moe");
  EXPECT_EQ(run["backend"], "threads");
  ASSERT_EQ(run["per_step"].size(), 3u);
  EXPECT_EQ(run["metrics"][0], "loss");
  double seconds = 0;
  for (size_t i = 0; i < 3; ++i) {
    const json& step = run["per_step"][i];
    EXPECT_EQ(step["step"], static_cast<int64_t>(i + 1));
    EXPECT_TRUE(step["loss"].is_number());
    EXPECT_EQ(step["metrics"]["loss"], step["loss"]);
    EXPECT_GT(step["seconds"].get<double>(), 0);
    EXPECT_EQ(step["matches_one_device"], true);
    seconds += step["seconds"].get<double>();
  }
  EXPECT_NEAR(run["seconds"].get<double>(), seconds, 1e-9);
  EXPECT_EQ(run["first_loss"], run["per_step"][0]["loss"]);
  EXPECT_EQ(run["last_loss"], run["per_step"][2]["loss"]);
  EXPECT_EQ(run["check"]["passed"], true);
  EXPECT_EQ(run["saved"]["dir"], Path("saved"));
  EXPECT_EQ(run["plot"], Path("loss.svg"));
  // What would stand beside the progress goes to stderr.
  EXPECT_NE(r.err.find("saved "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wrote " + Path("loss.svg")), std::string::npos) << r.err;

  // Without --check the check is null and steps carry no verdict.
  const json unchecked = json::parse(Gspmd({"train", hlo, "--steps", "1", "--json"}).out);
  EXPECT_TRUE(unchecked["check"].is_null());
  EXPECT_FALSE(unchecked["per_step"][0].contains("matches_one_device"));
  EXPECT_TRUE(unchecked["saved"].is_null());
}

}  // namespace
}  // namespace gspmd::cli_test
