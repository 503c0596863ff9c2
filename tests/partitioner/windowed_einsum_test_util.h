// Helpers of the windowed einsum tests (windowed_einsum_test.cpp, windowed_einsum_choice_test.cpp):
// one dot written as HLO text, partitioned with a mode and a direction, run against off, and
// the structure of its loop checked (trips, permutes, ring pairs).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/trip_count.h"
#include "partition_test_harness.h"

namespace gspmd::partition_test::windowed_test {

inline Partitioned PartitionWithOptions(const std::string& hlo, const WindowedEinsumOptions& windowed) {
  Partitioned out;
  out.original = ParseModule(hlo);
  PartitionOptions options;
  options.windowed_einsum = windowed;
  PartitionResult result = PartitionModule(*out.original, options);
  out.warnings = result.warnings;
  out.text = PrintModule(*result.module);
  for (const std::string& warning : out.warnings) ADD_FAILURE() << warning << "\n" << out.text;
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

inline Partitioned PartitionWith(const std::string& hlo, WindowedEinsumMode mode,
                                 WindowedEinsumDirection direction = WindowedEinsumDirection::kOne) {
  WindowedEinsumOptions options;
  options.mode = mode;
  options.direction = direction;
  return PartitionWithOptions(hlo, options);
}

inline std::string F32(const Dims& dims) {
  std::string text = "f32[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

// One dot of parameters `lhs` and `rhs` with the given shardings and dimension numbers.
inline std::string DotModule(int64_t devices, const Dims& lhs, const std::string& lhs_sharding, const Dims& rhs,
                             const std::string& rhs_sharding, const Dims& out, const std::string& out_sharding,
                             const std::string& dims) {
  return "HloModule m, num_partitions=" + std::to_string(devices) + "\nENTRY e {\n  %x = " + F32(lhs) +
         " parameter(0), sharding=" + lhs_sharding + "\n  %w = " + F32(rhs) + " parameter(1), sharding=" +
         rhs_sharding + "\n  ROOT %d = " + F32(out) + " dot(%x, %w), " + dims + ", sharding=" + out_sharding +
         "\n}\n";
}

inline const std::string kMatmul = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
inline const std::string kBatchMatmul =
    "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}";

inline std::string Split(int64_t rank, int64_t dim, int64_t n) {
  std::string text = "{devices=[";
  for (int64_t d = 0; d < rank; ++d) text += (d ? "," : "") + std::to_string(d == dim ? n : 1);
  return text + "]<=[" + std::to_string(n) + "]}";
}

// Random inputs for the entry's parameters: normal floats, or small integers.
inline std::vector<Literal> RandomInputs(const Module& module, uint32_t seed, bool integers) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<Literal> inputs;
  for (int64_t i = 0; i < module.entry()->num_parameters(); ++i) {
    Literal literal(module.entry()->parameter(i)->shape());
    for (int64_t e = 0; e < literal.element_count(); ++e)
      literal.SetFromDouble(e, integers ? small(rng) : normal(rng));
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

// The devices of one loop's rings: whether two devices share a subgroup of the windowed axes,
// and a device's index along those axes.
struct RingAxes {
  std::function<bool(int64_t, int64_t)> same_group = [](int64_t, int64_t) { return true; };
  std::function<int64_t(int64_t)> axis_index = [](int64_t device) { return device; };
};

// The windowed axis of an a x b mesh (device = i*b + j): the major one (i) or the minor one (j).
inline RingAxes MeshAxis(int64_t b, bool major) {
  RingAxes axes;
  if (major) {
    axes.same_group = [b](int64_t s, int64_t t) { return s % b == t % b; };
    axes.axis_index = [b](int64_t d) { return d / b; };
  } else {
    axes.same_group = [b](int64_t s, int64_t t) { return s / b == t / b; };
    axes.axis_index = [b](int64_t d) { return d % b; };
  }
  return axes;
}

inline std::vector<const Instruction*> Permutes(const Module& module) {
  std::vector<const Instruction*> permutes = InstructionsWith(module, Opcode::kCollectivePermute);
  for (const Instruction* start : InstructionsWith(module, Opcode::kCollectivePermuteStart))
    permutes.push_back(start);
  return permutes;
}

// Every pair inside a subgroup, at most 2 axis positions apart (the folded ring), and each
// device sending once and receiving once.
inline void ExpectRingPairs(const Partitioned& p, const Instruction& permute, const RingAxes& axes) {
  std::set<int64_t> sources, targets;
  for (const SourceTargetPair& pair : permute.source_target_pairs()) {
    EXPECT_TRUE(axes.same_group(pair.source, pair.target)) << pair.source << " -> " << pair.target << "\n" << p.text;
    EXPECT_LE(std::abs(axes.axis_index(pair.source) - axes.axis_index(pair.target)), 2)
        << pair.source << " -> " << pair.target << "\n" << p.text;
    EXPECT_TRUE(sources.insert(pair.source).second) << pair.source << "\n" << p.text;
    EXPECT_TRUE(targets.insert(pair.target).second) << pair.target << "\n" << p.text;
  }
  EXPECT_EQ(sources, targets) << p.text;
}

inline int64_t LoopTrips(int64_t n, bool bidirectional) { return bidirectional ? (n + 1) / 2 - 1 : n; }

// One while loop of N trips (bidirectional: ceil(N/2) - 1), read off its condition's constant,
// and its ring of permutes: one in the loop body, or bidirectional two there (one each way) and
// two outside; every pair inside a subgroup and at most 2 axis positions apart.
inline void ExpectLoop(const Partitioned& p, int64_t n, bool bidirectional, const RingAxes& axes = {}) {
  std::vector<const Instruction*> loops = InstructionsWith(*p.module, Opcode::kWhile);
  ASSERT_EQ(loops.size(), 1u) << p.text;
  const int64_t trips = LoopTrips(n, bidirectional);
  const Instruction* limit = loops[0]->while_condition()->root()->operand(1);
  ASSERT_EQ(limit->opcode(), Opcode::kConstant) << p.text;
  EXPECT_EQ(limit->literal()->GetAsDouble(0), trips) << p.text;
  EXPECT_EQ(WhileTripCount(*loops[0]), trips) << p.text;
  std::vector<const Instruction*> permutes = Permutes(*p.module);
  int64_t in_body = 0;
  for (const Instruction* permute : permutes) {
    in_body += permute->parent() == loops[0]->while_body();
    ExpectRingPairs(p, *permute, axes);
  }
  EXPECT_EQ(in_body, bidirectional ? 2 : 1) << p.text;
  EXPECT_EQ(static_cast<int64_t>(permutes.size()), bidirectional ? 4 : 1) << p.text;
}

// The loop of ExpectLoop, and no all-gather left.
inline void ExpectWindowed(const Partitioned& p, int64_t n, bool bidirectional, const RingAxes& axes = {}) {
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  ExpectLoop(p, n, bidirectional, axes);
}

inline void ExpectNotWindowed(const Partitioned& p) { EXPECT_EQ(CountOf(p, Opcode::kWhile), 0) << p.text; }

// Runs `hlo` partitioned with off and with always (in `direction`) on the same inputs:
// bit-identical results when `exact`, else equal within 1e-5 relative. Returns the windowed
// program.
inline Partitioned ExpectSameAsOffWith(const std::string& hlo, bool exact, bool integers,
                                       const WindowedEinsumOptions& options) {
  Partitioned off = PartitionWith(hlo, WindowedEinsumMode::kOff);
  Partitioned windowed = PartitionWithOptions(hlo, options);
  std::vector<Literal> inputs = RandomInputs(*off.original, 7, integers);
  std::optional<std::vector<Literal>> expected = RunPartitioned(off, inputs);
  std::optional<std::vector<Literal>> actual = RunPartitioned(windowed, inputs);
  if (!expected || !actual) return windowed;
  EXPECT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size() && i < expected->size(); ++i) {
    if (exact) {
      EXPECT_TRUE((*actual)[i].BitwiseEquals((*expected)[i])) << windowed.text;
      continue;
    }
    LiteralComparison comparison = CompareLiterals((*actual)[i], (*expected)[i], 1e-5);
    EXPECT_TRUE(comparison.matches) << comparison.message << "\n" << windowed.text;
  }
  return windowed;
}

inline Partitioned ExpectSameAsOff(const std::string& hlo, bool exact, bool integers = false,
                                   WindowedEinsumDirection direction = WindowedEinsumDirection::kOne) {
  WindowedEinsumOptions options;
  options.mode = WindowedEinsumMode::kAlways;
  options.direction = direction;
  return ExpectSameAsOffWith(hlo, exact, integers, options);
}

// Always, unidirectional, unrolled (WindowedEinsumUnroll::kOn).
inline WindowedEinsumOptions AlwaysUnrolled() {
  WindowedEinsumOptions options;
  options.mode = WindowedEinsumMode::kAlways;
  options.direction = WindowedEinsumDirection::kOne;
  options.unroll = WindowedEinsumUnroll::kOn;
  return options;
}

// The unrolled loop: one while loop of floor(N/2) trips whose body holds two partial dots and
// two permute start/done pairs, each pair's halves around one of the dots and the second pair
// starting after the first is done (it passes on what the first brought); no other permute,
// and for odd N one partial dot outside the loop (the step left over).
inline void ExpectUnrolledLoop(const Partitioned& p, int64_t n, const RingAxes& axes = {}) {
  std::vector<const Instruction*> loops = InstructionsWith(*p.module, Opcode::kWhile);
  ASSERT_EQ(loops.size(), 1u) << p.text;
  const Instruction* limit = loops[0]->while_condition()->root()->operand(1);
  ASSERT_EQ(limit->opcode(), Opcode::kConstant) << p.text;
  EXPECT_EQ(limit->literal()->GetAsDouble(0), n / 2) << p.text;
  EXPECT_EQ(WhileTripCount(*loops[0]), n / 2) << p.text;
  const Computation& body = *loops[0]->while_body();
  std::vector<size_t> starts, dones, dots;
  for (size_t i = 0; i < body.instructions().size(); ++i) {
    const Opcode opcode = body.instructions()[i]->opcode();
    if (opcode == Opcode::kCollectivePermuteStart) starts.push_back(i);
    if (opcode == Opcode::kCollectivePermuteDone) dones.push_back(i);
    if (opcode == Opcode::kDot) dots.push_back(i);
  }
  ASSERT_EQ(starts.size(), 2u) << p.text;
  ASSERT_EQ(dones.size(), 2u) << p.text;
  ASSERT_EQ(dots.size(), 2u) << p.text;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_LT(starts[i], dots[i]) << p.text;
    EXPECT_LT(dots[i], dones[i]) << p.text;
  }
  EXPECT_LT(dones[0], starts[1]) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kCollectivePermute), 0) << p.text;
  std::vector<const Instruction*> permutes = Permutes(*p.module);
  EXPECT_EQ(permutes.size(), 2u) << p.text;
  for (const Instruction* permute : permutes) {
    EXPECT_EQ(permute->parent(), &body) << p.text;
    ExpectRingPairs(p, *permute, axes);
  }
  EXPECT_EQ(CountOf(p, Opcode::kDot), 2 + n % 2) << p.text;
}

// The unrolled loop, and no all-gather, reduce-scatter or all-reduce left around the dot.
inline void ExpectUnrolled(const Partitioned& p, int64_t n, const RingAxes& axes = {}) {
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  ExpectUnrolledLoop(p, n, axes);
}

inline const std::vector<int64_t> kDeviceCounts = {2, 3, 4, 5, 8, 16, 32};

// Both directions; the loop is bidirectional when asked and N >= 3.
inline const std::vector<WindowedEinsumDirection> kDirections = {WindowedEinsumDirection::kOne,
                                                                 WindowedEinsumDirection::kBoth};
inline bool Bidirectional(WindowedEinsumDirection direction, int64_t n) {
  return direction == WindowedEinsumDirection::kBoth && n >= 3;
}
inline std::string DirectionName(WindowedEinsumDirection direction) {
  return direction == WindowedEinsumDirection::kBoth ? "bidirectional" : "unidirectional";
}

// x rows split n ways, w replicated, result replicated: gathering x (4 columns) is cheaper than
// gathering the result (16 columns), so the rows (a free dim) are windowed.
inline std::string FreeDimModule(int64_t n, int64_t rows) {
  return DotModule(n, {rows, 4}, Split(2, 0, n), {4, 16}, "{replicated}", {rows, 16}, "{replicated}", kMatmul);
}

// x columns (contracting) split n ways: gathering x (8 x 4n) is cheaper than all-reducing the
// result (8 x 16n).
inline std::string ContractingModule(int64_t n) {
  return DotModule(n, {8, 4 * n}, Split(2, 1, n), {4 * n, 16 * n}, "{replicated}", {8, 16 * n}, "{replicated}",
                   kMatmul);
}

// x and w split n ways on the contracting dim, the result wanted split on its columns: the
// partial sums resolve with a reduce-scatter, which becomes a loop passing accumulators.
inline std::string ScatterModule(int64_t n, int64_t columns) {
  return DotModule(n, {2, 64 * n}, Split(2, 1, n), {64 * n, columns}, Split(2, 0, n), {2, columns},
                   Split(2, 1, n), kMatmul);
}

inline void ExpectScatterWindowed(const Partitioned& p, int64_t trips, bool bidirectional,
                                  const RingAxes& axes = {}) {
  EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  ExpectWindowed(p, trips, bidirectional, axes);
}

}  // namespace gspmd::partition_test::windowed_test
