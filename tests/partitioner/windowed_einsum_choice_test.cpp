// Tests of what windowed einsum chooses (handlers/dot_windowed.cpp): the folded ring, the cost
// check of auto (WindowedEinsumOptions::cost_check) and the direction it picks, and which of a
// dot's collectives becomes the loop when it has several.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/pipeline.h"
#include "partition_test_harness.h"
#include "partitioner/handlers/dot_windowed.h"
#include "windowed_einsum_test_util.h"

namespace gspmd::partition_test {
namespace {

using namespace windowed_test;

TEST(WindowedEinsumRing, FoldedRingOrder) {
  EXPECT_EQ(FoldedRing(1), (std::vector<int64_t>{0}));
  EXPECT_EQ(FoldedRing(2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(FoldedRing(3), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(FoldedRing(4), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(FoldedRing(5), (std::vector<int64_t>{0, 2, 4, 3, 1}));
  EXPECT_EQ(FoldedRing(8), (std::vector<int64_t>{0, 2, 4, 6, 7, 5, 3, 1}));
}

TEST(WindowedEinsumRing, NeighboursAreAtMostTwoApart) {
  for (int64_t n = 1; n <= 64; ++n) {
    SCOPED_TRACE(n);
    std::vector<int64_t> ring = FoldedRing(n);
    ASSERT_EQ(static_cast<int64_t>(ring.size()), n);
    std::vector<int64_t> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t a = 0; a < n; ++a) EXPECT_EQ(sorted[a], a);
    for (int64_t p = 0; p < n; ++p) EXPECT_LE(std::abs(ring[p] - ring[(p + 1) % n]), 2);
  }
}

// The loops' pairs on a 1-D mesh of every size: at most 2 devices apart, both loop kinds.
TEST(WindowedEinsumRing, LoopPairsAreAtMostTwoApart) {
  for (int64_t n : kDeviceCounts) {
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(n);
      SCOPED_TRACE(DirectionName(direction));
      ExpectWindowed(PartitionWith(FreeDimModule(n, 2 * n), WindowedEinsumMode::kAlways, direction), n,
                     Bidirectional(direction, n));
      ExpectScatterWindowed(PartitionWith(ScatterModule(n, 4 * n), WindowedEinsumMode::kAlways, direction), n,
                            Bidirectional(direction, n));
    }
  }
}

// ---- The cost check ----

// f32[8,4] rows split 4 ways, times a replicated f32[4,16]: the all-gather of x (128 bytes)
// would be windowed.
const std::string kFree4 = FreeDimModule(4, 8);

// Plain loops only: the unrolled candidates auto also offers are windowed_einsum_unrolled_test.cpp's.
WindowedEinsumOptions AutoWith(WindowedEinsumCostCheck check) {
  WindowedEinsumOptions options;
  // Grouped loops (a pre-gather, then a shorter ring) are windowed_einsum_grouped_test.cpp's:
  // refused here without asking `check`.
  options.cost_check = [check = std::move(check)](const WindowedEinsumCandidate& c) {
    return c.group == 1 && check(c);
  };
  options.unroll = WindowedEinsumUnroll::kOff;
  return options;
}

TEST(WindowedEinsumCostCheck, RefusalKeepsTheAllGather) {
  int64_t asked = 0;
  Partitioned p = PartitionWithOptions(kFree4, AutoWith([&](const WindowedEinsumCandidate&) {
                                         ++asked;
                                         return false;
                                       }));
  ExpectNotWindowed(p);
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 1) << p.text;
  EXPECT_EQ(asked, 2);  // unidirectional (preferred for a free window), then bidirectional
}

TEST(WindowedEinsumCostCheck, AcceptanceWindowsBelowTheThreshold) {
  // The threshold (1 GiB) would say no; the check says yes and decides.
  Partitioned p = PartitionWithOptions(kFree4, AutoWith([](const WindowedEinsumCandidate&) { return true; }));
  ExpectWindowed(p, 4, /*bidirectional=*/false);
}

TEST(WindowedEinsumCostCheck, SeesTheCandidates) {
  std::vector<WindowedEinsumCandidate> seen;
  Partitioned p = PartitionWithOptions(kFree4, AutoWith([&](const WindowedEinsumCandidate& c) {
                                         seen.push_back(c);
                                         return c.bidirectional;
                                       }));
  ExpectWindowed(p, 4, /*bidirectional=*/true);
  ASSERT_EQ(seen.size(), 2u);
  const WindowedEinsumCandidate& one = seen[0];
  const WindowedEinsumCandidate& both = seen[1];
  EXPECT_TRUE(both.bidirectional);
  EXPECT_FALSE(one.bidirectional);
  for (const WindowedEinsumCandidate* c : {&both, &one}) {
    EXPECT_EQ(c->kind, WindowedEinsumCandidate::Kind::kAllGather);
    EXPECT_EQ(c->devices, 4);
    EXPECT_EQ(c->collective_bytes, 8 * 4 * 4);  // the gathered x
    EXPECT_EQ(c->rings, (std::vector<std::vector<int64_t>>{{0, 2, 3, 1}}));
  }
  // The local dot f32[8,4] x f32[4,16]: 2 * 8 * 4 * 16 FLOPs, a quarter per window.
  EXPECT_EQ(one.trips, 4);
  EXPECT_EQ(one.window_bytes_per_trip, 2 * 4 * 4);
  EXPECT_DOUBLE_EQ(one.flops_per_trip, 2.0 * 8 * 4 * 16 / 4);
  EXPECT_EQ(one.peeled_flops, 0);
  // The window, w, and the partial f32[2,16] written into the result.
  EXPECT_EQ(one.hbm_bytes_per_trip, 2 * 4 * 4 + 4 * 16 * 4 + 2 * 16 * 4);
  EXPECT_EQ(both.hbm_bytes_per_trip, 2 * one.hbm_bytes_per_trip);
  EXPECT_NE(one.dot, nullptr);
  if (one.dot != nullptr) EXPECT_EQ(one.dot->name(), "d");
  EXPECT_EQ(one.extra_buffer_bytes, 2 * 2 * 4 * 4);
  EXPECT_EQ(both.trips, 1);
  EXPECT_EQ(both.window_bytes_per_trip, 2 * 2 * 4 * 4);
  EXPECT_DOUBLE_EQ(both.flops_per_trip, 2.0 * 8 * 4 * 16 / 2);
  EXPECT_DOUBLE_EQ(both.peeled_flops, 2.0 * 8 * 4 * 16 / 2);  // the own window's and the last one's
  EXPECT_EQ(both.peeled_bytes, 2 * 2 * 4 * 4);
}

TEST(WindowedEinsumCostCheck, SeesAReduceScatter) {
  std::vector<WindowedEinsumCandidate> seen;
  WindowedEinsumOptions options = AutoWith([&](const WindowedEinsumCandidate& c) {
    seen.push_back(c);
    return true;
  });
  options.direction = WindowedEinsumDirection::kOne;
  Partitioned p = PartitionWithOptions(ScatterModule(4, 16), options);
  ExpectScatterWindowed(p, 4, false);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].kind, WindowedEinsumCandidate::Kind::kReduceScatter);
  EXPECT_EQ(seen[0].collective_bytes, 2 * 16 * 4);    // the local f32[2,16] partial sums
  EXPECT_EQ(seen[0].window_bytes_per_trip, 2 * 4 * 4);  // one f32[2,4] accumulator
  // x's f32[2,64] whole, w's f32[64,16] chunk f32[64,4], and the accumulator read and written
  // by the partial dot's kernel (the add fused into it).
  EXPECT_EQ(seen[0].hbm_bytes_per_trip, 2 * 64 * 4 + 64 * 4 * 4 + 2 * (2 * 4 * 4));
  // The dot it replaces: x, w's local f32[64,16] and the partial sums, each once.
  EXPECT_EQ(seen[0].native_dot_hbm_bytes, 2 * 64 * 4 + 64 * 16 * 4 + 2 * 16 * 4);
  EXPECT_FALSE(seen[0].collective_shared);
}

// Without a cost check the direction follows the loop's kind: bidirectional for reduce-scatter
// and contracting windows of N >= 4, unidirectional for free and batch windows and N < 4.
TEST(WindowedEinsumCostCheck, DefaultDirections) {
  for (int64_t n : {3, 4, 8}) {
    SCOPED_TRACE(n);
    auto windowed = [&](const std::string& hlo) {
      return PartitionWith(hlo, WindowedEinsumMode::kAlways, WindowedEinsumDirection::kAuto);
    };
    ExpectWindowed(windowed(FreeDimModule(n, 2 * n)), n, false);
    ExpectWindowed(windowed(ContractingModule(n)), n, n >= 4);
    ExpectScatterWindowed(windowed(ScatterModule(n, 4 * n)), n, n >= 4);
    WindowedEinsumOptions options;
    options.threshold_bytes = 0;  // auto by threshold: the same
    ExpectWindowed(PartitionWithOptions(ContractingModule(n), options), n, n >= 4);
    ExpectWindowed(PartitionWithOptions(FreeDimModule(n, 2 * n), options), n, false);
  }
}

TEST(WindowedEinsumCostCheck, NotAskedOutsideAuto) {
  for (WindowedEinsumMode mode : {WindowedEinsumMode::kOff, WindowedEinsumMode::kAlways}) {
    int64_t asked = 0;
    WindowedEinsumOptions options = AutoWith([&](const WindowedEinsumCandidate&) {
      ++asked;
      return mode == WindowedEinsumMode::kOff;
    });
    options.mode = mode;
    Partitioned p = PartitionWithOptions(kFree4, options);
    EXPECT_EQ(CountOf(p, Opcode::kWhile), mode == WindowedEinsumMode::kAlways ? 1 : 0) << p.text;
    EXPECT_EQ(asked, 0);
  }
}

TEST(WindowedEinsumCostCheck, TheTripCapStillApplies) {
  int64_t asked = 0;
  WindowedEinsumOptions options = AutoWith([&](const WindowedEinsumCandidate&) {
    ++asked;
    return true;
  });
  options.max_trips = 2;
  ExpectNotWindowed(PartitionWithOptions(kFree4, options));
  EXPECT_EQ(asked, 0);
}

// A contracting window (bidirectional preferred) is offered bidirectional first.
TEST(WindowedEinsumCostCheck, ContractingWindowsOfferBidirectionalFirst) {
  std::vector<bool> offered;
  Partitioned p = PartitionWithOptions(ContractingModule(4), AutoWith([&](const WindowedEinsumCandidate& c) {
                                         offered.push_back(c.bidirectional);
                                         return !c.bidirectional;
                                       }));
  EXPECT_EQ(offered, (std::vector<bool>{true, false}));
  ExpectWindowed(p, 4, /*bidirectional=*/false);
}

// Two dots alike (the same shapes and layouts): the check is asked once.
TEST(WindowedEinsumCostCheck, AskedOncePerDistinctDot) {
  const std::string hlo =
      "HloModule m, num_partitions=4\nENTRY e {\n"
      "  %x = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
      "  %y = f32[8,4] parameter(1), sharding={devices=[4,1]<=[4]}\n"
      "  %w = f32[4,16] parameter(2), sharding={replicated}\n"
      "  %a = f32[8,16] dot(%x, %w), " + kMatmul + ", sharding={replicated}\n"
      "  %b = f32[8,16] dot(%y, %w), " + kMatmul + ", sharding={replicated}\n"
      "  ROOT %s = f32[8,16] add(%a, %b), sharding={replicated}\n}\n";
  int64_t asked = 0;
  Partitioned p = PartitionWithOptions(hlo, AutoWith([&](const WindowedEinsumCandidate& c) {
                                         ++asked;
                                         return c.bidirectional;
                                       }));
  EXPECT_EQ(CountOf(p, Opcode::kWhile), 2) << p.text;
  EXPECT_EQ(asked, 2);  // unidirectional refused, bidirectional taken: for both dots
}

// The cost check set on the pipeline's options reaches the partitioner.
TEST(WindowedEinsumCostCheck, ThroughThePipeline) {
  for (bool accept : {false, true}) {
    std::unique_ptr<Module> module = ParseModule(kFree4);
    api::CompileOptions options;
    options.windowed_einsum = api::ParseWindowedEinsum("auto", [accept](const WindowedEinsumCandidate&) {
      return accept;
    });
    api::CompiledPartition compiled = api::PartitionGlobal(*module, "free.hlo", options);
    EXPECT_EQ(CountOf(*compiled.partitioned.module, Opcode::kWhile), accept ? 1 : 0);
  }
}

// ---- Which collective becomes the loop ----

// On a 4x2 mesh (device = 2i + j): x f32[256, k] has its rows split over i and its contracting
// dim over j, w f32[k, 16] its contracting dim over j and its columns over i, and the result is
// wanted with its rows over i and its columns over j. The dot all-gathers w's columns over i
// (f32[k/2, 16] per device) and reduce-scatters its partial sums (f32[64, 16] per device) over
// j onto the columns, as the dense LM's attention output and second MLP dots do.
std::string GatherAndScatterModule(int64_t k) {
  return DotModule(8, {256, k}, "{devices=[4,2]<=[8]}", {k, 16}, "{devices=[2,4]<=[4,2]T(1,0)}", {256, 16},
                   "{devices=[4,2]<=[8]}", kMatmul);
}

// What the cost check was offered, in order.
std::vector<WindowedEinsumCandidate::Kind> Offered(const std::string& hlo, int64_t accept_index,
                                                   Partitioned* partitioned = nullptr) {
  std::vector<WindowedEinsumCandidate::Kind> kinds;
  WindowedEinsumOptions options = AutoWith([&](const WindowedEinsumCandidate& c) {
    kinds.push_back(c.kind);
    return static_cast<int64_t>(kinds.size()) - 1 == accept_index;
  });
  options.direction = WindowedEinsumDirection::kOne;
  Partitioned p = PartitionWithOptions(hlo, options);
  if (partitioned != nullptr) *partitioned = std::move(p);
  return kinds;
}

TEST(WindowedEinsumChoice, AllGatherAndReduceScatterOfOneDot) {
  for (int64_t k : {64, 256}) {
    Partitioned off = PartitionWith(GatherAndScatterModule(k), WindowedEinsumMode::kOff);
    ASSERT_EQ(CountOf(off, Opcode::kAllGather), 1) << off.text;
    ASSERT_EQ(CountOf(off, Opcode::kReduceScatter), 1) << off.text;
  }
  using Kind = WindowedEinsumCandidate::Kind;
  // k = 256: the gathered w (8 KiB) outweighs the partial sums (4 KiB): the all-gather is
  // offered first, and taken.
  Partitioned p;
  std::vector<Kind> kinds = Offered(GatherAndScatterModule(256), 0, &p);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kAllGather}));
  EXPECT_EQ(CountOf(p, Opcode::kWhile), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), 1) << p.text;
  // Refused, the reduce-scatter is offered next and taken.
  kinds = Offered(GatherAndScatterModule(256), 1, &p);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kAllGather, Kind::kReduceScatter}));
  EXPECT_EQ(CountOf(p, Opcode::kWhile), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), 0) << p.text;
  // k = 64: w is smaller (2 KiB): the reduce-scatter comes first.
  kinds = Offered(GatherAndScatterModule(64), -1, &p);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kReduceScatter, Kind::kAllGather}));
  ExpectNotWindowed(p);
}

// Always windows the larger of the two (w's all-gather over i for k = 256, the reduce-scatter
// over j for k = 64), and the numbers are those of off (integers: the sums are exact).
TEST(WindowedEinsumChoice, AllGatherAndReduceScatterAreExact) {
  for (int64_t k : {64, 256})
    for (WindowedEinsumDirection direction : kDirections) {
      SCOPED_TRACE(k);
      SCOPED_TRACE(DirectionName(direction));
      Partitioned p = ExpectSameAsOff(GatherAndScatterModule(k), /*exact=*/true, /*integers=*/true, direction);
      EXPECT_EQ(CountOf(p, Opcode::kAllGather), k == 256 ? 0 : 1) << p.text;
      EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), k == 256 ? 1 : 0) << p.text;
      const int64_t n = k == 256 ? 4 : 2;
      ExpectLoop(p, n, Bidirectional(direction, n), MeshAxis(2, /*major=*/k == 256));
    }
}

}  // namespace
}  // namespace gspmd::partition_test
