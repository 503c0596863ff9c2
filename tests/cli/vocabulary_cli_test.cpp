// JAX's vocabulary in every command: a 2-layer MLP with an sdy.mesh of named axes (data=2,
// model=4; tests/data/vocabulary/mlp.mlir, and mlp_wide.mlir for autoshard) through show, lint,
// report, simulate, autoshard and partition --explain, each compared with its golden (GSPMD_UPDATE_GOLDENS=1 rewrites them);
// the same program as HLO text with --mesh gives the same PartitionSpecs, and bad meshes are
// located errors.
#include <cstdlib>
#include <regex>
#include <set>

#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

const fs::path kVocabulary = fs::path(GSPMD_TEST_DATA_DIR) / "vocabulary";
const std::string kMlir = (kVocabulary / "mlp.mlir").string();
const std::string kHlo = (kVocabulary / "mlp.hlo").string();

// `text` with the test data directory left out of paths, so goldens read "mlp.mlir:3:106".
std::string WithoutDataDir(std::string text) {
  const std::string prefix = kVocabulary.string() + "/";
  for (size_t pos = text.find(prefix); pos != std::string::npos; pos = text.find(prefix, pos)) text.erase(pos, prefix.size());
  return text;
}

// The lines of `text` that contain one of `needles` (all lines when there are none) and do not
// start with one of `drop`.
std::string Lines(const std::string& text, const std::vector<std::string>& needles,
                  const std::vector<std::string>& drop = {}) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    bool keep = needles.empty();
    for (const std::string& needle : needles) keep = keep || line.find(needle) != std::string::npos;
    for (const std::string& prefix : drop) keep = keep && line.rfind(prefix, 0) != 0;
    if (keep) out += line + "\n";
  }
  return out;
}

// Every PartitionSpec P(...) and every "over AXES" in `text`, one per line, in order.
std::string Vocabulary(const std::string& text) {
  static const std::regex kSpec(R"((^|[^A-Za-z0-9_])(P\((?:[^()]|\([^()]*\))*\))|over ('[a-z]+'|\([^()]*\)))");
  std::string out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kSpec); it != std::sregex_iterator(); ++it)
    out += ((*it)[2].matched ? (*it)[2].str() : "over " + (*it)[3].str()) + "\n";
  return out;
}

class VocabularyCliTest : public CliTest {
 protected:
  // Compares `actual` with tests/data/vocabulary/<name>.golden, or rewrites the golden when
  // GSPMD_UPDATE_GOLDENS=1.
  static void ExpectGolden(const std::string& name, const std::string& actual) {
    const fs::path golden = kVocabulary / (name + ".golden");
    const char* update = std::getenv("GSPMD_UPDATE_GOLDENS");
    if (update != nullptr && std::string(update) == "1") {
      std::ofstream(golden, std::ios::binary) << actual;
      return;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " is missing: run with GSPMD_UPDATE_GOLDENS=1";
    EXPECT_EQ(actual, ReadText(golden)) << "the output of " << name << " differs from " << golden
                                        << " (GSPMD_UPDATE_GOLDENS=1 rewrites it)";
  }

  std::string Run(const std::vector<std::string>& args) const {
    const CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return WithoutDataDir(result.out);
  }
};

TEST_F(VocabularyCliTest, ShowGolden) {
  // The pictures, then the --summary lines.
  const std::string out = Run({"show", kMlir, "--color", "never"}) + "--- show --summary\n" +
                          Run({"show", kMlir, "--summary"});
  EXPECT_NE(out.find("mesh: 8 devices (data=2,model=4)"), std::string::npos) << out;
  ExpectGolden("show", out);
  const std::string json = Run({"show", kMlir, "--json"});
  EXPECT_NE(json.find("\"mesh\": \"data=2,model=4\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"spec\": \"P(None, 'model')\""), std::string::npos) << json;
}

TEST_F(VocabularyCliTest, LintGolden) {
  const std::string out = Run({"lint", kMlir});
  // A StableHLO program's fix is a PartitionSpec.
  EXPECT_NE(out.find("fix: annotate %Arg_1 with P(None, None)"), std::string::npos) << out;
  ExpectGolden("lint", out);
}

TEST_F(VocabularyCliTest, ReportGolden) {
  // The page's mesh line and parameter shardings.
  const std::string out = Lines(Run({"report", "--partition", "--html", "-", kMlir}), {"mesh-devices", "class=\"param\""});
  EXPECT_NE(out.find("mesh 'data' of size 2, 'model' of size 4"), std::string::npos) << out;
  ExpectGolden("report", out);
}

TEST_F(VocabularyCliTest, SimulateGolden) {
  const std::string out = Run({"simulate", kMlir, "--chip", "tpu-v3"});
  EXPECT_NE(out.find("over 'model'"), std::string::npos) << out;
  ExpectGolden("simulate", out);
}

TEST_F(VocabularyCliTest, AutoshardGolden) {
  // The same MLP 16x wider (splitting it pays): the mesh of the program's own axis sizes is
  // searched first under its names, and the plan's specs use them. The solve time is left out
  // (it depends on the machine).
  const std::string wide = (kVocabulary / "mlp_wide.mlir").string();
  const std::string out = Lines(Run({"autoshard", wide, "--chip", "tpu-v3", "--keep-annotations", "none",
                                     "--max-evaluations", "12"}),
                                {}, {"solved in "});
  EXPECT_NE(out.find("chosen mesh: data=2,model=4"), std::string::npos) << out;
  EXPECT_NE(out.find("P(None, ('data', 'model'))"), std::string::npos) << out;
  ExpectGolden("autoshard", out);
}

TEST_F(VocabularyCliTest, ExplainGolden) {
  const std::string out = Run({"partition", "--propagate-only", "--explain", kMlir});
  EXPECT_NE(out.find("/* P('data', 'model'); from %Arg_1 (user) via dot forward */"), std::string::npos) << out;
  ExpectGolden("explain", out);
}

// The distinct lines of `text`, sorted.
std::string Distinct(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.insert(line);
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

// The same program as HLO text (no sdy.mesh) reads the same once --mesh names the axes: the
// PartitionSpecs of show, lint, --explain and simulate are those of the .mlir (in order; for
// --explain as a set, since the .mlir has one more instruction, its result's sharding call);
// lint's fix is XLA's sharding={...} with the spec beside it. Without --mesh no P form appears.
TEST_F(VocabularyCliTest, HloWithMeshFlagGivesTheSameSpecs) {
  const std::vector<std::vector<std::string>> commands = {
      {"show", "--color", "never"}, {"lint"}, {"partition", "--propagate-only", "--explain"}, {"simulate", "--chip", "tpu-v3"}};
  for (const std::vector<std::string>& command : commands) {
    std::vector<std::string> mlir = command;
    mlir.push_back(kMlir);
    std::vector<std::string> hlo = command;
    hlo.push_back(kHlo);
    std::vector<std::string> named = hlo;
    named.insert(named.end(), {"--mesh", "data=2,model=4"});
    const bool as_set = command[0] == "partition";
    const std::string expected = Vocabulary(Run(mlir));
    EXPECT_FALSE(expected.empty()) << command[0];
    const std::string actual = Vocabulary(Run(named));
    EXPECT_EQ(as_set ? Distinct(actual) : actual, as_set ? Distinct(expected) : expected) << command[0];
    EXPECT_EQ(Vocabulary(Run(hlo)), "") << command[0];
  }
  const std::string lint = Run({"lint", kHlo, "--mesh", "data=2,model=4"});
  EXPECT_NE(lint.find("fix: annotate %w1 with sharding={replicated} P(None, None)"), std::string::npos) << lint;
}

TEST_F(VocabularyCliTest, BadMeshesAreLocatedErrors) {
  CommandResult result = Gspmd({"show", kHlo, "--mesh", "data=2,model=3"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("gspmd show: error: --mesh data=2,model=3 has 6 devices but the program has 8"),
            std::string::npos)
      << result.err;
  result = Gspmd({"lint", kMlir, "--mesh", "data=4,model=2"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("gspmd lint: error: --mesh data=4,model=2 contradicts the program's own mesh "
                            "mesh['data'=2,'model'=4]"),
            std::string::npos)
      << result.err;
  result = Gspmd({"simulate", kHlo, "--chip", "tpu-v3", "--mesh", "data=2,model"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("gspmd simulate: error: --mesh 'data=2,model': item 2 'model' (at column 8)"),
            std::string::npos)
      << result.err;
  // The same mesh as the program's own is accepted.
  EXPECT_EQ(Gspmd({"report", "--partition", kMlir, "--mesh", "data=2,model=4"}).exit_code, 0);
}

}  // namespace
}  // namespace gspmd::cli_test
