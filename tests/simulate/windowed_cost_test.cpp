// Tests of the windowed-einsum cost check (simulate/windowed_cost.h): the loop against the
// native collective and dot, each part worked by hand from collective_model.h's formulas.
#include <gtest/gtest.h>

#include <algorithm>

#include <vector>

#include "simulate/chip_spec.h"
#include "simulate/collective_model.h"
#include "simulate/topology.h"
#include "simulate/windowed_cost.h"

namespace gspmd::simulate {
namespace {

// The 16 groups of 8 partitions along x of a 128-partition tpu-v3 slice (8x8 chips, placement
// core,x,y): one core of each chip of a row.
std::vector<std::vector<int64_t>> GroupsAlongX() {
  std::vector<std::vector<int64_t>> groups;
  for (int64_t y = 0; y < 8; ++y)
    for (int64_t core = 0; core < 2; ++core) {
      std::vector<int64_t> group;
      for (int64_t x = 0; x < 8; ++x) group.push_back(core + 2 * x + 16 * y);
      groups.push_back(group);
    }
  return groups;
}

WindowedLoopCandidate Candidate(double window_bytes, double partial_dot_flops) {
  WindowedLoopCandidate candidate;
  candidate.collective = Opcode::kAllGather;
  candidate.rings = GroupsAlongX();  // ring order = group order
  candidate.trips = 8;
  candidate.bytes_per_trip = window_bytes;
  candidate.flops_per_trip = partial_dot_flops;
  candidate.collective_bytes = 8 * window_bytes;
  return candidate;
}

TEST(WindowedCostTest, LargeDotsHideTheRingAndBeatTheGather) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  // A 64 MiB window of f32[4096,4096] times f32[4096,8192] per trip.
  const double window = 64.0 * 1024 * 1024, flops = 2.0 * 4096 * 4096 * 8192;
  const WindowedLoopCost cost = PriceWindowedLoop(Candidate(window, flops), v3, t);

  // Native: the ring all-gather along a line of 8 chips shared by both cores, then one dot.
  const double gathered = 8 * window;
  EXPECT_DOUBLE_EQ(cost.collective_s, gathered / 8 * 7 / 0.5e11 / 0.83 + 7e-6);
  const double rate = 61.5e12 * 0.85;
  EXPECT_DOUBLE_EQ(cost.dot_s, 5e-6 + 8 * flops / rate);
  EXPECT_DOUBLE_EQ(cost.native_s, cost.collective_s + cost.dot_s);

  // The loop: the ring in group order sends 7 windows back one chip and the closing one
  // forward 7 chips; both cores' rings share each chip's links: 2 windows per link direction.
  EXPECT_EQ(cost.trips, 8);
  EXPECT_DOUBLE_EQ(cost.permute_bandwidth_s, 2 * window / 1e11 / 0.83);
  EXPECT_DOUBLE_EQ(cost.dot_trip_s, 5e-6 + flops / rate);
  EXPECT_GT(cost.dot_trip_s, cost.permute_bandwidth_s);
  EXPECT_DOUBLE_EQ(cost.overhead_trip_s, 7e-6 + 3 * 5e-6);  // the closing message's 7 hops, 3 kernels
  EXPECT_DOUBLE_EQ(cost.loop_s, 8 * (cost.dot_trip_s + cost.overhead_trip_s));
  EXPECT_TRUE(cost.windowed_is_faster);
  EXPECT_NE(cost.ToString().find(": windowed"), std::string::npos);

  // The folded ring (0,2,4,6,7,5,3,1 along each line) moves the same bytes with 2-hop latency.
  WindowedLoopCandidate folded = Candidate(window, flops);
  for (std::vector<int64_t>& g : folded.rings) g = {g[0], g[2], g[4], g[6], g[7], g[5], g[3], g[1]};
  const WindowedLoopCost folded_cost = PriceWindowedLoop(folded, v3, t);
  EXPECT_DOUBLE_EQ(folded_cost.permute_bandwidth_s, cost.permute_bandwidth_s);
  EXPECT_DOUBLE_EQ(folded_cost.overhead_trip_s, 2e-6 + 3 * 5e-6);

  // Bidirectional: 3 trips of two partial dots, windows both ways round (each direction of
  // each link now carries both rings' messages of both cores), and two partial dots peeled
  // (the own window's, and for even N the farthest one's) while the first two windows leave.
  WindowedLoopCandidate both = Candidate(window, flops);
  both.rings = folded.rings;
  both.bidirectional = true;
  both.trips = 3;
  both.bytes_per_trip = 2 * window;
  both.flops_per_trip = 2 * flops;
  both.peeled_flops = 2 * flops;
  both.peeled_bytes = 2 * window;
  const WindowedLoopCost both_cost = PriceWindowedLoop(both, v3, t);
  EXPECT_DOUBLE_EQ(both_cost.dot_s, cost.dot_s);
  EXPECT_DOUBLE_EQ(both_cost.dot_trip_s, 2 * (5e-6 + flops / rate));
  EXPECT_DOUBLE_EQ(both_cost.permute_bandwidth_s, 4 * window / 1e11 / 0.83);
  EXPECT_DOUBLE_EQ(both_cost.peeled_s, both_cost.dot_trip_s + 2e-6);
  EXPECT_DOUBLE_EQ(both_cost.loop_s,
                   3 * (both_cost.dot_trip_s + both_cost.overhead_trip_s) + both_cost.peeled_s);
  EXPECT_LT(both_cost.loop_s, cost.loop_s);
  EXPECT_NE(both_cost.ToString().find(" + peeled "), std::string::npos);
}

// The dot a loop replaces reads each operand once, its partial dots the other operand once per
// trip: when HBM bounds the partial dots, the loop loses what the ring saved. And a gather that
// stays for another user saves nothing: the loop must beat the dot alone.
TEST(WindowedCostTest, RereadOperandsAndSharedGathersCount) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  const double window = 64.0 * 1024 * 1024, flops = 2.0 * 4096 * 4096 * 8192;
  WindowedLoopCandidate candidate = Candidate(window, flops);
  const WindowedLoopCost compute_bound = PriceWindowedLoop(candidate, v3, t);
  ASSERT_TRUE(compute_bound.windowed_is_faster);

  // Each partial dot moves 4 GiB (the other operand read again): bound by HBM at 8 x 4 GiB,
  // against 4 GiB for the one dot.
  const double trip_bytes = 4.0 * 1024 * 1024 * 1024;
  candidate.dot_hbm_bytes_per_trip = trip_bytes;
  candidate.native_dot_hbm_bytes = trip_bytes;
  const WindowedLoopCost memory_bound = PriceWindowedLoop(candidate, v3, t);
  const double hbm = v3.hbm_bandwidth * v3.Efficiency("memory");
  EXPECT_DOUBLE_EQ(memory_bound.dot_trip_s, v3.op_overhead_s + trip_bytes / hbm);
  EXPECT_DOUBLE_EQ(memory_bound.dot_s, v3.op_overhead_s + std::max(8 * flops / (61.5e12 * 0.85), trip_bytes / hbm));
  EXPECT_FALSE(memory_bound.windowed_is_faster) << memory_bound.ToString();

  candidate = Candidate(window, flops);
  candidate.collective_stays = true;
  const WindowedLoopCost shared = PriceWindowedLoop(candidate, v3, t);
  EXPECT_DOUBLE_EQ(shared.native_s, shared.dot_s);
  EXPECT_FALSE(shared.windowed_is_faster) << shared.ToString();
}

// Unrolled: half the trips, each two steps (two partial dots, two permutes one after the
// other), the loop's kernels once per trip: the same dots and bytes, 8 kernel overheads fewer
// over 8 ring steps (4 trips x 4 kernels against 8 x 3).
TEST(WindowedCostTest, UnrolledLoopsPayTheLoopOncePerTwoSteps) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  for (double flops : {2.0 * 4096 * 4096 * 8192, 1e6}) {  // compute-bound, then permute-bound
    SCOPED_TRACE(flops);
    const double window = 64.0 * 1024 * 1024;
    WindowedLoopCandidate plain = Candidate(window, flops);
    for (std::vector<int64_t>& g : plain.rings) g = {g[0], g[2], g[4], g[6], g[7], g[5], g[3], g[1]};
    WindowedLoopCandidate unrolled = plain;
    unrolled.unrolled = true;
    unrolled.trips = 4;
    unrolled.bytes_per_trip = 2 * window;
    unrolled.flops_per_trip = 2 * flops;
    unrolled.loop_kernels = 4;
    const WindowedLoopCost p = PriceWindowedLoop(plain, v3, t);
    const WindowedLoopCost u = PriceWindowedLoop(unrolled, v3, t);
    EXPECT_EQ(u.trips, 4);
    EXPECT_DOUBLE_EQ(u.collective_s, p.collective_s);
    EXPECT_DOUBLE_EQ(u.dot_s, p.dot_s);
    EXPECT_DOUBLE_EQ(u.dot_trip_s, 2 * p.dot_trip_s);
    EXPECT_DOUBLE_EQ(u.permute_bandwidth_s, 2 * p.permute_bandwidth_s);  // one way, one window per step
    EXPECT_DOUBLE_EQ(u.overhead_trip_s, 2 * 2e-6 + 4 * 5e-6);          // two 2-hop latencies, 4 kernels
    EXPECT_DOUBLE_EQ(u.loop_s, 4 * (std::max(u.dot_trip_s, u.permute_bandwidth_s) + u.overhead_trip_s));
    EXPECT_NEAR(p.loop_s - u.loop_s, 8 * 5e-6, 1e-12);
    EXPECT_EQ(u.peeled_s, 0);

    // Odd N (the same 8-device rings priced as if 7 steps: 3 trips and one partial dot left
    // over, with nothing sent beside it).
    WindowedLoopCandidate odd = unrolled;
    odd.trips = 3;
    odd.peeled_flops = flops;
    const WindowedLoopCost o = PriceWindowedLoop(odd, v3, t);
    EXPECT_DOUBLE_EQ(o.peeled_s, p.dot_trip_s);
    EXPECT_DOUBLE_EQ(o.loop_s, 3 * (std::max(o.dot_trip_s, o.permute_bandwidth_s) + o.overhead_trip_s) + o.peeled_s);
  }
}

// LoopCandidateOf carries the unrolled flag and counts the loop's kernels per trip: an update per
// step, one counter and one condition.
TEST(WindowedCostTest, LoopCandidateOfAnUnrolledLoop) {
  WindowedEinsumCandidate c;
  c.trips = 2;
  c.devices = 5;
  c.unrolled = true;
  c.peeled_flops = 10;
  c.window_bytes_per_trip = 64;
  EXPECT_TRUE(LoopCandidateOf(c).unrolled);
  EXPECT_EQ(LoopCandidateOf(c).loop_kernels, 4);
  EXPECT_EQ(LoopCandidateOf(c).trips, 2);
  EXPECT_DOUBLE_EQ(LoopCandidateOf(c).peeled_flops, 10);
  c.unrolled = false;
  EXPECT_FALSE(LoopCandidateOf(c).unrolled);
  EXPECT_EQ(LoopCandidateOf(c).loop_kernels, 3);
}

TEST(WindowedCostTest, SmallDotsPayMoreInTripsThanTheGatherCosts) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  // 64 KiB windows and a 1 MFLOP partial dot: eight trips of kernel overhead and latency
  // cost more than one small all-gather and one dot.
  const WindowedLoopCost cost = PriceWindowedLoop(Candidate(64 * 1024, 1e6), v3, t);
  EXPECT_FALSE(cost.windowed_is_faster);
  EXPECT_GT(cost.loop_s, 8 * cost.overhead_trip_s);
  EXPECT_NE(cost.ToString().find(": native"), std::string::npos);
}

TEST(WindowedCostTest, ReduceScatterLoopsCompareWithTheReduceScatter) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  // The accumulator of one output chunk (64 MiB) moves each trip; the reduce-scatter takes
  // the whole partial result (8 chunks) down to one.
  WindowedLoopCandidate candidate = Candidate(64.0 * 1024 * 1024, 2.0 * 4096 * 4096 * 8192);
  candidate.collective = Opcode::kReduceScatter;
  const WindowedLoopCost cost = PriceWindowedLoop(candidate, v3, t);
  EXPECT_DOUBLE_EQ(cost.collective_s, 8 * 64.0 * 1024 * 1024 / 8 * 7 / 0.5e11 / 0.83 + 7e-6);
  EXPECT_TRUE(cost.windowed_is_faster);
  // f32 at HIGHEST runs six bf16 passes: the dots grow, the comparison holds.
  candidate.precision = "HIGHEST";
  EXPECT_DOUBLE_EQ(PriceWindowedLoop(candidate, v3, t).dot_trip_s, 5e-6 + 6 * 2.0 * 4096 * 4096 * 8192 / (61.5e12 * 0.85));
}

}  // namespace
}  // namespace gspmd::simulate

namespace gspmd::simulate {
namespace {

// A grouped loop (the pre-gather among the two cores of each chip, then rings over the chips of
// a row) against the same collective: its price is the plain loop's formula over the shorter
// ring plus the pre-gather, and the native side is the all-gather over all 16 devices of the
// row, not over the rings.
TEST(WindowedCostTest, GroupedLoopsAddTheirPreGatherAndKeepTheWholeCollective) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  const double window = 16.0 * 1024 * 1024, flops = 2.0 * 4096 * 4096 * 4096;
  WindowedLoopCandidate plain = Candidate(window, flops);
  std::vector<std::vector<int64_t>> rows;  // both cores of the 8 chips of each row
  for (int64_t y = 0; y < 8; ++y) {
    rows.emplace_back();
    for (int64_t d = 0; d < 16; ++d) rows.back().push_back(16 * y + d);
  }
  plain.rings = rows;
  plain.trips = 16;
  plain.collective_bytes = 16 * window;

  WindowedLoopCandidate grouped = Candidate(2 * window, 2 * flops);  // windows of 2 shards
  grouped.collective_bytes = 16 * window;
  grouped.collective_groups = rows;
  for (int64_t chip = 0; chip < 64; ++chip) grouped.pre_gather_groups.push_back({2 * chip, 2 * chip + 1});
  grouped.pre_gather_bytes = 2 * window;
  const WindowedLoopCost with = PriceWindowedLoop(grouped, v3, t);
  grouped.pre_gather_groups.clear();
  const WindowedLoopCost without = PriceWindowedLoop(grouped, v3, t);

  const WindowedLoopCost native = PriceWindowedLoop(plain, v3, t);
  EXPECT_DOUBLE_EQ(with.native_s, native.native_s);  // the same all-gather and dot
  EXPECT_DOUBLE_EQ(with.collective_s, native.collective_s);
  EXPECT_EQ(with.trips, 8);
  // The pre-gather: one window each way over the core switch, priced as that all-gather.
  std::vector<std::vector<int64_t>> pairs;
  for (int64_t chip = 0; chip < 64; ++chip) pairs.push_back({2 * chip, 2 * chip + 1});
  const double pre = EstimateGroupCollective(Opcode::kAllGather, pairs, 2 * window, window, t, v3).time_s;
  EXPECT_GT(with.pre_gather_s, 0);
  EXPECT_DOUBLE_EQ(with.pre_gather_s, pre);
  EXPECT_DOUBLE_EQ(with.loop_s, without.loop_s + with.pre_gather_s);
}

// The chip's check takes a candidate only when none of its alternatives is priced cheaper, so
// of a loop's groupings it takes the cheapest.
TEST(WindowedCostTest, TheCheckTakesTheCheapestGrouping) {
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  const Topology t = Topology::Build(v3, 128);
  auto candidate = [](int64_t group, double flops_per_trip) {
    WindowedEinsumCandidate c;
    c.kind = WindowedEinsumCandidate::Kind::kAllGather;
    c.devices = 8 / group;
    c.trips = 8 / group;
    c.group = group;
    c.window_bytes_per_trip = group * (int64_t{64} << 20);
    c.flops_per_trip = flops_per_trip * group;
    c.collective_bytes = int64_t{512} << 20;
    for (int64_t y = 0; y < 8; ++y) {
      std::vector<int64_t> ring;
      for (int64_t x = 0; x < 8; x += group) ring.push_back(2 * x + 16 * y);
      c.rings.push_back(ring);
    }
    return c;
  };
  // Large partial dots hide the ring either way; the plain loop has no pre-gather to pay.
  const double flops = 2.0 * 4096 * 4096 * 4096;
  WindowedEinsumCandidate one = candidate(1, flops), two = candidate(2, flops);
  for (int64_t y = 0; y < 8; ++y) two.pre_gather_groups.push_back({16 * y, 16 * y + 2});
  two.pre_gather_bytes = int64_t{128} << 20;
  two.collective_groups = one.rings;
  const WindowedEinsumCostCheck check = ChipWindowedCostCheck(v3, t);
  EXPECT_TRUE(check(one));
  one.alternatives = {two};
  two.alternatives = {one};
  EXPECT_TRUE(check(one));
  EXPECT_FALSE(check(two));  // priced faster than the gather, but dearer than the plain loop
  two.alternatives.clear();
  EXPECT_TRUE(check(two));
}

}  // namespace
}  // namespace gspmd::simulate
