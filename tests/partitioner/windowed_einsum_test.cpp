// Tests of windowed einsum (handlers/dot_windowed.cpp): with --windowed-einsum always, a dot's
// all-gather over a free, batch or contracting dim becomes one loop of N trips passing windows
// around inside each subgroup, and computes the numbers of the program partitioned with off.
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
#include "partitioner/random_program.h"
#include "partitioner/random_run.h"

namespace gspmd::partition_test {
namespace {

Partitioned PartitionWith(const std::string& hlo, WindowedEinsumMode mode) {
  Partitioned out;
  out.original = ParseModule(hlo);
  PartitionOptions options;
  options.windowed_einsum.mode = mode;
  PartitionResult result = PartitionModule(*out.original, options);
  out.warnings = result.warnings;
  out.text = PrintModule(*result.module);
  for (const std::string& warning : out.warnings) ADD_FAILURE() << warning << "\n" << out.text;
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

std::string F32(const Dims& dims) {
  std::string text = "f32[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

// One dot of parameters `lhs` and `rhs` with the given shardings and dimension numbers.
std::string DotModule(int64_t devices, const Dims& lhs, const std::string& lhs_sharding, const Dims& rhs,
                      const std::string& rhs_sharding, const Dims& out, const std::string& out_sharding,
                      const std::string& dims) {
  return "HloModule m, num_partitions=" + std::to_string(devices) + "\nENTRY e {\n  %x = " + F32(lhs) +
         " parameter(0), sharding=" + lhs_sharding + "\n  %w = " + F32(rhs) + " parameter(1), sharding=" +
         rhs_sharding + "\n  ROOT %d = " + F32(out) + " dot(%x, %w), " + dims + ", sharding=" + out_sharding +
         "\n}\n";
}

const std::string kMatmul = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
const std::string kBatchMatmul =
    "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}";

std::string Split(int64_t rank, int64_t dim, int64_t n) {
  std::string text = "{devices=[";
  for (int64_t d = 0; d < rank; ++d) text += (d ? "," : "") + std::to_string(d == dim ? n : 1);
  return text + "]<=[" + std::to_string(n) + "]}";
}

// Random inputs for the entry's parameters: normal floats, or small integers.
std::vector<Literal> RandomInputs(const Module& module, uint32_t seed, bool integers) {
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

// Devices that may exchange windows: true when both are in one subgroup of the windowed axes.
using SameGroup = std::function<bool(int64_t, int64_t)>;
bool AnyPair(int64_t, int64_t) { return true; }

// One while loop of `trips` trips (read off its condition's constant), no all-gather, and one
// collective-permute whose pairs stay inside subgroups.
void ExpectWindowed(const Partitioned& p, int64_t trips, const SameGroup& same_group) {
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  std::vector<const Instruction*> loops = InstructionsWith(*p.module, Opcode::kWhile);
  ASSERT_EQ(loops.size(), 1u) << p.text;
  const Instruction* limit = loops[0]->while_condition()->root()->operand(1);
  ASSERT_EQ(limit->opcode(), Opcode::kConstant) << p.text;
  EXPECT_EQ(limit->literal()->GetAsDouble(0), trips) << p.text;
  EXPECT_EQ(WhileTripCount(*loops[0]), trips) << p.text;
  std::vector<const Instruction*> permutes = InstructionsWith(*p.module, Opcode::kCollectivePermute);
  ASSERT_EQ(permutes.size(), 1u) << p.text;
  EXPECT_EQ(permutes[0]->parent(), loops[0]->while_body());
  for (const SourceTargetPair& pair : permutes[0]->source_target_pairs())
    EXPECT_TRUE(same_group(pair.source, pair.target)) << pair.source << " -> " << pair.target << "\n" << p.text;
}

void ExpectNotWindowed(const Partitioned& p) { EXPECT_EQ(CountOf(p, Opcode::kWhile), 0) << p.text; }

// Runs `hlo` partitioned with off and with always on the same inputs: bit-identical results when
// `exact`, else equal within 1e-5 relative. Returns the windowed program.
Partitioned ExpectSameAsOff(const std::string& hlo, bool exact, bool integers = false) {
  Partitioned off = PartitionWith(hlo, WindowedEinsumMode::kOff);
  Partitioned windowed = PartitionWith(hlo, WindowedEinsumMode::kAlways);
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

const std::vector<int64_t> kDeviceCounts = {2, 3, 4, 5, 8, 16, 32};

// x rows split n ways, w replicated, result replicated: gathering x (4 columns) is cheaper than
// gathering the result (16 columns), so the rows (a free dim) are windowed.
std::string FreeDimModule(int64_t n, int64_t rows) {
  return DotModule(n, {rows, 4}, Split(2, 0, n), {4, 16}, "{replicated}", {rows, 16}, "{replicated}", kMatmul);
}

TEST(WindowedEinsum, FreeDimOfLhsIsBitIdentical) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    Partitioned p = ExpectSameAsOff(FreeDimModule(n, 2 * n), /*exact=*/true);
    ExpectWindowed(p, n, AnyPair);
  }
}

TEST(WindowedEinsum, FreeDimOfRhsIsBitIdentical) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    std::string hlo =
        DotModule(n, {16, 4}, "{replicated}", {4, 3 * n}, Split(2, 1, n), {16, 3 * n}, "{replicated}", kMatmul);
    Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true);
    ExpectWindowed(p, n, AnyPair);
  }
}

TEST(WindowedEinsum, BatchDimIsBitIdentical) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    std::string hlo = DotModule(n, {2 * n, 3, 4}, Split(3, 0, n), {2 * n, 4, 16}, "{replicated}", {2 * n, 3, 16},
                                "{replicated}", kBatchMatmul);
    Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true);
    ExpectWindowed(p, n, AnyPair);
    EXPECT_EQ(CountOf(p, Opcode::kDynamicSlice), 1) << p.text;  // the batch window of w
  }
}

// x columns (contracting) split n ways: gathering x (8 x 4n) is cheaper than all-reducing the
// result (8 x 16n).
std::string ContractingModule(int64_t n) {
  return DotModule(n, {8, 4 * n}, Split(2, 1, n), {4 * n, 16 * n}, "{replicated}", {8, 16 * n}, "{replicated}",
                   kMatmul);
}

TEST(WindowedEinsum, ContractingDimIsExactOnIntegers) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    Partitioned p = ExpectSameAsOff(ContractingModule(n), /*exact=*/true, /*integers=*/true);
    ExpectWindowed(p, n, AnyPair);
  }
}

TEST(WindowedEinsum, ContractingDimIsCloseOnRandomFloats) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    Partitioned p = ExpectSameAsOff(ContractingModule(n), /*exact=*/false);
    ExpectWindowed(p, n, AnyPair);
  }
}

// On an a x b mesh (device = i*b + j): x rows split over one axis, w and the result split on
// their columns over the other; the rows are windowed over the first axis only, inside each
// subgroup that shares the other axis's coordinate.
struct MeshCase {
  int64_t a, b;
  bool window_major;  // window over the a axis (stride b), else over the b axis (stride 1)
};

TEST(WindowedEinsum, TwoDimensionalMeshesKeepPairsInSubgroups) {
  for (MeshCase c : {MeshCase{2, 4, true}, MeshCase{2, 4, false}, MeshCase{4, 2, true}, MeshCase{4, 2, false}}) {
    SCOPED_TRACE(std::to_string(c.a) + "x" + std::to_string(c.b) + (c.window_major ? " major" : " minor"));
    const int64_t n = c.a * c.b;
    const int64_t windowed = c.window_major ? c.a : c.b, kept = c.window_major ? c.b : c.a;
    const std::string major_axis = "<=[" + std::to_string(n) + "] last_tile_dim_replicate}";
    const std::string minor_axis =
        "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0) last_tile_dim_replicate}";
    const std::string rows = "{devices=[" + std::to_string(windowed) + ",1," + std::to_string(kept) + "]" +
                             (c.window_major ? major_axis : minor_axis);
    const std::string columns = "{devices=[1," + std::to_string(kept) + "," + std::to_string(windowed) + "]" +
                                (c.window_major ? minor_axis : major_axis);
    std::string hlo =
        DotModule(n, {4 * windowed, 4}, rows, {4, 32 * kept}, columns, {4 * windowed, 32 * kept}, columns, kMatmul);
    Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true);
    const int64_t b = c.b;
    SameGroup same = c.window_major ? SameGroup([b](int64_t s, int64_t t) { return s % b == t % b; })
                                    : SameGroup([b](int64_t s, int64_t t) { return s / b == t / b; });
    ExpectWindowed(p, windowed, same);
  }
}

// x and w split n ways on the contracting dim, the result wanted split on its columns: the
// partial sums resolve with a reduce-scatter, which becomes a loop passing accumulators.
std::string ScatterModule(int64_t n, int64_t columns) {
  return DotModule(n, {2, 64 * n}, Split(2, 1, n), {64 * n, columns}, Split(2, 0, n), {2, columns},
                   Split(2, 1, n), kMatmul);
}

void ExpectScatterWindowed(const Partitioned& p, int64_t trips, const SameGroup& same_group) {
  EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  ExpectWindowed(p, trips, same_group);
}

TEST(WindowedEinsum, ReduceScatterIsExactOnIntegers) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    Partitioned p = ExpectSameAsOff(ScatterModule(n, 4 * n), /*exact=*/true, /*integers=*/true);
    ExpectScatterWindowed(p, n, AnyPair);
  }
}

TEST(WindowedEinsum, ReduceScatterIsCloseOnRandomFloats) {
  for (int64_t n : kDeviceCounts) {
    SCOPED_TRACE(n);
    Partitioned p = ExpectSameAsOff(ScatterModule(n, 4 * n), /*exact=*/false);
    ExpectScatterWindowed(p, n, AnyPair);
  }
}

TEST(WindowedEinsum, ReduceScatterOntoABatchDim) {
  for (int64_t n : {2, 4, 5}) {
    SCOPED_TRACE(n);
    std::string hlo = DotModule(n, {2 * n, 2, 32 * n}, Split(3, 2, n), {2 * n, 32 * n, 3}, Split(3, 1, n),
                                {2 * n, 2, 3}, Split(3, 0, n), kBatchMatmul);
    Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, /*integers=*/true);
    ExpectScatterWindowed(p, n, AnyPair);
    EXPECT_EQ(CountOf(p, Opcode::kDynamicSlice), 2) << p.text;  // both operands' batch chunks
  }
}

TEST(WindowedEinsum, ReduceScatterOnTwoDimensionalMeshes) {
  for (MeshCase c : {MeshCase{2, 4, true}, MeshCase{2, 4, false}, MeshCase{4, 2, true}, MeshCase{4, 2, false}}) {
    SCOPED_TRACE(std::to_string(c.a) + "x" + std::to_string(c.b) + (c.window_major ? " major" : " minor"));
    const int64_t n = c.a * c.b;
    const int64_t windowed = c.window_major ? c.a : c.b, kept = c.window_major ? c.b : c.a;
    const std::string order = c.window_major ? "<=[" + std::to_string(n) + "]"
                                             : "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0)";
    auto split = [&](int64_t rows, int64_t columns) {
      return "{devices=[" + std::to_string(rows) + "," + std::to_string(columns) + "," + std::to_string(kept) + "]" +
             order + " last_tile_dim_replicate}";
    };
    std::string hlo = DotModule(n, {2, 64 * windowed}, split(1, windowed), {64 * windowed, 8 * windowed},
                                split(windowed, 1), {2, 8 * windowed}, split(1, windowed), kMatmul);
    Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, /*integers=*/true);
    const int64_t b = c.b;
    SameGroup same = c.window_major ? SameGroup([b](int64_t s, int64_t t) { return s % b == t % b; })
                                    : SameGroup([b](int64_t s, int64_t t) { return s / b == t / b; });
    ExpectScatterWindowed(p, windowed, same);
  }
}

// As above, with x split on its contracting dim over one axis: the contracting window.
TEST(WindowedEinsum, ContractingWindowsOnTwoDimensionalMeshes) {
  for (MeshCase c : {MeshCase{2, 4, true}, MeshCase{2, 4, false}, MeshCase{4, 2, true}, MeshCase{4, 2, false}}) {
    SCOPED_TRACE(std::to_string(c.a) + "x" + std::to_string(c.b) + (c.window_major ? " major" : " minor"));
    const int64_t n = c.a * c.b;
    const int64_t windowed = c.window_major ? c.a : c.b, kept = c.window_major ? c.b : c.a;
    const std::string major_axis = "<=[" + std::to_string(n) + "] last_tile_dim_replicate}";
    const std::string minor_axis =
        "<=[" + std::to_string(c.a) + "," + std::to_string(c.b) + "]T(1,0) last_tile_dim_replicate}";
    const std::string contracting = "{devices=[1," + std::to_string(windowed) + "," + std::to_string(kept) + "]" +
                                    (c.window_major ? major_axis : minor_axis);
    const std::string columns = "{devices=[1," + std::to_string(kept) + "," + std::to_string(windowed) + "]" +
                                (c.window_major ? minor_axis : major_axis);
    std::string hlo = DotModule(n, {8, 4 * windowed}, contracting, {4 * windowed, 32 * kept}, columns,
                                {8, 32 * kept}, columns, kMatmul);
    Partitioned p = ExpectSameAsOff(hlo, /*exact=*/true, /*integers=*/true);
    const int64_t b = c.b;
    SameGroup same = c.window_major ? SameGroup([b](int64_t s, int64_t t) { return s % b == t % b; })
                                    : SameGroup([b](int64_t s, int64_t t) { return s / b == t / b; });
    ExpectWindowed(p, windowed, same);
  }
}

// Rows split over both axes of a 2x4 mesh in transposed device order: the window runs over the
// two axes together, in the order the rows' tiles follow.
TEST(WindowedEinsum, WindowOverTwoAxesInTransposedOrder) {
  for (const std::string order : {"<=[2,4]T(1,0)", "<=[4,2]T(1,0)", "<=[8]"}) {
    SCOPED_TRACE(order);
    std::string hlo = DotModule(8, {16, 4}, "{devices=[8,1]" + order + "}", {4, 16}, "{replicated}", {16, 16},
                                "{replicated}", kMatmul);
    ExpectWindowed(ExpectSameAsOff(hlo, /*exact=*/true), 8, AnyPair);
  }
}

// A dim split unevenly and gathered whole: the windows cover it padded; the loop cuts the
// padding off the result (free, batch) or zeroes it (contracting).
TEST(WindowedEinsum, UnevenWindowsAreExact) {
  for (int64_t n : {3, 4, 5, 8}) {
    SCOPED_TRACE(n);
    ExpectWindowed(ExpectSameAsOff(FreeDimModule(n, 2 * n + 1), /*exact=*/true), n, AnyPair);
    ExpectWindowed(ExpectSameAsOff(FreeDimModule(n, n - 1), /*exact=*/true), n, AnyPair);
    std::string batch = DotModule(n, {2 * n - 1, 3, 4}, Split(3, 0, n), {2 * n - 1, 4, 16}, "{replicated}",
                                  {2 * n - 1, 3, 16}, "{replicated}", kBatchMatmul);
    ExpectWindowed(ExpectSameAsOff(batch, /*exact=*/true), n, AnyPair);
    std::string contracting = DotModule(n, {8, 4 * n + 1}, Split(2, 1, n), {4 * n + 1, 16 * n}, "{replicated}",
                                        {8, 16 * n}, "{replicated}", kMatmul);
    ExpectWindowed(ExpectSameAsOff(contracting, /*exact=*/true, /*integers=*/true), n, AnyPair);
  }
}

TEST(WindowedEinsum, UnevenReduceScatterFallsBack) {
  for (int64_t n : {3, 4}) {
    SCOPED_TRACE(n);
    Partitioned scatter = ExpectSameAsOff(ScatterModule(n, 4 * n + 1), /*exact=*/true, /*integers=*/true);
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
