// Tests of the unrolled windowed-einsum loops (WindowedEinsumUnroll): floor(N/2) trips of two ring steps, the same numbers as off, and which candidates auto offers the cost check.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partition_test_harness.h"
#include "partitioner/random_program.h"
#include "partitioner/random_run.h"
#include "windowed_einsum_test_util.h"

namespace gspmd::partition_test {
namespace {

using namespace windowed_test;

const std::vector<int64_t> kUnrolledCounts = {2, 3, 4, 5, 8, 16};

// ---- The loops: numbers of off, structure ----

TEST(WindowedEinsumUnrolled, FreeDimsAreBitIdentical) {
  for (int64_t n : kUnrolledCounts) {
    SCOPED_TRACE(n);
    ExpectUnrolled(ExpectSameAsOffWith(FreeDimModule(n, 2 * n), /*exact=*/true, false, AlwaysUnrolled()), n);
    std::string rhs =
        DotModule(n, {16, 4}, "{replicated}", {4, 3 * n}, Split(2, 1, n), {16, 3 * n}, "{replicated}", kMatmul);
    ExpectUnrolled(ExpectSameAsOffWith(rhs, /*exact=*/true, false, AlwaysUnrolled()), n);
  }
}

TEST(WindowedEinsumUnrolled, BatchDimIsBitIdentical) {
  for (int64_t n : kUnrolledCounts) {
    SCOPED_TRACE(n);
    std::string hlo = DotModule(n, {2 * n, 3, 4}, Split(3, 0, n), {2 * n, 4, 16}, "{replicated}", {2 * n, 3, 16},
                                "{replicated}", kBatchMatmul);
    Partitioned p = ExpectSameAsOffWith(hlo, /*exact=*/true, false, AlwaysUnrolled());
    ExpectUnrolled(p, n);
    EXPECT_EQ(CountOf(p, Opcode::kDynamicSlice), 2 + n % 2) << p.text;  // w's batch window per partial dot
  }
}

TEST(WindowedEinsumUnrolled, ContractingDimIsExactOnIntegers) {
  for (int64_t n : kUnrolledCounts) {
    SCOPED_TRACE(n);
    ExpectUnrolled(ExpectSameAsOffWith(ContractingModule(n), /*exact=*/true, /*integers=*/true, AlwaysUnrolled()), n);
    ExpectUnrolled(ExpectSameAsOffWith(ContractingModule(n), /*exact=*/false, false, AlwaysUnrolled()), n);
  }
}

TEST(WindowedEinsumUnrolled, ReduceScatterIsExactOnIntegers) {
  for (int64_t n : kUnrolledCounts) {
    SCOPED_TRACE(n);
    ExpectUnrolled(ExpectSameAsOffWith(ScatterModule(n, 4 * n), /*exact=*/true, /*integers=*/true, AlwaysUnrolled()),
                   n);
    ExpectUnrolled(ExpectSameAsOffWith(ScatterModule(n, 4 * n), /*exact=*/false, false, AlwaysUnrolled()), n);
    // Onto a batch dim: both operands' chunks sliced per partial dot.
    std::string batch = DotModule(n, {2 * n, 2, 32 * n}, Split(3, 2, n), {2 * n, 32 * n, 3}, Split(3, 1, n),
                                  {2 * n, 2, 3}, Split(3, 0, n), kBatchMatmul);
    Partitioned p = ExpectSameAsOffWith(batch, /*exact=*/true, /*integers=*/true, AlwaysUnrolled());
    ExpectUnrolled(p, n);
    EXPECT_EQ(CountOf(p, Opcode::kDynamicSlice), 2 * (2 + n % 2)) << p.text;
  }
}

TEST(WindowedEinsumUnrolled, UnevenWindowsAreExact) {
  for (int64_t n : {3, 4, 5, 8, 16}) {
    SCOPED_TRACE(n);
    const WindowedEinsumOptions options = AlwaysUnrolled();
    ExpectUnrolled(ExpectSameAsOffWith(FreeDimModule(n, 2 * n + 1), true, false, options), n);
    ExpectUnrolled(ExpectSameAsOffWith(FreeDimModule(n, n - 1), true, false, options), n);
    std::string batch = DotModule(n, {2 * n - 1, 3, 4}, Split(3, 0, n), {2 * n - 1, 4, 16}, "{replicated}",
                                  {2 * n - 1, 3, 16}, "{replicated}", kBatchMatmul);
    ExpectUnrolled(ExpectSameAsOffWith(batch, true, false, options), n);
    std::string contracting = DotModule(n, {8, 4 * n + 1}, Split(2, 1, n), {4 * n + 1, 16 * n}, "{replicated}",
                                        {8, 16 * n}, "{replicated}", kMatmul);
    ExpectUnrolled(ExpectSameAsOffWith(contracting, true, /*integers=*/true, options), n);
  }
}

// On an a x b mesh (device = i*b + j), windowed over one axis inside each subgroup sharing the
// other's coordinate: free rows, a contracting window and a reduce-scatter.
TEST(WindowedEinsumUnrolled, TwoDimensionalMeshes) {
  struct Mesh {
    int64_t a, b;
    bool major;
  };
  for (Mesh c : {Mesh{2, 4, true}, Mesh{2, 4, false}, Mesh{4, 2, true}, Mesh{2, 8, false}, Mesh{8, 2, true},
                 Mesh{3, 5, false}, Mesh{5, 3, true}}) {
    SCOPED_TRACE(std::to_string(c.a) + "x" + std::to_string(c.b) + (c.major ? " major" : " minor"));
    const int64_t n = c.a * c.b;
    const int64_t windowed = c.major ? c.a : c.b, kept = c.major ? c.b : c.a;
    const std::string major_axis = "<=[" + std::to_string(n) + "] last_tile_dim_replicate}";
    const std::string minor_axis =
        "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0) last_tile_dim_replicate}";
    auto tiles = [&](int64_t d0, int64_t d1, bool over_windowed_axis) {
      return "{devices=[" + std::to_string(d0) + "," + std::to_string(d1) + "," +
             std::to_string(over_windowed_axis ? kept : windowed) + "]" +
             ((c.major == over_windowed_axis) ? major_axis : minor_axis);
    };
    const RingAxes axes = MeshAxis(c.b, c.major);
    const std::string columns = tiles(1, kept, false);
    std::string rows = DotModule(n, {4 * windowed, 4}, tiles(windowed, 1, true), {4, 32 * kept}, columns,
                                 {4 * windowed, 32 * kept}, columns, kMatmul);
    ExpectUnrolled(ExpectSameAsOffWith(rows, true, false, AlwaysUnrolled()), windowed, axes);
    std::string contracting = DotModule(n, {8, 4 * windowed}, tiles(1, windowed, true), {4 * windowed, 32 * kept},
                                        columns, {8, 32 * kept}, columns, kMatmul);
    ExpectUnrolled(ExpectSameAsOffWith(contracting, true, true, AlwaysUnrolled()), windowed, axes);
    std::string scatter = DotModule(n, {2, 64 * windowed}, tiles(1, windowed, true), {64 * windowed, 8 * windowed},
                                    tiles(windowed, 1, true), {2, 8 * windowed}, tiles(1, windowed, true), kMatmul);
    ExpectUnrolled(ExpectSameAsOffWith(scatter, true, true, AlwaysUnrolled()), windowed, axes);
  }
}

// Bidirectional loops are not unrolled (they already take a step each way per trip); N = 2 has
// no bidirectional loop and is unrolled.
TEST(WindowedEinsumUnrolled, BidirectionalLoopsStayAsTheyAre) {
  for (int64_t n : {2, 3, 4, 5, 8}) {
    SCOPED_TRACE(n);
    WindowedEinsumOptions options = AlwaysUnrolled();
    options.direction = WindowedEinsumDirection::kBoth;
    Partitioned p = ExpectSameAsOffWith(ContractingModule(n), true, true, options);
    if (n == 2) ExpectUnrolled(p, n);
    else ExpectWindowed(p, n, /*bidirectional=*/true);
    Partitioned scatter = ExpectSameAsOffWith(ScatterModule(n, 4 * n), true, true, options);
    if (n == 2) ExpectUnrolled(scatter, n);
    else ExpectScatterWindowed(scatter, n, /*bidirectional=*/true);
  }
}

// Random programs (the random partition test's generator) partitioned with always, unrolled,
// compute the interpreter's numbers.
TEST(WindowedEinsumUnrolled, RandomProgramsMatchTheInterpreter) {
  const int64_t cases = random_program::EnvInt("GSPMD_RANDOM_CASES", 150);
  const int64_t first_seed = random_program::EnvInt("GSPMD_RANDOM_SEED", 1);
  int64_t windowed = 0;
  for (int64_t i = 0; i < cases; ++i) {
    const uint64_t seed = static_cast<uint64_t>(first_seed + i);
    random_program::RandomProgram program = random_program::GenerateRandomProgram(seed);
    std::vector<Literal> arguments = random_program::RandomArguments(program, seed);
    std::unique_ptr<Module> original = ParseModule(program.text, "random.hlo");
    std::vector<Literal> expected = FlattenTuple(EvaluateModule(*original, arguments));
    PartitionOptions options;
    options.windowed_einsum = AlwaysUnrolled();
    std::string text = PrintModule(*PartitionModule(*original, options).module);
    std::unique_ptr<Module> partitioned = ParseModule(text, "partitioned.hlo");
    windowed += CountOf(*partitioned, Opcode::kWhile) > CountOf(*original, Opcode::kWhile);
    SpmdRunOptions run = OptionsFromLikeModule(*partitioned, original.get());
    std::string failure = random_program::Mismatch(RunSpmd(*partitioned, arguments, run), expected, "");
    EXPECT_EQ(failure, "") << "seed " << seed << "\n" << program.text << "\npartitioned:\n" << text;
    if (!failure.empty()) break;
  }
  EXPECT_GT(windowed, 0);
}

// ---- What auto offers ----

WindowedEinsumOptions AutoWith(WindowedEinsumCostCheck check) {
  WindowedEinsumOptions options;
  // Grouped loops (a pre-gather, then a shorter ring) are windowed_einsum_grouped_test.cpp's:
  // refused here without asking `check`.
  options.cost_check = [check = std::move(check)](const WindowedEinsumCandidate& c) {
    return c.group == 1 && check(c);
  };
  return options;
}

// A free window (unidirectional preferred): unrolled, plain, then bidirectional (plain only).
TEST(WindowedEinsumUnrolledChoice, UnrolledIsOfferedFirstAndARefusalFallsBack) {
  for (int64_t n : {4, 5}) {
    SCOPED_TRACE(n);
    std::vector<WindowedEinsumCandidate> seen;
    Partitioned refused = PartitionWithOptions(FreeDimModule(n, 2 * n), AutoWith([&](const WindowedEinsumCandidate& c) {
                                                 seen.push_back(c);
                                                 return false;
                                               }));
    ExpectNotWindowed(refused);
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_TRUE(seen[0].unrolled && !seen[0].bidirectional);
    EXPECT_TRUE(!seen[1].unrolled && !seen[1].bidirectional);
    EXPECT_TRUE(!seen[2].unrolled && seen[2].bidirectional);
    // Same bytes and FLOPs as the plain loop, in floor(N/2) trips; for odd N one partial dot
    // outside the loop and nothing sent with it.
    const WindowedEinsumCandidate& unrolled = seen[0];
    const WindowedEinsumCandidate& plain = seen[1];
    EXPECT_EQ(unrolled.trips, n / 2);
    EXPECT_EQ(plain.trips, n);
    EXPECT_EQ(unrolled.window_bytes_per_trip, 2 * plain.window_bytes_per_trip);
    EXPECT_DOUBLE_EQ(unrolled.flops_per_trip, 2 * plain.flops_per_trip);
    EXPECT_EQ(unrolled.hbm_bytes_per_trip, 2 * plain.hbm_bytes_per_trip);
    EXPECT_DOUBLE_EQ(unrolled.peeled_flops, n % 2 == 1 ? plain.flops_per_trip : 0);
    EXPECT_EQ(unrolled.peeled_bytes, 0);
    EXPECT_DOUBLE_EQ(unrolled.trips * unrolled.flops_per_trip + unrolled.peeled_flops, n * plain.flops_per_trip);
    EXPECT_EQ(unrolled.collective_bytes, plain.collective_bytes);
    EXPECT_EQ(unrolled.rings, plain.rings);

    // Accepting the unrolled one emits it; refusing it alone emits the plain loop.
    Partitioned taken = PartitionWithOptions(FreeDimModule(n, 2 * n),
                                             AutoWith([](const WindowedEinsumCandidate& c) { return c.unrolled; }));
    ExpectUnrolled(taken, n);
    Partitioned plain_loop = PartitionWithOptions(
        FreeDimModule(n, 2 * n), AutoWith([](const WindowedEinsumCandidate& c) { return !c.unrolled; }));
    ExpectWindowed(plain_loop, n, /*bidirectional=*/false);
  }
}

// A contracting window and a reduce-scatter (bidirectional preferred from N = 4): bidirectional,
// then unidirectional unrolled, then plain.
TEST(WindowedEinsumUnrolledChoice, BidirectionalFirstThenUnrolled) {
  for (const std::string& hlo : {ContractingModule(4), ScatterModule(4, 16)}) {
    std::vector<std::pair<bool, bool>> offered;  // (bidirectional, unrolled)
    Partitioned p = PartitionWithOptions(hlo, AutoWith([&](const WindowedEinsumCandidate& c) {
                                           offered.emplace_back(c.bidirectional, c.unrolled);
                                           return c.unrolled;
                                         }));
    EXPECT_EQ(offered, (std::vector<std::pair<bool, bool>>{{true, false}, {false, true}}));
    ExpectUnrolled(p, 4);
  }
}

// Without a cost check auto is plain (the threshold decides), and unroll off never offers it.
TEST(WindowedEinsumUnrolledChoice, PlainWithoutACheckOrWhenOff) {
  WindowedEinsumOptions threshold;
  threshold.threshold_bytes = 0;
  ExpectWindowed(PartitionWithOptions(FreeDimModule(4, 8), threshold), 4, false);
  threshold.unroll = WindowedEinsumUnroll::kOn;  // on: the threshold's loop unrolled
  ExpectUnrolled(PartitionWithOptions(FreeDimModule(4, 8), threshold), 4);

  std::vector<bool> unrolled;
  WindowedEinsumOptions off = AutoWith([&](const WindowedEinsumCandidate& c) {
    unrolled.push_back(c.unrolled);
    return false;
  });
  off.unroll = WindowedEinsumUnroll::kOff;
  ExpectNotWindowed(PartitionWithOptions(FreeDimModule(4, 8), off));
  EXPECT_EQ(unrolled, (std::vector<bool>{false, false}));
  // On with a check: only unrolled unidirectional candidates.
  unrolled.clear();
  off.unroll = WindowedEinsumUnroll::kOn;
  ExpectNotWindowed(PartitionWithOptions(FreeDimModule(4, 8), off));
  EXPECT_EQ(unrolled, (std::vector<bool>{true, false}));  // unidirectional unrolled, bidirectional plain
}

}  // namespace
}  // namespace gspmd::partition_test
