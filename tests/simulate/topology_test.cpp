// Tests of slices and placement (Topology) and of the α-β collective times on them, each
// against the formula of collective_model.h worked by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "simulate/chip_spec.h"
#include "simulate/collective_model.h"
#include "simulate/topology.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd::simulate {
namespace {

std::string ErrorOf(const ChipSpec& chip, int64_t partitions, const std::string& shape, const std::string& placement = "") {
  try {
    Topology::Build(chip, partitions, shape, placement);
  } catch (const UserError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(TopologyTest, DefaultSliceIsTheSmallestThatHoldsTheProgram) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t128 = Topology::Build(v3, 128);
  EXPECT_EQ(t128.ShapeText(), "8x8");
  EXPECT_EQ(t128.slice_devices(), 128);
  ASSERT_EQ(t128.dims().size(), 3u);  // core, x, y
  EXPECT_FALSE(t128.dims()[1].wraps);  // 8 of 32: no wraparound on a sub-pod slice
  EXPECT_EQ(t128.Sharing(1), 2);       // both cores of a chip share its links
  EXPECT_DOUBLE_EQ(t128.LinkBandwidth(1), 0.5e11);
  // Partition 17 = core 1 of chip (0, 1) with placement core,x,y.
  EXPECT_EQ(t128.Coordinates(17)[0], 1);
  EXPECT_EQ(t128.Coordinates(17)[1], 0);
  EXPECT_EQ(t128.Coordinates(17)[2], 1);
  EXPECT_EQ(t128.Describe(), "tpu-v3: core 2 (switch) x ici 8x8 (mesh, no wraparound), 128 of 128 devices, placement core,x,y");

  const Topology pod = Topology::Build(v3, 2048);
  EXPECT_EQ(pod.ShapeText(), "32x32");
  EXPECT_TRUE(pod.dims()[1].wraps && pod.dims()[2].wraps);
  EXPECT_EQ(Topology::Build(v3, 1000).ShapeText(), "16x32");
  EXPECT_EQ(Topology::Build(v3, 8).ShapeText(), "2x2");

  const Topology gpus = Topology::Build(LoadChipSpec("a100"), 20);
  EXPECT_EQ(gpus.ShapeText(), "3");  // nodes of 8
  EXPECT_EQ(gpus.Sharing(1), 8);
  EXPECT_DOUBLE_EQ(gpus.LinkBandwidth(1), 25e9);  // 200 GB/s per node over 8 GPUs
  EXPECT_TRUE(Topology::Build(LoadChipSpec("tpu-v4"), 64).dims()[0].wraps);  // 4x4x4: a cube wraps
}

TEST(TopologyTest, PlacementPicksWhichDimsThePartitionIdWalks) {
  const Topology t = Topology::Build(LoadChipSpec("tpu-v3"), 128, "8x8", "x,y,core");
  EXPECT_EQ(t.Coordinates(1)[1], 1);   // partition 1: next chip along x
  EXPECT_EQ(t.Coordinates(64)[0], 1);  // partition 64: the second core
}

TEST(TopologyTest, BadShapesAndPlacementsAreErrors) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  EXPECT_EQ(ErrorOf(v3, 128, "4x4"),
            "the program has 128 partitions but the tpu-v3 topology 4x4 has only 32 devices (2 per ici node x 16 nodes)");
  EXPECT_EQ(ErrorOf(v3, 4096, ""), "the program has 4096 partitions but the largest tpu-v3 slice (32x32) has 2048 devices");
  EXPECT_NE(ErrorOf(v3, 8, "8x64").find("dimension 1 is 64 but 'ici' has at most 32"), std::string::npos);
  EXPECT_NE(ErrorOf(v3, 8, "8").find("expected 2 positive integers joined by 'x'"), std::string::npos);
  EXPECT_NE(ErrorOf(v3, 8, "2x2", "x,y").find("names 2 of the 3 dimensions"), std::string::npos);
  EXPECT_NE(ErrorOf(v3, 8, "2x2", "x,x,core").find("got 'x' twice"), std::string::npos);
  EXPECT_NE(ErrorOf(v3, 8, "2x2", "z,x,core").find("expected every dimension of tpu-v3 once, fastest first (core,x,y)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(LoadChipSpec("a100"), 9000, "").find("a100 has at most 8192 devices"), std::string::npos);
}

// One collective in a per-device module of `partitions` partitions.
std::unique_ptr<Module> Collective(int64_t partitions, const std::string& instruction, const std::string& operand_shape) {
  return ParseModule("HloModule m, num_partitions=" + std::to_string(partitions) +
                     "\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                     "  ROOT %s = f32[] add(%a, %b)\n}\n\nENTRY %main_spmd {\n  %p = " + operand_shape +
                     " parameter(0)\n  ROOT %c = " + instruction + "\n}\n");
}

CollectiveEstimate Estimate(const Module& module, const Topology& topology, const ChipSpec& chip) {
  return EstimateCollective(*module.entry()->root(), topology, chip);
}

TEST(CollectiveModelTest, AllReduceOverAPodIsAHierarchicalRing) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology pod = Topology::Build(v3, 2048);
  auto module = Collective(2048, "f32[268435456]{0} all-reduce(%p), replica_groups={}, to_apply=%add", "f32[268435456]{0}");
  const CollectiveEstimate estimate = Estimate(*module, pod, v3);
  const double v = 268435456.0 * 4;
  // The slower torus first, on the small pieces: two closed rings per chip, 2 x 1e11 each,
  // shared by the chip's 2 cores -> 2e11 per device; then the two cores (4e11) on half of V.
  const double gather = v / 2048 * 1023 / 2e11 + v / 2 / 4e11;
  EXPECT_DOUBLE_EQ(estimate.bandwidth_s, 2 * gather / 0.83);
  EXPECT_DOUBLE_EQ(estimate.latency_s, 2 * (1 + 16 + 16) * 1e-6);
  EXPECT_EQ(estimate.algorithm, "hierarchical ring (ici, core)");
  EXPECT_EQ(estimate.links, "core:2 switch + x:32 ring + y:32 ring");
  EXPECT_EQ(estimate.group_size, 2048);
  EXPECT_DOUBLE_EQ(estimate.bytes, 2.0 * 2047 / 2048 * v);  // gspmd report's ring bytes
}

TEST(CollectiveModelTest, AllGatherAlongOneMeshAxisUsesOneDim) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);  // 8x8 chips, no wraparound
  // Groups of 8 partitions 2 apart: the 8 chips along x, one core each.
  auto module = Collective(128, "f32[8,1024]{1,0} all-gather(%p), replica_groups=[16,8]<=[8,8,2]T(0,2,1), dimensions={0}",
                           "f32[1,1024]{1,0}");
  const CollectiveEstimate estimate = Estimate(*module, t, v3);
  EXPECT_EQ(estimate.links, "x:8 line");
  EXPECT_EQ(estimate.algorithm, "ring");
  const double v = 8 * 1024 * 4;
  EXPECT_DOUBLE_EQ(estimate.bandwidth_s, v / 8 * 7 / 0.5e11 / 0.83);  // one direction, shared by 2 cores
  EXPECT_DOUBLE_EQ(estimate.latency_s, 7e-6);
}

TEST(CollectiveModelTest, AllToAllIsBoundByTheBisection) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology pod = Topology::Build(v3, 2048);
  auto module = Collective(2048, "f32[2048,1024]{1,0} all-to-all(%p), replica_groups={}, dimensions={0}", "f32[2048,1024]{1,0}");
  const CollectiveEstimate estimate = Estimate(*module, pod, v3);
  const double v = 2048.0 * 1024 * 4;
  // Cut across x: V x 16 x 16 / (32 x b), b = 2 x 1e11 / 2 per device.
  EXPECT_DOUBLE_EQ(estimate.bandwidth_s, v * 16 * 16 / (32 * 1e11) / v3.CollectiveEfficiency("all-to-all"));
  // Hops across the group, and a fixed cost for each of the 2047 pieces.
  EXPECT_DOUBLE_EQ(estimate.latency_s, (1 + 16 + 16) * 1e-6 + 2047 * v3.all_to_all_message_s);
  EXPECT_GT(v3.all_to_all_message_s, 0);
  EXPECT_EQ(estimate.algorithm, "bisection");

  // Over GPU nodes the bytes leaving a node bound it: 7/8 of V... of 16 GPUs, half leave.
  const ChipSpec a100 = LoadChipSpec("a100");
  const Topology gpus = Topology::Build(a100, 16);
  auto small = Collective(16, "f32[16,1024]{1,0} all-to-all(%p), replica_groups={}, dimensions={0}", "f32[16,1024]{1,0}");
  const double w = 16.0 * 1024 * 4;
  EXPECT_DOUBLE_EQ(Estimate(*small, gpus, a100).bandwidth_s, w * 0.5 / 25e9 / a100.CollectiveEfficiency("all-to-all"));
}

TEST(CollectiveModelTest, PermuteCostsItsBusiestLinkAndNothingWhenPairsStay) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 8);  // 2x2 chips
  auto shift = Collective(8, "f32[1024]{0} collective-permute(%p), source_target_pairs={{0,2},{2,0},{1,3},{3,1}}", "f32[1024]{0}");
  const CollectiveEstimate estimate = Estimate(*shift, t, v3);
  EXPECT_DOUBLE_EQ(estimate.bandwidth_s, 4096 / 0.5e11 / 0.83);
  EXPECT_DOUBLE_EQ(estimate.latency_s, 1e-6);
  // Both cores of chip (0, 0) send over its one x+ link: 2 messages at the link's 1e11.
  EXPECT_EQ(estimate.links, "x:1 hop; busiest x+ link 2 messages");
  auto none = Collective(8, "f32[1024]{0} collective-permute(%p), source_target_pairs={{0,0}}", "f32[1024]{0}");
  EXPECT_EQ(Estimate(*none, t, v3).time_s, 0);
  auto alone = Collective(8, "f32[1024]{0} all-reduce(%p), replica_groups={{0},{1},{2},{3},{4},{5},{6},{7}}, to_apply=%add",
                          "f32[1024]{0}");
  EXPECT_EQ(Estimate(*alone, t, v3).time_s, 0);
  EXPECT_EQ(Estimate(*alone, t, v3).algorithm, "none");
}

// A permute of one f32[1024] per device over partitions 0..n-1, each source sending to the
// next of `ring` (ring[i] -> ring[i + 1], the last to the first).
std::unique_ptr<Module> RingPermute(int64_t partitions, const std::vector<int64_t>& ring) {
  std::string pairs;
  for (size_t i = 0; i < ring.size(); ++i)
    pairs += StrCat(i == 0 ? "" : ",", "{", ring[i], ",", ring[(i + 1) % ring.size()], "}");
  return Collective(partitions, "f32[1024]{0} collective-permute(%p), source_target_pairs={" + pairs + "}", "f32[1024]{0}");
}

// The three rings of issue 26, on chips in a line along x (placement x first, one core each):
// each directed link carries one message in all three, so each costs one window over one link;
// only the latency (the longest route) differs.
TEST(CollectiveModelTest, PermuteRingsLoadEachLinkDirectionOnce) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const double bytes = 4096, link = 1e11, efficiency = 0.83, hop = 1e-6;

  // A ring shifted by one on a wrapped dim: 32 chips along x (a whole pod axis wraps).
  const Topology wrapped = Topology::Build(v3, 32, "32x1", "x,y,core");
  ASSERT_TRUE(wrapped.dims()[1].wraps);
  std::vector<int64_t> order(32);
  for (int64_t i = 0; i < 32; ++i) order[i] = i;
  const CollectiveEstimate shift = Estimate(*RingPermute(32, order), wrapped, v3);
  EXPECT_DOUBLE_EQ(shift.bandwidth_s, bytes / link / efficiency);
  EXPECT_DOUBLE_EQ(shift.latency_s, hop);  // 31 -> 0 goes round the wraparound: one hop
  EXPECT_EQ(shift.links, "x:1 hop; busiest x+ link 1 message");

  // A folded ring on a line of 8 (no wraparound): every hop spans at most 2 chips, and the
  // outbound and return halves use opposite directions.
  const Topology line = Topology::Build(v3, 8, "8x1", "x,y,core");
  ASSERT_FALSE(line.dims()[1].wraps);
  const CollectiveEstimate folded = Estimate(*RingPermute(8, {0, 2, 4, 6, 7, 5, 3, 1}), line, v3);
  EXPECT_DOUBLE_EQ(folded.bandwidth_s, bytes / link / efficiency);
  EXPECT_DOUBLE_EQ(folded.latency_s, 2 * hop);
  EXPECT_EQ(folded.links, "x:2 hops; busiest x+ link 1 message");

  // The ring in line order: 7 -> 0 crosses all 7 links, but against the direction the other
  // messages take, so every direction still carries one message; it only waits 7 hops.
  const CollectiveEstimate naive = Estimate(*RingPermute(8, {0, 1, 2, 3, 4, 5, 6, 7}), line, v3);
  EXPECT_DOUBLE_EQ(naive.bandwidth_s, bytes / link / efficiency);
  EXPECT_DOUBLE_EQ(naive.latency_s, 7 * hop);
  EXPECT_EQ(naive.links, "x:7 hops; busiest x+ link 1 message");
}

TEST(CollectiveModelTest, PermuteMessagesSharingALinkAddUp) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const double bytes = 4096, link = 1e11, efficiency = 0.83;
  const Topology line = Topology::Build(v3, 8, "8x1", "x,y,core");
  // A shift by two on a line: the link 2 -> 3 carries 1 -> 3 and 2 -> 4.
  auto shift = Collective(8, "f32[1024]{0} collective-permute(%p), source_target_pairs={{0,2},{1,3},{2,4},{3,5},{4,6},{5,7}}",
                          "f32[1024]{0}");
  const CollectiveEstimate two = Estimate(*shift, line, v3);
  EXPECT_DOUBLE_EQ(two.bandwidth_s, 2 * bytes / link / efficiency);
  EXPECT_EQ(two.links, "x:2 hops; busiest x+ link 2 messages");

  // Halfway round a wrapped ring of 32, half of each message goes either way: 16 messages
  // cross each link position, half of each in each direction.
  const Topology wrapped = Topology::Build(v3, 32, "32x1", "x,y,core");
  std::string pairs;
  for (int64_t i = 0; i < 32; ++i) pairs += StrCat(i == 0 ? "" : ",", "{", i, ",", (i + 16) % 32, "}");
  auto half = Collective(32, "f32[1024]{0} collective-permute(%p), source_target_pairs={" + pairs + "}", "f32[1024]{0}");
  const CollectiveEstimate opposite = Estimate(*half, wrapped, v3);
  EXPECT_DOUBLE_EQ(opposite.bandwidth_s, 8 * bytes / link / efficiency);
  EXPECT_DOUBLE_EQ(opposite.latency_s, 16e-6);

  // Across the two cores of one chip: the core switch's ports (4e11 each way).
  const Topology chip = Topology::Build(v3, 8);
  auto cores = Collective(8, "f32[1024]{0} collective-permute(%p), source_target_pairs={{0,1},{1,0}}", "f32[1024]{0}");
  const CollectiveEstimate on_chip = Estimate(*cores, chip, v3);
  EXPECT_DOUBLE_EQ(on_chip.bandwidth_s, bytes / 4e11 / efficiency);
  EXPECT_EQ(on_chip.links, "core:switch; busiest core port out 1 message");
}

// The entry points over explicit pairs and groups (for the windowed-einsum cost check) give
// what the instructions give.
TEST(CollectiveModelTest, PairsAndGroupsEntryPointsMatchTheInstructions) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  auto module = Collective(128, "f32[8,1024]{1,0} all-gather(%p), replica_groups=[16,8]<=[8,8,2]T(0,2,1), dimensions={0}",
                           "f32[1,1024]{1,0}");
  const Instruction& gather = *module->entry()->root();
  const CollectiveEstimate direct = Estimate(*module, t, v3);
  const CollectiveEstimate grouped = EstimateGroupCollective(
      Opcode::kAllGather, gather.replica_groups().Groups(128), 8 * 1024 * 4, 1024 * 4, t, v3);
  EXPECT_DOUBLE_EQ(grouped.time_s, direct.time_s);
  EXPECT_DOUBLE_EQ(grouped.bytes, direct.bytes);
  EXPECT_EQ(grouped.links, direct.links);

  auto ring = RingPermute(8, {0, 2, 4, 6, 7, 5, 3, 1});
  const Topology line = Topology::Build(v3, 8, "8x1", "x,y,core");
  const CollectiveEstimate paired =
      EstimatePermutePairs(ring->entry()->root()->source_target_pairs(), 4096, line, v3);
  EXPECT_DOUBLE_EQ(paired.time_s, Estimate(*ring, line, v3).time_s);
  EXPECT_EQ(paired.bytes, 4096);
}

}  // namespace
}  // namespace gspmd::simulate

namespace gspmd::simulate {
namespace {

// The per-module entry point other tools (gspmd show / lint) use: every collective of every
// computation, keyed by computation and instruction, each the same as EstimateCollective's.
TEST(CollectiveModelTest, EstimateCollectiveTimesCoversEveryCollectiveOfTheModule) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  auto module = ParseModule(R"(HloModule m, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main_spmd (p: f32[8,1024]) -> (f32[8,1024], f32[64,1024]) {
  %p = f32[8,1024]{1,0} parameter(0)
  %ar = f32[8,1024]{1,0} all-reduce(%p), replica_groups={}, to_apply=%add
  %n = f32[8,1024]{1,0} negate(%ar)
  %ag = f32[64,1024]{1,0} all-gather(%n), replica_groups={}, dimensions={0}
  ROOT %t = (f32[8,1024]{1,0}, f32[64,1024]{1,0}) tuple(%ar, %ag)
}
)");
  const Topology topology = Topology::Build(v3, 8);
  const auto times = EstimateCollectiveTimes(*module, v3, topology);
  ASSERT_EQ(times.size(), 2u);
  const Computation& entry = *module->entry();
  for (const char* name : {"ar", "ag"}) {
    const auto found = times.find({entry.name(), name});
    ASSERT_NE(found, times.end()) << name;
    const CollectiveEstimate direct = EstimateCollective(*entry.FindInstruction(name), topology, v3);
    EXPECT_DOUBLE_EQ(found->second.time_s, direct.time_s) << name;
    EXPECT_GT(found->second.time_s, 0) << name;
  }
  EXPECT_EQ(times.at({entry.name(), "ar"}).bytes, 2.0 * 7 / 8 * 8 * 1024 * 4);
}

}  // namespace
}  // namespace gspmd::simulate
