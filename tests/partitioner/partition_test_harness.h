// Shared by the reduce, reduce-window and sort partitioner tests: partition HLO text, count
// collectives, and check the partitioned program against the interpreter.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "partitioner/partitioner.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::partition_test {

struct Partitioned {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> module;  // the printed per-device program, parsed again
  std::string text;
};

inline Partitioned Partition(const std::string& hlo) {
  Partitioned out;
  out.original = ParseModule(hlo);
  PartitionResult result = PartitionModule(*out.original);
  for (const std::string& warning : result.warnings) ADD_FAILURE() << warning;
  out.text = PrintModule(*result.module);
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

inline std::vector<const Instruction*> InstructionsWith(const Module& module, Opcode opcode) {
  std::vector<const Instruction*> found;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == opcode) found.push_back(instruction.get());
  return found;
}

inline int64_t CountOf(const Partitioned& p, Opcode opcode) {
  return static_cast<int64_t>(InstructionsWith(*p.module, opcode).size());
}

inline int64_t CollectiveCount(const Partitioned& p) {
  int64_t count = 0;
  for (Opcode opcode : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kReduceScatter, Opcode::kAllToAll,
                        Opcode::kCollectivePermute})
    count += CountOf(p, opcode);
  return count;
}

inline double CommBytes(const Partitioned& p) { return AnalyzeCommunication(*p.module).comm_bytes_per_device; }

// Deterministic values that differ between parameters; integers and preds get small values.
inline Literal Values(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e) {
    double value = std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed));
    if (shape.element_type() == ElementType::kPred) value = value > -0.8 ? 1 : 0;
    else if (!IsFloatingPoint(shape.element_type())) value = std::round(value * 5);
    literal.SetFromDouble(e, value);
  }
  return literal;
}

inline void ExpectSameNumbers(const Partitioned& p) {
  std::vector<Literal> inputs;
  const Computation* entry = p.original->entry();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) inputs.push_back(Values(entry->parameter(i)->shape(), i));
  Literal expected = EvaluateModule(*p.original, inputs);
  std::vector<Literal> outputs = RunSpmd(*p.module, inputs, OptionsFromLikeModule(*p.module, p.original.get()));
  std::vector<const Literal*> leaves;
  if (expected.shape().IsTuple()) {
    for (const Literal& element : expected.tuple_elements()) leaves.push_back(&element);
  } else {
    leaves.push_back(&expected);
  }
  ASSERT_EQ(outputs.size(), leaves.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], *leaves[i], 1e-5);
    EXPECT_TRUE(comparison.matches) << "leaf " << i << ": " << comparison.message << "\n" << p.text;
  }
}

}  // namespace gspmd::partition_test
