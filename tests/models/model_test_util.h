// Shared by the model tests: run a builder-made program through propagation, the partitioner
// and the SPMD runtime, and compare with the reference interpreter.
#pragma once

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "ir/verifier.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::model_test {

inline int64_t CountCustomCalls(const Module& module, const std::string& target) {
  int64_t count = 0;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == Opcode::kCustomCall && instruction->custom_call_target == target) ++count;
  return count;
}

inline int64_t CountInstructions(const Module& module) {
  int64_t count = 0;
  for (const auto& computation : module.computations()) count += computation->instruction_count();
  return count;
}

// The interpreter's result, flattened into leaves.
inline std::vector<Literal> Interpret(const Module& module, const std::vector<Literal>& inputs) {
  return FlattenTuple(EvaluateModule(module, inputs));
}

// The module's text parses back to the same text (what a `gspmd model` dump would write).
inline std::unique_ptr<Module> RoundTrip(const Module& module) {
  std::string text = PrintModule(module);
  std::unique_ptr<Module> reparsed = ParseModule(text, module.name() + ".hlo");
  EXPECT_EQ(PrintModule(*reparsed), text);
  return reparsed;
}

// Propagates shardings over a copy of `module`, partitions it and runs it on the module's
// device count; every result leaf must equal `expected` (relative error <= rtol). Skips (with
// the reason) only when propagation reports that it is not implemented yet.
inline void ExpectSpmdMatches(const Module& module, const std::vector<Literal>& inputs,
                              const std::vector<Literal>& expected, double rtol = 1e-4) {
  std::unique_ptr<Module> propagated = ParseModule(PrintModule(module), module.name() + ".hlo");
  try {
    PropagateShardings(*propagated);
  } catch (const std::exception& error) {
    if (std::string(error.what()).find("not implemented") != std::string::npos)
      GTEST_SKIP() << "PropagateShardings is not implemented yet: " << error.what();
    throw;
  }
  // Every array has a sharding; a scalar nothing reaches (a reduction's initial value) keeps
  // none, as in XLA, and is replicated by the partitioner.
  for (const auto& computation : propagated->computations())
    for (const auto& instruction : computation->instructions())
      EXPECT_TRUE(instruction->sharding().has_value() || (instruction->shape().IsArray() && instruction->shape().rank() == 0))
          << "no sharding on %" << instruction->name() << " after propagation";
  VerifyModule(*propagated);
  PartitionResult partitioned = PartitionModule(*propagated);
  for (const std::string& warning : partitioned.warnings) std::cout << "[ warning  ] " << module.name() << ": " << warning << "\n";
  std::string text = PrintModule(*partitioned.module);
  std::unique_ptr<Module> per_device = ParseModule(text, module.name() + ".partitioned.hlo");
  std::vector<Literal> outputs = RunSpmd(*per_device, inputs, OptionsFromLikeModule(*per_device, propagated.get()));
  std::cout << "[ comm     ] " << module.name() << " bytes/device=" << AnalyzeCommunication(*per_device).comm_bytes_per_device
            << " warnings=" << partitioned.warnings.size() << "\n";
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], rtol);
    EXPECT_TRUE(comparison.matches) << module.name() << " result " << i << ": " << comparison.message;
  }
}

}  // namespace gspmd::model_test
