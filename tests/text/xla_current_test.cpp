// The programs of tests/data/xla_current, as JAX 0.10.2 and its XLA print them: each text
// parses and prints stably; the program before XLA's passes and the one compiled for one device
// evaluate to JAX's outputs (bit for bit where they show the float total order), also with
// type=TOTALORDER rewritten as order=TOTAL; the program partitioned for 8 devices gives them too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/literal_compare.h"
#include "api/pipeline.h"
#include "hlo_text_test_util.h"
#include "io/npy.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Cases() {
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(fs::path(GSPMD_TEST_DATA_DIR) / "xla_current"))
    if (entry.is_directory()) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<Literal> ReadAll(const fs::path& dir, const std::string& prefix) {
  std::vector<Literal> literals;
  for (int i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".npy")); ++i)
    literals.push_back(ReadNpy((dir / (prefix + std::to_string(i) + ".npy")).string()));
  return literals;
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Cases whose outputs show the float total order (NaN payloads and signs, -0.0) are compared
// byte for byte; the others to 1e-5 (XLA fuses and vectorizes differently).
bool BitExact(const fs::path& dir) {
  std::string name = dir.filename().string();
  return name == "sort_nan" || name == "topk_nan" || name == "argsort" || name.starts_with("rng");
}

void ExpectOutputs(const std::vector<Literal>& actual, const std::vector<Literal>& expected, bool bit_exact,
                   const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].shape().dims(), expected[i].shape().dims()) << what << " out" << i;
    ASSERT_EQ(actual[i].element_type(), expected[i].element_type()) << what << " out" << i;
    if (bit_exact) {
      EXPECT_EQ(std::memcmp(actual[i].raw(), expected[i].raw(), static_cast<size_t>(actual[i].byte_size())), 0)
          << what << " out" << i << " differs in its bytes";
      continue;
    }
    LiteralComparison comparison = CompareLiterals(actual[i], expected[i], 1e-5);
    EXPECT_TRUE(comparison.matches) << what << " out" << i << ": " << comparison.message;
  }
}

TEST(XlaCurrentTest, EveryTextParsesAndPrintsStably) {
  std::vector<fs::path> cases = Cases();
  ASSERT_GE(cases.size(), 10u);
  for (const fs::path& dir : cases)
    for (const char* file : {"pre.hlo", "compiled.hlo", "compiled_one_device.hlo"}) {
      SCOPED_TRACE((dir.filename() / file).string());
      try {
        testing::Canonical(ReadText(dir / file));
      } catch (const UserError& error) {
        ADD_FAILURE() << error.what();
      }
    }
}

TEST(XlaCurrentTest, EvaluationGivesJaxOutputs) {
  for (const fs::path& dir : Cases()) {
    std::vector<Literal> inputs = ReadAll(dir, "in");
    std::vector<Literal> expected = ReadAll(dir, "out");
    for (const char* file : {"pre.hlo", "compiled_one_device.hlo"}) {
      std::string text = ReadText(dir / file);
      std::vector<std::string> variants = {text};
      if (text.find("type=TOTALORDER") != std::string::npos)
        variants.push_back(Replaced(text, "type=TOTALORDER", "order=TOTAL"));
      for (const std::string& variant : variants) {
        std::string what = (dir.filename() / file).string() + (variant == text ? "" : " with order=TOTAL");
        SCOPED_TRACE(what);
        try {
          std::unique_ptr<Module> module = ParseModule(variant, file);
          ExpectOutputs(FlattenTuple(EvaluateModule(*module, inputs)), expected, BitExact(dir), what);
        } catch (const UserError& error) {
          ADD_FAILURE() << error.what();
        }
      }
    }
  }
}

TEST(XlaCurrentTest, PartitionedForEightDevicesGivesJaxOutputs) {
  for (const fs::path& dir : Cases()) {
    SCOPED_TRACE(dir.filename().string());
    try {
      std::unique_ptr<Module> global = ParseModule(ReadText(dir / "pre.hlo"), "pre.hlo");
      api::CompiledPartition compiled = api::PartitionGlobal(*global, "pre.hlo", /*requested_devices=*/8);
      const Module& per_device = *compiled.partitioned.module;
      std::vector<Literal> outputs = RunSpmd(per_device, ReadAll(dir, "in"), OptionsFromLikeModule(per_device, global.get()));
      ExpectOutputs(outputs, ReadAll(dir, "out"), BitExact(dir), "partitioned");
    } catch (const UserError& error) {
      ADD_FAILURE() << error.what();
    }
  }
}

}  // namespace
}  // namespace gspmd
