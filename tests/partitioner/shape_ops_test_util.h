// Test helpers for the shape-op partitioning tests: partition a textual module, count the
// collectives it emits, measure its communication and run it against the interpreter.
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

namespace gspmd::shape_ops_test {

struct Partitioned {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> module;  // the printed per-device program, parsed again
  std::string text;
  std::vector<std::string> warnings;
};

inline Partitioned Partition(const std::string& hlo) {
  Partitioned out;
  out.original = ParseModule(hlo);
  PartitionResult result = PartitionModule(*out.original);
  out.warnings = result.warnings;
  out.text = PrintModule(*result.module);
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

inline int64_t CountOf(const Partitioned& p, Opcode opcode) {
  int64_t count = 0;
  for (const auto& computation : p.module->computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == opcode) ++count;
  return count;
}

inline int64_t CollectiveCount(const Partitioned& p) {
  int64_t count = 0;
  for (Opcode opcode : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kReduceScatter, Opcode::kAllToAll,
                        Opcode::kCollectivePermute})
    count += CountOf(p, opcode);
  return count;
}

inline double CommBytes(const Partitioned& p) { return AnalyzeCommunication(*p.module).comm_bytes_per_device; }

// Distinct, deterministic values (integers get small distinct values, pred alternates).
inline Literal Values(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e) {
    double value = IsFloatingPoint(shape.element_type())
                       ? std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed)) + 0.01 * e
                       : static_cast<double>((e * 7 + seed * 3) % 97);
    if (shape.element_type() == ElementType::kPred) value = (e + seed) % 3 == 0 ? 1 : 0;
    literal.SetFromDouble(e, value);
  }
  return literal;
}

// Runs the partitioned program on its devices and the original on one, with `inputs` (default
// values for the parameters not given), and expects every result leaf to match exactly.
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
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-6);
    EXPECT_TRUE(comparison.matches) << "out" << i << ": " << comparison.message << "\n" << p.text;
  }
}

inline Literal S32Scalar(int64_t value) { return Literal::Scalar(ElementType::kS32, value); }

// A one-op module: ENTRY with the given parameters and body lines, num_partitions=n.
inline std::string Module1(int64_t partitions, const std::string& signature, const std::string& body) {
  return "HloModule m, num_partitions=" + std::to_string(partitions) + "\n\nENTRY %main " + signature +
         " {\n" + body + "}\n";
}

}  // namespace gspmd::shape_ops_test
