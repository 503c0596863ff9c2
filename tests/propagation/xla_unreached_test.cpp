// XLA's propagation tests that issue 24 left open, each rebuilt as a module of our own: values a
// ShardBarrierFrom/To or a closed boundary keeps every sharding from (no sharding, partitioned
// replicated), variadic scatters (each result follows its own operand and updates), and two
// loops whose propagation must end quickly. HLO text in, the exact sharding out.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "driver_test_util.h"

namespace gspmd {
namespace {

using propagation_test::ExpectCompleteAndAnnotationsKept;
using propagation_test::ExpectPartitionsAndComputesTheSame;
using propagation_test::kUnreached;
using propagation_test::Propagate;
using propagation_test::Propagated;

// XLA's ShardingPropagation defaults, which its tests run with: propagation chooses neither the
// entry parameters' nor the result's shardings.
PropagationOptions XlaDefaults() {
  PropagationOptions options;
  options.propagate_to_parameters = {false};
  options.propagate_to_outputs = {false};
  return options;
}

// ---- after a shard barrier ----
//
// A ShardBarrierFrom keeps its operand's sharding from its users: a user nothing else reaches
// keeps no sharding, as in XLA (XLA's *ForwardPassWithBarrier tests), and is partitioned
// replicated. A ShardBarrierTo keeps its users' shardings from its operand: XLA replicates the
// barrier instead, and its operand with it (*BackwardPassWithBarrier).

TEST(PropagationXlaUnreachedTest, DotBehindAShardBarrier) {
  Propagated forward = Propagate(R"(HloModule m, num_partitions=8
ENTRY %e {
  %a = f32[4,16,24] parameter(0), sharding={devices=[2,2,2]<=[8]}
  %w = f32[4,8,24] parameter(1)
  %from = f32[4,16,24] custom-call(%a), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %d = f32[4,16,8] dot(%from, %w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  ROOT %r = f32[4,16,8] negate(%d)
})",
                                 XlaDefaults());
  ExpectCompleteAndAnnotationsKept(forward);
  EXPECT_EQ(forward.Of("d"), "");
  EXPECT_EQ(forward.Origin("d"), kUnreached);
  EXPECT_EQ(forward.Of("w"), "");
  EXPECT_EQ(forward.Of("r"), "");
  ExpectPartitionsAndComputesTheSame(forward);

  Propagated backward = Propagate(R"(HloModule m, num_partitions=8
ENTRY %e {
  %a = f32[4,16,24] parameter(0), sharding={devices=[2,2,2]<=[8]}
  %w = f32[4,8,24] parameter(1)
  %wn = f32[4,8,24] negate(%w)
  %to = f32[4,8,24] custom-call(%wn), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %d = f32[4,16,8] dot(%a, %to), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, sharding={devices=[2,2,1,2]<=[8] last_tile_dim_replicate}
  ROOT %r = f32[4,16,8] negate(%d)
})",
                                  XlaDefaults());
  ExpectCompleteAndAnnotationsKept(backward);
  EXPECT_EQ(backward.Of("wn"), "{replicated}");
  EXPECT_EQ(backward.Origin("wn"), "replicated: a ShardBarrierTo blocks its users' sharding");
  EXPECT_EQ(backward.Of("w"), "");
  EXPECT_EQ(backward.module->entry()->FindInstruction("to"), nullptr);
  ExpectPartitionsAndComputesTheSame(backward);
}

// XLA's own dynamic-slice and dynamic-update-slice barrier tests run its non-SPMD propagation,
// where a custom-call takes no sharding and %c stays unsharded; its SPMD propagation (XLA in
// JAX 0.10.2, compiled for 2 devices) replicates %c as for every other op, and so do we.
TEST(PropagationXlaUnreachedTest, DynamicSliceBehindAShardBarrier) {
  Propagated forward = Propagate(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[6,9,10] parameter(0)
  %c = f32[6,9,10] copy(%p), sharding={devices=[1,1,2]<=[2]}
  %k = s32[] parameter(1)
  %z = s32[] constant(0)
  %from = f32[6,9,10] custom-call(%c), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %ds = f32[6,1,10] dynamic-slice(%from, %z, %k, %z), dynamic_slice_sizes={6,1,10}
  ROOT %r = (f32[6,1,10]) tuple(%ds)
})",
                                 XlaDefaults());
  ExpectCompleteAndAnnotationsKept(forward);
  EXPECT_EQ(forward.Of("ds"), "");
  ExpectPartitionsAndComputesTheSame(forward);

  Propagated backward = Propagate(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[6,9,10] parameter(0)
  %c = f32[6,9,10] copy(%p)
  %k = s32[] parameter(1)
  %z = s32[] constant(0)
  %to = f32[6,9,10] custom-call(%c), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %ds = f32[6,1,10] dynamic-slice(%to, %z, %k, %z), dynamic_slice_sizes={6,1,10}, sharding={devices=[1,1,2]<=[2]}
  ROOT %r = (f32[6,1,10]) tuple(%ds)
})",
                                  XlaDefaults());
  ExpectCompleteAndAnnotationsKept(backward);
  EXPECT_EQ(backward.Of("c"), "{replicated}");
  EXPECT_EQ(backward.Of("p"), "");
  ExpectPartitionsAndComputesTheSame(backward);
}

TEST(PropagationXlaUnreachedTest, DynamicUpdateSliceBehindAShardBarrier) {
  Propagated forward = Propagate(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[6,9,10] parameter(0)
  %c = f32[6,9,10] copy(%p), sharding={devices=[1,1,2]<=[2]}
  %q = f32[6,1,10] parameter(1)
  %u = f32[6,1,10] copy(%q)
  %k = s32[] parameter(2)
  %z = s32[] constant(0)
  %from = f32[6,9,10] custom-call(%c), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %dus = f32[6,9,10] dynamic-update-slice(%from, %u, %z, %k, %z)
  ROOT %r = (f32[6,9,10]) tuple(%dus)
})",
                                 XlaDefaults());
  ExpectCompleteAndAnnotationsKept(forward);
  EXPECT_EQ(forward.Of("dus"), "");
  EXPECT_EQ(forward.Of("u"), "");
  ExpectPartitionsAndComputesTheSame(forward);

  Propagated backward = Propagate(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[6,9,10] parameter(0)
  %c = f32[6,9,10] copy(%p)
  %q = f32[6,1,10] parameter(1)
  %u = f32[6,1,10] copy(%q)
  %k = s32[] parameter(2)
  %z = s32[] constant(0)
  %to = f32[6,9,10] custom-call(%c), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %dus = f32[6,9,10] dynamic-update-slice(%to, %u, %z, %k, %z), sharding={devices=[1,1,2]<=[2]}
  ROOT %r = (f32[6,9,10]) tuple(%dus)
})",
                                  XlaDefaults());
  ExpectCompleteAndAnnotationsKept(backward);
  EXPECT_EQ(backward.Of("c"), "{replicated}");
  EXPECT_EQ(backward.Of("u"), "{devices=[1,1,2]<=[2]}");  // not behind the barrier
  ExpectPartitionsAndComputesTheSame(backward);
}

// Indices built from iotas make dims 0 and 1 of the operand parallel to the indices' dims 1 and 2.
constexpr const char* kIotaIndices = R"(
  %i0 = s32[1,4,8] iota(), iota_dimension=1
  %i1 = s32[1,4,8] iota(), iota_dimension=2
  %idx = s32[2,4,8] concatenate(%i0, %i1), dimensions={0})";

TEST(PropagationXlaUnreachedTest, GatherBehindAShardBarrier) {
  Propagated forward = Propagate(std::string(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[4,8,3] parameter(0), sharding={devices=[4,1,1]<=[4]})") + kIotaIndices + R"(
  %fx = f32[4,8,3] custom-call(%x), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %fi = s32[2,4,8] custom-call(%idx), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %g = f32[4,8,3] gather(%fx, %fi), offset_dims={2}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1,3}
  ROOT %r = f32[4,8,3] negate(%g)
})",
                                 XlaDefaults());
  ExpectCompleteAndAnnotationsKept(forward);
  EXPECT_EQ(forward.Of("g"), "");
  EXPECT_EQ(forward.Of("idx"), "");
  ExpectPartitionsAndComputesTheSame(forward);

  Propagated backward = Propagate(std::string(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[4,8,3] parameter(0)
  %cx = f32[4,8,3] copy(%x))") + kIotaIndices + R"(
  %to = f32[4,8,3] custom-call(%cx), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %g = f32[4,8,3] gather(%to, %idx), offset_dims={2}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1,3}, sharding={devices=[4,1,1]<=[4]}
  ROOT %r = f32[4,8,3] negate(%g)
})",
                                  XlaDefaults());
  ExpectCompleteAndAnnotationsKept(backward);
  EXPECT_EQ(backward.Of("cx"), "{replicated}");
  EXPECT_EQ(backward.Of("idx"), "{devices=[1,4,1]<=[4]}");  // the indices are not behind the barrier
  ExpectPartitionsAndComputesTheSame(backward);
}

TEST(PropagationXlaUnreachedTest, ScatterBehindAShardBarrier) {
  const std::string add = R"(HloModule m, num_partitions=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";
  Propagated forward = Propagate(add + R"(ENTRY %e {
  %x = f32[4,8,3] parameter(0), sharding={devices=[4,1,1]<=[4]}
  %u = f32[4,8,3] parameter(1))" + kIotaIndices + R"(
  %fx = f32[4,8,3] custom-call(%x), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %fi = s32[2,4,8] custom-call(%idx), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %fu = f32[4,8,3] custom-call(%u), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %sc = f32[4,8,3] scatter(%fx, %fi, %fu), update_window_dims={2}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=%add
  ROOT %r = f32[4,8,3] negate(%sc)
})",
                                 XlaDefaults());
  ExpectCompleteAndAnnotationsKept(forward);
  EXPECT_EQ(forward.Of("sc"), "");
  ExpectPartitionsAndComputesTheSame(forward);

  Propagated backward = Propagate(add + R"(ENTRY %e {
  %x = f32[4,8,3] parameter(0)
  %cx = f32[4,8,3] copy(%x)
  %u = f32[4,8,3] parameter(1)
  %cu = f32[4,8,3] copy(%u))" + kIotaIndices + R"(
  %to = f32[4,8,3] custom-call(%cx), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %sc = f32[4,8,3] scatter(%to, %idx, %cu), update_window_dims={2}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=%add, sharding={devices=[4,1,1]<=[4]}
  ROOT %r = f32[4,8,3] negate(%sc)
})",
                                  XlaDefaults());
  ExpectCompleteAndAnnotationsKept(backward);
  EXPECT_EQ(backward.Of("cx"), "{replicated}");
  EXPECT_EQ(backward.Of("idx"), "{devices=[1,4,1]<=[4]}");
  EXPECT_EQ(backward.Of("cu"), "{devices=[4,1,1]<=[4]}");
  ExpectPartitionsAndComputesTheSame(backward);
}

TEST(PropagationXlaUnreachedTest, SortBehindAShardBarrier) {
  const std::string less = R"(HloModule m, num_partitions=4
%less (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
)";
  Propagated forward = Propagate(less + R"(ENTRY %e {
  %x = f32[12,16] parameter(0)
  %n = f32[12,16] negate(%x), sharding={devices=[4,1]<=[4]}
  %from = f32[12,16] custom-call(%n), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %s = f32[12,16] sort(%from), dimensions={1}, is_stable=true, to_apply=%less
  ROOT %r = f32[12,16] negate(%s)
})",
                                 XlaDefaults());
  ExpectCompleteAndAnnotationsKept(forward);
  EXPECT_EQ(forward.Of("s"), "");
  ExpectPartitionsAndComputesTheSame(forward);

  Propagated backward = Propagate(less + R"(ENTRY %e {
  %x = f32[12,16] parameter(0)
  %n = f32[12,16] negate(%x)
  %to = f32[12,16] custom-call(%n), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %s = f32[12,16] sort(%to), dimensions={1}, is_stable=true, to_apply=%less, sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[12,16] negate(%s)
})",
                                  XlaDefaults());
  ExpectCompleteAndAnnotationsKept(backward);
  EXPECT_EQ(backward.Of("n"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(backward);
}

// A ShardBarrierTo whose user reaches it through a tuple (a link, not a rule) is replicated too.
TEST(PropagationXlaUnreachedTest, ShardBarrierToBlocksATupleUser) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,8] parameter(0)
  %n = f32[8,8] negate(%x)
  %to = f32[8,8] custom-call(%n), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  ROOT %t = (f32[8,8]) tuple(%to), sharding={{devices=[4,1]<=[4]}}
})");
  EXPECT_EQ(p.Of("n"), "{replicated}");
  EXPECT_EQ(p.Of("x"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(p);
}

// ---- what an unsharded value does downstream ----

// The propagated text prints no sharding on a value nothing reached (--explain says why), parses
// again, and partitions: the value is replicated there.
TEST(PropagationXlaUnreachedTest, AnUnshardedValuePrintsParsesAndPartitionsReplicated) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %a = f32[8,12] parameter(0), sharding={devices=[4,1]<=[4]}
  %from = f32[8,12] custom-call(%a), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %n = f32[8,12] negate(%from)
  ROOT %r = f32[8,12] add(%n, %n)
})",
                           XlaDefaults());
  const std::string text = PrintModule(*p.module);
  const size_t line = text.find("%n = ");
  ASSERT_NE(line, std::string::npos) << text;
  EXPECT_EQ(text.substr(line, text.find('\n', line) - line), "%n = f32[8,12] negate(%a)");
  EXPECT_NE(PrintModuleWithOrigins(*p.module, p.result).find("negate(%a) /* " + std::string(kUnreached) + " */"),
            std::string::npos);
  std::unique_ptr<Module> reparsed = ParseModule(text, "propagated.hlo");
  PartitionResult partitioned = PartitionModule(*reparsed);
  EXPECT_TRUE(partitioned.warnings.empty());
  const std::string per_device = PrintModule(*partitioned.module);
  EXPECT_NE(per_device.find("all-gather"), std::string::npos) << per_device;  // %a gathered for %n
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), AnalyzeCommunication(*partitioned.module).comm_bytes_per_device);
}

// ---- boundary values propagation may not choose ----

// XLA's PropagateToParametersNotEnabled1/3: an unannotated parameter stays without a sharding
// (used twice or beside a replicated one); the partitioner takes it replicated.
TEST(PropagationXlaUnreachedTest, ParametersPropagationMayNotChooseKeepNoSharding) {
  Propagated twice = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[12] parameter(0)
  ROOT %m = f32[12] multiply(%p, %p), sharding={devices=[4]<=[4]}
})",
                               XlaDefaults());
  EXPECT_EQ(twice.Of("p"), "");
  EXPECT_EQ(twice.Origin("p"), kUnreached);
  ExpectPartitionsAndComputesTheSame(twice);

  Propagated beside = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[12] parameter(0)
  %q = f32[12] parameter(1), sharding={replicated}
  ROOT %s = f32[12] subtract(%p, %q), sharding={devices=[4]<=[4]}
})",
                                XlaDefaults());
  EXPECT_EQ(beside.Of("p"), "");
  EXPECT_EQ(beside.Of("q"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(beside);
}

// ---- variadic scatter ----
//
// Result i of a variadic scatter follows operand i, then updates i, then the indices; one
// result's sharding does not become the other's (XLA's *Scatter*_Variadic tests). The
// partitioner computes a variadic scatter whole (gathering what is split), a separate matter,
// so these check the propagated shardings only.

constexpr const char* kAddPairs = R"(HloModule m, num_partitions=4
%add2 (a0: f32[], a1: f32[], b0: f32[], b1: f32[]) -> (f32[], f32[]) {
  %a0 = f32[] parameter(0)
  %a1 = f32[] parameter(1)
  %b0 = f32[] parameter(2)
  %b1 = f32[] parameter(3)
  %s0 = f32[] add(%a0, %b0)
  %s1 = f32[] add(%a1, %b1)
  ROOT %t = (f32[], f32[]) tuple(%s0, %s1)
}
)";

// x and y sharded differently (operands, updates or the result), scattered at rows %i.
std::string VariadicScatter(const std::string& x, const std::string& y, const std::string& u, const std::string& v,
                            const std::string& result) {
  auto sharding = [](const std::string& s) { return s.empty() ? std::string() : ", sharding=" + s; };
  return std::string(kAddPairs) + "ENTRY %e {\n" +                                     //
         "  %px = f32[6,16] parameter(0)\n  %x = f32[6,16] copy(%px)" + sharding(x) + "\n" +  //
         "  %py = f32[6,16] parameter(1)\n  %y = f32[6,16] copy(%py)" + sharding(y) + "\n" +  //
         "  %i = s32[5] parameter(2), sharding={replicated}\n" +                              //
         "  %pu = f32[5,16] parameter(3)\n  %u = f32[5,16] copy(%pu)" + sharding(u) + "\n" +  //
         "  %pv = f32[5,16] parameter(4)\n  %v = f32[5,16] copy(%pv)" + sharding(v) + "\n" +  //
         "  %sc = (f32[6,16], f32[6,16]) scatter(%x, %y, %i, %u, %v), update_window_dims={1}, "
         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add2" +
         sharding(result) + "\n  ROOT %r = (f32[6,16], f32[6,16]) copy(%sc)\n}\n";
}

constexpr const char* kColumns4 = "{devices=[1,4]<=[4]}";
constexpr const char* kColumns2 = "{devices=[1,2,2]<=[4] last_tile_dim_replicate}";

TEST(PropagationXlaUnreachedTest, VariadicScatterResultsFollowTheirOwnOperands) {
  Propagated p = Propagate(VariadicScatter(kColumns4, kColumns2, "{replicated}", "{replicated}", ""), XlaDefaults());
  EXPECT_EQ(p.Of("sc"), "{" + std::string(kColumns4) + ", " + kColumns2 + "}");
}

TEST(PropagationXlaUnreachedTest, VariadicScatterResultsFollowTheirOwnUpdates) {
  Propagated p = Propagate(VariadicScatter("{replicated}", "{replicated}", kColumns4, kColumns2, ""), XlaDefaults());
  EXPECT_EQ(p.Of("sc"), "{" + std::string(kColumns4) + ", " + kColumns2 + "}");
}

TEST(PropagationXlaUnreachedTest, VariadicScatterGivesEachUpdateItsOwnResultsSharding) {
  Propagated p = Propagate(
      VariadicScatter("", "", "", "", "{" + std::string(kColumns4) + ", " + kColumns2 + "}"), XlaDefaults());
  EXPECT_EQ(p.Of("u"), kColumns4);
  EXPECT_EQ(p.Of("v"), kColumns2);
  EXPECT_EQ(p.Of("x"), kColumns4);
  EXPECT_EQ(p.Of("y"), kColumns2);
}

// With iota indices the scattered dims are parallel: each result takes its own operand's or
// update's split of them, and an indices split that arrives later (from the first update) does
// not displace the second result's.
std::string ParallelVariadicScatter(const std::string& x, const std::string& y, const std::string& u,
                                    const std::string& v) {
  auto sharding = [](const std::string& s) { return s.empty() ? std::string() : ", sharding=" + s; };
  return std::string(kAddPairs) + "ENTRY %e {\n" +                            //
         "  %x = f32[4,8,3] parameter(0)" + sharding(x) + "\n" +               //
         "  %y = f32[4,8,3] parameter(1)" + sharding(y) + kIotaIndices + "\n" +  //
         "  %u = f32[4,8,3] parameter(2)" + sharding(u) + "\n" +               //
         "  %v = f32[4,8,3] parameter(3)" + sharding(v) + "\n" +               //
         "  %sc = (f32[4,8,3], f32[4,8,3]) scatter(%x, %y, %idx, %u, %v), update_window_dims={2}, "
         "inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=%add2\n"
         "  ROOT %r = (f32[4,8,3], f32[4,8,3]) copy(%sc)\n}\n";
}

TEST(PropagationXlaUnreachedTest, ParallelVariadicScatterResultsFollowTheirOwnOperands) {
  const std::string rows2 = "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}";
  Propagated p = Propagate(ParallelVariadicScatter("{devices=[4,1,1]<=[4]}", rows2, "", ""), XlaDefaults());
  EXPECT_EQ(p.Of("sc"), "{{devices=[4,1,1]<=[4]}, " + rows2 + "}");
}

TEST(PropagationXlaUnreachedTest, ParallelVariadicScatterResultsFollowTheirOwnUpdates) {
  const std::string rows2 = "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}";
  Propagated p = Propagate(ParallelVariadicScatter("", "", "{devices=[1,4,1]<=[4]}", rows2), XlaDefaults());
  EXPECT_EQ(p.Of("sc"), "{{devices=[1,4,1]<=[4]}, " + rows2 + "}");
  EXPECT_EQ(p.Of("idx"), "{devices=[1,1,4]<=[4]}");
}

// ---- loops whose propagation must end ----
//
// XLA's PartiallyManualTupleWithRepeatedOperandsBackWardPass and WhileDSManual: loops over
// manual and partially manual values (their counters never advance, so the programs never end
// when run; propagation and partitioning must). Each must finish in well under a second.

double SecondsToPropagateAndPartition(const std::string& hlo, Propagated* out) {
  const auto start = std::chrono::steady_clock::now();
  *out = Propagate(hlo);
  PartitionModule(*out->module);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(PropagationXlaUnreachedTest, LoopOverARepeatedOperandBesideAManualOneEnds) {
  Propagated p;
  const double seconds = SecondsToPropagateAndPartition(R"(HloModule m, num_partitions=4
%cond (s: (s32[], s32[], s32[])) -> pred[] {
  %s = (s32[], s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], s32[], s32[])) -> (s32[], s32[], s32[]) {
  %s = (s32[], s32[], s32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %a = s32[] get-tuple-element(%s), index=1
  %b = s32[] get-tuple-element(%s), index=2
  %m = s32[] multiply(%a, %b)
  ROOT %t = (s32[], s32[], s32[]) tuple(%i, %a, %m)
}
ENTRY %e {
  %one = s32[] constant(1)
  %q = s32[] parameter(0), sharding={manual}
  %init = (s32[], s32[], s32[]) tuple(%one, %one, %q)
  %w = (s32[], s32[], s32[]) while(%init), condition=%cond, body=%body
  ROOT %r = (s32[], s32[], s32[]) copy(%w)
})",
                                                        &p);
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(p.Of("init"), "{{manual}, {manual}, {manual}}");
  EXPECT_EQ(p.Of("m"), "{manual}");
}

TEST(PropagationXlaUnreachedTest, LoopSlicingAPartiallyManualValueEnds) {
  Propagated p;
  const std::string manual = "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}";
  const double seconds = SecondsToPropagateAndPartition(R"(HloModule m, num_partitions=8
%cond (s: (s32[], pred[3,6])) -> pred[] {
  %s = (s32[], pred[3,6]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], pred[3,6])) -> (s32[], pred[3,6]) {
  %s = (s32[], pred[3,6]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %zero = s32[] constant(0)
  %next = s32[] add(%i, %zero)
  %v = pred[3,6] get-tuple-element(%s), index=1
  %row = pred[1,6] dynamic-slice(%v, %i, %zero), dynamic_slice_sizes={1,6}, sharding=)" + manual + R"(
  ROOT %t = (s32[], pred[3,6]) tuple(%next, %v)
}
ENTRY %e {
  %x = pred[3,6] parameter(0), sharding=)" + manual + R"(
  %zero = s32[] constant(0)
  %init = (s32[], pred[3,6]) tuple(%zero, %x)
  ROOT %w = (s32[], pred[3,6]) while(%init), condition=%cond, body=%body
})",
                                                        &p);
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(p.Of("init"), "{{replicated}, " + manual + "}");
}

}  // namespace
}  // namespace gspmd
