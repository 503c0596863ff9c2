// Test helpers for the control-flow and manual-region partitioning tests: partition a textual
// module, find and count instructions, and compare results with the interpreter.
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

namespace gspmd::control_flow_test {

struct Partitioned {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> module;  // the printed per-device program, parsed again
  std::string text;
  std::vector<std::string> warnings;
};

inline Partitioned PartitionParsed(std::unique_ptr<Module> original) {
  Partitioned out;
  out.original = std::move(original);
  PartitionResult result = PartitionModule(*out.original);
  out.warnings = result.warnings;
  out.text = PrintModule(*result.module);
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

inline Partitioned Partition(const std::string& hlo) { return PartitionParsed(ParseModule(hlo)); }

inline void ExpectNoWarnings(const Partitioned& p) {
  for (const std::string& warning : p.warnings) ADD_FAILURE() << warning << "\n" << p.text;
}

inline std::vector<const Instruction*> Find(const Module& module, Opcode opcode) {
  std::vector<const Instruction*> found;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == opcode) found.push_back(instruction.get());
  return found;
}

inline int64_t CountOf(const Partitioned& p, Opcode opcode) {
  return static_cast<int64_t>(Find(*p.module, opcode).size());
}

inline int64_t CollectiveCount(const Partitioned& p) {
  int64_t count = 0;
  for (Opcode opcode : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kReduceScatter, Opcode::kAllToAll,
                        Opcode::kCollectivePermute})
    count += CountOf(p, opcode);
  return count;
}

inline bool MovesData(Opcode opcode) {
  return opcode == Opcode::kAllGather || opcode == Opcode::kAllReduce || opcode == Opcode::kReduceScatter ||
         opcode == Opcode::kAllToAll || opcode == Opcode::kCollectivePermute;
}

// Collectives inside one computation (a loop body, a branch).
inline int64_t CollectivesIn(const Computation& computation) {
  int64_t count = 0;
  for (const auto& instruction : computation.instructions()) count += MovesData(instruction->opcode());
  return count;
}

inline double CommBytes(const Partitioned& p) { return AnalyzeCommunication(*p.module).comm_bytes_per_device; }

// Distinct, deterministic values in about [-1, 1] (integers: small distinct values).
inline Literal Values(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e) {
    double value = IsFloatingPoint(shape.element_type())
                       ? std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed))
                       : static_cast<double>((e * 7 + seed * 3) % 97);
    literal.SetFromDouble(e, value);
  }
  return literal;
}

inline Literal S32Scalar(int64_t value) { return Literal::Scalar(ElementType::kS32, value); }

// Runs the partitioned program and the original (on one device) with `inputs` (default values
// for parameters not given) and expects every result leaf to match.
inline void ExpectSameNumbers(const Partitioned& p, std::vector<Literal> inputs = {}) {
  const Computation* entry = p.original->entry();
  for (int64_t i = static_cast<int64_t>(inputs.size()); i < entry->num_parameters(); ++i)
    inputs.push_back(Values(entry->parameter(i)->shape(), i));
  std::vector<Literal> expected = FlattenTuple(EvaluateModule(*p.original, inputs));
  std::vector<Literal> outputs;
  try {
    outputs = RunSpmd(*p.module, inputs, OptionsFromLikeModule(*p.module, p.original.get()));
  } catch (const std::exception& error) {
    FAIL() << error.what() << "\n" << p.text;
  }
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-5);
    EXPECT_TRUE(comparison.matches) << "out" << i << ": " << comparison.message << "\n" << p.text;
  }
}

// Runs the partitioned program and compares its single result with `expected`.
inline void ExpectResult(const Partitioned& p, const std::vector<Literal>& inputs, const Literal& expected) {
  std::vector<Literal> outputs;
  try {
    outputs = RunSpmd(*p.module, inputs, OptionsFromLikeModule(*p.module, p.original.get()));
  } catch (const std::exception& error) {
    FAIL() << error.what() << "\n" << p.text;
  }
  ASSERT_EQ(outputs.size(), 1u);
  LiteralComparison comparison = CompareLiterals(outputs[0], expected, 1e-5);
  EXPECT_TRUE(comparison.matches) << comparison.message << "\n" << p.text;
}

}  // namespace gspmd::control_flow_test
