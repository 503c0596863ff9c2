// User annotations through propagation: Sharding custom-calls (with unspecified_dims), Shardy's
// xla.sdy.* attributes and custom-calls, shard_as/shard_like groups, and malformed input.
#include <gtest/gtest.h>

#include "driver_test_util.h"
#include "propagation/annotations.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

using propagation_test::ExpectCompleteAndAnnotationsKept;
using propagation_test::ExpectPartitionsAndComputesTheSame;
using propagation_test::Propagate;
using propagation_test::Propagated;

TEST(PropagationAnnotationsTest, ShardingConstraintIsKeptAndGivesItsOperandTheLayout) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0)
  %n = f32[16,8]{1,0} negate(%x)
  %c = f32[16,8]{1,0} custom-call(%n), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]}
  ROOT %e = f32[16,8]{1,0} exponential(%c)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("c"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("n"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("x"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("e"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Origin("c"), "user annotation");
  EXPECT_EQ(p.Origin("n"), "from %c (user) via sharding constraint");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationAnnotationsTest, ConflictingConstraintsKeepBothAndThePartitionerReshards) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8]) -> (f32[16,8], f32[16,8]) {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %a = f32[16,8]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]}
  %b = f32[16,8]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={replicated}
  %na = f32[16,8]{1,0} negate(%a)
  %nb = f32[16,8]{1,0} negate(%b)
  ROOT %t = (f32[16,8]{1,0}, f32[16,8]{1,0}) tuple(%na, %nb)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("na"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("nb"), "{replicated}");
  EXPECT_EQ(p.Of("t"), "{{devices=[1,4]<=[4]}, {replicated}}");
  ExpectPartitionsAndComputesTheSame(p);
}

// As in XLA, a fully specified constraint is folded into its unannotated operand (the last
// constraint in program order when there are several), so the value is computed in that layout.
TEST(PropagationAnnotationsTest, ConstraintsFoldIntoTheirOperand) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8]) -> (f32[16,8], f32[16,8]) {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %n = f32[16,8]{1,0} negate(%x)
  %a = f32[16,8]{1,0} custom-call(%n), custom_call_target="Sharding", sharding={replicated}
  %b = f32[16,8]{1,0} custom-call(%n), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]}
  ROOT %t = (f32[16,8]{1,0}, f32[16,8]{1,0}) tuple(%a, %b)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("n"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Origin("n"), "from %b (user) via sharding constraint");
  ExpectPartitionsAndComputesTheSame(p);
}

TEST(PropagationAnnotationsTest, UnspecifiedDimsAreRefinedAndTheOthersKept) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,32], w: f32[32,64]) -> f32[16,64] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %w = f32[32,64]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = f32[16,64]{1,0} custom-call(%d), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, backend_config="unspecified_dims=[1]"
  ROOT %e = f32[16,64]{1,0} exponential(%c)
}
)");
  EXPECT_EQ(p.Of("d"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(p.Of("c"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(p.Of("e"), "{devices=[2,4]<=[8]}");
  EXPECT_NE(p.Origin("c").find("user annotation, open dims from"), std::string::npos) << p.Origin("c");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationAnnotationsTest, UnspecifiedDimsNeverChangeTheWrittenDims) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,32]) -> f32[16,32] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[16,32]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, backend_config="unspecified_dims=[0]"
  ROOT %e = f32[16,32]{1,0} exponential(%c)
}
)");
  // Dim 1 of the proposal conflicts with the written (unsplit) dim 1: nothing changes.
  EXPECT_EQ(p.Of("c"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
}

TEST(PropagationAnnotationsTest, ShardyAttributesAndResultSharding) {
  Propagated p = Propagate(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["data"=2, "model"=4]>}}
ENTRY %main (x: f32[16,32], w: f32[32,64]) -> f32[16,64] {
  %x = f32[16,32]{1,0} parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"data\"}, {}]>"}
  %w = f32[32,64]{1,0} parameter(1), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{}, {\"model\"}]>"}
  %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = f32[16,64]{1,0} custom-call(%d), custom_call_target="Sharding", frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"data\", ?}, {?}]>]>"}
  %e = f32[16,64]{1,0} exponential(%c)
  ROOT %r = f32[16,64]{1,0} custom-call(%e), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"data\"}, {}]>]>"}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.module->num_partitions(), 8);
  EXPECT_EQ(p.Of("x"), "{mesh['data'=2,'model'=4], [{'data'}, {}]}");
  EXPECT_EQ(p.Of("d"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(p.Of("c"), "{devices=[2,4]<=[8]}");  // open dims refined
  EXPECT_EQ(p.Of("r"), "{mesh['data'=2,'model'=4], [{'data'}, {}]}");
  EXPECT_EQ(p.Origin("r"), "user annotation");
  ExpectPartitionsAndComputesTheSame(p);
}

TEST(PropagationAnnotationsTest, ShardAsGroupsEndWithOneSharding) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8], y: f32[16,8]) -> (f32[16,8], f32[16,8]) {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = f32[16,8]{1,0} parameter(1)
  %a = f32[16,8]{1,0} exponential(%x), sharding={unknown shard_as 0}
  %b = f32[16,8]{1,0} negate(%y), sharding={unknown shard_as 0}
  ROOT %t = (f32[16,8]{1,0}, f32[16,8]{1,0}) tuple(%a, %b)
}
)");
  EXPECT_EQ(p.Of("a"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("b"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("y"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationAnnotationsTest, SdyShardingGroupTiesItsOperands) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8], y: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %y = f32[16,8]{1,0} parameter(1)
  %e = f32[16,8]{1,0} exponential(%y)
  %g1 = () custom-call(%x), custom_call_target="xla.sdy.ShardingGroup", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding_group_id="7"}
  %g2 = () custom-call(%e), custom_call_target="xla.sdy.ShardingGroup", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding_group_id="7"}
  ROOT %s = f32[16,8]{1,0} subtract(%e, %x)
}
)");
  EXPECT_EQ(p.Of("e"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("y"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.Of("g1"), "{}");
}

TEST(PropagationAnnotationsTest, ExplicitResultShardingIsKept) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[16,8]{1,0} negate(%x), sharding={replicated}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("n"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(p);
}

TEST(PropagationAnnotationsTest, ReadsUnspecifiedDimsAndOpenShardyDims) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m
ENTRY %main (x: f32[4,4,4]) -> f32[4,4,4] {
  %x = f32[4,4,4]{2,1,0} parameter(0)
  ROOT %c = f32[4,4,4]{2,1,0} custom-call(%x), custom_call_target="Sharding", sharding={replicated}, backend_config="unspecified_dims=[0,2]"
}
)");
  EXPECT_EQ(propagation::UnspecifiedDims(*module->entry()->root()), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(propagation::UnspecifiedDims(*module->entry()->parameter(0)).empty());
  auto open = propagation::SdyOpenDims("#sdy.sharding<@mesh, [{\"a\", ?}, {}, {?}]>");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0], (std::vector<int64_t>{0, 2}));
  auto per_value = propagation::SdyOpenDims(
      "#sdy.sharding_per_value<[<@mesh, [{}, {?}]>, <mesh<[\"b\"=2]>, [{?}], replicated={\"b\"}>]>");
  ASSERT_EQ(per_value.size(), 2u);
  EXPECT_EQ(per_value[0], (std::vector<int64_t>{1}));
  EXPECT_EQ(per_value[1], (std::vector<int64_t>{0}));
}

TEST(PropagationAnnotationsTest, MalformedAnnotationsAreUserErrors) {
  EXPECT_THROW(Propagate(R"(HloModule m
ENTRY %main (x: f32[4,4]) -> f32[4,4] {
  %x = f32[4,4]{1,0} parameter(0)
  ROOT %c = f32[4,4]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={replicated}, backend_config="unspecified_dims=[5]"
}
)"),
               UserError);
  EXPECT_THROW(Propagate(R"(HloModule m
ENTRY %main (x: f32[4,4]) -> f32[4,4] {
  %x = f32[4,4]{1,0} parameter(0), frontend_attributes={xla.sdy.sharding="#sdy.sharding<@nomesh, [{}, {}]>"}
  ROOT %n = f32[4,4]{1,0} negate(%x)
}
)"),
               UserError);
  EXPECT_THROW(Propagate(R"(HloModule m
ENTRY %main (x: f32[4,4], y: f32[4]) -> (f32[4,4], f32[4]) {
  %x = f32[4,4]{1,0} parameter(0)
  %y = f32[4]{0} parameter(1)
  ROOT %t = (f32[4,4]{1,0}, f32[4]{0}) tuple(%x, %y), sharding={{replicated}, {replicated}, {replicated}}
}
)"),
               UserError);
}

}  // namespace
}  // namespace gspmd
