// What XLA's own partitioner and propagation tests write that XLA's parser takes and ours
// refused: signatures whose parameters disagree with the body, any sharding on a token
// (an outfeed's is its data's), rng-bit-generator without the state in its result, and the
// attributes newer XLA prints. Each parses, prints back, and goes through the pipeline.
#include <gtest/gtest.h>

#include <cstring>

#include "api/pipeline.h"
#include "hlo_text_test_util.h"
#include "ir/tuple_sharding.h"
#include "ir/verifier.h"
#include "partitioner/partition_test_harness.h"
#include "runtime/interp/evaluator.h"

namespace gspmd {
namespace {

using testing::Canonical;
using testing::Find;

// As XLA's parser does, only the signature's result is checked: "(arg_tuple.1: ())" is what
// some XLA tests write over a parameter of another shape. The body's parameters count, and
// the printer writes the signature from them.
TEST(XlaTestSyntaxTest, SignatureParametersAreTheBodys) {
  const char* text = R"(HloModule m, num_partitions=2

ENTRY %entry (arg_tuple.1: ()) -> f32[2,4] {
  %arg_tuple.1 = f32[2,4] parameter(0)
  ROOT %copy = f32[2,4] copy(%arg_tuple.1), sharding={devices=[1,2]0,1}
}
)";
  std::string printed = Canonical(text);
  EXPECT_NE(printed.find("ENTRY %entry (arg_tuple.1: f32[2,4]) -> f32[2,4] {"), std::string::npos) << printed;
  std::unique_ptr<Module> module = ParseModule(text);
  ASSERT_EQ(module->entry()->num_parameters(), 1);
  EXPECT_EQ(module->entry()->parameter(0)->shape().dims(), (std::vector<int64_t>{2, 4}));
  partition_test::Partitioned partitioned = partition_test::Partition(text);
  partition_test::ExpectSameNumbers(partitioned);
}

// XLA validates no sharding against a token: an outfeed carries its data's sharding, as one
// sharding, as one per leaf of the data, or as that plus one for the token.
TEST(XlaTestSyntaxTest, OutfeedCarriesItsDataSharding) {
  const char* text = R"(HloModule m, num_partitions=2

ENTRY %entry (data: (f32[8,2], f32[2]), x: f32[8]) -> token[] {
  %token.0 = token[] after-all()
  %data = (f32[8,2]{1,0}, f32[2]{0}) parameter(0), sharding={{devices=[2,1]0,1}, {devices=[2]0,1}}
  %x = f32[8]{0} parameter(1), sharding={devices=[2]0,1}
  %leaves = token[] outfeed(%data, %token.0), outfeed_shape=(f32[8,2]{0,1}, f32[2]{0}), sharding={{devices=[2,1]0,1}, {devices=[2]0,1}}
  %with_token = token[] outfeed(%data, %leaves), outfeed_shape=(f32[8,2]{1,0}, f32[2]{0}), sharding={{devices=[2,1]0,1}, {devices=[2]0,1}, {maximal device=0}}
  ROOT %tiled = token[] outfeed(%x, %with_token), outfeed_shape=f32[8]{0}, sharding={devices=[2]0,1}
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  VerifyModule(*module);
  EXPECT_EQ(Find(*module, "with_token").sharding()->tuple_elements().size(), 3u);
  EXPECT_TRUE(Find(*module, "tiled").sharding()->IsTiled());
  // Partitioning keeps the outfeeds (each device hands over the whole data: XLA would hand
  // over shards, which a warning says).
  PartitionResult result = PartitionModule(*module);
  EXPECT_EQ(partition_test::CountOf(*result.module, Opcode::kOutfeed), 3) << PrintModule(*result.module);
}

// XLA's verifier takes rng-bit-generator's result as the bits alone (no new state) and any
// state length; the bits are those of the tuple form with the same state.
TEST(XlaTestSyntaxTest, RngBitGeneratorWithoutTheStateInItsResult) {
  const char* text = R"(HloModule m

ENTRY %main (state: u64[8]) -> (u32[4,8], u32[4,8]) {
  %state = u64[8]{0} parameter(0)
  %plain = u32[4,8]{1,0} rng-bit-generator(%state), algorithm=rng_default
  %pair = (u64[8]{0}, u32[4,8]{1,0}) rng-bit-generator(%state), algorithm=rng_default
  %bits = u32[4,8]{1,0} get-tuple-element(%pair), index=1
  ROOT %t = (u32[4,8]{1,0}, u32[4,8]{1,0}) tuple(%plain, %bits)
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  Literal state = Literal::FromInts(Shape(ElementType::kU64, {8}), std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<Literal> arguments;
  arguments.push_back(std::move(state));
  std::vector<Literal> results = FlattenTuple(EvaluateModule(*module, arguments));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(std::memcmp(results[0].raw(), results[1].raw(), 4 * 8 * 4), 0);
  bool all_zero = true;
  for (int64_t i = 0; i < 32; ++i) all_zero = all_zero && results[0].GetAsInt64(i) == 0;
  EXPECT_FALSE(all_zero);

  // A state shorter than the generators need is an error, not a crash.
  EXPECT_EQ(testing::ParseError("HloModule m\nENTRY e {\n  s = u64[1] parameter(0)\n"
                                "  ROOT r = u32[4] rng-bit-generator(s), algorithm=rng_default\n}\n"),
            "t.hlo:4:19: error: %r: operand 0 (%s) of rng-bit-generator is u64[1], expected a u64 state vector of "
            "at least 2 words");
}

// Attributes newer XLA prints that nothing here interprets: kept as written.
TEST(XlaTestSyntaxTest, AttributesOfNewerXlaAreKeptVerbatim) {
  const char* text = R"(HloModule m

%body (p: (s32[], f32[4])) -> (s32[], f32[4]) {
  %p = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[4]{0} get-tuple-element(%p), index=1
  %e = f32[4]{0} exponential(%x), result_accuracy={mode=highest}
  ROOT %t = (s32[], f32[4]{0}) tuple(%i, %e)
}

%cond (p.1: (s32[], f32[4])) -> pred[] {
  %p.1 = (s32[], f32[4]{0}) parameter(0)
  ROOT %c = pred[] constant(false)
}

ENTRY %main (a: f32[4], w: f32[4,4]) -> f32[4] {
  %a = f32[4]{0} parameter(0), origin={{"a"}}
  %w = f32[4,4]{1,0} parameter(1)
  %d = f32[4]{0} dot(%a, %w), lhs_contracting_dims={0}, rhs_contracting_dims={0}, operand_precision={highest,highest}, algorithm=dot_f32_f32_f32
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %d), control-predecessors={%a}
  %loop = (s32[], f32[4]{0}) while(%init), statistics={visualizing_index=1,stat-1=33.5}, condition=%cond, body=%body
  ROOT %r = f32[4]{0} get-tuple-element(%loop), index=1
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  const Instruction& e = Find(*module, "e");
  ASSERT_EQ(e.extra_attributes().size(), 1u);
  EXPECT_EQ(e.extra_attributes()[0].first, "result_accuracy");
  EXPECT_EQ(e.extra_attributes()[0].second, "{mode=highest}");
}

// XLA's whole-graph manual tests put partition-id and collectives on values sharded {manual}
// (or manual in a subgroup): still a global program to partition, not a per-device one.
TEST(XlaTestSyntaxTest, ManualCollectivesLeaveTheProgramGlobal) {
  const char* manual = R"(HloModule m, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add = f32[] add(%a, %b)
}

ENTRY %entry (param: f32[2,2]) -> (u32[], f32[2,2]) {
  %id = u32[] partition-id(), sharding={manual}
  %param = f32[2,2]{1,0} parameter(0), sharding={devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}
  %sum.1 = f32[2,2]{1,0} all-reduce(%param), channel_id=1, replica_groups={{2,0},{1,3}}, use_global_device_ids=true, to_apply=%sum, sharding={devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}
  ROOT %t = (u32[], f32[2,2]{1,0}) tuple(%id, %sum.1), sharding={{manual}, {devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}}
}
)";
  std::unique_ptr<Module> module = ParseModule(manual);
  EXPECT_FALSE(api::IsPerDeviceProgram(*module));
  api::CompiledPartition compiled = api::PartitionGlobal(*module, "m.hlo", 4);
  const Instruction* root = compiled.partitioned.module->entry()->root();
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kAllReduce);
  EXPECT_EQ(root->operand(1)->shape().dims(), (std::vector<int64_t>{1, 2}));

  // The same all-reduce without a sharding reads as a per-device program's.
  std::string unsharded = manual;
  unsharded.replace(unsharded.find(", sharding={devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}\n  ROOT"),
                    std::string(", sharding={devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}").size(), "");
  EXPECT_TRUE(api::IsPerDeviceProgram(*ParseModule(unsharded)));

  // Groups that cross manual subgroups are an error, as XLA reports.
  std::string crossing = manual;
  crossing.replace(crossing.find("{{2,0},{1,3}}"), 13, "{{1,0},{2,3}}");
  std::unique_ptr<Module> crossing_module = ParseModule(crossing, "m.hlo");
  try {
    api::PartitionGlobal(*crossing_module, "m.hlo", 4);
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("m.hlo:12:3: error: %sum.1: all-reduce combines devices 1 and 0, which "
                                             "belong to different manual subgroups"),
              std::string::npos)
        << error.what();
  }
}

// Newer XLA writes {unreduced} for a partial sum over every device: read as the tiled form
// over the module's devices (num_partitions, else those its other shardings use), leaves of a
// tuple sharding too; last_tile_dims={unreduced} stays what it was.
TEST(XlaTestSyntaxTest, FullyUnreducedShardings) {
  const char* text = R"(HloModule m

ENTRY %entry (a: f32[8,64], b: f32[64,16]) -> (f32[8,16], f32[8,16]) {
  %a = f32[8,64]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %b = f32[64,16]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %dot = f32[8,16]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={ unreduced }
  %max = f32[8,16]{1,0} copy(%dot), sharding={devices=[1,2,2]<=[4] last_tile_dims={unreduced_max}}
  ROOT %t = (f32[8,16]{1,0}, f32[8,16]{1,0}) tuple(%dot, %max), sharding={{unreduced}, {unreduced_max}}
}
)";
  std::unique_ptr<Module> module = ParseModule(text);
  const Sharding& dot = *Find(*module, "dot").sharding();
  EXPECT_EQ(dot.ToString(), "{devices=[1,1,4]<=[4] last_tile_dims={unreduced}}");
  EXPECT_EQ(Find(*module, "max").sharding()->ToString(), "{devices=[1,2,2]<=[4] last_tile_dims={unreduced_max}}");
  EXPECT_EQ(FlattenTupleSharding(*Find(*module, "t").sharding()).ToString(),
            "{{devices=[1,1,4]<=[4] last_tile_dims={unreduced}}, {devices=[1,1,4]<=[4] last_tile_dims={unreduced_max}}}");
  Canonical(text);
  // The unreduced dot is returned as it is, each device with its partial sum (only the copy
  // wanting partial maxima needs the sum completed first).
  PartitionOptions options;
  options.num_partitions = 4;
  PartitionResult result = PartitionModule(*module, options);
  const Instruction* root = result.module->entry()->root();
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kDot) << PrintModule(*result.module);
  EXPECT_EQ(partition_test::CountOf(*result.module, Opcode::kAllReduce), 1) << PrintModule(*result.module);
}

// XLA's parser takes one bare value for an array constant and sets its first element (the
// rest stay zero), as some of its tests write.
TEST(XlaTestSyntaxTest, BareValueForAnArrayConstant) {
  std::unique_ptr<Module> module = ParseModule("HloModule m\nENTRY e {\n  ROOT c = s32[2,3] constant(7)\n}\n");
  const Literal& literal = *Find(*module, "c").literal();
  std::vector<int64_t> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetAsInt64(i));
  EXPECT_EQ(values, (std::vector<int64_t>{7, 0, 0, 0, 0, 0}));
}

// A value of shape () takes a one-element tuple sharding in XLA (its tests write one on a
// custom-call with no results); it prints back as that one sharding, which XLA reads too.
TEST(XlaTestSyntaxTest, ShardingOfAValueWithoutLeaves) {
  const char* text = R"(HloModule m

ENTRY %main (a: s64[2]) -> s64[2] {
  ROOT %a = s64[2] parameter(0)
  %callback = () custom-call(%a), custom_call_target="host_callback", custom_call_has_side_effect=true, sharding={{maximal device=0}}
}
)";
  std::string printed = Canonical(text);
  EXPECT_NE(printed.find("custom_call_has_side_effect=true, sharding={maximal device=0}"), std::string::npos) << printed;
  std::unique_ptr<Module> module = ParseModule(text);
  VerifyModule(*module);
  EXPECT_TRUE(Find(*module, "callback").sharding()->IsMaximal());
}

}  // namespace
}  // namespace gspmd
