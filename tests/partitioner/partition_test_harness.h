// The partitioner tests' shared harness: partition HLO text, count and inspect what it emits,
// run it on simulated devices against the interpreter, and drive tables of such cases.
#pragma once

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <ostream>
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

using Dims = std::vector<int64_t>;

// ---- Partitioning ----

struct Partitioned {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> module;  // the printed per-device program, parsed again
  std::string text;
  std::vector<std::string> warnings;
};

// Partitions `original`; every partitioner warning is a test failure.
inline Partitioned PartitionParsed(std::unique_ptr<Module> original) {
  Partitioned out;
  out.original = std::move(original);
  PartitionResult result = PartitionModule(*out.original);
  out.warnings = result.warnings;
  out.text = PrintModule(*result.module);
  for (const std::string& warning : out.warnings) ADD_FAILURE() << warning << "\n" << out.text;
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

inline Partitioned Partition(const std::string& hlo) { return PartitionParsed(ParseModule(hlo)); }

// ---- Inspecting the result ----

inline std::vector<const Instruction*> InstructionsWith(const Module& module, Opcode opcode) {
  std::vector<const Instruction*> found;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == opcode) found.push_back(instruction.get());
  return found;
}

inline int64_t CountOf(const Module& module, Opcode opcode) {
  return static_cast<int64_t>(InstructionsWith(module, opcode).size());
}

inline int64_t CountOf(const Partitioned& p, Opcode opcode) { return CountOf(*p.module, opcode); }

inline bool MovesData(Opcode opcode) {
  return opcode == Opcode::kAllGather || opcode == Opcode::kAllReduce || opcode == Opcode::kReduceScatter ||
         opcode == Opcode::kAllToAll || opcode == Opcode::kCollectivePermute ||
         opcode == Opcode::kCollectivePermuteStart;  // with its done, one permute
}

inline int64_t CollectiveCount(const Module& module) {
  int64_t count = 0;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions()) count += MovesData(instruction->opcode());
  return count;
}

inline int64_t CollectiveCount(const Partitioned& p) { return CollectiveCount(*p.module); }

// Collectives inside one computation (a loop body, a branch).
inline int64_t CollectivesIn(const Computation& computation) {
  int64_t count = 0;
  for (const auto& instruction : computation.instructions()) count += MovesData(instruction->opcode());
  return count;
}

inline double CommBytes(const Partitioned& p) { return AnalyzeCommunication(*p.module).comm_bytes_per_device; }

// The one instruction with `opcode` (a failure, and nullptr, when there is not exactly one).
inline const Instruction* TheOnly(const Partitioned& p, Opcode opcode) {
  std::vector<const Instruction*> found = InstructionsWith(*p.module, opcode);
  EXPECT_EQ(found.size(), 1u) << OpcodeName(opcode) << "\n" << p.text;
  return found.size() == 1 ? found[0] : nullptr;
}

// The dims of TheOnly(p, opcode) ({} when there is not exactly one).
inline Dims DimsOfOnly(const Partitioned& p, Opcode opcode) {
  const Instruction* only = TheOnly(p, opcode);
  return only != nullptr ? only->shape().dims() : Dims{};
}

// The one all-reduce sums per-device values of `dims` over `groups` of 8 devices.
inline void ExpectTheOnlyAllReduce(const Partitioned& p, const Dims& dims, const std::vector<Dims>& groups) {
  const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
  if (reduce == nullptr) return;
  EXPECT_EQ(reduce->shape().dims(), dims);
  EXPECT_EQ(reduce->replica_groups().Groups(8), groups);
}

// The one all-reduce sums per-device values of `dims` in `group_count` groups of 8 devices.
inline void ExpectTheOnlyAllReduce(const Partitioned& p, const Dims& dims, size_t group_count) {
  const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
  if (reduce == nullptr) return;
  EXPECT_EQ(reduce->shape().dims(), dims);
  EXPECT_EQ(reduce->replica_groups().Groups(8).size(), group_count);
}

// Exactly `count` instructions with `opcode`, each of shape `dims`.
inline void ExpectEachOf(const Partitioned& p, Opcode opcode, size_t count, const Dims& dims) {
  std::vector<const Instruction*> found = InstructionsWith(*p.module, opcode);
  ASSERT_EQ(found.size(), count) << OpcodeName(opcode) << "\n" << p.text;
  for (const Instruction* instruction : found) EXPECT_EQ(instruction->shape().dims(), dims) << p.text;
}

// ---- Running it ----

enum class ValueStyle {
  kSmooth,    // a sine wave; integers round(5 sine), preds mostly true
  kDistinct,  // a sine wave plus a ramp, so that no two floats are equal; integers (7e + 3seed) % 97
};

// How a test makes its inputs and compares its results.
struct NumberCheck {
  ValueStyle style = ValueStyle::kSmooth;
  int64_t index_limit = 0;  // > 0: integer inputs are indices in [-3, index_limit + 3), some out of bounds
  double rtol = 1e-5;
};

// The shape-op tests' check: no two float inputs equal, results equal to 1e-6.
inline const NumberCheck kDistinctNumbers{.style = ValueStyle::kDistinct, .rtol = 1e-6};

// Element `e` of the values of parameter `seed`.
inline double ValueAt(int64_t e, int64_t seed, ElementType type, const NumberCheck& check) {
  const double wave = std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed));
  if (check.index_limit > 0 && IsInteger(type))
    return static_cast<double>((e * 37 + seed * 11) % (check.index_limit + 6) - 3);
  if (check.style == ValueStyle::kDistinct) {
    if (type == ElementType::kPred) return (e + seed) % 3 == 0 ? 1 : 0;
    if (!IsFloatingPoint(type)) return static_cast<double>((e * 7 + seed * 3) % 97);
    return wave + 0.01 * static_cast<double>(e);
  }
  if (type == ElementType::kPred) return wave > -0.8 ? 1 : 0;
  if (!IsFloatingPoint(type)) return std::round(wave * 5);
  return wave;
}

// Deterministic values that differ between parameters (`seed`).
inline Literal Values(const Shape& shape, int64_t seed, const NumberCheck& check = {}) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e)
    literal.SetFromDouble(e, ValueAt(e, seed, shape.element_type(), check));
  return literal;
}

inline Literal S32Scalar(int64_t value) { return Literal::Scalar(ElementType::kS32, value); }

// Values for the entry's parameters; the last `scalars.size()` are these s32 scalars instead.
inline std::vector<Literal> InputsEndingWith(const Partitioned& p, const std::vector<int64_t>& scalars,
                                             const NumberCheck& check = {}) {
  const Computation* entry = p.original->entry();
  const int64_t generated = entry->num_parameters() - static_cast<int64_t>(scalars.size());
  std::vector<Literal> inputs;
  for (int64_t i = 0; i < generated; ++i) inputs.push_back(Values(entry->parameter(i)->shape(), i, check));
  for (int64_t scalar : scalars) inputs.push_back(S32Scalar(scalar));
  return inputs;
}

// Runs the partitioned program on its devices; a failure (and nothing) when it throws.
inline std::optional<std::vector<Literal>> RunPartitioned(const Partitioned& p, const std::vector<Literal>& inputs) {
  try {
    return RunSpmd(*p.module, inputs, OptionsFromLikeModule(*p.module, p.original.get()));
  } catch (const std::exception& error) {
    ADD_FAILURE() << error.what() << "\n" << p.text;
    return std::nullopt;
  }
}

// Runs the partitioned program on its devices and the original on one, with `inputs` (values
// for the parameters not given), and expects every result leaf to match.
inline void ExpectSameNumbers(const Partitioned& p, std::vector<Literal> inputs = {}, const NumberCheck& check = {}) {
  const Computation* entry = p.original->entry();
  for (int64_t i = static_cast<int64_t>(inputs.size()); i < entry->num_parameters(); ++i)
    inputs.push_back(Values(entry->parameter(i)->shape(), i, check));
  std::vector<Literal> expected = FlattenTuple(EvaluateModule(*p.original, inputs));
  std::optional<std::vector<Literal>> outputs = RunPartitioned(p, inputs);
  if (!outputs) return;
  ASSERT_EQ(outputs->size(), expected.size()) << p.text;
  for (size_t i = 0; i < outputs->size(); ++i) {
    LiteralComparison comparison = CompareLiterals((*outputs)[i], expected[i], check.rtol);
    EXPECT_TRUE(comparison.matches) << "leaf " << i << ": " << comparison.message << "\n" << p.text;
  }
}

// Runs the partitioned program and compares its single result with `expected`.
inline void ExpectResult(const Partitioned& p, const std::vector<Literal>& inputs, const Literal& expected) {
  std::optional<std::vector<Literal>> outputs = RunPartitioned(p, inputs);
  if (!outputs) return;
  ASSERT_EQ(outputs->size(), 1u) << p.text;
  LiteralComparison comparison = CompareLiterals((*outputs)[0], expected, 1e-5);
  EXPECT_TRUE(comparison.matches) << comparison.message << "\n" << p.text;
}

// ---- Reducer computations several tests share (HLO text) ----

inline constexpr const char* kAddF32 = R"(%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
)";

inline constexpr const char* kAddS32 = R"(%add (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = s32[] add(%a, %b)
}
)";

inline constexpr const char* kMaxF32 = R"(%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] maximum(%a, %b)
}
)";

// The cleanup and manual-region tests' f32 sum, with a newline before and after.
inline constexpr const char* kSum = R"(
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

// Variadic (value, index) argmax: the larger value, the lower index on ties.
inline constexpr const char* kArgmaxF32S32 = R"(%argmax (v0: f32[], i0: s32[], v1: f32[], i1: s32[]) -> (f32[], s32[]) {
  %v0 = f32[] parameter(0)
  %i0 = s32[] parameter(1)
  %v1 = f32[] parameter(2)
  %i1 = s32[] parameter(3)
  %gt = pred[] compare(%v0, %v1), direction=GT
  %eq = pred[] compare(%v0, %v1), direction=EQ
  %lt = pred[] compare(%i0, %i1), direction=LT
  %tie = pred[] and(%eq, %lt)
  %pick = pred[] or(%gt, %tie)
  %v = f32[] select(%pick, %v0, %v1)
  %i = s32[] select(%pick, %i0, %i1)
  ROOT %r = (f32[], s32[]) tuple(%v, %i)
}
)";

// ---- Tables of cases ----

struct OpCount {
  Opcode opcode;
  int64_t count;
};

// What a program must contain; unset fields are not checked.
struct Expect {
  std::optional<int64_t> collectives = {};      // collectives of every kind
  std::vector<OpCount> counts = {};              // exactly this many instructions of each opcode
  std::vector<OpCount> at_least = {};            // at least this many
  std::optional<Opcode> only = {};               // every collective is of this kind
  std::optional<double> comm_bytes = {};         // bytes sent per device, exactly
  std::optional<double> max_comm_bytes = {};     // at most
  std::optional<double> comm_bytes_below = {};   // strictly less
};

// Checks `expect` against `module` (`text`, its printed form, is shown on a failure).
inline void ExpectStructure(const Module& module, const std::string& text, const Expect& expect) {
  if (expect.collectives) EXPECT_EQ(CollectiveCount(module), *expect.collectives) << text;
  for (const OpCount& c : expect.counts)
    EXPECT_EQ(CountOf(module, c.opcode), c.count) << OpcodeName(c.opcode) << "\n" << text;
  for (const OpCount& c : expect.at_least)
    EXPECT_GE(CountOf(module, c.opcode), c.count) << OpcodeName(c.opcode) << "\n" << text;
  if (expect.only)
    EXPECT_EQ(CollectiveCount(module), CountOf(module, *expect.only))
        << "only " << OpcodeName(*expect.only) << "\n" << text;
  const bool measures = expect.comm_bytes || expect.max_comm_bytes || expect.comm_bytes_below;
  if (!measures) return;
  const double bytes = AnalyzeCommunication(module).comm_bytes_per_device;
  if (expect.comm_bytes) EXPECT_DOUBLE_EQ(bytes, *expect.comm_bytes) << text;
  if (expect.max_comm_bytes) EXPECT_LE(bytes, *expect.max_comm_bytes) << text;
  if (expect.comm_bytes_below) EXPECT_LT(bytes, *expect.comm_bytes_below) << text;
}

// One row of a table: a program, what its partitioned form contains, and how it is run.
struct PartitionCase {
  std::string name;  // the test's name (letters, digits and underscores)
  std::string hlo;
  Expect expect = {};
  void (*check)(const Partitioned&) = nullptr;  // the checks only this case makes
  std::vector<std::vector<int64_t>> scalar_runs = {};  // one run each: the trailing s32 scalar parameters
  int64_t index_limit = 0;  // see NumberCheck
  bool run = true;          // false: the numbers are not checked
  // The result worked out by hand from the inputs, for programs the interpreter cannot run
  // (manual regions); when set, it replaces the interpreter's.
  Literal (*expected)(const std::vector<Literal>& inputs) = nullptr;
};

inline void RunCase(const PartitionCase& c, NumberCheck check = {}) {
  if (c.index_limit > 0) check.index_limit = c.index_limit;
  Partitioned p = Partition(c.hlo);
  ExpectStructure(*p.module, p.text, c.expect);
  if (c.check != nullptr) c.check(p);
  if (!c.run) return;
  if (c.expected != nullptr) {
    std::vector<Literal> inputs = InputsEndingWith(p, {}, check);
    ExpectResult(p, inputs, c.expected(inputs));
    return;
  }
  if (c.scalar_runs.empty()) {
    ExpectSameNumbers(p, {}, check);
    return;
  }
  for (const std::vector<int64_t>& scalars : c.scalar_runs) {
    SCOPED_TRACE(::testing::PrintToString(scalars));
    ExpectSameNumbers(p, InputsEndingWith(p, scalars, check), check);
  }
}

// The fixture a file's table is instantiated with, and the tests' names.
class PartitionCaseTest : public ::testing::TestWithParam<PartitionCase> {};

inline std::string CaseName(const ::testing::TestParamInfo<PartitionCase>& info) { return info.param.name; }

inline void PrintTo(const PartitionCase& c, std::ostream* out) { *out << c.name; }

}  // namespace gspmd::partition_test

// Runs every case of `cases` (a std::vector<PartitionCase>) as the test Table/<suite>.Case/<name>,
// with RunCase(case, ...) (the optional argument: a NumberCheck).
#define PARTITION_CASE_TESTS(suite, cases, ...)                                                     \
  using suite = ::gspmd::partition_test::PartitionCaseTest;                                         \
  TEST_P(suite, Case) { ::gspmd::partition_test::RunCase(GetParam() __VA_OPT__(, ) __VA_ARGS__); } \
  INSTANTIATE_TEST_SUITE_P(Table, suite, ::testing::ValuesIn(cases), ::gspmd::partition_test::CaseName)
