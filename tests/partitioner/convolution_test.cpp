// Tests of the convolution handler: halo exchange for spatial splits (strides, padding,
// dilations, uneven dims, halos longer than a shard), batch / feature / group partitioning,
// uneven kernel-tap splits next to +-inf / NaN, and that every partitioned program computes
// the numbers of the unpartitioned one.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partition_test_harness.h"
#include "partitioner/halo_exchange.h"

namespace gspmd::partition_test {
namespace {

// The convolution tests compare with the interpreter to 1e-4 (long sums of products).
const NumberCheck kConvNumbers{.rtol = 1e-4};

// Exactly one local convolution, of shape `dims`.
void ExpectLocalConvolution(const Partitioned& p, const Dims& dims) {
  EXPECT_EQ(DimsOfOnly(p, Opcode::kConvolution), dims) << p.text;
}

// Runs the partitioned and the original program on `inputs` and compares (NaN and inf
// positions must match); false on a mismatch.
bool ExpectSameNumbersOn(const Partitioned& p, const std::vector<Literal>& inputs, const std::string& what) {
  Literal expected = EvaluateModule(*p.original, inputs);
  std::optional<std::vector<Literal>> outputs = RunPartitioned(p, inputs);
  if (!outputs) return false;
  EXPECT_EQ(outputs->size(), 1u) << what;
  if (outputs->size() != 1) return false;
  LiteralComparison comparison = CompareLiterals((*outputs)[0], expected, kConvNumbers.rtol);
  EXPECT_TRUE(comparison.matches) << what << ": " << comparison.message << "\n" << p.text;
  return comparison.matches;
}

// For every index j of dim `dim` of parameter `param`: the inputs of ExpectSameNumbers with
// that slice set to -inf (even j), +inf (odd j) or NaN (the last j), so every input
// position meets the padded taps of some device. Stops at the first mismatch.
void ExpectSameNumbersWithNonFiniteSlices(const Partitioned& p, int64_t param, int64_t dim) {
  const Computation* entry = p.original->entry();
  const Shape& shape = entry->parameter(param)->shape();
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  int64_t size = shape.dim(dim);
  for (int64_t j = 0; j < size; ++j) {
    std::vector<Literal> inputs;
    for (int64_t i = 0; i < entry->num_parameters(); ++i) inputs.push_back(Values(entry->parameter(i)->shape(), i));
    double value = j == size - 1 ? std::nan("") : (j % 2 == 0 ? -INFINITY : INFINITY);
    Literal& literal = inputs[param];
    for (int64_t e = 0; e < literal.element_count(); ++e)
      if ((e / inner) % size == j) literal.SetFromDouble(e, value);
    if (!ExpectSameNumbersOn(p, inputs, "parameter " + std::to_string(param) + " index " + std::to_string(j) +
                                       " of dim " + std::to_string(dim) + " = " + std::to_string(value)))
      return;
  }
}

// A per-case check: the non-finite runs above along each of the input's (parameter 0's) `dims`.
template <int64_t... dims>
void PoisonInputAlong(const Partitioned& p) {
  (ExpectSameNumbersWithNonFiniteSlices(p, 0, dims), ...);
}

// A module with one convolution of `lhs` and `rhs` giving `out`, with the given shardings.
std::string ConvModule(int64_t partitions, const std::string& lhs, const std::string& lhs_sharding,
                       const std::string& rhs, const std::string& rhs_sharding, const std::string& out,
                       const std::string& out_sharding, const std::string& attributes) {
  return "HloModule m, num_partitions=" + std::to_string(partitions) + "\nENTRY e {\n  %x = " + lhs +
         " parameter(0), sharding=" + lhs_sharding + "\n  %k = " + rhs + " parameter(1), sharding=" + rhs_sharding +
         "\n  ROOT %c = " + out + " convolution(%x, %k), " + attributes + ", sharding=" + out_sharding + "\n}\n";
}

// Runs ExchangeHalo on f32[size] (values 0, 1, ...) split `tiles` ways; returns every
// device's window (-1 outside the array).
std::vector<std::vector<double>> HaloWindows(int64_t size, int64_t tiles, int64_t left, int64_t right,
                                             int64_t* permutes) {
  Module module("halo");
  module.set_num_partitions(tiles);
  Computation* entry = module.AddComputation(std::make_unique<Computation>("e"), true);
  SpmdContext context(&module, tiles);
  HloBuilder b(entry, &context.names());
  Sharding sharding = Sharding::Tiled(TileAssignment::Iota({tiles}));
  Shape global(ElementType::kF32, {size});
  Instruction* shard = b.Parameter(0, ShardShapeOf(sharding, global), "x");
  Instruction* window =
      ExchangeHalo(b, context, shard, sharding, global, 0, left, right, b.ScalarConstant(ElementType::kF32, -1));
  int64_t length = window->shape().dim(0);
  entry->set_root(b.Reshape(window, {1, length}));
  *permutes = static_cast<int64_t>(InstructionsWith(module, Opcode::kCollectivePermute).size());

  SpmdRunOptions options;
  options.num_devices = tiles;
  options.parameter_shardings = {sharding};
  options.root_sharding = Sharding::Tiled(TileAssignment::Iota({tiles, 1}));
  options.global_result_shapes = {Shape(ElementType::kF32, {tiles, length})};
  Literal input(global);
  for (int64_t i = 0; i < size; ++i) input.SetFromDouble(i, static_cast<double>(i));
  std::vector<Literal> inputs;
  inputs.push_back(std::move(input));
  std::vector<Literal> outputs = RunSpmd(module, inputs, options);
  std::vector<std::vector<double>> windows(tiles);
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t j = 0; j < length; ++j) windows[t].push_back(outputs.at(0).GetAsDouble(t * length + j));
  return windows;
}

void ExpectHaloWindows(int64_t size, int64_t tiles, int64_t left, int64_t right, int64_t expected_permutes) {
  int64_t permutes = 0;
  std::vector<std::vector<double>> windows = HaloWindows(size, tiles, left, right, &permutes);
  EXPECT_EQ(permutes, expected_permutes);
  int64_t shard = (size + tiles - 1) / tiles;
  for (int64_t t = 0; t < tiles; ++t) {
    std::vector<double> expected;
    for (int64_t i = t * shard - left; i < t * shard + shard + right; ++i)
      expected.push_back(i >= 0 && i < size ? static_cast<double>(i) : -1.0);
    EXPECT_EQ(windows[t], expected) << "tile " << t << " of " << size << "/" << tiles << " left " << left
                                    << " right " << right;
  }
}

TEST(HaloExchangeTest, OneElementEachSide) { ExpectHaloWindows(16, 4, 1, 1, 2); }
TEST(HaloExchangeTest, UnevenShardsAreMaskedAtTheEnd) { ExpectHaloWindows(10, 4, 2, 1, 2); }
TEST(HaloExchangeTest, HalosLongerThanAShardTakeSeveralHops) { ExpectHaloWindows(12, 6, 5, 3, 5); }
TEST(HaloExchangeTest, NegativeAmountsTrim) { ExpectHaloWindows(16, 4, -1, 2, 1); }
TEST(HaloExchangeTest, ReplicatedDimIsPaddedWithoutCommunication) { ExpectHaloWindows(5, 1, 2, 2, 0); }

// One convolution per program, each partitioned and compared with the interpreter.
const std::vector<PartitionCase> kPartitionCases = {
    {.name = "SpatialHaloMatchesXlaCorpusCase",
     // tests/data/corpus/gspmd/conv_spatial_halo: XLA uses 2 collective-permutes, 2048 bytes.
     .hlo = ConvModule(8, "f32[2,32,32,4]", "{devices=[1,8,1,1]<=[8]}", "f32[3,3,4,8]", "{replicated}",
                       "f32[2,32,32,8]", "{devices=[1,8,1,1]<=[8]}",
                       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
     .expect = {.collectives = 2, .counts = {{Opcode::kCollectivePermute, 2}}, .comm_bytes = 2048},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {2, 4, 32, 8}); }},
    {.name = "ChannelsFirstLayoutSplitsTheSecondSpatialDim",
     .hlo = ConvModule(4, "f32[2,3,12,16]", "{devices=[1,1,1,4]<=[4]}", "f32[5,3,3,3]", "{replicated}",
                       "f32[2,5,12,16]", "{devices=[1,1,1,4]<=[4]}",
                       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"),
     .expect = {.collectives = 2, .counts = {{Opcode::kCollectivePermute, 2}}},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {2, 5, 12, 4}); }},
    {.name = "SpatialInputWithBatchShardedOutput",
     .hlo = ConvModule(4, "f32[8,16,3]", "{devices=[1,4,1]<=[4]}", "f32[3,3,4]", "{replicated}", "f32[8,16,4]",
                       "{devices=[4,1,1]<=[4]}", "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"),
     // One all-to-all of the input beats a halo exchange plus an all-to-all of the output.
     .expect = {.max_comm_bytes = 3.0 / 4 * 8 * 4 * 3 * 4 + 1e-6}},
    {.name = "BatchPartitionedIsLocal",
     .hlo = ConvModule(4, "f32[8,10,10,3]", "{devices=[4,1,1,1]<=[4]}", "f32[3,3,3,5]", "{replicated}",
                       "f32[8,8,8,5]", "{devices=[4,1,1,1]<=[4]}", "window={size=3x3}, dim_labels=b01f_01io->b01f"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {2, 8, 8, 5}); }},
    {.name = "OutputFeaturePartitionedIsLocal",
     .hlo = ConvModule(4, "f32[2,10,10,3]", "{replicated}", "f32[3,3,3,8]", "{devices=[1,1,1,4]<=[4]}",
                       "f32[2,8,8,8]", "{devices=[1,1,1,4]<=[4]}", "window={size=3x3}, dim_labels=b01f_01io->b01f"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {2, 8, 8, 2}); }},
    {.name = "InputFeatureShardedGivesPartialSums",
     .hlo = ConvModule(4, "f32[2,10,10,8]", "{devices=[1,1,1,4]<=[4]}", "f32[3,3,8,5]", "{devices=[1,1,4,1]<=[4]}",
                       "f32[2,8,8,5]", "{replicated}", "window={size=3x3}, dim_labels=b01f_01io->b01f"),
     .expect = {.collectives = 1, .counts = {{Opcode::kAllReduce, 1}}}},
    {.name = "UnevenInputFeatureIsMaskedBeforeTheSum",
     .hlo = ConvModule(4, "f32[2,6,6,6]", "{devices=[1,1,1,4]<=[4]}", "f32[3,3,6,5]", "{devices=[1,1,4,1]<=[4]}",
                       "f32[2,4,4,5]", "{replicated}", "window={size=3x3}, dim_labels=b01f_01io->b01f"),
     .expect = {.collectives = 1}},
    {.name = "StridedSpatialSplit",
     .hlo = ConvModule(4, "f32[1,32,3]", "{devices=[1,4,1]<=[4]}", "f32[3,3,2]", "{replicated}", "f32[1,16,2]",
                       "{devices=[1,4,1]<=[4]}", "window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f"),
     .expect = {.collectives = 1, .counts = {{Opcode::kCollectivePermute, 1}}},  // only a left halo
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {1, 4, 2}); }},
    {.name = "StridedWindowReadingOnlyPaddingAndItsOwnShardSendsNothing",
     // Oracle seed 140093: tile 0's one output reads the low padding, tile 1's its own element,
     // so no halo travels (XLA sends none either).
     .hlo = ConvModule(2, "f32[4,2,3]", "{devices=[1,2,1]<=[2]}", "f32[1,3,2]", "{replicated}", "f32[4,2,2]",
                       "{devices=[1,2,1]<=[2]}", "window={size=1 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f"),
     .expect = {.collectives = 0}},
    {.name = "UnevenSpatialDim",
     .hlo = ConvModule(4, "f32[2,30,3]", "{devices=[1,4,1]<=[4]}", "f32[5,3,2]", "{replicated}", "f32[2,30,2]",
                       "{devices=[1,4,1]<=[4]}", "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f"),
     .expect = {.collectives = 2, .counts = {{Opcode::kCollectivePermute, 2}}}},
    {.name = "UnevenValidConvolutionShrinksTheOutput",
     .hlo = ConvModule(4, "f32[1,13,2]", "{devices=[1,4,1]<=[4]}", "f32[4,2,3]", "{replicated}", "f32[1,10,3]",
                       "{devices=[1,4,1]<=[4]}", "window={size=4}, dim_labels=b0f_0io->b0f")},
    {.name = "HaloLongerThanAShardTakesSeveralHops",
     .hlo = ConvModule(8, "f32[1,16,2]", "{devices=[1,8,1]<=[8]}", "f32[7,2,2]", "{replicated}", "f32[1,16,2]",
                       "{devices=[1,8,1]<=[8]}", "window={size=7 pad=3_3}, dim_labels=b0f_0io->b0f"),
     .expect = {.collectives = 4, .counts = {{Opcode::kCollectivePermute, 4}}}},
    {.name = "WindowDilation",
     .hlo = ConvModule(4, "f32[1,24,2]", "{devices=[1,4,1]<=[4]}", "f32[3,2,2]", "{replicated}", "f32[1,24,2]",
                       "{devices=[1,4,1]<=[4]}", "window={size=3 pad=2_2 rhs_dilate=2}, dim_labels=b0f_0io->b0f"),
     .expect = {.collectives = 2}},
    {.name = "LhsDilationLikeATransposedConvolution",
     // The backward-input form of a stride-2 convolution: lhs_dilate=2 and reversed window.
     .hlo = ConvModule(4, "f32[1,16,2]", "{devices=[1,4,1]<=[4]}", "f32[3,2,3]", "{replicated}", "f32[1,32,3]",
                       "{devices=[1,4,1]<=[4]}",
                       "window={size=3 pad=1_2 lhs_dilate=2 rhs_reversal=1}, dim_labels=b0f_0io->b0f"),
     .check = [](const Partitioned& p) { EXPECT_LE(CollectiveCount(p), 2) << p.text; }},
    {.name = "LhsDilationWithShiftingOffsets",
     // 17 outputs over 4 tiles (5 each) of a 3-dilated input: the offset into the dilated input
     // differs per tile.
     .hlo = ConvModule(4, "f32[1,6,2]", "{devices=[1,4,1]<=[4]}", "f32[2,2,2]", "{replicated}", "f32[1,17,2]",
                       "{devices=[1,4,1]<=[4]}", "window={size=2 pad=1_1 lhs_dilate=3}, dim_labels=b0f_0io->b0f")},
    {.name = "TwoSpatialDimsOnATwoDimensionalMesh",
     .hlo = ConvModule(8, "f32[2,16,12,3]", "{devices=[1,4,2,1]<=[8]}", "f32[3,3,3,4]", "{replicated}",
                       "f32[2,16,12,4]", "{devices=[1,4,2,1]<=[8]}",
                       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
     .expect = {.collectives = 4, .counts = {{Opcode::kCollectivePermute, 4}}},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {2, 4, 6, 4}); }},
    {.name = "BatchAndSpatialOnATwoDimensionalMesh",
     .hlo = ConvModule(8, "f32[4,16,3]", "{devices=[2,4,1]<=[8]}", "f32[3,3,4]", "{replicated}", "f32[4,16,4]",
                       "{devices=[2,4,1]<=[8]}", "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"),
     .expect = {.counts = {{Opcode::kCollectivePermute, 2}}},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {2, 4, 4}); }},
    {.name = "PartiallyReplicatedSpatialSharding",
     .hlo = ConvModule(8, "f32[2,16,3]", "{devices=[1,4,1,2]<=[8] last_tile_dim_replicate}", "f32[3,3,4]",
                       "{replicated}", "f32[2,16,4]", "{devices=[1,4,1,2]<=[8] last_tile_dim_replicate}",
                       "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"),
     .expect = {.counts = {{Opcode::kCollectivePermute, 2}}}},
    {.name = "ReplicatedInputWithSpatiallyShardedOutputNeedsNoCommunication",
     .hlo = ConvModule(4, "f32[1,16,3]", "{replicated}", "f32[3,3,4]", "{replicated}", "f32[1,16,4]",
                       "{devices=[1,4,1]<=[4]}", "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { ExpectLocalConvolution(p, {1, 4, 4}); }},
    {.name = "DepthwiseFeatureGroupsSplitWholeGroups",
     .hlo = ConvModule(4, "f32[2,10,8]", "{devices=[1,1,4]<=[4]}", "f32[3,1,16]", "{devices=[1,1,4]<=[4]}",
                       "f32[2,8,16]", "{devices=[1,1,4]<=[4]}",
                       "window={size=3}, dim_labels=b0f_0io->b0f, feature_group_count=8"),
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* conv = TheOnly(p, Opcode::kConvolution);
           if (conv != nullptr) EXPECT_EQ(conv->feature_group_count, 2) << p.text;
         }},
    {.name = "BatchGroupsSplitWholeGroups",
     // The backward-filter form: batch_group_count groups of the input batch.
     .hlo = ConvModule(4, "f32[8,10,2]", "{devices=[4,1,1]<=[4]}", "f32[3,2,4]", "{devices=[1,1,4]<=[4]}",
                       "f32[2,8,4]", "{devices=[1,1,4]<=[4]}",
                       "window={size=3}, dim_labels=b0f_0io->b0f, batch_group_count=4"),
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* conv = TheOnly(p, Opcode::kConvolution);
           if (conv != nullptr) EXPECT_EQ(conv->batch_group_count, 1) << p.text;
         }},
    {.name = "BackwardFilterOverDataParallelBatchAllReduces",
     // Kernel gradient of a data-parallel convolution: the batch is the contracted feature dim.
     .hlo = ConvModule(4, "f32[8,10,3]", "{devices=[4,1,1]<=[4]}", "f32[8,8,5]", "{devices=[4,1,1]<=[4]}",
                       "f32[3,3,5]", "{replicated}", "window={size=8}, dim_labels=f0b_i0o->0bf"),
     .expect = {.collectives = 1, .counts = {{Opcode::kAllReduce, 1}}}},
    {.name = "BackwardFilterOverSpatialShardsSplitsTheTaps",
     // dK[k,c,o] = sum_n,w x[n,w+k-1,c] dy[n,w,o] with x and dy split along w: each device
     // applies its own taps to a halo of x and the kernel gradients are summed.
     .hlo = ConvModule(4, "f32[2,16,3]", "{devices=[1,4,1]<=[4]}", "f32[2,16,4]", "{devices=[1,4,1]<=[4]}",
                       "f32[3,3,4]", "{replicated}", "window={size=16 pad=1_1}, dim_labels=f0b_i0o->0bf"),
     .expect = {.counts = {{Opcode::kCollectivePermute, 2}, {Opcode::kAllReduce, 1}, {Opcode::kAllGather, 0}},
                .comm_bytes = 2 * 2 * 1 * 3 * 4 + 2.0 * 3 / 4 * 3 * 3 * 4 * 4}},
    {.name = "BackwardFilterOfAStridedConvolutionOverSpatialAndBatchShards",
     // The forward convolution had stride 2 (rhs_dilate=2 here); batch on the 2-way axis,
     // width on the 4-way axis: one all-reduce over all 8 devices.
     .hlo = ConvModule(8, "f32[2,16,3]", "{devices=[2,4,1]<=[8]}", "f32[2,8,4]", "{devices=[2,4,1]<=[8]}",
                       "f32[3,3,4]", "{replicated}", "window={size=8 pad=1_0 rhs_dilate=2}, dim_labels=f0b_i0o->0bf"),
     .expect = {.counts = {{Opcode::kAllReduce, 1}, {Opcode::kAllGather, 0}}}},
    {.name = "UnevenTapSplit",
     .hlo = ConvModule(4, "f32[2,14,3]", "{devices=[1,4,1]<=[4]}", "f32[2,14,4]", "{devices=[1,4,1]<=[4]}",
                       "f32[3,3,4]", "{replicated}", "window={size=14 pad=1_1}, dim_labels=f0b_i0o->0bf")},
    {.name = "SpatiallyShardedKernelIsGathered",
     .hlo = ConvModule(2, "f32[1,8,2]", "{replicated}", "f32[4,2,2]", "{devices=[2,1,1]<=[2]}", "f32[1,5,2]",
                       "{replicated}", "window={size=4}, dim_labels=b0f_0io->b0f")},
    {.name = "SpatialShardedInputWithReplicatedOutput",
     .hlo = ConvModule(4, "f32[2,32,4]", "{devices=[1,4,1]<=[4]}", "f32[3,4,4]", "{replicated}", "f32[2,32,4]",
                       "{replicated}", "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f"),
     // Gathering the input (3/4 of it) costs as much as gathering the output; never more.
     .expect = {.max_comm_bytes = 2.0 * 32 * 4 * 4 * 3 / 4 + 1e-6}},
};

PARTITION_CASE_TESTS(ConvolutionPartitionTest, kPartitionCases, kConvNumbers);

// Uneven tap splits (window mode): a device whose tile of taps is only partly real must never
// apply its padded taps to real input, which may be +-inf (0 * inf = NaN): every input
// position in turn is made non-finite, and the kernel's uneven padding is made inf by a
// division (padding is unspecified), so neither may reach a kept result.

// `value` = 1 / `name` (same shape and sharding): the uneven padding of its shards holds inf
// (the runtime pads parameters' shards with zeros).
std::string Reciprocal(const std::string& value, const std::string& name, const std::string& shape,
                       const std::string& sharding) {
  std::string element = shape.substr(0, shape.find('['));
  return "\n  %one." + value + " = " + element + "[] constant(1)\n  %ones." + value + " = " + shape +
         " broadcast(%one." + value + "), dimensions={}, sharding=" + sharding + "\n  %" + value + " = " + shape +
         " divide(%ones." + value + ", %" + name + "), sharding=" + sharding;
}

// ConvModule with the kernel replaced by its reciprocal (and the input too when
// `reciprocal_lhs`), so the operands' uneven padding holds inf.
std::string ConvOfReciprocalKernelModule(int64_t partitions, const std::string& lhs, const std::string& lhs_sharding,
                                         const std::string& rhs, const std::string& rhs_sharding,
                                         const std::string& out, const std::string& out_sharding,
                                         const std::string& attributes, bool reciprocal_lhs = false) {
  return "HloModule m, num_partitions=" + std::to_string(partitions) + "\nENTRY e {\n  %x = " + lhs +
         " parameter(0), sharding=" + lhs_sharding + "\n  %k = " + rhs + " parameter(1), sharding=" + rhs_sharding +
         Reciprocal("r", "k", rhs, rhs_sharding) + (reciprocal_lhs ? Reciprocal("xr", "x", lhs, lhs_sharding) : "") +
         "\n  ROOT %c = " + out + " convolution(%" + (reciprocal_lhs ? "xr" : "x") + ", %r), " + attributes +
         ", sharding=" + out_sharding + "\n}\n";
}

// A case whose partial tile's taps are convolved apart (more than one local convolution),
// with `comm_bytes` sent (as with the padded taps applied), and whose numbers match the
// original's with non-finite inputs (`poison`: along the input's spatial dim 1 unless given).
PartitionCase TapExact(std::string name, std::string hlo, double comm_bytes,
                       void (*poison)(const Partitioned&) = PoisonInputAlong<1>) {
  return {.name = std::move(name),
          .hlo = std::move(hlo),
          .expect = {.at_least = {{Opcode::kConvolution, 2}}, .comm_bytes = comm_bytes},
          .check = poison};
}

const std::vector<PartitionCase> kUnevenTapCases = {
    TapExact("SevenTapsOverTwoDevices",
             ConvModule(2, "f32[1,8,2]", "{devices=[1,2,1]<=[2]}", "f32[7,1,1]", "{devices=[2,1,1]<=[2]}",
                        "f32[2,2,1]", "{replicated}", "window={size=7}, dim_labels=f0b_0io->0bf"),
             24),
    // 14 taps over 4 devices: 4, 4, 4 and 2 real of 4.
    TapExact("BackwardFilterWithPaddingOverFourDevices",
             ConvModule(4, "f32[2,14,3]", "{devices=[1,4,1]<=[4]}", "f32[2,14,4]", "{devices=[1,4,1]<=[4]}",
                        "f32[3,3,4]", "{replicated}", "window={size=14 pad=1_1}, dim_labels=f0b_i0o->0bf"),
             264),
    TapExact("PaddedKernelShardsHoldingInfinityAreNeverApplied",
             ConvOfReciprocalKernelModule(4, "f32[2,14,3]", "{devices=[1,4,1]<=[4]}", "f32[2,14,4]",
                                          "{devices=[1,4,1]<=[4]}", "f32[3,3,4]", "{replicated}",
                                          "window={size=14 pad=1_1}, dim_labels=f0b_i0o->0bf"),
             264),
    // 9 taps over 6 devices: 2, 2, 2, 2, 1 real of 2, and none.
    TapExact("PartialAndEmptyTapTiles",
             ConvOfReciprocalKernelModule(6, "f32[16,11,1]", "{devices=[1,6,1]<=[6]}", "f32[16,9,1]",
                                          "{devices=[1,6,1]<=[6]}", "f32[3,1,1]", "{replicated}",
                                          "window={size=9}, dim_labels=f0b_i0o->0bf"),
             340),
    // The forward convolution had stride 2 (rhs_dilate=2 here): 7 taps over 4 devices.
    TapExact("BackwardFilterOfAStridedConvolution",
             ConvModule(4, "f32[2,15,3]", "{devices=[1,4,1]<=[4]}", "f32[2,7,4]", "{devices=[1,4,1]<=[4]}",
                        "f32[4,3,4]", "{replicated}", "window={size=7 pad=1_0 rhs_dilate=2}, dim_labels=f0b_i0o->0bf"),
             336),
    // 15 taps over 2 devices (8 and 7 real of 8), stride 2, padding on both sides.
    TapExact("StridedPaddedWindow",
             ConvModule(2, "f32[16,20,1]", "{devices=[1,2,1]<=[2]}", "f32[16,15,1]", "{devices=[1,2,1]<=[2]}",
                        "f32[4,1,1]", "{replicated}", "window={size=15 stride=2 pad=1_1}, dim_labels=f0b_i0o->0bf"),
             400),
    // lhs_dilate=2 (the forward convolution was transposed): 14 taps over 4 devices.
    TapExact("BackwardFilterOfATransposedConvolution",
             ConvModule(4, "f32[2,8,3]", "{devices=[1,4,1]<=[4]}", "f32[2,14,4]", "{devices=[1,4,1]<=[4]}",
                        "f32[4,3,4]", "{replicated}", "window={size=14 pad=1_1 lhs_dilate=2}, dim_labels=f0b_i0o->0bf"),
             312),
    // lhs_dilate=3 with 4 taps per tile: the offset into the dilated input differs per tile.
    TapExact("LhsDilationWithShiftingOffsets",
             ConvModule(4, "f32[2,6,3]", "{devices=[1,4,1]<=[4]}", "f32[2,14,4]", "{devices=[1,4,1]<=[4]}",
                        "f32[5,3,4]", "{replicated}", "window={size=14 pad=1_1 lhs_dilate=3}, dim_labels=f0b_i0o->0bf"),
             432),
    // 16 taps over 6 devices (3 each, the sixth tile 1 real of 3).
    TapExact("TapsOverTwoMeshAxes",
             ConvOfReciprocalKernelModule(6, "f32[2,16,3]", "{devices=[1,6,1]<=[6]}", "f32[2,16,4]",
                                          "{devices=[1,6,1]<=[6]}", "f32[3,3,4]", "{replicated}",
                                          "window={size=16 pad=1_1}, dim_labels=f0b_i0o->0bf"),
             288),
    // 7 taps over the 3-way axis (3, 3 and 1 real of 3), the contracted batch over the 2-way one.
    TapExact("ContractedBatchAndUnevenTapsOnATwoDimensionalMesh",
             ConvModule(6, "f32[8,16,1]", "{devices=[2,3,1]<=[6]}", "f32[8,7,1]", "{devices=[2,3,1]<=[6]}",
                        "f32[10,1,1]", "{replicated}", "window={size=7}, dim_labels=f0b_i0o->0bf"),
             776.0 / 3),
    TapExact("PartiallyReplicatedUnevenTaps",
             ConvModule(4, "f32[16,14,1]", "{devices=[1,2,1,2]<=[4] last_tile_dim_replicate}", "f32[16,7,1]",
                        "{devices=[1,2,1,2]<=[4] last_tile_dim_replicate}", "f32[8,1,1]", "{replicated}",
                        "window={size=7}, dim_labels=f0b_i0o->0bf"),
             480),
    // 7 taps over 2 (4 and 3 real of 4) by 5 taps over 2 (3 and 2 real of 3): four tile
    // classes, four local convolutions.
    {.name = "TwoUnevenWindowDimsOnATwoDimensionalMesh",
     .hlo = ConvOfReciprocalKernelModule(4, "f32[2,7,5,3]", "{devices=[1,2,2,1]<=[4]}", "f32[2,7,5,4]",
                                         "{devices=[1,2,2,1]<=[4]}", "f32[3,3,3,4]", "{replicated}",
                                         "window={size=7x5 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf"),
     .expect = {.counts = {{Opcode::kConvolution, 4}}, .comm_bytes = 1080},
     .check = PoisonInputAlong<1, 2>},
    // batch_group_count: the kernel gradient of a depthwise convolution, 7 taps over 2.
    TapExact("BackwardFilterOfADepthwiseConvolution",
             ConvModule(2, "f32[2,9,4]", "{devices=[1,2,1]<=[2]}", "f32[2,7,4]", "{devices=[1,2,1]<=[2]}",
                        "f32[3,1,4]", "{replicated}", "window={size=7}, dim_labels=f0b_i0o->0bf, batch_group_count=4"),
             112),
    // feature_group_count: a depthwise convolution whose 7 kernel taps are split over 2.
    TapExact("DepthwiseConvolutionWithSplitKernelTaps",
             ConvModule(2, "f32[2,9,4]", "{devices=[1,2,1]<=[2]}", "f32[7,1,4]", "{devices=[2,1,1]<=[2]}",
                        "f32[2,3,4]", "{replicated}",
                        "window={size=7}, dim_labels=b0f_0io->b0f, feature_group_count=4"),
             160),
    // The input gradient as JAX writes it: lhs_dilate=2 with the (reversed) 3-tap kernel split
    // over 2 devices.
    TapExact("BackwardInputOfAStridedConvolution",
             ConvModule(2, "f32[1,8,16]", "{devices=[1,2,1]<=[2]}", "f32[3,16,16]", "{devices=[2,1,1]<=[2]}",
                        "f32[1,17,16]", "{replicated}", "window={size=3 pad=2_2 lhs_dilate=2}, dim_labels=b0f_0io->b0f"),
             1600),
    {.name = "EvenTapSplitsKeepOneConvolution",
     .hlo = ConvModule(4, "f32[2,16,3]", "{devices=[1,4,1]<=[4]}", "f32[2,16,4]", "{devices=[1,4,1]<=[4]}",
                       "f32[3,3,4]", "{replicated}", "window={size=16 pad=1_1}, dim_labels=f0b_i0o->0bf"),
     .expect = {.counts = {{Opcode::kConvolution, 1}}},
     .check = PoisonInputAlong<1>},
    // Output-split spatial dims and uneven contracted features whose operands' padding holds
    // inf: the halo exchange and the feature masks must keep it out of real outputs.
    {.name = "UnevenSpatialInputWhosePaddingHoldsInfinity",
     .hlo = ConvOfReciprocalKernelModule(4, "f32[2,30,3]", "{devices=[1,4,1]<=[4]}", "f32[5,3,2]", "{replicated}",
                                         "f32[2,30,2]", "{devices=[1,4,1]<=[4]}",
                                         "window={size=5 pad=2_2}, dim_labels=b0f_0io->b0f", true),
     .expect = {.collectives = 2},
     .check = PoisonInputAlong<1>},
    {.name = "UnevenInputFeatureWhosePaddingHoldsInfinity",
     .hlo = ConvOfReciprocalKernelModule(4, "f32[2,6,6,6]", "{devices=[1,1,1,4]<=[4]}", "f32[3,3,6,5]",
                                         "{devices=[1,1,4,1]<=[4]}", "f32[2,4,4,5]", "{replicated}",
                                         "window={size=3x3}, dim_labels=b01f_01io->b01f", true),
     .expect = {.collectives = 1},
     .check = PoisonInputAlong<3>},
};

PARTITION_CASE_TESTS(ConvolutionUnevenTapsTest, kUnevenTapCases, kConvNumbers);

}  // namespace
}  // namespace gspmd::partition_test
