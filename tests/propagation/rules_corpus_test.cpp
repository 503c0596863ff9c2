// Checks the propagation rules against XLA's own propagated.hlo for every corpus case: at
// XLA's fixed point, an instruction's sharding should be what its operands imply (forward),
// what one of its users implies (backward), or their merge. Prints every disagreement.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "propagation/op_rules.h"
#include "rules_test_util_corpus.h"

namespace gspmd::propagation::testing {
namespace {

TEST(RulesCorpus, AgreeWithXlaFixedPoint) {
  const std::filesystem::path root = std::filesystem::path(GSPMD_TEST_DATA_DIR) / "corpus";
  std::map<std::string, std::pair<int, int>> per_opcode;  // agree, disagree
  int total = 0, agree = 0;
  for (const auto& family : {"gspmd", "shardy"}) {
    if (!std::filesystem::exists(root / family)) continue;
    std::vector<std::filesystem::path> cases;
    for (const auto& entry : std::filesystem::directory_iterator(root / family)) cases.push_back(entry.path());
    std::sort(cases.begin(), cases.end());
    for (const auto& dir : cases) {
      if (!std::filesystem::exists(dir / "propagated.hlo")) continue;
      CorpusAgreement result = CheckAgreement(dir / "propagated.hlo");
      for (const auto& [op, counts] : result.per_opcode) {
        per_opcode[op].first += counts.first;
        per_opcode[op].second += counts.second;
      }
      total += result.total;
      agree += result.agree;
      for (const std::string& line : result.disagreements)
        std::cout << family << "/" << dir.filename().string() << ": " << line << "\n";
      for (const std::string& line : result.conflicts)
        std::cout << family << "/" << dir.filename().string() << ": CONFLICT " << line << "\n";
    }
  }
  // The 32-layer training step (no outputs; propagated.hlo only).
  const std::filesystem::path bench =
      std::filesystem::path(GSPMD_TEST_DATA_DIR) / ".." / ".." / "benchmarks" / "data" /
      "transformer_train_32l" / "propagated.hlo";
  if (std::filesystem::exists(bench)) {
    CorpusAgreement result = CheckAgreement(bench);
    total += result.total;
    agree += result.agree;
    for (const auto& [op, counts] : result.per_opcode) {
      per_opcode[op].first += counts.first;
      per_opcode[op].second += counts.second;
    }
    for (size_t i = 0; i < result.disagreements.size() && i < 40; ++i)
      std::cout << "bench: " << result.disagreements[i] << "\n";
    for (size_t i = 0; i < result.conflicts.size() && i < 40; ++i)
      std::cout << "bench: CONFLICT " << result.conflicts[i] << "\n";
    std::cout << "bench: " << result.disagreements.size() << " disagreements, "
              << result.conflicts.size() << " conflicts\n";
    // XLA's fixed point on the 32-layer training step is a fixed point of our rules too.
    EXPECT_EQ(result.disagreements.size(), 0u);
    EXPECT_EQ(result.conflicts.size(), 0u);
  }
  for (const auto& [op, counts] : per_opcode)
    std::cout << op << ": " << counts.first << " agree, " << counts.second << " disagree\n";
  std::cout << "total " << agree << "/" << total << "\n";
  EXPECT_GT(total, 0);
  // The only known misses are Shardy's reducer-body roots (manual scalars in to_apply bodies).
  EXPECT_GE(agree, total - 4);
}

}  // namespace
}  // namespace gspmd::propagation::testing
