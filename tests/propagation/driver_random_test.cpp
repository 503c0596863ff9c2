// Randomized test of propagation: random programs (tests/partitioner/random_program.h) keep a
// few random annotations; propagation must terminate and keep every annotation (a value nothing
// reached keeps no sharding, as in XLA), and the partitioned program must compute the
// interpreter's numbers.
// GSPMD_PROPAGATION_RANDOM_CASES / GSPMD_PROPAGATION_RANDOM_SEED change the run (a failure
// prints its seed; set CASES=1 and SEED=<seed> to reproduce it; VERBOSE=1 lists partitioner
// warnings).
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/literal_compare.h"
#include "partitioner/partitioner.h"
#include "partitioner/random_program.h"
#include "propagation/propagation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoll(value, nullptr, 10);
}

// Keeps the sharding of a random few instructions: entry parameters often, the root sometimes,
// other values rarely. Returns the annotated text.
std::string SparseAnnotations(const std::string& text, uint64_t seed) {
  std::unique_ptr<Module> module = ParseModule(text, "random.hlo");
  std::mt19937_64 random(seed * 7919 + 17);
  std::uniform_real_distribution<double> coin(0, 1);
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      double keep = 0.08;
      if (instruction->opcode() == Opcode::kParameter && computation->is_entry) keep = 0.5;
      if (instruction.get() == computation->root() && computation->is_entry) keep = 0.3;
      if (coin(random) >= keep) instruction->set_sharding(std::nullopt);
    }
  }
  return PrintModule(*module);
}

// "" when the case passed, otherwise what went wrong.
std::string RunCase(const random_program::RandomProgram& program) {
  std::string annotated = SparseAnnotations(program.text, program.seed);
  std::unique_ptr<Module> original = ParseModule(annotated, "annotated.hlo");
  std::unique_ptr<Module> module = ParseModule(annotated, "annotated.hlo");
  PropagationOptions options;
  options.num_partitions = program.num_devices;
  PropagateShardings(*module, options);
  for (const auto& computation : original->computations()) {
    const Computation* after = module->FindComputation(computation->name());
    for (const auto& instruction : computation->instructions()) {
      const Instruction* propagated = after->FindInstruction(instruction->name());
      // A value nothing reached keeps no sharding (as in XLA); the partitioner replicates it.
      if (!propagated->sharding()) {
        if (instruction->sharding()) return "annotation dropped on %" + instruction->name();
        continue;
      }
      if (instruction->sharding() && !(*propagated->sharding() == *instruction->sharding()))
        return "annotation changed on %" + instruction->name();
    }
  }
  std::vector<Literal> arguments = random_program::RandomArguments(program, program.seed);
  Literal expected = EvaluateModule(*original, arguments);
  PartitionResult partitioned = PartitionModule(*module);
  if (EnvInt("GSPMD_PROPAGATION_RANDOM_VERBOSE", 0) != 0) {
    for (const std::string& warning : partitioned.warnings)
      std::cout << "[ warning  ] seed " << program.seed << ": " << warning << "\n";
  }
  std::string text = PrintModule(*partitioned.module);
  std::unique_ptr<Module> reparsed = ParseModule(text, "partitioned.hlo");
  std::vector<Literal> outputs = RunSpmd(*reparsed, arguments, OptionsFromLikeModule(*reparsed, module.get()));
  std::vector<const Literal*> leaves;
  if (expected.shape().IsTuple()) {
    for (const Literal& element : expected.tuple_elements()) leaves.push_back(&element);
  } else {
    leaves.push_back(&expected);
  }
  if (outputs.size() != leaves.size()) return "wrong number of results";
  for (size_t i = 0; i < outputs.size(); ++i) {
    LiteralComparison comparison = CompareLiterals(outputs[i], *leaves[i], 1e-4);
    if (!comparison.matches) return "result " + std::to_string(i) + ": " + comparison.message + "\n" + PrintModule(*module);
  }
  return "";
}

TEST(PropagationRandomTest, SparseAnnotationsPropagateAndPartitionCorrectly) {
  const int64_t cases = EnvInt("GSPMD_PROPAGATION_RANDOM_CASES", 150);
  const int64_t first = EnvInt("GSPMD_PROPAGATION_RANDOM_SEED", 1);
  int64_t failures = 0, skipped = 0;
  for (int64_t seed = first; seed < first + cases; ++seed) {
    random_program::RandomProgram program = random_program::GenerateRandomProgram(static_cast<uint64_t>(seed));
    std::string failure;
    try {
      failure = RunCase(program);
    } catch (const UserError&) {
      // A program the interpreter or the runtime does not accept is the generator's business.
      ++skipped;
      continue;
    } catch (const std::exception& error) {
      failure = std::string("exception: ") + error.what();
    }
    if (failure.empty()) continue;
    ++failures;
    ADD_FAILURE() << "seed " << seed << ": " << failure << "\n" << program.text;
    if (failures >= 5) break;
  }
  std::cout << "[ random   ] " << cases << " programs from seed " << first << ", " << skipped
            << " rejected by the interpreter or runtime, " << failures << " failed\n";
  EXPECT_LE(skipped, cases / 10) << "too many generated programs were rejected";
}

}  // namespace
}  // namespace gspmd
