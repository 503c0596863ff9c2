// Diagnostic: propagates every corpus pre.hlo with PropagateShardings (rules + driver) and
// compares each instruction's sharding with XLA's propagated.hlo, printing the differences.
// It checks only that propagation runs; the numbers guide rule work.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "propagation/propagation.h"
#include "text/parser.h"

namespace gspmd::propagation::testing {
namespace {

int CompareWithXla(const Module& ours, const Module& xla, const std::string& label, int* total) {
  int differences = 0;
  for (const auto& computation : xla.computations()) {
    const Computation* mine = ours.FindComputation(computation->name());
    if (mine == nullptr) continue;
    for (const auto& instruction : computation->instructions()) {
      if (!instruction->sharding()) continue;
      const Instruction* other = mine->FindInstruction(instruction->name());
      if (other == nullptr) continue;
      ++*total;
      if (other->sharding() && *other->sharding() == *instruction->sharding()) continue;
      ++differences;
      std::cout << label << ": " << instruction->name() << " ("
                << OpcodeName(instruction->opcode()) << ") xla=" << instruction->sharding()->ToString()
                << " ours=" << (other->sharding() ? other->sharding()->ToString() : "none") << "\n";
    }
  }
  return differences;
}

TEST(RulesPipeline, CorpusDifferencesFromXla) {
  if (std::getenv("GSPMD_RULES_PIPELINE") == nullptr) GTEST_SKIP() << "diagnostic only";
  const std::filesystem::path root = std::filesystem::path(GSPMD_TEST_DATA_DIR) / "corpus";
  for (const auto& family : {"gspmd", "shardy"}) {
    std::vector<std::filesystem::path> cases;
    for (const auto& entry : std::filesystem::directory_iterator(root / family)) cases.push_back(entry.path());
    std::sort(cases.begin(), cases.end());
    for (const auto& dir : cases) {
      std::string label = std::string(family) + "/" + dir.filename().string();
      std::unique_ptr<Module> pre = ParseModuleFile((dir / "pre.hlo").string());
      std::unique_ptr<Module> xla = ParseModuleFile((dir / "propagated.hlo").string());
      try {
        PropagateShardings(*pre);
      } catch (const std::exception& e) {
        std::cout << label << ": propagation failed: " << e.what() << "\n";
        continue;
      }
      int total = 0;
      int differences = CompareWithXla(*pre, *xla, label, &total);
      std::cout << label << ": " << differences << " of " << total << " differ\n";
    }
  }
}

}  // namespace
}  // namespace gspmd::propagation::testing
