// Programs we have only as HLO, written as StableHLO (pretty and generic form) and read back:
// the corpus pre.hlo programs and randomized programs of every op family must compute the
// same values as the original. This checks the reader on programs no test wrote by hand.
// GSPMD_STABLEHLO_ROUND_TRIPS sets the number of random programs (default 150; soak: more).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "frontend/stablehlo/writer.h"
#include "frontend/stablehlo_test_util.h"
#include "io/npy.h"
#include "partitioner/random_program.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;
using namespace stablehlo_test;  // NOLINT: test helpers

std::vector<Literal> ReadNumbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Literal> values;
  for (int i = 0; fs::exists(dir / (prefix + std::to_string(i) + ".npy")); ++i)
    values.push_back(ReadNpy((dir / (prefix + std::to_string(i) + ".npy")).string()));
  return values;
}

bool HasManualRegion(const Module& module) {
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == Opcode::kCustomCall &&
          (instruction->custom_call_target == "SPMDFullToShardShape" ||
           instruction->custom_call_target.find("GlobalToLocalShape") != std::string::npos))
        return true;
  return false;
}

// `module` written as StableHLO and read back evaluates to the same values on `inputs` (the
// results as a flat list: a one-element root tuple is written as one result).
void ExpectSameValues(const Module& module, const std::vector<Literal>& inputs, const std::string& label) {
  std::vector<Literal> expected = FlattenTuple(EvaluateModule(module, inputs));
  for (bool generic : {false, true}) {
    SCOPED_TRACE(label + (generic ? " (generic)" : " (pretty)"));
    StableHloWriteOptions options;
    options.generic = generic;
    std::string text = PrintStableHlo(module, options);
    std::unique_ptr<Module> read;
    try {
      read = ParseStableHlo(text, label + ".mlir");
    } catch (const UserError& error) {
      ADD_FAILURE() << error.what() << "\n" << text;
      continue;
    }
    std::vector<Literal> actual = FlattenTuple(EvaluateModule(*read, inputs));
    ASSERT_EQ(actual.size(), expected.size()) << text;
    for (size_t i = 0; i < actual.size(); ++i) EXPECT_TRUE(actual[i].BitwiseEquals(expected[i])) << "result " << i << "\n" << text;
  }
}

TEST(StableHloRoundTrip, CorpusPreHloPrograms) {
  const fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  int cases = 0;
  for (const char* flavor : {"gspmd", "shardy"}) {
    for (const fs::directory_entry& entry : fs::directory_iterator(root / flavor)) {
      if (!fs::exists(entry.path() / "pre.hlo")) continue;
      std::unique_ptr<Module> module = ParseModuleFile((entry.path() / "pre.hlo").string());
      if (HasManualRegion(*module)) continue;  // per-device code: the corpus test runs those on devices
      ExpectSameValues(*module, ReadNumbered(entry.path(), "in"), entry.path().filename().string());
      ++cases;
    }
  }
  EXPECT_GE(cases, 10);
}

TEST(StableHloRoundTrip, RandomPrograms) {
  int count = 150;
  if (const char* env = std::getenv("GSPMD_STABLEHLO_ROUND_TRIPS")) count = std::atoi(env);
  for (int seed = 1; seed <= count; ++seed) {
    random_program::RandomProgram program = random_program::GenerateRandomProgram(static_cast<uint64_t>(seed));
    std::unique_ptr<Module> module = ParseModule(program.text, "random.hlo");
    std::vector<Literal> inputs = random_program::RandomArguments(program, static_cast<uint64_t>(seed));
    ExpectSameValues(*module, inputs, "random program " + std::to_string(seed));
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace gspmd
