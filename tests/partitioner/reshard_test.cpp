// Tests of resharding: the plans the reshard planner finds (moving whole axes and parts of
// axes between dims, collective-permutes in the middle of a plan, 2x3 against 3x2 digits on 6
// devices), what they emit (collective kinds, groups, bytes sent per device) and that the
// partitioned programs give the interpreter's numbers on simulated devices.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partitioner/device_axes.h"
#include "partitioner/partition_test_harness.h"
#include "partitioner/reshard_plan.h"
#include "sharding/sharding_text.h"

namespace gspmd {
namespace {

using namespace partition_test;  // NOLINT: the shared test harness

using Groups = std::vector<std::vector<int64_t>>;

// A module whose result is its parameter resharded from `from` to `to` (a negate between).
std::string ReshardModule(int64_t devices, const std::string& shape, const std::string& from, const std::string& to) {
  return "HloModule m, num_partitions=" + std::to_string(devices) + "\nENTRY e {\n  %a = " + shape +
         " parameter(0), sharding=" + from + "\n  ROOT %n = " + shape + " negate(%a), sharding=" + to + "\n}\n";
}

Groups GroupsOf(const Partitioned& p, Opcode opcode) {
  const Instruction* only = TheOnly(p, opcode);
  if (only == nullptr) return {};
  return only->replica_groups().Groups(p.module->num_partitions());
}

// (source, target) of every pair of the one collective-permute.
std::vector<std::pair<int64_t, int64_t>> PairsOf(const Partitioned& p) {
  const Instruction* only = TheOnly(p, Opcode::kCollectivePermute);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (only == nullptr) return pairs;
  for (const SourceTargetPair& pair : only->source_target_pairs()) pairs.emplace_back(pair.source, pair.target);
  return pairs;
}

// ---- Moves between dims (bytes before this planner in the comments) ----

// [2,4] -> [1,8]: the 2-way axis of dim 0 has to become the major digit of dim 1. One
// collective-permute puts the devices in the order where an all-to-all appends it as the minor
// one (XLA: all-to-all then collective-permute, the same bytes).
void CheckTwoByFourToOneByEight(const Partitioned& p) {
  EXPECT_EQ(GroupsOf(p, Opcode::kAllToAll), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}})) << p.text;
  EXPECT_EQ(PairsOf(p), (std::vector<std::pair<int64_t, int64_t>>{
                            {0, 0}, {4, 1}, {1, 2}, {5, 3}, {2, 4}, {6, 5}, {3, 6}, {7, 7}}))
      << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kAllToAll), (Dims{8, 2, 2})) << p.text;
}

// [2,4] -> [1,4,2] (last replicated): a collective-permute at the source puts the 4-way axis
// where the target has it, then one all-gather over the 2-way one (before: 336 bytes with two
// all-to-alls and an all-gather; XLA: all-gather then collective-permute, 384).
void CheckPermuteThenGather(const Partitioned& p) {
  EXPECT_EQ(GroupsOf(p, Opcode::kAllGather), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}})) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kAllGather), (Dims{16, 4})) << p.text;
}

// [8,1] -> [2,4]: one all-to-all over the 4-way minor digit.
void CheckEightByOneToTwoByFour(const Partitioned& p) {
  EXPECT_EQ(GroupsOf(p, Opcode::kAllToAll), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}})) << p.text;
}

// 3x2 against 2x3 digits: the 2-way axis moves to dim 0 (making it 6-way in iota order, which is
// the same device order in both digit systems), then the 3-way one moves to dim 1. No
// collective-permute at all (before: 112 bytes, a collective-permute of the whole source first).
void CheckSixDevices(const Partitioned& p) {
  std::vector<const Instruction*> all_to_alls = InstructionsWith(*p.module, Opcode::kAllToAll);
  ASSERT_EQ(all_to_alls.size(), 2u) << p.text;
  EXPECT_EQ(all_to_alls[0]->replica_groups().Groups(6), (Groups{{0, 1}, {2, 3}, {4, 5}})) << p.text;
  EXPECT_EQ(all_to_alls[1]->replica_groups().Groups(6), (Groups{{0, 1, 2}, {3, 4, 5}})) << p.text;
}

std::vector<PartitionCase> MoveCases() {
  auto row = [](std::string name, int64_t devices, std::string shape, std::string from, std::string to,
                Expect expect, void (*check)(const Partitioned&) = nullptr) {
    return PartitionCase{std::move(name), ReshardModule(devices, shape, from, to), std::move(expect), check};
  };
  using O = Opcode;
  return {
      row("TwoByFourToOneByEight", 8, "f32[16,16]", "{devices=[2,4]<=[8]}", "{devices=[1,8]<=[8]}",
          {.collectives = 2, .counts = {{O::kCollectivePermute, 1}, {O::kAllToAll, 1}}, .comm_bytes = 192},
          CheckTwoByFourToOneByEight),
      // Uneven: 10 columns in 4 pieces of 3 do not split into pieces of 2 (before: 212).
      row("TwoByFourToOneByEightUneven", 8, "f32[6,10]", "{devices=[2,4]<=[8]}", "{devices=[1,8]<=[8]}",
          {.comm_bytes = 200}),
      row("FourByTwoToEightByOne", 8, "f32[16,16]", "{devices=[4,2]<=[8]}", "{devices=[8,1]<=[8]}",
          {.collectives = 1, .only = O::kAllToAll, .comm_bytes = 64}),
      row("TwoTwoTwoToOneEightOne", 8, "f32[8,8,8]", "{devices=[2,2,2]<=[8]}", "{devices=[1,8,1]<=[8]}",
          {.collectives = 3, .only = O::kAllToAll, .comm_bytes = 448}),
      // Before: 1092, the collective-permute last (at 4 times the bytes).
      row("TwoTwoTwoToOneEightOneUneven", 8, "f32[6,12,6]", "{devices=[2,2,2]<=[8]}", "{devices=[1,8,1]<=[8]}",
          {.counts = {{O::kCollectivePermute, 1}}, .comm_bytes = 1020}),
      row("EightByOneToTwoByFour", 8, "f32[16,16]", "{devices=[8,1]<=[8]}", "{devices=[2,4]<=[8]}",
          {.collectives = 1, .only = O::kAllToAll, .comm_bytes = 96}, CheckEightByOneToTwoByFour),
      row("EightByOneToTwoByFourUneven", 8, "f32[6,10]", "{devices=[8,1]<=[8]}", "{devices=[2,4]<=[8]}",
          {.comm_bytes = 148}),
      row("PartiallyReplicatedSource", 8, "f32[16,16]", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
          "{devices=[1,8]<=[8]}", {.collectives = 1, .only = O::kAllToAll, .comm_bytes = 112}),
      row("PartiallyReplicatedTarget", 8, "f32[16,16]", "{devices=[2,4]<=[8]}",
          "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
          {.collectives = 2, .counts = {{O::kCollectivePermute, 1}, {O::kAllGather, 1}}, .comm_bytes = 256},
          CheckPermuteThenGather),
      // Before: 360 (an all-gather of everything but one axis, then a collective-permute).
      row("PartiallyReplicatedTargetUneven", 8, "f32[12,20]", "{devices=[2,4]<=[8]}",
          "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
          {.collectives = 2, .counts = {{O::kCollectivePermute, 1}, {O::kAllGather, 1}}, .comm_bytes = 240}),
      // A collective-permute at the source, then gathering half of a 4-way axis (before: 288,
      // gathering the whole axis and slicing the other half again).
      row("PermuteThenGatherPartOfAnAxis", 8, "f32[96]",
          "{devices=[4,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
          "{devices=[2,4]<=[2,2,2] last_tile_dim_replicate}",
          {.collectives = 2, .counts = {{O::kCollectivePermute, 1}, {O::kAllGather, 1}}, .comm_bytes = 192}),
      row("ThreeByTwoToTwoByThree", 6, "f32[6,7]", "{devices=[3,2]<=[6]}", "{devices=[2,3]<=[6]}",
          {.collectives = 2, .only = O::kAllToAll, .comm_bytes = 40}, CheckSixDevices),
      row("ThreeByTwoToOneBySix", 6, "f32[12,12]", "{devices=[3,2]<=[6]}", "{devices=[1,6]<=[6]}",
          {.collectives = 2, .only = O::kAllToAll, .comm_bytes = 128}),
      // Before: 320 (a collective-permute, an all-gather and an all-to-all).
      row("TwoByThreeToPartialThreeByOne", 6, "f32[12,12]", "{devices=[2,3]<=[6]}",
          "{devices=[3,1,2]<=[6] last_tile_dim_replicate}", {.collectives = 2, .comm_bytes = 160}),
      // 64 devices, [4,16] -> [1,4] x16 replicated: the 16-way axis is cut into 4x4, and the
      // collective-permute at the source makes gathering it a 4-way all-gather per dim (before:
      // 2784, an all-to-all between two all-gathers).
      row("SixtyFourDevicesPartOfAxisMoves", 64, "f32[32,64]", "{devices=[4,16]<=[4,16]}",
          "{devices=[1,4,16]<=[4,16] last_tile_dim_replicate}",
          {.collectives = 3, .counts = {{O::kCollectivePermute, 1}, {O::kAllGather, 2}}, .comm_bytes = 2048}),
      row("SixtyFourDevicesSixteenByFourToFourBySixteen", 64, "f32[32,64]", "{devices=[16,4]<=[64]}",
          "{devices=[4,16]<=[64]}", {.collectives = 2, .comm_bytes = 224}),
      // 128 devices, [4,32] -> [1,128] with 96 columns (3 per device): whole axes cannot move
      // the 4-way axis onto them, pieces of the axes can (before: 24384, gathering everything).
      row("OneTwentyEightDevicesPiecesOfAxes", 128, "f32[64,96]", "{devices=[4,32]<=[4,32]}",
          "{devices=[1,128]<=[4,32]}", {.collectives = 5, .comm_bytes = 1384}),
      // Before: 1200 (two all-to-alls and two all-gathers); then a permute and two all-gathers of
      // one dim's last two axes, now one all-gather over both (the same bytes, as XLA emits it).
      row("SixtyFourDevicesToPartiallyReplicated", 64, "f32[64,64]", "{devices=[16,4]<=[64]}",
          "{devices=[4,4,4]<=[64] last_tile_dim_replicate}",
          {.collectives = 2, .counts = {{O::kCollectivePermute, 1}, {O::kAllGather, 1}}, .comm_bytes = 1024}),
      // Half of an 8-way axis gathered: one all-gather over the 4 minor devices, not two of 2.
      row("MinorFourOfEightGatheredOnce", 8, "f32[16,4]", "{devices=[8,1]<=[8]}",
          "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
          {.collectives = 1, .counts = {{O::kAllGather, 1}}, .comm_bytes = 96}),
      // The same on an uneven dim (14 rows: 7 per pair is not 4 shards of 2, so no all-gather of
      // the minor axes alone is aligned): whatever the plan, the numbers are the same.
      row("MinorFourOfEightGatheredOnAnUnevenDim", 8, "f32[14,4]", "{devices=[8,1]<=[8]}",
          "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", {}),
  };
}

PARTITION_CASE_TESTS(ReshardMoveTest, MoveCases());

// ---- Where an elementwise op's reshard goes ----

// A compare of split f32 values whose pred result is wanted whole runs split and gathers its
// result, a quarter of the bytes of gathering both operands (oracle seed 112399: 56 B -> 14 B,
// XLA's). A convert from pred to f32 gathers its (smaller) operand as before.
TEST(ReshardTest, ElementwiseOpsMoveWhicheverSideIsSmaller) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16] parameter(0), sharding={devices=[1,8]<=[8]}
  %c = pred[8,16] compare(%x, %x), direction=NE, sharding={replicated}
  %p = pred[8,16] parameter(1), sharding={devices=[1,8]<=[8]}
  %f = f32[8,16] convert(%p), sharding={replicated}
  %y = f32[8,16] parameter(2), sharding={devices=[1,8]<=[8]}
  %s = f32[8,16] add(%y, %y), sharding={replicated}
  ROOT %t = (pred[8,16], f32[8,16], f32[8,16]) tuple(%c, %f, %s), sharding={{replicated}, {replicated}, {replicated}}
})");
  // x + x of one operand moves as much either way: its operand is gathered (counted once).
  const Instruction* sum = nullptr;
  for (const Instruction* add : InstructionsWith(*p.module, Opcode::kAdd))
    if (add->shape().element_type() == ElementType::kF32) sum = add;
  ASSERT_NE(sum, nullptr) << p.text;
  EXPECT_EQ(sum->operand(0)->opcode(), Opcode::kAllGather) << p.text;
  std::vector<const Instruction*> gathers = InstructionsWith(*p.module, Opcode::kAllGather);
  ASSERT_EQ(gathers.size(), 3u) << p.text;
  gathers.erase(std::find(gathers.begin(), gathers.end(), sum->operand(0)));
  for (const Instruction* gather : gathers) EXPECT_EQ(gather->shape().element_type(), ElementType::kPred) << p.text;
  ExpectStructure(*p.module, p.text, {.collectives = 3, .comm_bytes = 2 * 8 * 16 * 7 / 8 + 8 * 16 * 4 * 7 / 8});
  ExpectSameNumbers(p);
}

// A parameter that the result returns whole is gathered once, and a reshape of it is sliced
// from the gathered form rather than moving its own piece (oracle seed 112834: 80 B -> 64 B,
// XLA's).
TEST(ReshardTest, AValueReturnedWholeIsGatheredOnceForItsOtherUsers) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,2] parameter(0), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  %r = f32[32] reshape(%x), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  ROOT %t = (f32[16,2], f32[32]) tuple(%x, %r), sharding={{replicated}, {devices=[4,2]<=[8] last_tile_dim_replicate}}
})");
  ExpectStructure(*p.module, p.text, {.collectives = 1, .only = Opcode::kAllGather, .comm_bytes = 16 * 2 * 4 / 2});
  ExpectSameNumbers(p);
}

// ---- Device orders the planner cannot relate (found by the randomized test) ----

TEST(ReshardTest, ShuffledSourceOrderIsPermutedIntoIotaOrderThenPlanned) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,6] parameter(0), sharding={devices=[4,1]3,1,0,2}
  ROOT %n = f32[8,6] negate(%a), sharding={devices=[1,4]<=[4]}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_GE(CountOf(p, Opcode::kCollectivePermute), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllToAll), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReshardTest, ShuffledTargetOrderWithPartialReplicationAndUnevenDim) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[10,6] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %n = f32[10,6] negate(%a), sharding={devices=[4,1,2]0,5,2,7,1,4,3,6 last_tile_dim_replicate}
})");  // Partition() fails the test on a rematerialization warning
  EXPECT_GE(CountOf(p, Opcode::kCollectivePermute), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReshardTest, ShuffledOrdersOnBothSides) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = s32[6,9] parameter(0), sharding={devices=[2,4]7,2,5,0,3,6,1,4}
  ROOT %n = s32[6,9] negate(%a), sharding={devices=[1,8]6,1,3,0,7,2,4,5}
})");
  EXPECT_GE(CountOf(p, Opcode::kCollectivePermute), 2) << p.text;
  ExpectSameNumbers(p);
}

// A dot whose operands are 3x2 and 2x3 tiles in iota order on 6 devices: the dot strategies are
// searched with a stand-in of the rhs in the output's digits, and the planner moves the rhs
// across the two digit systems (before: both operands replicated with a warning, 112 bytes).
TEST(ReshardTest, DotAcrossTwoByThreeAndThreeByTwoDigits) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=6
ENTRY e {
  %a = f32[6,4] parameter(0), sharding={devices=[2,1,3]<=[6] last_tile_dim_replicate}
  %b = f32[4,6] parameter(1), sharding={devices=[1,3,2]<=[6] last_tile_dim_replicate}
  ROOT %d = f32[6,6] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,3]<=[6]}
})");  // Partition() fails the test on a rematerialization warning
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), 32) << p.text;
  ExpectSameNumbers(p);
}

// The randomized test's scatter whose operand order is shuffled on a 2x3 mesh: in iota order its
// 3x2 tiles do not refine with the updates' 2x3 digits (before: every operand replicated with a
// warning, 684 bytes).
TEST(ReshardTest, ScatterWithShuffledOperandOnSixDevices) {
  Partitioned p = Partition(std::string("HloModule m, num_partitions=6\n") + kAddF32 + R"(
ENTRY %main {
  %p.0 = f32[8,16] parameter(0), sharding={devices=[3,2]5,0,3,1,2,4}
  %p.2 = s32[1] parameter(1), sharding={devices=[2,3]<=[2,3] last_tile_dim_replicate}
  %p.3 = f32[1,8] parameter(2), sharding={devices=[1,6]<=[2,3]T(1,0)}
  ROOT %scatter = f32[8,16] scatter(%p.0, %p.2, %p.3), update_window_dims={1}, inserted_window_dims={1},
      scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=%add, sharding={devices=[3,2]5,0,3,1,2,4}
})");  // no rematerialization warning
  EXPECT_DOUBLE_EQ(CommBytes(p), 236) << p.text;
  NumberCheck check;
  check.index_limit = 16;
  ExpectSameNumbers(p, InputsEndingWith(p, {}, check), check);
}

// ---- The planner on built problems ----

AxisSharding AxesOf(const std::string& sharding, int64_t rank, int64_t devices) {
  std::optional<AxisSharding> axes = DecomposeSharding(ParseSharding(sharding), rank, devices);
  EXPECT_TRUE(axes.has_value()) << sharding;
  return axes.value_or(AxisSharding{});
}

std::optional<ReshardPlan> PlanFor(const std::vector<int64_t>& dims, int64_t devices, const std::string& from,
                                   const std::string& to) {
  int64_t rank = static_cast<int64_t>(dims.size());
  return PlanReshard(ReshardProblem{dims, 4, AxesOf(from, rank, devices), AxesOf(to, rank, devices), {}});
}

TEST(ReshardPlanTest, PlansAcrossDigitSystemsThatDoNotRefine) {
  std::optional<ReshardPlan> plan = PlanFor({6, 7}, 6, "{devices=[3,2]<=[6]}", "{devices=[2,3]<=[6]}");
  ASSERT_TRUE(plan.has_value());
  EXPECT_NE(plan->axes, plan->target_axes);
  // all-to-all, the (identity) change of digits, all-to-all.
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].kind, ReshardStep::Kind::kAllToAll);
  EXPECT_EQ(plan->steps[1].kind, ReshardStep::Kind::kCollectivePermute);
  EXPECT_EQ(plan->steps[1].cost_bytes, 0);
  EXPECT_EQ(plan->steps[2].kind, ReshardStep::Kind::kAllToAll);
  EXPECT_DOUBLE_EQ(plan->total_cost_bytes, 40);
}

TEST(ReshardPlanTest, EveryReshardBetweenSixDeviceOrdersHasAPlan) {
  const char* shardings[] = {"{devices=[3,2]<=[6]}", "{devices=[2,3]<=[6]}", "{devices=[6,1]<=[6]}",
                             "{devices=[1,6]<=[6]}", "{devices=[3,1,2]<=[6] last_tile_dim_replicate}",
                             "{devices=[1,2,3]<=[6] last_tile_dim_replicate}", "{devices=[3,2]<=[2,3]T(1,0)}",
                             "{devices=[2,1,3]<=[3,2]T(1,0) last_tile_dim_replicate}", "{replicated}"};
  for (const char* from : shardings)
    for (const char* to : shardings)
      EXPECT_TRUE(PlanFor({12, 18}, 6, from, to).has_value()) << from << " -> " << to;
}

// A collective-permute in the middle of a plan: between two states of the same tile counts.
TEST(ReshardPlanTest, CollectivePermuteBeforeTheLastGathers) {
  std::optional<ReshardPlan> plan =
      PlanFor({32, 64}, 64, "{devices=[4,16]<=[4,16]}", "{devices=[1,4,16]<=[4,16] last_tile_dim_replicate}");
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].kind, ReshardStep::Kind::kCollectivePermute);
  EXPECT_EQ(plan->steps[1].kind, ReshardStep::Kind::kAllGather);
  EXPECT_EQ(plan->steps[2].kind, ReshardStep::Kind::kAllGather);
  EXPECT_DOUBLE_EQ(plan->total_cost_bytes, 2048);  // before: 2784
}

// 128 devices, [4,32] -> [1,128] with 96 columns: a 32-way split of 96 does not split 4 ways
// more, so whole axes gather everything; pieces of the axes (4 = 2x2, 32 = 16x2) go around it.
TEST(ReshardPlanTest, PiecesOfAxesOnABigMesh) {
  std::optional<ReshardPlan> plan =
      PlanFor({64, 96}, 128, "{devices=[4,32]<=[4,32]}", "{devices=[1,128]<=[4,32]}");
  ASSERT_TRUE(plan.has_value());
  EXPECT_DOUBLE_EQ(plan->total_cost_bytes, 1384);  // before: 24384
}

TEST(ReshardPlanTest, StandInsRefineWithTheAnchor) {
  AxisSharding three_by_two = AxesOf("{devices=[3,2]<=[6]}", 2, 6);
  AxisSharding two_by_three = AxesOf("{devices=[2,3]<=[6]}", 2, 6);
  EXPECT_FALSE(RefineToCommonAxes(three_by_two, two_by_three).has_value());
  std::optional<std::vector<AxisSharding>> common = RefineAllToCommonAxes({three_by_two, two_by_three}, 1);
  ASSERT_TRUE(common.has_value());
  // The anchor keeps its axes; the stand-in has 3x2 tiles in the anchor's digits.
  EXPECT_EQ((*common)[1].ToString(), two_by_three.ToString());
  EXPECT_EQ((*common)[0].TileCount(0), 3);
  EXPECT_EQ((*common)[0].TileCount(1), 2);
  EXPECT_TRUE(RefineToCommonAxes((*common)[0], (*common)[1]).has_value());
}

}  // namespace
}  // namespace gspmd
