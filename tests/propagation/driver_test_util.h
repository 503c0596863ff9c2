// Shared by the propagation driver tests: propagate HLO text, read back shardings by name, and
// check that the propagated program partitions without warnings and computes the same numbers.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "ir/known_custom_calls.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::propagation_test {

struct Propagated {
  std::unique_ptr<Module> original;  // as written
  std::unique_ptr<Module> module;    // after propagation
  PropagationResult result;

  const Instruction* Find(const std::string& name) const {
    for (const auto& computation : module->computations())
      if (const Instruction* found = computation->FindInstruction(name)) return found;
    ADD_FAILURE() << "no instruction %" << name;
    return nullptr;
  }
  // The sharding of %name as text ("" when it has none).
  std::string Of(const std::string& name) const {
    const Instruction* instruction = Find(name);
    if (instruction == nullptr || !instruction->sharding()) return "";
    return instruction->sharding()->ToString();
  }
  // What --explain says about %name.
  std::string Origin(const std::string& name) const {
    const Instruction* instruction = Find(name);
    if (instruction == nullptr) return "";
    auto it = result.origins.find(instruction->parent()->name() + "/" + instruction->name());
    return it == result.origins.end() ? "" : DescribeOrigin(it->second);
  }
};

inline Propagated Propagate(const std::string& hlo, PropagationOptions options = {}) {
  options.record_origins = true;
  Propagated out;
  out.original = ParseModule(hlo, "test.hlo");
  out.module = ParseModule(hlo, "test.hlo");
  out.result = PropagateShardings(*out.module, options);
  return out;
}

// --explain's word for a value nothing reached: it keeps no sharding (as in XLA) and is
// partitioned as replicated.
constexpr const char* kUnreached = "no sharding: none reached it (partitioned as replicated)";

// Every instruction has a sharding unless nothing reached it, and every sharding the user
// wrote is unchanged.
inline void ExpectCompleteAndAnnotationsKept(const Propagated& p) {
  for (const auto& computation : p.original->computations()) {
    const Computation* after = p.module->FindComputation(computation->name());
    ASSERT_NE(after, nullptr) << computation->name();
    for (const auto& instruction : computation->instructions()) {
      const Instruction* propagated = after->FindInstruction(instruction->name());
      if (propagated == nullptr && IsShardBarrier(*instruction)) continue;  // removed by design
      ASSERT_NE(propagated, nullptr) << instruction->name();
      if (!propagated->sharding()) {
        EXPECT_EQ(p.Origin(instruction->name()), kUnreached) << "no sharding on %" << instruction->name();
        continue;
      }
      if (instruction->sharding() && !instruction->sharding()->IsUnknown()) {
        EXPECT_EQ(propagated->sharding()->ToString(), instruction->sharding()->ToString())
            << "annotation changed on %" << instruction->name();
      }
    }
  }
}

// Deterministic values that differ between parameters; integers and preds get small values.
inline Literal Values(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e) {
    double value = std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed));
    if (shape.element_type() == ElementType::kPred) {
      value = value > -0.8 ? 1 : 0;
    } else if (!IsFloatingPoint(shape.element_type())) {
      value = std::round(value * 5);
    }
    literal.SetFromDouble(e, value);
  }
  return literal;
}

// Partitions the propagated module (no warnings allowed), runs it on its devices and compares
// with the interpreter on the original. Returns the communication bytes per device.
inline double ExpectPartitionsAndComputesTheSame(const Propagated& p) {
  PartitionResult partitioned = PartitionModule(*p.module);
  for (const std::string& warning : partitioned.warnings) ADD_FAILURE() << warning;
  std::string text = PrintModule(*partitioned.module);
  std::unique_ptr<Module> reparsed = ParseModule(text, "partitioned.hlo");
  std::vector<Literal> inputs;
  const Computation* entry = p.original->entry();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) inputs.push_back(Values(entry->parameter(i)->shape(), i));
  Literal expected = EvaluateModule(*p.original, inputs);
  std::vector<Literal> outputs = RunSpmd(*reparsed, inputs, OptionsFromLikeModule(*reparsed, p.module.get()));
  std::vector<const Literal*> leaves;
  if (expected.shape().IsTuple()) {
    for (const Literal& element : expected.tuple_elements()) leaves.push_back(&element);
  } else {
    leaves.push_back(&expected);
  }
  EXPECT_EQ(outputs.size(), leaves.size());
  for (size_t i = 0; i < outputs.size() && i < leaves.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], *leaves[i], 1e-5);
    EXPECT_TRUE(comparison.matches) << "leaf " << i << ": " << comparison.message << "\n" << text;
  }
  return AnalyzeCommunication(*reparsed).comm_bytes_per_device;
}

}  // namespace gspmd::propagation_test
