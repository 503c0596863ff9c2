// The propagation driver on small programs: forward and backward through each kind of op,
// merges of partial shardings, conflicts, priority levels and the device count.
#include <gtest/gtest.h>

#include "driver_test_util.h"

namespace gspmd {
namespace {

using propagation_test::ExpectCompleteAndAnnotationsKept;
using propagation_test::ExpectPartitionsAndComputesTheSame;
using propagation_test::Propagate;
using propagation_test::Propagated;

TEST(PropagationDriverTest, ElementwiseForwardFromAParameter) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8], y: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %y = f32[16,8]{1,0} parameter(1)
  %e = f32[16,8]{1,0} exponential(%x)
  ROOT %a = f32[16,8]{1,0} add(%e, %y)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.module->num_partitions(), 8);
  EXPECT_EQ(p.Of("e"), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(p.Of("a"), "{devices=[8,1]<=[8]}");
  // The unannotated parameter takes the layout its user wants.
  EXPECT_EQ(p.Of("y"), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(p.Origin("x"), "user annotation");
  EXPECT_EQ(p.Origin("e"), "from %x (user) via elementwise forward");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationDriverTest, BackwardFromTheResultAnnotation) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8]) -> f32[8,16] {
  %x = f32[16,8]{1,0} parameter(0)
  %n = f32[16,8]{1,0} negate(%x)
  ROOT %t = f32[8,16]{1,0} transpose(%n), dimensions={1,0}, sharding={devices=[1,4]<=[4]}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.module->num_partitions(), 4);
  EXPECT_EQ(p.Of("n"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("x"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Origin("x"), "from %t (user) via elementwise backward");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationDriverTest, DotMergesADataSplitWithAModelSplit) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[8,32], w: f32[32,64]) -> f32[8,64] {
  %x = f32[8,32]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %w = f32[32,64]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %d = f32[8,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %r = f32[8,64]{1,0} tanh(%d)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("d"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(p.Of("r"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationDriverTest, DotBackwardGivesOperandsTheResultsDims) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,32], w: f32[32,8]) -> f32[16,8] {
  %x = f32[16,32]{1,0} parameter(0)
  %w = f32[32,8]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,8]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("x"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationDriverTest, ReduceDropsDimsForwardAndBroadcastInsertsThem) {
  Propagated p = Propagate(R"(HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  %zero = f32[] constant(0)
  %r = f32[16]{0} reduce(%x, %zero), dimensions={1}, to_apply=%sum
  %bc = f32[16,8]{1,0} broadcast(%r), dimensions={0}
  ROOT %q = f32[16,8]{1,0} divide(%x, %bc)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("r"), "{devices=[4,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(p.Of("bc"), "{devices=[4,2]<=[8]}");
  EXPECT_EQ(p.Of("q"), "{devices=[4,2]<=[8]}");
  EXPECT_EQ(p.Of("zero"), "");  // the init value: nothing reaches it (XLA leaves it unsharded too)
  // Reducers get a sharding too.
  EXPECT_EQ(p.Of("s"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(p);
}

TEST(PropagationDriverTest, ReshapeSplitsAShardedDimBothWays) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,12], y: f32[4,4,12]) -> f32[4,4,12] {
  %x = f32[16,12]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %r = f32[4,4,12]{2,1,0} reshape(%x)
  %y = f32[4,4,12]{2,1,0} parameter(1)
  %back = f32[16,12]{1,0} reshape(%y)
  %n = f32[16,12]{1,0} negate(%back)
  ROOT %o = f32[4,4,12]{2,1,0} add(%r, %y)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("r"), "{devices=[4,1,1]<=[4]}");
  EXPECT_EQ(p.Of("y"), "{devices=[4,1,1]<=[4]}");
  EXPECT_EQ(p.Of("back"), "{devices=[4,1]<=[4]}");
}

// A sharding set by a strong (early) rule is not replaced by a conflicting, more specific one
// that a weak (late) rule proposes.
TEST(PropagationDriverTest, EarlyElementwiseChoiceSurvivesALaterBroadcastProposal) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,16], z: f32[16,16]) -> (f32[16,16], f32[16,16,4]) {
  %x = f32[16,16]{1,0} parameter(0)
  %z = f32[16,16]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %a = f32[16,16]{1,0} add(%x, %z)
  %b = f32[16,16,4]{2,1,0} broadcast(%x), dimensions={0,1}
  %c = f32[16,16,4]{2,1,0} custom-call(%b), custom_call_target="Sharding", sharding={devices=[1,8,1]<=[8]}
  ROOT %t = (f32[16,16]{1,0}, f32[16,16,4]{2,1,0}) tuple(%a, %c)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("x"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(p.Of("b"), "{devices=[1,8,1]<=[8]}");
  ExpectPartitionsAndComputesTheSame(p);
}

// Broadcast forward runs last: the broadcast takes its user's layout, not its operand's.
TEST(PropagationDriverTest, BroadcastTakesItsUsersLayoutBeforeItsOperands) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (v: f32[16], y: f32[16,8]) -> f32[16,8] {
  %v = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  %y = f32[16,8]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}
  %b = f32[16,8]{1,0} broadcast(%v), dimensions={0}
  ROOT %m = f32[16,8]{1,0} multiply(%b, %y)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("b"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(p.Of("m"), "{devices=[1,8]<=[8]}");
  ExpectPartitionsAndComputesTheSame(p);
}

// As in XLA, a value no annotation reaches keeps no sharding; the partitioner replicates it.
TEST(PropagationDriverTest, UnreachedValuesKeepNoShardingAndArePartitionedReplicated) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %c = f32[8]{0} constant({1, 2, 3, 4, 5, 6, 7, 8})
  ROOT %a = f32[8]{0} add(%x, %c)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.module->num_partitions(), 4);
  EXPECT_EQ(p.Of("a"), "");
  EXPECT_EQ(p.Of("x"), "");
  EXPECT_EQ(p.Origin("a"), propagation_test::kUnreached);
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

// A two-device module whose parameter is annotated and whose root is not.
constexpr const char* kNegateOnTwoDevices = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}
  ROOT %n = f32[8]{0} negate(%x)
}
)";

TEST(PropagationDriverTest, DeviceCountFromOptionsModuleOrShardings) {
  const char* text = kNegateOnTwoDevices;
  EXPECT_EQ(Propagate(text).result.num_partitions, 2);
  PropagationOptions options;
  options.num_partitions = 4;
  Propagated p = Propagate(text, options);
  EXPECT_EQ(p.result.num_partitions, 4);
  EXPECT_EQ(p.module->num_partitions(), 4);
  Propagated from_sharding = Propagate(R"(HloModule m
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[2,3]0,1,2,3,4,5 last_tile_dim_replicate}
  ROOT %n = f32[8]{0} negate(%x)
}
)");
  EXPECT_EQ(from_sharding.result.num_partitions, 6);
  Propagated from_mesh = Propagate(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=2, "b"=2]>}}
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%x)
}
)");
  EXPECT_EQ(from_mesh.result.num_partitions, 4);
}

// Origins cost a string-keyed entry per instruction: only --explain asks for them.
TEST(PropagationDriverTest, OriginsAreRecordedOnlyWhenAsked) {
  const char* text = kNegateOnTwoDevices;
  std::unique_ptr<Module> module = ParseModule(text, "test.hlo");
  PropagationResult quiet = PropagateShardings(*module);
  EXPECT_TRUE(quiet.origins.empty());
  EXPECT_EQ(module->entry()->root()->sharding()->ToString(), "{devices=[2]<=[2]}");

  module = ParseModule(text, "test.hlo");
  PropagationOptions options;
  options.record_origins = true;
  PropagationResult explained = PropagateShardings(*module, options);
  ASSERT_EQ(explained.origins.count("main/n"), 1u);
  EXPECT_EQ(DescribeOrigin(explained.origins.at("main/n")), "from %x (user) via elementwise forward");
}

TEST(PropagationDriverTest, ExplainPrintsOriginsAndStillParses) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,32], w1: f32[32,8]) -> f32[16,8] {
  %x = f32[16,32]{1,0} parameter(0)
  %w1 = f32[32,8]{1,0} parameter(1), sharding={devices=[1,4]<=[4]}
  ROOT %d = f32[16,8]{1,0} dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  std::string text = PrintModuleWithOrigins(*p.module, p.result);
  EXPECT_NE(text.find("%w1 = f32[32,8]{1,0} parameter(1), sharding={devices=[1,4]<=[4]} /* user annotation */"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("/* from %w1 (user) via dot forward */"), std::string::npos) << text;
  std::unique_ptr<Module> reparsed = ParseModule(text, "explained.hlo");
  EXPECT_EQ(reparsed->entry()->root()->sharding()->ToString(), p.Of("d"));
}

// A value computed from replicated values only, which some user needs whole (here a
// replicated result, directly or through another such value), stays whole: its sharded user
// slices it for free, where sharded it had to be gathered back (oracle seed 20019: 12 B where
// XLA sends nothing).
TEST(PropagationDriverTest, ValuesMadeFromReplicatedOnesStayWholeWhereAUserNeedsThemWhole) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8,2]) -> (f32[8,2], f32[8,2]) {
  %x = f32[8,2]{1,0} parameter(0), sharding={replicated}
  %a = f32[8,2]{1,0} add(%x, %x)
  %c = f32[8,2]{1,0} multiply(%a, %a)
  %b = f32[8,2]{1,0} abs(%a)
  %l = f32[8,2]{1,0} log-plus-one(%b)
  ROOT %t = (f32[8,2]{1,0}, f32[8,2]{1,0}) tuple(%c, %l), sharding={{replicated}, {devices=[2,1,2]<=[4] last_tile_dim_replicate}}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("a"), "{replicated}");
  EXPECT_EQ(p.Of("c"), "{replicated}");
  EXPECT_EQ(p.Origin("a"), "replicated: computed whole from replicated values, which a user needs whole");
  // Nothing needs %b whole: it keeps its users' split.
  EXPECT_EQ(p.Of("b"), "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
  // The same where a Shardy result keeps it whole, written as a split over no axis (seed
  // 20019's Shardy export).
  Propagated named = Propagate(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8,2]) -> (f32[8,2], f32[8,2]) {
  %x = f32[8,2]{1,0} parameter(0), sharding={mesh['x'=2,'y'=2], [{}, {}]}
  %a = f32[8,2]{1,0} add(%x, %x)
  %w = f32[8,2]{1,0} custom-call(%a), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, sharding={mesh['x'=2,'y'=2], [{}, {}]}
  %b = f32[8,2]{1,0} abs(%a)
  %l = f32[8,2]{1,0} log-plus-one(%b)
  ROOT %t = (f32[8,2]{1,0}, f32[8,2]{1,0}) tuple(%w, %l), sharding={{mesh['x'=2,'y'=2], [{}, {}]}, {mesh['x'=2,'y'=2], [{}, {'y'}]}}
}
)");
  EXPECT_EQ(named.Origin("a"), "replicated: computed whole from replicated values, which a user needs whole");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(named), 0);
}

// The same for values that move or reduce data within one value: a reshape of a replicated
// parameter that a replicated result returns, and that a reduce with a split result reads
// (oracle seed 20094: the reshape was split like the reduce and gathered back for the result,
// 1,920 B), and a reduce of it that is returned whole and also added to a split value.
TEST(PropagationDriverTest, ReshapesAndReducesOfReplicatedValuesStayWholeWhereAUserNeedsThemWhole) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
%min (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] minimum(%a, %b)
}
ENTRY %main (x: f32[5,16,2]) -> (f32[5,4,4,2], f32[4,4,2], f32[4,4,2], f32[4,4,2]) {
  %x = f32[5,16,2]{2,1,0} parameter(0), sharding={replicated}
  %r = f32[5,4,4,2]{3,2,1,0} reshape(%x)
  %inf = f32[] constant(inf)
  %m = f32[4,4,2]{2,1,0} reduce(%r, %inf), dimensions={0}, to_apply=%min
  %q = f32[4,4,2]{2,1,0} reduce(%r, %inf), dimensions={0}, to_apply=%min
  %p = f32[4,4,2]{2,1,0} add(%q, %m)
  ROOT %t = (f32[5,4,4,2]{3,2,1,0}, f32[4,4,2]{2,1,0}, f32[4,4,2]{2,1,0}, f32[4,4,2]{2,1,0}) tuple(%r, %m, %q, %p), sharding={{replicated}, {devices=[1,1,2,4]<=[8] last_tile_dim_replicate}, {replicated}, {devices=[1,1,2,4]<=[8] last_tile_dim_replicate}}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  for (const char* value : {"r", "q"}) {
    EXPECT_EQ(p.Of(value), "{replicated}") << value;
    EXPECT_EQ(p.Origin(value), "replicated: computed whole from replicated values, which a user needs whole") << value;
  }
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

// A value a replicated result returns, made from a split operand smaller than itself, is
// computed whole from the gathered operand rather than split and gathered itself (oracle seed
// 20098: a concatenate with a split parameter, 132 B where XLA gathers the parameter, 36 B).
// Where the gathers would move more than the value (a reduce of a gathered value), it stays
// split.
TEST(PropagationDriverTest, ValuesNeededWholeGatherTheirOperandsWhereThatMovesLess) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[3,4], y: f32[3,3], z: f32[64,4]) -> (f32[3,7], f32[64]) {
  %x = f32[3,4]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %y = f32[3,3]{1,0} parameter(1), sharding={replicated}
  %c = f32[3,7]{1,0} concatenate(%y, %x), dimensions={1}
  %z = f32[64,4]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  %n = f32[64,4]{1,0} negate(%z)
  %zero = f32[] constant(0)
  %r = f32[64]{0} reduce(%n, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[3,7]{1,0}, f32[64]{0}) tuple(%c, %r), sharding={{replicated}, {replicated}}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("c"), "{replicated}");
  EXPECT_EQ(p.Origin("c"),
            "replicated: computed whole from gathered operands, which move less than gathering it for a user that "
            "needs it whole");
  EXPECT_EQ(p.Of("n"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("r"), "{devices=[4]<=[4]}");
  // The concatenate's gather moves x (48 B, 36 B to each device); the reduce's result is
  // gathered (256 B, 192 B to each device).
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 36 + 192);
}

// A compare wanted whole runs split and gathers its pred result, so its split f32 operand is
// not computed whole from a gathered input (oracle seed 140482: 28 B where XLA gathers the
// pred, 7 B).
TEST(PropagationDriverTest, ACompareWantedWholeGathersItsResultNotItsOperands) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
ENTRY %main (x: f32[8]) -> pred[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
  %c = f32[8]{0} cosine(%x)
  %ge = pred[8]{0} compare(%c, %c), direction=GE
  ROOT %r = pred[8]{0} custom-call(%ge), custom_call_target="Sharding", sharding={replicated}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("c"), "{devices=[8]<=[8]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 7);
}

}  // namespace
// A reduce-window whose windows cross the pieces of its split result dim (a cumsum) reads a
// reshape of a replicated input whole: each device computes the scan whole and slices its piece,
// where splitting the reshape moves the scan's carries (oracle seed 112453: 28 B, XLA 0). A
// window of one element crosses nothing, so that reshape stays split.
TEST(PropagationDriverTest, ScansOfReplicatedValuesReadThemWhole) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %main (x: f32[5,8,2], y: f32[5,8,2]) -> (f32[80], f32[80]) {
  %x = f32[5,8,2]{2,1,0} parameter(0), sharding={replicated}
  %r = f32[80]{0} reshape(%x)
  %ninf = f32[] constant(-inf)
  %scan = f32[80]{0} reduce-window(%r, %ninf), window={size=80 pad=79_0}, to_apply=%max
  %y = f32[5,8,2]{2,1,0} parameter(1), sharding={replicated}
  %s = f32[80]{0} reshape(%y)
  %one = f32[80]{0} reduce-window(%s, %ninf), window={size=1}, to_apply=%max
  ROOT %t = (f32[80]{0}, f32[80]{0}) tuple(%scan, %one), sharding={{devices=[8]<=[8]}, {devices=[8]<=[8]}}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("r"), "{replicated}");
  EXPECT_EQ(p.Origin("r"), "replicated: computed whole from replicated values, which a user needs whole");
  EXPECT_EQ(p.Of("s"), "{devices=[8]<=[8]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

}  // namespace gspmd
