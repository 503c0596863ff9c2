// Every reference case from its user-annotated pre.hlo: propagate, partition, run, compare with
// JAX's outputs; communication must not exceed XLA's partitioned.hlo (nor, for the cases listed
// in kRatioBounds, that fraction of it), the partitioner must not warn, every user annotation
// must survive propagation, and a value is left unsharded only where XLA leaves it so.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "io/npy.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

struct CorpusCase {
  std::string name;
  fs::path dir;
  // Newer JAX exports spell Shardy's custom-calls and shard_map bodies "local_xla.sdy.*":
  // the Shardy cases run a second time rewritten that way.
  bool local_sdy_spelling = false;
};

std::string WithLocalSdySpelling(std::string text) {
  for (const std::string from : {"custom_call_target=\"xla.sdy.", "xla.sdy.manual_computation_body"}) {
    const std::string to = from[0] == 'c' ? "custom_call_target=\"local_xla.sdy." : "local_" + from;
    for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
      text.replace(pos, from.size(), to);
  }
  return text;
}

void PrintTo(const CorpusCase& c, std::ostream* out) { *out << c.name; }

std::vector<CorpusCase> FindCases() {
  std::vector<CorpusCase> cases;
  const fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  for (const char* flavor : {"gspmd", "shardy"}) {
    if (!fs::is_directory(root / flavor)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(root / flavor)) {
      if (!fs::exists(entry.path() / "pre.hlo")) continue;
      cases.push_back({std::string(flavor) + "_" + entry.path().filename().string(), entry.path()});
      if (std::string(flavor) == "shardy")
        cases.push_back({"shardy_local_" + entry.path().filename().string(), entry.path(), true});
    }
  }
  std::sort(cases.begin(), cases.end(), [](const CorpusCase& a, const CorpusCase& b) { return a.name < b.name; });
  return cases;
}

std::vector<Literal> ReadNumbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Literal> values;
  for (int i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".npy")); ++i)
    values.push_back(ReadNpy((dir / (prefix + std::to_string(i) + ".npy")).string()));
  return values;
}

// Does the annotation leave dims open for propagation to refine (unspecified_dims, Shardy "?")?
bool HasOpenDims(const Instruction& instruction) {
  bool unspecified = instruction.backend_config && instruction.backend_config->find("unspecified_dims") != std::string::npos;
  return unspecified || instruction.FrontendAttribute("xla.sdy.sharding").find('?') != std::string::npos;
}

// The shardings the user wrote (and propagation must keep), keyed by computation/instruction.
std::map<std::string, Sharding> WrittenShardings(const Module& module) {
  std::map<std::string, Sharding> written;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->sharding() && !instruction->sharding()->IsUnknown() && !HasOpenDims(*instruction))
        written.emplace(computation->name() + "/" + instruction->name(), *instruction->sharding());
    }
  }
  return written;
}

// Whether XLA's propagation left each instruction of propagated.hlo with a sharding, keyed by
// computation/instruction (empty when the case has no propagated.hlo).
std::map<std::string, bool> XlaHasSharding(const fs::path& dir) {
  std::map<std::string, bool> has;
  if (!fs::exists(dir / "propagated.hlo")) return has;
  std::unique_ptr<Module> xla = ParseModuleFile((dir / "propagated.hlo").string());
  for (const auto& computation : xla->computations())
    for (const auto& instruction : computation->instructions())
      has[computation->name() + "/" + instruction->name()] = instruction->sharding().has_value();
  return has;
}

// Cases whose communication must stay at most this fraction of XLA's (ours / XLA's bytes per
// device): the training steps, at most 0.80 (issue 24's goal). gpt_train_2l's 0.706 is the
// minimal plan's count (tests/partitioner/gpt_train_comm_test.cpp); transformer_train_1l is at
// 0.751.
const std::map<std::string, double> kRatioBounds = {{"gspmd_gpt_train_2l", 0.80},
                                                    {"gspmd_transformer_train_1l", 0.80}};

// One line per case, printed when the suite ends.
std::vector<std::string>& Table() {
  static std::vector<std::string> rows;
  return rows;
}

class PropagationCorpusTest : public testing::TestWithParam<CorpusCase> {
 public:
  static void TearDownTestSuite() {
    std::cout << "\n[ propagation corpus ]  case                                   ok   ours_bytes    xla_bytes  ratio  warnings\n";
    for (const std::string& row : Table()) std::cout << "[ propagation corpus ]  " << row << "\n";
  }
};

TEST_P(PropagationCorpusTest, PropagatedProgramMatchesReferenceAndXlaCommunication) {
  const CorpusCase& c = GetParam();
  std::unique_ptr<Module> module = ParseModuleFile((c.dir / "pre.hlo").string());
  if (c.local_sdy_spelling) {
    std::string text = WithLocalSdySpelling(PrintModule(*module));
    ASSERT_NE(text.find("local_xla.sdy."), std::string::npos) << c.name;
    module = ParseModule(text, c.name + "/pre.hlo");
  }
  std::map<std::string, Sharding> written = WrittenShardings(*module);
  PropagationResult propagation = PropagateShardings(*module);

  // Every instruction has a sharding unless nothing reached it, as in XLA: then XLA's
  // propagation left it without one too (or, where XLA renamed it by inlining a call, it is a
  // scalar); user annotations are unchanged.
  const std::map<std::string, bool> xla_has = XlaHasSharding(c.dir);
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      std::string key = computation->name() + "/" + instruction->name();
      if (!instruction->sharding().has_value()) {
        auto xla = xla_has.find(key);
        const bool scalar = instruction->shape().IsArray() && instruction->shape().rank() == 0;
        if (xla != xla_has.end()) EXPECT_FALSE(xla->second) << c.name << ": XLA shards " << key << ", ours has none";
        if (xla == xla_has.end()) EXPECT_TRUE(scalar) << c.name << ": no sharding on " << key;
        continue;
      }
      auto it = written.find(key);
      if (it == written.end()) continue;
      EXPECT_EQ(instruction->sharding()->ToString(), it->second.ToString()) << c.name << ": annotation changed on " << key;
    }
  }
  std::string propagated_text = PrintModuleWithOrigins(*module, propagation);
  std::unique_ptr<Module> reparsed_propagated = ParseModule(propagated_text, c.name + "/propagated.hlo");

  PartitionResult result = PartitionModule(*module);
  std::string text = PrintModule(*result.module);
  for (const std::string& warning : result.warnings) ADD_FAILURE() << c.name << ": " << warning;
  std::unique_ptr<Module> reparsed = ParseModule(text, c.name + "/ours.hlo");

  SpmdRunOptions options = OptionsFromLikeModule(*reparsed, module.get());
  std::vector<Literal> inputs = ReadNumbered(c.dir, "in");
  std::vector<Literal> expected = ReadNumbered(c.dir, "out");
  std::vector<Literal> outputs;
  bool matches = true;
  try {
    outputs = RunSpmd(*reparsed, inputs, options);
  } catch (const std::exception& error) {
    ADD_FAILURE() << c.name << ": " << error.what() << "\n" << propagated_text;
    matches = false;
  }
  if (matches) {
    EXPECT_EQ(outputs.size(), expected.size()) << c.name;
    for (size_t i = 0; i < outputs.size() && i < expected.size(); ++i) {
      LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-4);
      matches = matches && comparison.matches;
      EXPECT_TRUE(comparison.matches) << c.name << " out" << i << ": " << comparison.message << "\n" << propagated_text;
    }
    matches = matches && outputs.size() == expected.size();
  }

  std::unique_ptr<Module> xla = ParseModuleFile((c.dir / "partitioned.hlo").string());
  double ours = AnalyzeCommunication(*reparsed).comm_bytes_per_device;
  double theirs = AnalyzeCommunication(*xla).comm_bytes_per_device;
  double ratio = theirs > 0 ? ours / theirs : (ours > 0 ? 999.0 : 1.0);
  char row[256];
  std::snprintf(row, sizeof(row), "%-40s %-4s %12.0f %12.0f %6.3f %9zu", c.name.c_str(), matches ? "yes" : "NO", ours,
                theirs, ratio, result.warnings.size());
  Table().push_back(row);
  EXPECT_LE(ours, theirs + 1e-6) << c.name << "\n" << propagated_text << "\n" << text;
  if (auto bound = kRatioBounds.find(c.name); bound != kRatioBounds.end())
    EXPECT_LE(ratio, bound->second) << c.name << ": ours " << ours << " bytes, XLA's " << theirs << "\n" << text;
}

INSTANTIATE_TEST_SUITE_P(Corpus, PropagationCorpusTest, testing::ValuesIn(FindCases()),
                         [](const testing::TestParamInfo<CorpusCase>& info) { return info.param.name; });

}  // namespace
}  // namespace gspmd
