// Randomized differential test of the partitioner: random programs x random complete
// shardings x meshes of 1..8 devices; the partitioned program run on simulated devices must
// give the interpreter's numbers. CI runs a fixed seed; soak runs set
//   GSPMD_RANDOM_CASES=100000 GSPMD_RANDOM_SEED=<first seed>  (GSPMD_RANDOM_VERBOSE=1 lists seeds,
//   GSPMD_RANDOM_DUMP=1 also prints the partitioned program of a failure).
// GSPMD_RANDOM_MAX_OPS=<n> makes bigger programs. A failure prints the seed and the module;
// GSPMD_RANDOM_SEED=<seed> GSPMD_RANDOM_CASES=1 (and the same GSPMD_RANDOM_MAX_OPS) reproduces it.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/literal_compare.h"
#include "partitioner/partitioner.h"
#include "partitioner/random_program.h"
#include "partitioner/random_run.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

using random_program::GenerateRandomProgram;
using random_program::RandomArguments;
using random_program::RandomProgram;
using random_program::EnvInt;
using random_program::Mismatch;
using random_program::RunWithPoisonedPadding;

// Release: about 15 s; the sanitizer build runs fewer cases (2,000 took 111 s there).
#if defined(GSPMD_TEST_SANITIZED)
constexpr int64_t kCiCases = 400;
#else
constexpr int64_t kCiCases = 2000;
#endif
constexpr int64_t kCiSeed = 1;

// What the signal handler prints when a GSPMD_CHECK aborts (or a crash happens) in a case.
std::string g_abort_note;

extern "C" void PrintCaseOnAbort(int signal_number) {
  ssize_t ignored = write(STDERR_FILENO, g_abort_note.data(), g_abort_note.size());
  (void)ignored;
  raise(signal_number);  // SA_RESETHAND: the default action now
}

struct CaseResult {
  bool generator_error = false;  // the generated program is not valid: a bug in the test
  std::string failure;           // "" when the partitioned program matched
  int64_t warnings = 0;
  std::vector<std::string> warning_texts;
  std::string partitioned_text;
};

CaseResult RunCase(const RandomProgram& program) {
  CaseResult result;
  std::unique_ptr<Module> original;
  std::vector<Literal> arguments = RandomArguments(program, program.seed);
  Literal expected;
  try {
    original = ParseModule(program.text, "random.hlo");
    expected = EvaluateModule(*original, arguments);
  } catch (const UserError& error) {
    result.generator_error = true;
    result.failure = std::string("invalid generated program: ") + error.what();
    return result;
  }
  try {
    PartitionResult partitioned = PartitionModule(*original);
    result.warnings = static_cast<int64_t>(partitioned.warnings.size());
    result.warning_texts = partitioned.warnings;
    result.partitioned_text = PrintModule(*partitioned.module);
    std::unique_ptr<Module> reparsed = ParseModule(result.partitioned_text, "partitioned.hlo");
    SpmdRunOptions options = OptionsFromLikeModule(*reparsed, original.get());
    std::vector<Literal> leaves = FlattenTuple(std::move(expected));
    result.failure = Mismatch(RunSpmd(*reparsed, arguments, options), leaves, "");
    if (!result.failure.empty()) return result;
    result.failure = Mismatch(RunWithPoisonedPadding(*reparsed, arguments, options), leaves,
                              "with garbage in the padding of uneven argument shards: ");
  } catch (const UserError& error) {
    result.failure = std::string("error: ") + error.what();
  }
  return result;
}

std::string Describe(const RandomProgram& program) {
  std::string mesh;
  for (int64_t size : program.mesh) mesh += (mesh.empty() ? "" : "x") + std::to_string(size);
  std::string kinds;
  for (const std::string& kind : program.op_kinds) kinds += (kinds.empty() ? "" : ",") + kind;
  return "seed=" + std::to_string(program.seed) + " mesh=" + mesh + " ops=" + kinds;
}

TEST(RandomPartitionTest, PartitionedProgramsMatchTheInterpreter) {
  int64_t cases = EnvInt("GSPMD_RANDOM_CASES", kCiCases);
  int64_t first_seed = EnvInt("GSPMD_RANDOM_SEED", kCiSeed);
  bool verbose = EnvInt("GSPMD_RANDOM_VERBOSE", 0) != 0;
  bool dump = EnvInt("GSPMD_RANDOM_DUMP", 0) != 0;
  int64_t max_printed = EnvInt("GSPMD_RANDOM_MAX_PRINTED", 5);
  random_program::RandomProgramOptions options;
  options.max_ops = EnvInt("GSPMD_RANDOM_MAX_OPS", options.max_ops);
  options.min_ops = std::min(options.min_ops, options.max_ops);
  struct sigaction action = {};
  action.sa_handler = PrintCaseOnAbort;
  action.sa_flags = SA_RESETHAND;
  struct sigaction previous[3] = {};
  const int kSignals[3] = {SIGABRT, SIGSEGV, SIGFPE};
  for (int s = 0; s < 3; ++s) sigaction(kSignals[s], &action, &previous[s]);

  auto start = std::chrono::steady_clock::now();
  int64_t failures = 0, warned_cases = 0, warnings = 0, warned_ordered_cases = 0;
  std::vector<int64_t> warned_ordered_seeds;  // warnings although every device order is a mesh order
  std::map<std::string, int64_t> kind_counts;
  std::vector<int64_t> failing_seeds;
  for (int64_t i = 0; i < cases; ++i) {
    uint64_t seed = static_cast<uint64_t>(first_seed + i);
    RandomProgram program = GenerateRandomProgram(seed, options);
    for (const std::string& kind : program.op_kinds) ++kind_counts[kind];
    g_abort_note = "\n*** aborted in random partition case " + Describe(program) + "\n" + program.text + "\n";
    if (verbose) std::cerr << Describe(program) << "\n";
    CaseResult result = RunCase(program);
    warnings += result.warnings;
    if (result.warnings > 0) ++warned_cases;
    if (result.warnings > 0 && !program.shuffled_devices) {
      ++warned_ordered_cases;
      if (warned_ordered_seeds.size() < 40) warned_ordered_seeds.push_back(static_cast<int64_t>(seed));
    }
    if (verbose)
      for (const std::string& warning : result.warning_texts) std::cerr << "  warning: " << warning << "\n";
    if (result.failure.empty()) continue;
    ++failures;
    failing_seeds.push_back(static_cast<int64_t>(seed));
    if (failures > max_printed) continue;
    ADD_FAILURE() << Describe(program) << "\n" << result.failure << "\nreproduce: GSPMD_RANDOM_SEED=" << seed
                  << " GSPMD_RANDOM_CASES=1\n"
                  << program.text << (dump ? "\npartitioned:\n" + result.partitioned_text : "");
  }
  for (int s = 0; s < 3; ++s) sigaction(kSignals[s], &previous[s], nullptr);
  g_abort_note.clear();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "random partition: " << cases << " cases from seed " << first_seed << " in " << seconds << " s, "
            << failures << " failing, " << warned_cases << " with partitioner warnings (" << warnings << " total), "
            << warned_ordered_cases << " of them without shuffled device orders; " << random_program::g_poisoned_elements
            << " padding elements of argument shards held garbage\n";
  if (!warned_ordered_seeds.empty()) {
    std::cout << "warnings without shuffled device orders, seeds:";
    for (int64_t seed : warned_ordered_seeds) std::cout << " " << seed;
    std::cout << "\n";
  }
  if (!failing_seeds.empty()) {
    std::cout << "failing seeds:";
    for (int64_t seed : failing_seeds) std::cout << " " << seed;
    std::cout << "\n";
  }
  if (verbose) {
    for (const auto& [kind, count] : kind_counts) std::cout << "  " << kind << ": " << count << "\n";
  }
  EXPECT_EQ(failures, 0);
}

// The generator is deterministic and covers every op family within the CI cases.
TEST(RandomPartitionTest, GeneratorIsDeterministicAndCoversTheOpFamilies) {
  EXPECT_EQ(GenerateRandomProgram(42).text, GenerateRandomProgram(42).text);
  std::map<std::string, int64_t> kinds;
  std::map<int64_t, int64_t> devices;
  for (int64_t seed = kCiSeed; seed < kCiSeed + kCiCases; ++seed) {
    RandomProgram program = GenerateRandomProgram(static_cast<uint64_t>(seed));
    for (const std::string& kind : program.op_kinds) ++kinds[kind];
    ++devices[program.num_devices];
  }
  for (const char* kind : {"unary", "binary", "select", "broadcast", "transpose", "reshape", "slice", "pad",
                           "concatenate", "reverse", "dot", "reduce", "reduce-window", "iota", "dynamic-slice",
                           "dynamic-update-slice", "convert", "gather", "scatter", "sort", "convolution", "while",
                           "argmax", "select-and-scatter", "conditional", "topk", "clamp", "windowed-gather",
                           "batched-gather", "batched-scatter", "constant", "sort-prefix", "call",
                           "sharding-constraint", "opt-barrier"})
    EXPECT_GT(kinds[kind], 0) << kind;
  for (int64_t n = 1; n <= 8; ++n) EXPECT_GT(devices[n], 0) << n << " devices";
}

}  // namespace
}  // namespace gspmd
