// Corpus agreement check for the propagation rules (see rules_corpus_test.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ir/module.h"
#include "propagation/op_rules.h"
#include "propagation/sharding_algebra.h"
#include "text/parser.h"

namespace gspmd::propagation::testing {

struct CorpusAgreement {
  int total = 0;
  int agree = 0;
  std::map<std::string, std::pair<int, int>> per_opcode;
  std::vector<std::string> disagreements;
  // Proposals that XLA's sharding does not refine (the rule says something XLA did not do).
  std::vector<std::string> conflicts;
};

inline bool IsDriverOpcode(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kParameter:
    case Opcode::kWhile: case Opcode::kCall: case Opcode::kConditional:
    case Opcode::kCustomCall: case Opcode::kConstant: case Opcode::kOptimizationBarrier:
    case Opcode::kIota: case Opcode::kPartitionId: case Opcode::kReplicaId:
    case Opcode::kAfterAll: case Opcode::kRngBitGenerator: case Opcode::kRng:
      return true;
    default:
      return false;
  }
}

inline CorpusAgreement CheckAgreement(const std::filesystem::path& path) {
  CorpusAgreement result;
  std::unique_ptr<Module> module = ParseModuleFile(path.string());
  ShardingLookup lookup = [](const Instruction* i) -> const Sharding* {
    return i->sharding() ? &*i->sharding() : nullptr;
  };
  auto operand_shardings = [](const Instruction& instruction) {
    std::vector<const Sharding*> out;
    for (const Instruction* op : instruction.operands())
      out.push_back(op->sharding() ? &*op->sharding() : nullptr);
    return out;
  };
  for (const auto& computation : module->computations()) {
    for (const auto& owned : computation->instructions()) {
      const Instruction& instruction = *owned;
      if (IsDriverOpcode(instruction) || !instruction.sharding()) continue;
      const Sharding& actual = *instruction.sharding();
      std::vector<std::string> proposals;
      bool matched = false;
      std::optional<Sharding> combined;
      auto consider = [&](const std::optional<Proposal>& p, const std::string& from) {
        if (!p) return;
        proposals.push_back(from + "=" + p->sharding.ToString());
        if (p->sharding == actual) matched = true;
        const bool refined = p->sharding == actual ||
                             IsSubTilingOrEqual(instruction.shape().IsArray()
                                                    ? instruction.shape().dims()
                                                    : std::vector<int64_t>{},
                                                actual, p->sharding);
        if (!refined && instruction.shape().IsArray()) {
          result.conflicts.push_back(instruction.name() + " (" +
                                     std::string(OpcodeName(instruction.opcode())) + ") xla=" +
                                     actual.ToString() + " " + from + "=" + p->sharding.ToString());
        }
        if (!combined) {
          combined = p->sharding;
        } else if (auto m = MergeShardings(*combined, p->sharding, instruction.shape())) {
          combined = *m;
        }
      };
      consider(InferResultSharding(instruction, operand_shardings(instruction), lookup), "fwd");
      for (const Instruction* user : instruction.users()) {
        if (!user->sharding()) continue;
        for (int64_t k = 0; k < user->operand_count(); ++k) {
          if (user->operand(k) != &instruction) continue;
          consider(InferOperandSharding(*user, k, *user->sharding(), operand_shardings(*user), lookup),
                   "bwd:" + user->name());
        }
      }
      if (combined && *combined == actual) matched = true;
      std::string op(OpcodeName(instruction.opcode()));
      ++result.total;
      if (matched) {
        ++result.agree;
        ++result.per_opcode[op].first;
        continue;
      }
      ++result.per_opcode[op].second;
      std::string line = instruction.name() + " (" + op + ") xla=" + actual.ToString();
      for (const std::string& p : proposals) line += " " + p;
      result.disagreements.push_back(line);
    }
  }
  return result;
}

}  // namespace gspmd::propagation::testing
