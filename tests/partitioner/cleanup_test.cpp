// Tests of the partitioner's cleanup: identity collectives, common subexpressions, dead code,
// and channel ids above the input's.
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "partitioner/cleanup.h"
#include "partitioner/partition_test_harness.h"
#include "support/diagnostic.h"

namespace gspmd::partition_test {
namespace {

TEST(CleanupTest, MergesEqualInstructionsTransitively) {
  const std::string text = R"(HloModule m
ENTRY %main (x: f32[4,8], y: f32[4,8]) -> (f32[4,8], f32[4,8]) {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[4,8]{1,0} parameter(1)
  %a1 = f32[4,8]{1,0} add(%x, %y)
  %a2 = f32[4,8]{1,0} add(%x, %y)
  %m1 = f32[4,8]{1,0} multiply(%a1, %x)
  %m2 = f32[4,8]{1,0} multiply(%a2, %x)
  %c1 = f32[] constant(2)
  %c2 = f32[] constant(2)
  %b1 = f32[4,8]{1,0} broadcast(%c1), dimensions={}
  %b2 = f32[4,8]{1,0} broadcast(%c2), dimensions={}
  %s1 = f32[4,8]{1,0} subtract(%m1, %b1)
  %s2 = f32[4,8]{1,0} subtract(%m2, %b2)
  ROOT %t = (f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(%s1, %s2)
}
)";
  std::unique_ptr<Module> original = ParseModule(text);
  std::unique_ptr<Module> module = ParseModule(text);
  CleanupStats stats = CleanupPartitionedModule(*module);
  EXPECT_EQ(stats.instructions_merged, 5);
  ExpectStructure(*module, PrintModule(*module),
                  {.counts = {{Opcode::kAdd, 1},
                              {Opcode::kMultiply, 1},
                              {Opcode::kConstant, 1},
                              {Opcode::kBroadcast, 1},
                              {Opcode::kSubtract, 1}}});
  const Instruction* root = module->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));

  Literal x = Literal::FromDoubles(Shape(ElementType::kF32, {4, 8}), std::vector<double>(32, 1.5));
  Literal y = Literal::FromDoubles(Shape(ElementType::kF32, {4, 8}), std::vector<double>(32, -0.25));
  std::vector<Literal> inputs;
  inputs.push_back(x);
  inputs.push_back(y);
  Literal before = EvaluateModule(*original, inputs);
  Literal after = EvaluateModule(*module, inputs);
  EXPECT_TRUE(before.BitwiseEquals(after));
}

// A module cleaned up on its own (not partitioned), what it then contains, and further checks.
struct CleanupCase {
  std::string name;
  std::string hlo;
  std::vector<OpCount> counts = {};
  void (*check)(const Module&) = nullptr;
};

void PrintTo(const CleanupCase& c, std::ostream* out) { *out << c.name; }

const std::vector<CleanupCase> kCases = {
    {.name = "KeepsInstructionsThatDifferOrMustStaySeparate",
     .hlo = R"(HloModule m
ENTRY %main (x: f32[8], y: f32[8]) -> (f32[4], f32[4], f32[8], f32[8], f32[], f32[], f32[8], f32[8], f32[8]) {
  %x = f32[8]{0} parameter(0)
  %y = f32[8]{0} parameter(1)
  %s1 = f32[4]{0} slice(%x), slice={[0:4]}
  %s2 = f32[4]{0} slice(%x), slice={[4:8]}
  %cc1 = f32[8]{0} custom-call(%x), custom_call_target="Foo"
  %cc2 = f32[8]{0} custom-call(%x), custom_call_target="Foo"
  %k1 = f32[] constant(1)
  %k2 = f32[] constant(2)
  %zero = f32[] constant(0)
  %one = f32[] constant(1)
  %r1 = f32[8]{0} rng(%zero, %one), distribution=rng_uniform
  %r2 = f32[8]{0} rng(%zero, %one), distribution=rng_uniform
  %n1 = f32[8]{0} negate(%y)
  ROOT %t = (f32[4]{0}, f32[4]{0}, f32[8]{0}, f32[8]{0}, f32[], f32[], f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(%s1, %s2, %cc1, %cc2, %k1, %k2, %r1, %r2, %n1)
}
)",
     // k1 and one are both f32 1: merged; k2 and zero differ.
     .counts = {{Opcode::kSlice, 2}, {Opcode::kCustomCall, 2}, {Opcode::kRng, 2}, {Opcode::kParameter, 2},
                {Opcode::kConstant, 3}}},
    // Two replicas, so that the cross-replica %ar4 (no channel_id) is no identity.
    {.name = "CollectivesDifferingOnlyInChannelIdMerge",
     .hlo = std::string("HloModule m, replica_count=2, num_partitions=4\n") + kSum + R"(
ENTRY %main (x: f32[8]) -> (f32[8], f32[8], f32[8], f32[8]) {
  %x = f32[8]{0} parameter(0)
  %ar1 = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=%sum
  %ar2 = f32[8]{0} all-reduce(%x), channel_id=2, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=%sum
  %ar3 = f32[8]{0} all-reduce(%x), channel_id=3, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=%sum
  %ar4 = f32[8]{0} all-reduce(%x), replica_groups={}, to_apply=%sum
  ROOT %t = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(%ar1, %ar2, %ar3, %ar4)
}
)",
     .counts = {{Opcode::kAllReduce, 3}},
     .check =
         [](const Module& module) {
           std::set<int64_t> channel_ids;
           for (const Instruction* all_reduce : InstructionsWith(module, Opcode::kAllReduce))
             if (all_reduce->channel_id) channel_ids.insert(*all_reduce->channel_id);
           EXPECT_EQ(channel_ids, (std::set<int64_t>{1, 3}));
           const Instruction* root = module.entry()->root();
           EXPECT_EQ(root->operand(0), root->operand(1));
           EXPECT_NE(root->operand(0), root->operand(2));
         }},
    {.name = "EntryRootKeepsItsSharding",
     .hlo = R"(HloModule m, num_partitions=2
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={replicated}
  %n1 = f32[8]{0} negate(%x)
  %n2 = f32[8]{0} negate(%x), sharding={replicated}
  %use = f32[8]{0} add(%n1, %n2)
  ROOT %n3 = f32[8]{0} negate(%use), sharding={devices=[2]<=[2]}
}
)",
     .counts = {{Opcode::kNegate, 3}},
     .check =
         [](const Module& module) {
           ASSERT_TRUE(module.entry()->root()->sharding().has_value());
           EXPECT_EQ(module.entry()->root()->sharding()->ToString(), "{devices=[2]<=[2]}");
         }},
    {.name = "RemovesCollectivesOverOneMemberGroups",
     .hlo = std::string("HloModule m, num_partitions=4\n") + kSum + R"(
ENTRY %main (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0)
  %ar = f32[8,4]{1,0} all-reduce(%x), channel_id=1, replica_groups={{0},{1},{2},{3}}, use_global_device_ids=true, to_apply=%sum
  %ag = f32[8,4]{1,0} all-gather(%ar), channel_id=2, replica_groups=[4,1]<=[4], dimensions={0}, use_global_device_ids=true
  %rs = f32[8,4]{1,0} reduce-scatter(%ag), channel_id=3, replica_groups={{0},{1},{2},{3}}, dimensions={1}, use_global_device_ids=true, to_apply=%sum
  %a2a = f32[8,4]{1,0} all-to-all(%rs), channel_id=4, replica_groups={{0},{1},{2},{3}}, dimensions={0}
  %cp = f32[8,4]{1,0} collective-permute(%a2a), channel_id=5, source_target_pairs={{0,0},{1,1},{2,2},{3,3}}
  ROOT %n = f32[8,4]{1,0} negate(%cp)
}
)",
     .counts = {{Opcode::kAllReduce, 0}, {Opcode::kAllGather, 0}, {Opcode::kReduceScatter, 0},
                {Opcode::kAllToAll, 0}, {Opcode::kCollectivePermute, 0}},
     .check =
         [](const Module& module) {
           EXPECT_EQ(module.entry()->root()->operand(0)->opcode(), Opcode::kParameter);
           // The reducer nothing calls any more is gone.
           EXPECT_EQ(module.computations().size(), 1u);
         }},
    {.name = "KeepsCollectivesThatMoveData",
     .hlo = std::string("HloModule m, num_partitions=4\n") + kSum + R"(
ENTRY %main (x: f32[8]) -> (f32[8], f32[8], f32[8], f32[8], f32[8], f32[8]) {
  %x = f32[8]{0} parameter(0)
  %two = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum
  %all = f32[8]{0} all-reduce(%x), channel_id=2, replica_groups={}, use_global_device_ids=true, to_apply=%sum
  %cross = f32[8]{0} all-reduce(%x), channel_id=3, replica_groups={{0}}, to_apply=%sum
  %partial_self = f32[8]{0} collective-permute(%x), channel_id=4, source_target_pairs={{0,0},{1,1}}
  %no_pairs = f32[8]{0} collective-permute(%x), channel_id=5, source_target_pairs={}
  %shift = f32[8]{0} collective-permute(%x), channel_id=6, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT %t = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(%two, %all, %cross, %partial_self, %no_pairs, %shift)
}
)",
     // {{0}} with a channel_id but without use_global_device_ids is a group of replica ids that
     // spans every partition (cross-replica-and-partition): not an identity with 4 partitions.
     .counts = {{Opcode::kAllReduce, 3}, {Opcode::kCollectivePermute, 3}}},
    {.name = "CrossReplicaCollectiveOnOneReplicaIsIdentity",
     .hlo = std::string("HloModule m, num_partitions=4\n") + kSum + R"(
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %ar = f32[8]{0} all-reduce(%x), replica_groups={}, to_apply=%sum
  ROOT %n = f32[8]{0} negate(%ar)
}
)",
     .counts = {{Opcode::kAllReduce, 0}}},
    {.name = "IdentityCollectiveAtTheRootHandsOverTheSharding",
     .hlo = std::string("HloModule m, num_partitions=4\n") + kSum + R"(
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %n = f32[8]{0} negate(%x)
  ROOT %ar = f32[8]{0} all-reduce(%n), channel_id=1, replica_groups=[4,1]<=[4], use_global_device_ids=true, to_apply=%sum, sharding={devices=[4]<=[4]}
}
)",
     .counts = {{Opcode::kAllReduce, 0}},
     .check =
         [](const Module& module) {
           const Instruction* root = module.entry()->root();
           EXPECT_EQ(root->opcode(), Opcode::kNegate);
           ASSERT_TRUE(root->sharding().has_value());
           EXPECT_EQ(root->sharding()->ToString(), "{devices=[4]<=[4]}");
         }},
    {.name = "IdentityCollectiveOfAParameterRootStays",
     .hlo = std::string("HloModule m, num_partitions=4\n") + kSum + R"(
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %ar = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups=[4,1]<=[4], use_global_device_ids=true, to_apply=%sum, sharding={devices=[4]<=[4]}
}
)",
     .counts = {{Opcode::kAllReduce, 1}}},
    {.name = "CleansInsideLoopBodies",
     .hlo = std::string("HloModule m, num_partitions=2\n") + kSum + R"(
%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %v = f32[8]{0} get-tuple-element(%p), index=1
  %v2 = f32[8]{0} get-tuple-element(%p), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %ar = f32[8]{0} all-reduce(%v), channel_id=1, replica_groups={{0},{1}}, use_global_device_ids=true, to_apply=%sum
  %sum2 = f32[8]{0} add(%ar, %v2)
  ROOT %t = (s32[], f32[8]{0}) tuple(%next, %sum2)
}

%cond (q: (s32[], f32[8])) -> pred[] {
  %q = (s32[], f32[8]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%j, %three), direction=LT
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(%zero, %x)
  %w = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body
  ROOT %out = f32[8]{0} get-tuple-element(%w), index=1
}
)",
     .counts = {{Opcode::kAllReduce, 0}},
     .check =
         [](const Module& module) {
           const Computation* body = module.FindComputation("body");
           ASSERT_NE(body, nullptr);
           const Instruction* sum2 = body->root()->operand(1);
           EXPECT_EQ(sum2->operand(0), sum2->operand(1));
         }},
};

class CleanupTest : public ::testing::TestWithParam<CleanupCase> {};

TEST_P(CleanupTest, Case) {
  const CleanupCase& c = GetParam();
  std::unique_ptr<Module> module = ParseModule(c.hlo);
  CleanupPartitionedModule(*module);
  // The result still prints and parses.
  const std::string text = PrintModule(*module);
  module = ParseModule(text, "cleaned.hlo");
  ExpectStructure(*module, text, {.counts = c.counts});
  if (c.check != nullptr) c.check(*module);
}

INSTANTIATE_TEST_SUITE_P(Table, CleanupTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<CleanupCase>& info) { return info.param.name; });

// ---- Through PartitionModule ----

TEST(CleanupTest, PartitionerChannelIdsStartAboveTheInputs) {
  std::unique_ptr<Module> module = ParseModule(std::string("HloModule m, num_partitions=8\n") + kSum + R"(
ENTRY %main (x: f32[16,32]) -> (f32[1,32], f32[16,32]) {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %local = f32[2,32]{1,0} custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %zero = f32[] constant(0), sharding={manual}
  %r = f32[32]{0} reduce(%local, %zero), dimensions={0}, to_apply=%sum, sharding={manual}
  %rs = f32[1,32]{1,0} reshape(%r), sharding={manual}
  %ar = f32[1,32]{1,0} all-reduce(%rs), channel_id=7, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%sum, sharding={manual}
  %full = f32[1,32]{1,0} custom-call(%ar), custom_call_target="SPMDShardToFullShape", sharding={replicated}
  %gathered = f32[16,32]{1,0} copy(%x), sharding={replicated}
  ROOT %t = (f32[1,32]{1,0}, f32[16,32]{1,0}) tuple(%full, %gathered), sharding={{replicated}, {replicated}}
}
)");
  PartitionResult result = PartitionModule(*module);
  EXPECT_TRUE(result.warnings.empty());
  std::vector<const Instruction*> all_reduces = InstructionsWith(*result.module, Opcode::kAllReduce);
  std::vector<const Instruction*> all_gathers = InstructionsWith(*result.module, Opcode::kAllGather);
  ASSERT_EQ(all_reduces.size(), 1u) << PrintModule(*result.module);
  ASSERT_EQ(all_gathers.size(), 1u) << PrintModule(*result.module);
  EXPECT_EQ(all_reduces[0]->channel_id, 7);
  ASSERT_TRUE(all_gathers[0]->channel_id.has_value());
  EXPECT_GT(*all_gathers[0]->channel_id, 7);
}

TEST(CleanupTest, PartitionedModuleRecordsGlobalResultShapes) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[10,4], y: s32[3]) -> (f32[10,4], s32[3]) {
  %x = f32[10,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %y = s32[3]{0} parameter(1), sharding={replicated}
  %n = f32[10,4]{1,0} negate(%x), sharding={devices=[4,1]<=[4]}
  ROOT %t = (f32[10,4]{1,0}, s32[3]{0}) tuple(%n, %y), sharding={{devices=[4,1]<=[4]}, {replicated}}
}
)");
  PartitionResult result = PartitionModule(*module);
  const std::string text = PrintModule(*result.module);
  EXPECT_NE(text.find("frontend_attributes={gspmd.global_result_shapes=\"(f32[10,4], s32[3])\"}"), std::string::npos)
      << text;
}

TEST(CleanupTest, RecordedShapesJoinExistingFrontendAttributes) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=4, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=4]>}, other="a,b"}
ENTRY %main (x: f32[10]) -> f32[10] {
  %x = f32[10]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %n = f32[10]{0} negate(%x), sharding={devices=[4]<=[4]}
}
)");
  PartitionResult result = PartitionModule(*module);
  std::unique_ptr<Module> reparsed = ParseModule(PrintModule(*result.module), "ours.hlo");
  EXPECT_EQ(ModuleFrontendAttribute(*reparsed, kGlobalResultShapesAttribute), "f32[10]");
  EXPECT_EQ(ModuleFrontendAttribute(*reparsed, "other"), "a,b");
  EXPECT_EQ(ModuleFrontendAttribute(*reparsed, "xla.sdy.meshes"), "{mesh = #sdy.mesh<[\"d\"=4]>}");

  // Setting it again replaces the entry and keeps the others.
  SetModuleFrontendAttribute(*reparsed, kGlobalResultShapesAttribute, "f32[12]");
  EXPECT_EQ(ModuleFrontendAttribute(*reparsed, kGlobalResultShapesAttribute), "f32[12]");
  EXPECT_EQ(ModuleFrontendAttribute(*reparsed, "other"), "a,b");
  EXPECT_EQ(reparsed->Attribute("frontend_attributes"),
            "{xla.sdy.meshes={mesh = #sdy.mesh<[\"d\"=4]>},other=\"a,b\",gspmd.global_result_shapes=\"f32[12]\"}");

  // Without a like module, the run options crop to the recorded global shape.
  SetModuleFrontendAttribute(*reparsed, kGlobalResultShapesAttribute, "f32[10]");
  SpmdRunOptions options = OptionsFromLikeModule(*reparsed, nullptr);
  ASSERT_EQ(options.global_result_shapes.size(), 1u);
  EXPECT_EQ(options.global_result_shapes[0].ToString(false), "f32[10]");
  ASSERT_TRUE(options.root_sharding.has_value());
  EXPECT_EQ(options.root_sharding->ToString(), "{devices=[4]<=[4]}");

  SetModuleFrontendAttribute(*reparsed, kGlobalResultShapesAttribute, "f32[10");
  EXPECT_THROW(OptionsFromLikeModule(*reparsed, nullptr), UserError);
}

TEST(CleanupTest, PartitioningTwiceTheSameValueSharesTheCollective) {
  // Two users want the same replicated copy of a sharded value; after cleanup one all-gather
  // serves both.
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[8,4]) -> (f32[8,4], f32[8,4]) {
  %x = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %a = f32[8,4]{1,0} negate(%x), sharding={devices=[4,1]<=[4]}
  %b = f32[8,4]{1,0} negate(%x), sharding={devices=[4,1]<=[4]}
  %ra = f32[8,4]{1,0} copy(%a), sharding={replicated}
  %rb = f32[8,4]{1,0} copy(%b), sharding={replicated}
  ROOT %t = (f32[8,4]{1,0}, f32[8,4]{1,0}) tuple(%ra, %rb), sharding={{replicated}, {replicated}}
}
)");
  PartitionResult result = PartitionModule(*module);
  EXPECT_EQ(CountOf(*result.module, Opcode::kAllGather), 1) << PrintModule(*result.module);
  EXPECT_EQ(CountOf(*result.module, Opcode::kNegate), 1) << PrintModule(*result.module);
}

}  // namespace
}  // namespace gspmd::partition_test
