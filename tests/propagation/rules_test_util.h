// Test harness for the propagation rules: parses HLO text whose instructions carry the
// shardings a rule should see, and runs one rule forward or backward on a named instruction.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ir/module.h"
#include "propagation/op_rules.h"
#include "sharding/sharding_text.h"
#include "text/parser.h"

namespace gspmd::propagation::testing {

class RuleHarness {
 public:
  explicit RuleHarness(const std::string& text) : module_(ParseModule(text)) {}

  // Looks in the entry computation first (names may repeat in called computations).
  const Instruction& Get(const std::string& name) const {
    if (const Instruction* found = module_->entry()->FindInstruction(name)) return *found;
    for (const auto& computation : module_->computations()) {
      if (const Instruction* found = computation->FindInstruction(name)) return *found;
    }
    ADD_FAILURE() << "no instruction " << name;
    static Instruction missing(Opcode::kParameter, Shape());
    return missing;
  }

  // The shardings the rules see: the text's, overridden by Set().
  const Sharding* ShardingOf(const Instruction* instruction) const {
    auto it = overrides_.find(instruction->name());
    if (it != overrides_.end()) return &it->second;
    return instruction->sharding() ? &*instruction->sharding() : nullptr;
  }
  void Set(const std::string& name, const std::string& sharding) {
    overrides_.insert_or_assign(name, ParseSharding(sharding));
  }

  ShardingLookup Lookup() const {
    return [this](const Instruction* instruction) { return ShardingOf(instruction); };
  }

  std::vector<const Sharding*> OperandShardings(const Instruction& instruction) const {
    std::vector<const Sharding*> out;
    for (const Instruction* operand : instruction.operands()) out.push_back(ShardingOf(operand));
    return out;
  }

  // Forward rule on `name` from its operands' shardings.
  std::optional<Proposal> Forward(const std::string& name) const {
    const Instruction& instruction = Get(name);
    return InferResultSharding(instruction, OperandShardings(instruction), Lookup());
  }

  // Backward rule: what user `name` (with its own sharding from the text or `sharding`)
  // implies for operand `index`.
  std::optional<Proposal> Backward(const std::string& name, int64_t index,
                                   const std::string& sharding = "") const {
    const Instruction& user = Get(name);
    Sharding user_sharding = sharding.empty() ? *ShardingOf(&user) : ParseSharding(sharding);
    return InferOperandSharding(user, index, user_sharding, OperandShardings(user), Lookup());
  }

  Module& module() { return *module_; }

 private:
  std::unique_ptr<Module> module_;
  std::map<std::string, Sharding> overrides_;
};

// Checks a proposal against expected sharding text ("" = no proposal).
inline ::testing::AssertionResult ProposalIs(const std::optional<Proposal>& proposal,
                                             const std::string& expected) {
  if (expected.empty()) {
    if (!proposal) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "expected no proposal, got "
                                         << proposal->sharding.ToString() << " (" << proposal->rule.ToString()
                                         << ")";
  }
  if (!proposal) return ::testing::AssertionFailure() << "expected " << expected << ", got none";
  Sharding want = ParseSharding(expected);
  if (proposal->sharding == want) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << want.ToString() << ", got "
                                       << proposal->sharding.ToString() << " (" << proposal->rule.ToString()
                                       << ")";
}

}  // namespace gspmd::propagation::testing
