// Propagation through control flow: tuples, while loops, conditionals, calls and manual
// (shard_map) regions in both the GSPMD and the Shardy export forms.
#include <gtest/gtest.h>

#include "driver_test_util.h"
#include "propagation/control_flow.h"

namespace gspmd {
namespace {

using propagation_test::ExpectCompleteAndAnnotationsKept;
using propagation_test::ExpectPartitionsAndComputesTheSame;
using propagation_test::Propagate;
using propagation_test::Propagated;

constexpr const char* kLoop = R"(HloModule m

%cond (p: (s32[], f32[16,8])) -> pred[] {
  %p = (s32[], f32[16,8]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[16,8])) -> (s32[], f32[16,8]) {
  %q = (s32[], f32[16,8]{1,0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %v = f32[16,8]{1,0} get-tuple-element(%q), index=1
  %v1 = f32[16,8]{1,0} tanh(%v)
  ROOT %t = (s32[], f32[16,8]{1,0}) tuple(%j1, %v1)
}

ENTRY %main (x: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[16,8]{1,0}) tuple(%zero, %x)
  %w = (s32[], f32[16,8]{1,0}) while(%init), condition=%cond, body=%body
  ROOT %r = f32[16,8]{1,0} get-tuple-element(%w), index=1, sharding={devices=[2,4]<=[8]}
}
)";

TEST(PropagationControlFlowTest, WhileLoopValueBodyAndConditionShareOneSharding) {
  Propagated p = Propagate(kLoop);
  ExpectCompleteAndAnnotationsKept(p);
  const std::string loop = "{{replicated}, {devices=[2,4]<=[8]}}";
  EXPECT_EQ(p.Of("w"), loop);
  EXPECT_EQ(p.Of("init"), loop);
  EXPECT_EQ(p.Of("p"), loop);
  EXPECT_EQ(p.Of("q"), loop);
  EXPECT_EQ(p.Of("t"), loop);
  EXPECT_EQ(p.Of("v1"), "{devices=[2,4]<=[8]}");
  // The annotation on the loop's result reaches the loop's input.
  EXPECT_EQ(p.Of("x"), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(p.Origin("x"), "from %r (user) via tuple");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

// Oracle seed 140103: the loop's input is annotated one way and a constraint on its result
// asks for another. XLA lays the carry out from the input (its forward pass meets the loop
// first) and reshards once after the loop; carried the constraint's way, every iteration's
// dot would gather the carry.
constexpr const char* kLoopInputAndResultDisagree = R"(HloModule m

%cond (p: (s32[], f32[6,2], f32[2,2])) -> pred[] {
  %p = (s32[], f32[6,2]{1,0}, f32[2,2]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[6,2], f32[2,2])) -> (s32[], f32[6,2], f32[2,2]) {
  %q = (s32[], f32[6,2]{1,0}, f32[2,2]{1,0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %v = f32[6,2]{1,0} get-tuple-element(%q), index=1
  %k = f32[2,2]{1,0} get-tuple-element(%q), index=2
  %d = f32[6,2]{1,0} dot(%v, %k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %v1 = f32[6,2]{1,0} tanh(%d)
  ROOT %t = (s32[], f32[6,2]{1,0}, f32[2,2]{1,0}) tuple(%j1, %v1, %k)
}

ENTRY %main (x: f32[6,2], k: f32[2,2]) -> (f32[6,2], f32[6,2]) {
  %x = f32[6,2]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %k0 = f32[2,2]{1,0} parameter(1), sharding={replicated}
  %zero = s32[] constant(0)
  %init = (s32[], f32[6,2]{1,0}, f32[2,2]{1,0}) tuple(%zero, %x, %k0)
  %w = (s32[], f32[6,2]{1,0}, f32[2,2]{1,0}) while(%init), condition=%cond, body=%body
  %r = f32[6,2]{1,0} get-tuple-element(%w), index=1
  %a = f32[6,2]{1,0} abs(%r)
  %c = f32[6,2]{1,0} custom-call(%r), custom_call_target="Sharding", sharding={devices=[1,2]<=[2]}
  ROOT %out = (f32[6,2]{1,0}, f32[6,2]{1,0}) tuple(%a, %c)
}
)";

TEST(PropagationControlFlowTest, LoopCarryFollowsItsInputOverAConstraintOnItsResult) {
  Propagated p = Propagate(kLoopInputAndResultDisagree);
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("w"), "{{replicated}, {devices=[2,1]<=[2]}, {replicated}}");
  EXPECT_EQ(p.Of("v1"), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(p.Of("c"), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 12);  // one all-to-all after the loop
}

// Oracle seed 140148: one value returned twice, each result annotated its own way. The value
// takes the first result's layout, as XLA's, and one all-to-all makes the second.
TEST(PropagationControlFlowTest, AValueReturnedTwiceTakesTheFirstResultsLayout) {
  Propagated p = Propagate(R"(HloModule m

ENTRY %main (x: f32[16,16,8]) -> (f32[16,8,16], f32[16,8,16]) {
  %x = f32[16,16,8]{2,1,0} parameter(0), sharding={devices=[1,2,1]<=[2]}
  %t = f32[16,8,16]{2,1,0} transpose(%x), dimensions={1,2,0}
  ROOT %out = (f32[16,8,16]{2,1,0}, f32[16,8,16]{2,1,0}) tuple(%t, %t), sharding={{devices=[2,1,1]<=[2]}, {devices=[1,1,2]<=[2]}}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("t"), "{devices=[2,1,1]<=[2]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 2048);  // XLA: one all-to-all, 2 KiB sent
}

TEST(PropagationControlFlowTest, ConditionalBranchesFollowOperandsAndResult) {
  Propagated p = Propagate(R"(HloModule m

%on_true (a: f32[16,8]) -> f32[16,8] {
  %a = f32[16,8]{1,0} parameter(0)
  ROOT %ea = f32[16,8]{1,0} exponential(%a)
}

%on_false (b: f32[16,8]) -> f32[16,8] {
  %b = f32[16,8]{1,0} parameter(0)
  ROOT %nb = f32[16,8]{1,0} negate(%b)
}

ENTRY %main (c: pred[], x: f32[16,8], y: f32[16,8]) -> f32[16,8] {
  %c = pred[] parameter(0)
  %x = f32[16,8]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %y = f32[16,8]{1,0} parameter(2)
  ROOT %r = f32[16,8]{1,0} conditional(%c, %x, %y), true_computation=%on_true, false_computation=%on_false
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("a"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("ea"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("r"), "{devices=[4,1]<=[4]}");
  // The other branch's root agrees with the result, and its parameter with its root.
  EXPECT_EQ(p.Of("nb"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("b"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("y"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("c"), "");  // nothing reaches the predicate (XLA leaves it unsharded too)
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationControlFlowTest, CallsPropagateAsIfInlined) {
  Propagated p = Propagate(R"(HloModule m

%helper (a: f32[16,8], b: f32[16,8]) -> f32[16,8] {
  %a = f32[16,8]{1,0} parameter(0)
  %b = f32[16,8]{1,0} parameter(1)
  ROOT %m = f32[16,8]{1,0} multiply(%a, %b)
}

ENTRY %main (x: f32[16,8], y: f32[16,8]) -> f32[16,8] {
  %x = f32[16,8]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %y = f32[16,8]{1,0} parameter(1)
  %k = f32[16,8]{1,0} call(%x, %y), to_apply=%helper
  ROOT %o = f32[16,8]{1,0} negate(%k)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("a"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(p.Of("m"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(p.Of("b"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(p.Of("y"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(p.Of("o"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationControlFlowTest, NestedTuplesMapLeaves) {
  Propagated p = Propagate(R"(HloModule m
ENTRY %main (x: f32[8], y: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}
  %y = f32[8]{0} parameter(1)
  %inner = (f32[8]{0}, f32[8]{0}) tuple(%x, %y)
  %outer = ((f32[8]{0}, f32[8]{0}), f32[8]{0}) tuple(%inner, %x)
  %g = (f32[8]{0}, f32[8]{0}) get-tuple-element(%outer), index=0
  %g0 = f32[8]{0} get-tuple-element(%g), index=0
  %g1 = f32[8]{0} get-tuple-element(%g), index=1
  ROOT %s = f32[8]{0} add(%g0, %g1)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("outer"), "{{{devices=[2]<=[2]}, {devices=[2]<=[2]}}, {devices=[2]<=[2]}}");
  EXPECT_EQ(p.Of("y"), "{devices=[2]<=[2]}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

TEST(PropagationControlFlowTest, FlowOrderPutsCalleesBeforeTheirCallers) {
  std::unique_ptr<Module> module = ParseModule(kLoop);
  std::vector<Instruction*> order = propagation::FlowOrder(*module);
  auto position = [&](const std::string& name) {
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i]->name() == name) return static_cast<int64_t>(i);
    return int64_t{-1};
  };
  EXPECT_LT(position("init"), position("q"));
  EXPECT_LT(position("t"), position("w"));
  EXPECT_LT(position("lt"), position("w"));
  EXPECT_EQ(static_cast<int64_t>(order.size()), 4 + 7 + 5);  // condition, body, entry
}

// A scan over stacked weights (what jax.lax.scan lowers to): the loop state takes the layout the
// body computes, and the weight stack keeps its annotation through the loop.
TEST(PropagationControlFlowTest, ScanOverStackedWeights) {
  Propagated p = Propagate(R"(HloModule m

%cond (p: (s32[], f32[8,16], f32[4,16,16])) -> pred[] {
  %p = (s32[], f32[8,16]{1,0}, f32[4,16,16]{2,1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (q: (s32[], f32[8,16], f32[4,16,16])) -> (s32[], f32[8,16], f32[4,16,16]) {
  %q = (s32[], f32[8,16]{1,0}, f32[4,16,16]{2,1,0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %h = f32[8,16]{1,0} get-tuple-element(%q), index=1
  %ws = f32[4,16,16]{2,1,0} get-tuple-element(%q), index=2
  %zero = s32[] constant(0)
  %wd = f32[1,16,16]{2,1,0} dynamic-slice(%ws, %j, %zero, %zero), dynamic_slice_sizes={1,16,16}
  %w = f32[16,16]{1,0} reshape(%wd)
  %d = f32[8,16]{1,0} dot(%h, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[8,16]{1,0} tanh(%d)
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  ROOT %r = (s32[], f32[8,16]{1,0}, f32[4,16,16]{2,1,0}) tuple(%j1, %t, %ws)
}

ENTRY %main (x: f32[8,16], ws: f32[4,16,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %ws = f32[4,16,16]{2,1,0} parameter(1), sharding={devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %c0 = s32[] constant(0)
  %init = (s32[], f32[8,16]{1,0}, f32[4,16,16]{2,1,0}) tuple(%c0, %x, %ws)
  %loop = (s32[], f32[8,16]{1,0}, f32[4,16,16]{2,1,0}) while(%init), condition=%cond, body=%body
  ROOT %out = f32[8,16]{1,0} get-tuple-element(%loop), index=1, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("loop"), "{{replicated}, {devices=[2,4]<=[8]}, {devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}}");
  EXPECT_EQ(p.Of("r"), p.Of("loop"));
  EXPECT_EQ(p.Of("w"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  ExpectPartitionsAndComputesTheSame(p);
}

constexpr const char* kSum = R"(
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

TEST(PropagationControlFlowTest, ShardMapBodiesStayManual) {
  Propagated p = Propagate(std::string("HloModule m") + kSum + R"(
%shmap_body (l: f32[2,32]) -> f32[1,32] {
  %l = f32[2,32]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %r = f32[32]{0} reduce(%l, %zero), dimensions={0}, to_apply=%sum
  %rs = f32[1,32]{1,0} reshape(%r)
  ROOT %ar = f32[1,32]{1,0} all-reduce(%rs), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%sum
}

ENTRY %main (x: f32[16,32]) -> f32[1,32] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %sx = f32[16,32]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[8,1]<=[8]}
  %lx = f32[2,32]{1,0} custom-call(%sx), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %c = f32[1,32]{1,0} call(%lx), to_apply=%shmap_body
  %sc = f32[1,32]{1,0} custom-call(%c), custom_call_target="Sharding", sharding={manual}
  %full = f32[1,32]{1,0} custom-call(%sc), custom_call_target="SPMDShardToFullShape", sharding={replicated}
  ROOT %o = f32[1,32]{1,0} negate(%full)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  for (const char* name : {"l", "zero", "r", "rs", "ar", "c"}) EXPECT_EQ(p.Of(name), "{manual}") << name;
  EXPECT_EQ(p.Of("o"), "{replicated}");
  PartitionResult partitioned = PartitionModule(*p.module);
  EXPECT_TRUE(partitioned.warnings.empty());
}

TEST(PropagationControlFlowTest, PartiallyManualBodiesKeepTheirManualAxes) {
  Propagated p = Propagate(std::string("HloModule m, num_partitions=8") + kSum + R"(
%body (l: f32[8,32], w: f32[32,16]) -> f32[8,16] {
  %l = f32[8,32]{1,0} parameter(0)
  %w = f32[32,16]{1,0} parameter(1)
  %d = f32[8,16]{1,0} dot(%l, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[8,16]{1,0} tanh(%d)
  %k = f32[] constant(2)
  %kb = f32[8,16]{1,0} broadcast(%k), dimensions={}
  %m = f32[8,16]{1,0} multiply(%t, %kb)
  ROOT %ar = f32[8,16]{1,0} all-reduce(%m), channel_id=1, replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global_device_ids=true, to_apply=%sum
}

ENTRY %main (x: f32[16,32], w: f32[32,16]) -> f32[16,16] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %wp = f32[32,16]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %sx = f32[16,32]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %lx = f32[8,32]{1,0} custom-call(%sx), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}
  %sw = f32[32,16]{1,0} custom-call(%wp), custom_call_target="Sharding", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %lw = f32[32,16]{1,0} custom-call(%sw), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
  %c = f32[8,16]{1,0} call(%lx, %lw), to_apply=%body
  %sc = f32[8,16]{1,0} custom-call(%c), custom_call_target="Sharding", sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}
  ROOT %o = f32[16,16]{1,0} custom-call(%sc), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  // Every value in the body is manual over the first mesh axis.
  for (const char* name : {"l", "w", "d", "t", "kb", "m", "ar"}) {
    const Instruction* instruction = p.Find(name);
    ASSERT_NE(instruction, nullptr);
    const Sharding& sharding = *instruction->sharding();
    ASSERT_TRUE(sharding.IsTiled()) << name << " " << sharding.ToString();
    bool manual = false;
    for (Sharding::SubgroupType type : sharding.subgroup_types()) manual |= type == Sharding::SubgroupType::kManual;
    EXPECT_TRUE(manual) << name << " " << sharding.ToString();
  }
  // The free axis keeps splitting the weight inside the body.
  EXPECT_EQ(p.Of("w"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}");
  PartitionResult partitioned = PartitionModule(*p.module);
  EXPECT_TRUE(partitioned.warnings.empty());
}

TEST(PropagationControlFlowTest, ShardyManualComputationsStayManual) {
  Propagated p = Propagate(std::string(R"(HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=8]>}})") + kSum + R"(
%xla.sdy.manual_computation_body.3 (l: f32[2,32], k: f32[4]) -> (f32[1,32], f32[4]) {
  %l = f32[2,32]{1,0} parameter(0)
  %k = f32[4]{0} parameter(1)
  %zero = f32[] constant(0)
  %r = f32[32]{0} reduce(%l, %zero), dimensions={0}, to_apply=%sum
  %rs = f32[1,32]{1,0} reshape(%r)
  %ar = f32[1,32]{1,0} all-reduce(%rs), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%sum
  %kn = f32[4]{0} negate(%k)
  ROOT %t = (f32[1,32]{1,0}, f32[4]{0}) tuple(%ar, %kn)
}

ENTRY %main (x: f32[16,32], y: f32[32]) -> (f32[1,32], f32[32]) {
  %x = f32[16,32]{1,0} parameter(0)
  %y = f32[32]{0} parameter(1)
  %g = (f32[2,32]{1,0}, f32[4]{0}) custom-call(%x, %y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"d\"}, {}]>, <@mesh, [{\"d\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"d\"}>"}
  %g0 = f32[2,32]{1,0} get-tuple-element(%g), index=0
  %g1 = f32[4]{0} get-tuple-element(%g), index=1
  %c = (f32[1,32]{1,0}, f32[4]{0}) call(%g0, %g1), to_apply=%xla.sdy.manual_computation_body.3
  %c0 = f32[1,32]{1,0} get-tuple-element(%c), index=0
  %c1 = f32[4]{0} get-tuple-element(%c), index=1
  %back = (f32[1,32]{1,0}, f32[32]{0}) custom-call(%c0, %c1), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{\"d\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"d\"}>"}
  %b0 = f32[1,32]{1,0} get-tuple-element(%back), index=0
  %b1 = f32[32]{0} get-tuple-element(%back), index=1
  ROOT %out = (f32[1,32]{1,0}, f32[32]{0}) tuple(%b0, %b1)
}
)");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.module->num_partitions(), 8);
  // The operands get the shard_map's in_shardings.
  EXPECT_EQ(p.Of("x"), "{mesh['d'=8], [{'d'}, {}]}");
  EXPECT_EQ(p.Of("y"), "{mesh['d'=8], [{'d'}]}");
  EXPECT_EQ(p.Of("g"), "{{manual}, {manual}}");
  for (const char* name : {"l", "k", "zero", "r", "rs", "ar", "kn", "c0", "c1"}) EXPECT_EQ(p.Of(name), "{manual}") << name;
  EXPECT_EQ(p.Of("b1"), "{mesh['d'=8], [{'d'}]}");
  PartitionResult partitioned = PartitionModule(*p.module);
  EXPECT_TRUE(partitioned.warnings.empty());
}

}  // namespace
}  // namespace gspmd
