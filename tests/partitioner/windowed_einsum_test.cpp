// Tests of windowed einsum (handlers/dot_windowed.cpp): with --windowed-einsum always, a dot's
// all-gather over a free, batch or contracting dim (or the reduce-scatter of its result)
// becomes one loop of N trips (bidirectional: ceil(N/2) - 1) passing windows round a folded ring
// inside each subgroup, and computes the numbers of the program partitioned with off.
#include <cstdint>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/trip_count.h"
#include "cli/cli_test_util.h"
#include "io/npy.h"
#include "partition_test_harness.h"
#include "windowed_einsum_test_util.h"
#include "partitioner/random_program.h"
#include "partitioner/random_run.h"

namespace gspmd::partition_test {
namespace {

using namespace windowed_test;

// The tests below run both directions (WindowedEinsumDirection kOne and kBoth).

TEST(WindowedEinsum, FreeDimOfLhsIsBitIdentical) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      Partitioned p = ExpectSameAsOff(FreeDimModule(n, 2 * n), /*exact=*/true, false, direction);
      ExpectWindowed(p, n, Bidirectional(direction, n));
    }
}

TEST(WindowedEinsum, FreeDimOfRhsIsBitIdentical) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      std::string hlo =
          DotModule(n, {16, 4}, "{replicated}", {4, 3 * n}, Split(2, 1, n), {16, 3 * n}, "{replicated}", kMatmul);
      Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, false, direction);
      ExpectWindowed(p, n, Bidirectional(direction, n));
    }
}

TEST(WindowedEinsum, BatchDimIsBitIdentical) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      std::string hlo = DotModule(n, {2 * n, 3, 4}, Split(3, 0, n), {2 * n, 4, 16}, "{replicated}",
                                  {2 * n, 3, 16}, "{replicated}", kBatchMatmul);
      Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, false, direction);
      const bool bidirectional = Bidirectional(direction, n);
      ExpectWindowed(p, n, bidirectional);
      // The batch window of w: one slice per partial dot (bidirectional: two in the loop, the
      // own window's before it and for even N the last one's after it).
      const int64_t slices = bidirectional ? 3 + (n % 2 == 0) : 1;
      EXPECT_EQ(CountOf(p, Opcode::kDynamicSlice), slices) << p.text;
    }
}

TEST(WindowedEinsum, ContractingDimIsExactOnIntegers) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      Partitioned p = ExpectSameAsOff(ContractingModule(n), /*exact=*/true, /*integers=*/true, direction);
      ExpectWindowed(p, n, Bidirectional(direction, n));
    }
}

TEST(WindowedEinsum, ContractingDimIsCloseOnRandomFloats) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      Partitioned p = ExpectSameAsOff(ContractingModule(n), /*exact=*/false, false, direction);
      ExpectWindowed(p, n, Bidirectional(direction, n));
    }
}

// On an a x b mesh (device = i*b + j): x rows split over one axis, w and the result split on
// their columns over the other; the rows are windowed over the first axis only, inside each
// subgroup that shares the other axis's coordinate.
struct MeshCase {
  int64_t a, b;
  bool window_major;  // window over the a axis (stride b), else over the b axis (stride 1)
};

const std::vector<MeshCase> kMeshCases = {MeshCase{2, 4, true},  MeshCase{2, 4, false}, MeshCase{4, 2, true},
                                          MeshCase{4, 2, false}, MeshCase{2, 8, false}, MeshCase{8, 2, true},
                                          MeshCase{3, 5, false}, MeshCase{5, 3, true}};

std::string MeshName(const MeshCase& c) {
  return std::to_string(c.a) + "x" + std::to_string(c.b) + (c.window_major ? " major" : " minor");
}

TEST(WindowedEinsum, TwoDimensionalMeshesKeepPairsInSubgroups) {
  for (MeshCase c : kMeshCases) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(MeshName(c));
      const int64_t n = c.a * c.b;
      const int64_t windowed = c.window_major ? c.a : c.b, kept = c.window_major ? c.b : c.a;
      const std::string major_axis = "<=[" + std::to_string(n) + "] last_tile_dim_replicate}";
      const std::string minor_axis =
          "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0) last_tile_dim_replicate}";
      const std::string rows = "{devices=[" + std::to_string(windowed) + ",1," + std::to_string(kept) + "]" +
                               (c.window_major ? major_axis : minor_axis);
      const std::string columns = "{devices=[1," + std::to_string(kept) + "," + std::to_string(windowed) + "]" +
                                  (c.window_major ? minor_axis : major_axis);
      std::string hlo = DotModule(n, {4 * windowed, 4}, rows, {4, 32 * kept}, columns, {4 * windowed, 32 * kept},
                                  columns, kMatmul);
      Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, false, direction);
      ExpectWindowed(p, windowed, Bidirectional(direction, windowed), MeshAxis(c.b, c.window_major));
    }
}

TEST(WindowedEinsum, ReduceScatterIsExactOnIntegers) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      Partitioned p = ExpectSameAsOff(ScatterModule(n, 4 * n), /*exact=*/true, /*integers=*/true, direction);
      ExpectScatterWindowed(p, n, Bidirectional(direction, n));
    }
}

TEST(WindowedEinsum, ReduceScatterIsCloseOnRandomFloats) {
  for (int64_t n : kDeviceCounts) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      Partitioned p = ExpectSameAsOff(ScatterModule(n, 4 * n), /*exact=*/false, false, direction);
      ExpectScatterWindowed(p, n, Bidirectional(direction, n));
    }
}

TEST(WindowedEinsum, ReduceScatterOntoABatchDim) {
  for (int64_t n : {2, 3, 4, 5, 8}) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      std::string hlo = DotModule(n, {2 * n, 2, 32 * n}, Split(3, 2, n), {2 * n, 32 * n, 3}, Split(3, 1, n),
                                  {2 * n, 2, 3}, Split(3, 0, n), kBatchMatmul);
      Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, /*integers=*/true, direction);
      const bool bidirectional = Bidirectional(direction, n);
      ExpectScatterWindowed(p, n, bidirectional);
      // Both operands' batch chunks, per partial dot (bidirectional: two in the loop, the own
      // chunk's after it and for even N the first forward one's before it).
      const int64_t dots = bidirectional ? 3 + (n % 2 == 0) : 1;
      EXPECT_EQ(CountOf(p, Opcode::kDynamicSlice), 2 * dots) << p.text;
    }
}

TEST(WindowedEinsum, ReduceScatterOnTwoDimensionalMeshes) {
  for (MeshCase c : kMeshCases) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(MeshName(c));
      const int64_t n = c.a * c.b;
      const int64_t windowed = c.window_major ? c.a : c.b, kept = c.window_major ? c.b : c.a;
      const std::string order = c.window_major ? "<=[" + std::to_string(n) + "]"
                                               : "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0)";
      auto split = [&](int64_t rows, int64_t columns) {
        return "{devices=[" + std::to_string(rows) + "," + std::to_string(columns) + "," + std::to_string(kept) +
               "]" + order + " last_tile_dim_replicate}";
      };
      std::string hlo = DotModule(n, {2, 64 * windowed}, split(1, windowed), {64 * windowed, 8 * windowed},
                                  split(windowed, 1), {2, 8 * windowed}, split(1, windowed), kMatmul);
      Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, /*integers=*/true, direction);
      ExpectScatterWindowed(p, windowed, Bidirectional(direction, windowed), MeshAxis(c.b, c.window_major));
    }
}

// As above, with x split on its contracting dim over one axis: the contracting window.
TEST(WindowedEinsum, ContractingWindowsOnTwoDimensionalMeshes) {
  for (MeshCase c : kMeshCases) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(MeshName(c));
      const int64_t n = c.a * c.b;
      const int64_t windowed = c.window_major ? c.a : c.b, kept = c.window_major ? c.b : c.a;
      const std::string major_axis = "<=[" + std::to_string(n) + "] last_tile_dim_replicate}";
      const std::string minor_axis =
          "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0) last_tile_dim_replicate}";
      const std::string contracting = "{devices=[1," + std::to_string(windowed) + "," + std::to_string(kept) +
                                      "]" + (c.window_major ? major_axis : minor_axis);
      const std::string columns = "{devices=[1," + std::to_string(kept) + "," + std::to_string(windowed) + "]" +
                                  (c.window_major ? minor_axis : major_axis);
      std::string hlo = DotModule(n, {8, 4 * windowed}, contracting, {4 * windowed, 32 * kept}, columns,
                                  {8, 32 * kept}, columns, kMatmul);
      Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, /*integers=*/true, direction);
      ExpectWindowed(p, windowed, Bidirectional(direction, windowed), MeshAxis(c.b, c.window_major));
    }
}

// Rows split over both axes of a 2x4 mesh in transposed device order: the window runs over the
// two axes together, in the order the rows' tiles follow (the row tile index is the axis index).
TEST(WindowedEinsum, WindowOverTwoAxesInTransposedOrder) {
  struct Order {
    std::string text;
    std::function<int64_t(int64_t)> tile;  // device -> row tile
  };
  const std::vector<Order> orders = {
      {"<=[2,4]T(1,0)", [](int64_t d) { return (d % 4) * 2 + d / 4; }},
      {"<=[4,2]T(1,0)", [](int64_t d) { return (d % 2) * 4 + d / 2; }},
      {"<=[8]", [](int64_t d) { return d; }},
  };
  for (const Order& order : orders) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(order.text);
      std::string hlo = DotModule(8, {16, 4}, "{devices=[8,1]" + order.text + "}", {4, 16}, "{replicated}",
                                  {16, 16}, "{replicated}", kMatmul);
      RingAxes axes;
      axes.axis_index = order.tile;
      ExpectWindowed(ExpectSameAsOff(hlo, /*exact=*/true, false, direction), 8, Bidirectional(direction, 8), axes);
    }
}

// A dim split unevenly and gathered whole: the windows cover it padded; the loop cuts the
// padding off the result (free, batch) or zeroes it (contracting).
TEST(WindowedEinsum, UnevenWindowsAreExact) {
  for (int64_t n : {3, 4, 5, 8, 16}) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      const bool bidirectional = Bidirectional(direction, n);
      ExpectWindowed(ExpectSameAsOff(FreeDimModule(n, 2 * n + 1), /*exact=*/true, false, direction), n,
                     bidirectional);
      ExpectWindowed(ExpectSameAsOff(FreeDimModule(n, n - 1), /*exact=*/true, false, direction), n, bidirectional);
      std::string batch = DotModule(n, {2 * n - 1, 3, 4}, Split(3, 0, n), {2 * n - 1, 4, 16}, "{replicated}",
                                    {2 * n - 1, 3, 16}, "{replicated}", kBatchMatmul);
      ExpectWindowed(ExpectSameAsOff(batch, /*exact=*/true, false, direction), n, bidirectional);
      std::string contracting = DotModule(n, {8, 4 * n + 1}, Split(2, 1, n), {4 * n + 1, 16 * n}, "{replicated}",
                                          {8, 16 * n}, "{replicated}", kMatmul);
      ExpectWindowed(ExpectSameAsOff(contracting, /*exact=*/true, /*integers=*/true, direction), n, bidirectional);
    }
}

TEST(WindowedEinsum, UnevenReduceScatterFallsBack) {
  for (int64_t n : {3, 4}) 
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(DirectionName(direction));
      SCOPED_TRACE(n);
      Partitioned scatter =
          ExpectSameAsOff(ScatterModule(n, 4 * n + 1), /*exact=*/true, /*integers=*/true, direction);
      ExpectNotWindowed(scatter);
    }
}

TEST(WindowedEinsum, OffAndSmallAutoKeepTheAllGather) {
  const std::string hlo = FreeDimModule(4, 8);
  for (WindowedEinsumMode mode : {WindowedEinsumMode::kOff, WindowedEinsumMode::kAuto}) {
    Partitioned p = PartitionWith(hlo, mode);
    ExpectNotWindowed(p);
    EXPECT_EQ(CountOf(p, Opcode::kAllGather), 1) << p.text;
  }
}

TEST(WindowedEinsum, AutoWindowsAboveTheThreshold) {
  auto module = ParseModule(FreeDimModule(4, 8));
  PartitionOptions options;
  options.windowed_einsum.threshold_bytes = 8 * 4 * 4;  // the gathered x: f32[8,4]
  EXPECT_EQ(CountOf(*PartitionModule(*module, options).module, Opcode::kWhile), 1);
  options.windowed_einsum.threshold_bytes += 1;
  EXPECT_EQ(CountOf(*PartitionModule(*module, options).module, Opcode::kWhile), 0);
  options.windowed_einsum.threshold_bytes = 0;
  options.windowed_einsum.max_trips = 2;  // 4 devices: too many trips
  EXPECT_EQ(CountOf(*PartitionModule(*module, options).module, Opcode::kWhile), 0);
}

// Random programs (the random partition test's generator) partitioned with always compute the
// interpreter's numbers: any windowed case the detection lets through wrongly shows up here.
TEST(WindowedEinsum, RandomProgramsMatchTheInterpreter) {
  const int64_t cases = random_program::EnvInt("GSPMD_RANDOM_CASES", 400);
  const int64_t first_seed = random_program::EnvInt("GSPMD_RANDOM_SEED", 1);
  int64_t windowed = 0;
  for (int64_t i = 0; i < cases; ++i) {
    const uint64_t seed = static_cast<uint64_t>(first_seed + i);
    random_program::RandomProgram program = random_program::GenerateRandomProgram(seed);
    std::vector<Literal> arguments = random_program::RandomArguments(program, seed);
    std::unique_ptr<Module> original = ParseModule(program.text, "random.hlo");
    std::vector<Literal> expected = FlattenTuple(EvaluateModule(*original, arguments));
    PartitionOptions options;
    options.windowed_einsum.mode = WindowedEinsumMode::kAlways;
    std::string text = PrintModule(*PartitionModule(*original, options).module);
    std::unique_ptr<Module> partitioned = ParseModule(text, "partitioned.hlo");
    windowed += CountOf(*partitioned, Opcode::kWhile) > CountOf(*original, Opcode::kWhile);
    SpmdRunOptions run = OptionsFromLikeModule(*partitioned, original.get());
    std::string failure = random_program::Mismatch(RunSpmd(*partitioned, arguments, run), expected, "");
    if (failure.empty())
      failure = random_program::Mismatch(random_program::RunWithPoisonedPadding(*partitioned, arguments, run), expected,
                                         "with garbage in the padding of uneven argument shards: ");
    EXPECT_EQ(failure, "") << "seed " << seed << "\n" << program.text << "\npartitioned:\n" << text;
    if (!failure.empty()) break;
  }
  EXPECT_GT(windowed, 0);
  std::cout << "windowed einsum: " << windowed << " of " << cases << " random programs windowed\n";
}

// ---- The flag on the command line ----

class WindowedEinsumCli : public cli_test::CliTest {};

TEST_F(WindowedEinsumCli, AnUnknownModeIsRefused) {
  const std::string file = WriteFile("mm.hlo", FreeDimModule(4, 8));
  for (const char* command : {"partition", "run", "train", "simulate"}) {
    SCOPED_TRACE(command);
    cli_test::CommandResult result = Gspmd({command, file, "--windowed-einsum", "bogus"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_NE(result.err.find("--windowed-einsum"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("bogus"), std::string::npos) << result.err;
  }
}

TEST_F(WindowedEinsumCli, AlwaysChangesTheProgramButNotTheResults) {
  const std::string file = WriteFile("mm.hlo", FreeDimModule(4, 8));
  cli_test::CommandResult off = Gspmd({"partition", file, "--windowed-einsum", "off"});
  cli_test::CommandResult always = Gspmd({"partition", file, "--windowed-einsum", "always"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  ASSERT_EQ(always.exit_code, 0) << always.err;
  EXPECT_NE(off.out, always.out);
  EXPECT_NE(off.out.find("all-gather"), std::string::npos) << off.out;
  EXPECT_EQ(always.out.find("all-gather"), std::string::npos) << always.out;
  EXPECT_NE(always.out.find("while("), std::string::npos) << always.out;

  std::vector<Literal> inputs = RandomInputs(*ParseModule(FreeDimModule(4, 8)), 3, false);
  WriteNpy(Path("x.npy"), inputs[0]);
  WriteNpy(Path("w.npy"), inputs[1]);
  for (const char* mode : {"off", "always"}) {
    cli_test::CommandResult run =
        Gspmd({"run", file, "-i", Path("x.npy"), Path("w.npy"), "-o", Path(mode), "--windowed-einsum", mode});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  EXPECT_TRUE(ReadNpy(Path("always/out0.npy")).BitwiseEquals(ReadNpy(Path("off/out0.npy"))));

  cli_test::CommandResult simulated =
      Gspmd({"simulate", file, "--chip", "tpu-v3", "--json", "--windowed-einsum", "always"});
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
  EXPECT_NE(simulated.out.find("collective-permute"), std::string::npos) << simulated.out;
}

}  // namespace
}  // namespace gspmd::partition_test
