// Tests of the SPMD executor: splitting global values into shards and assembling them back,
// RunSpmd on small programs, input validation and error propagation across devices.
#include "runtime/spmd/spmd_executor.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/spmd/like_module.h"
#include "sharding/sharding_text.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd {
namespace {

// 1, 2, 3, ... in the given shape.
Literal Counting(std::vector<int64_t> dims, ElementType type = ElementType::kF32) {
  Literal literal(Shape(type, std::move(dims)));
  for (int64_t e = 0; e < literal.element_count(); ++e) literal.SetFromDouble(e, static_cast<double>(e + 1));
  return literal;
}

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

std::string RunError(const std::string& text, std::vector<Literal> arguments, SpmdRunOptions options = {}) {
  std::unique_ptr<Module> module = ParseModule(text);
  try {
    RunSpmd(*module, arguments, options);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(ShardOfGlobalTest, UnevenShardsArePaddedWithZeros) {
  Literal global = Counting({5});
  Sharding sharding = ParseSharding("{devices=[2]<=[2]}");
  EXPECT_EQ(Doubles(ShardOfGlobal(global, sharding, 0)), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Doubles(ShardOfGlobal(global, sharding, 1)), (std::vector<double>{4, 5, 0}));
}

TEST(ShardOfGlobalTest, TwoDimensionalTiles) {
  Literal global = Counting({2, 4});  // [[1,2,3,4],[5,6,7,8]]
  Sharding sharding = ParseSharding("{devices=[2,2]<=[2,2]T(1,0)}");  // devices [[0,2],[1,3]]
  EXPECT_EQ(Doubles(ShardOfGlobal(global, sharding, 0)), (std::vector<double>{1, 2}));
  EXPECT_EQ(Doubles(ShardOfGlobal(global, sharding, 2)), (std::vector<double>{3, 4}));
  EXPECT_EQ(Doubles(ShardOfGlobal(global, sharding, 1)), (std::vector<double>{5, 6}));
  EXPECT_EQ(Doubles(ShardOfGlobal(global, sharding, 3)), (std::vector<double>{7, 8}));
  EXPECT_EQ(ShardOfGlobal(global, sharding, 3).shape().dims(), (std::vector<int64_t>{1, 2}));
}

struct SplitCase {
  std::vector<int64_t> dims;
  std::string sharding;
  int64_t n;
};

TEST(ShardOfGlobalTest, SplitThenAssembleIsIdentity) {
  std::vector<SplitCase> cases = {
      {{8, 4}, "{devices=[4,2]<=[8]}", 8},
      {{5, 3}, "{devices=[2,2]<=[4]}", 4},
      {{10, 6}, "{devices=[4,1]<=[4]}", 4},
      {{7}, "{devices=[8]<=[8]}", 8},
      {{6, 4}, "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 4},
      {{6, 5}, "{devices=[1,2,4]<=[2,4]T(1,0) last_tile_dim_replicate}", 8},
      {{4, 4}, "{devices=[2,2]<=[2,2]T(1,0)}", 4},
      {{3, 5}, "{devices=[2,2]3,1,0,2}", 4},
      {{2, 3, 4}, "{devices=[1,3,2]<=[6]}", 6},
      {{4, 3}, "{replicated}", 3},
      {{4, 3}, "{maximal device=2}", 3},
      {{}, "{replicated}", 2},
  };
  for (const SplitCase& c : cases) {
    SCOPED_TRACE(c.sharding);
    Literal global = Counting(c.dims);
    Sharding sharding = ParseSharding(c.sharding);
    std::vector<Literal> shards;
    for (int64_t d = 0; d < c.n; ++d) shards.push_back(ShardOfGlobal(global, sharding, d));
    std::vector<const Literal*> pointers;
    for (const Literal& shard : shards) pointers.push_back(&shard);
    Literal assembled = AssembleGlobal(pointers, sharding, global.shape());
    EXPECT_TRUE(assembled.BitwiseEquals(global));
  }
}

// A per-device program that returns its argument, with sharding S on both ends (n = 0: no
// num_partitions attribute).
std::string IdentityProgram(const std::string& local_type, const std::string& sharding, int64_t n) {
  std::string header = n > 0 ? "HloModule m, num_partitions=" + std::to_string(n) : "HloModule m";
  return header + "\nENTRY e {\n  %p = " + local_type +
         " parameter(0), sharding=" + sharding + "\n  ROOT %r = " + local_type + " copy(%p), sharding=" +
         sharding + "\n}\n";
}

TEST(RunSpmdTest, IdentityProgramRoundTrips) {
  struct Case {
    std::vector<int64_t> global;
    std::string local_type;
    std::string sharding;
    int64_t n;
  };
  std::vector<Case> cases = {
      {{8, 4}, "f32[2,2]", "{devices=[4,2]<=[8]}", 8},
      {{5, 3}, "f32[3,2]", "{devices=[2,2]<=[4]}", 4},
      {{10, 6}, "f32[3,6]", "{devices=[4,1]<=[4]}", 4},
      {{6, 4}, "f32[3,4]", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 4},
      {{6, 4}, "f32[6,4]", "{replicated}", 3},
      {{6, 4}, "f32[6,4]", "{maximal device=1}", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sharding);
    std::unique_ptr<Module> module = ParseModule(IdentityProgram(c.local_type, c.sharding, c.n));
    Literal global = Counting(c.global);
    SpmdRunOptions options;
    options.global_result_shapes = {global.shape()};
    std::vector<Literal> outputs = RunSpmd(*module, std::vector<Literal>{global}, options);
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_TRUE(outputs[0].BitwiseEquals(global));
  }
}

TEST(RunSpmdTest, WithoutGlobalShapesPaddingIsKept) {
  std::unique_ptr<Module> module = ParseModule(IdentityProgram("s32[3]", "{devices=[2]<=[2]}", 2));
  std::vector<Literal> outputs = RunSpmd(*module, std::vector<Literal>{Counting({5}, ElementType::kS32)}, {});
  EXPECT_EQ(Doubles(outputs[0]), (std::vector<double>{1, 2, 3, 4, 5, 0}));
}

TEST(RunSpmdTest, AllReduceOfRowShards) {
  // Each of 8 devices holds one row; the all-reduce sums the rows.
  std::string text = R"(HloModule m, num_partitions=8
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY %e (x: f32[1,4]) -> f32[1,4] {
  %x = f32[1,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %ar = f32[1,4]{1,0} all-reduce(%x), channel_id=1, replica_groups=[1,8]<=[8], use_global_device_ids=true, to_apply=%sum, sharding={replicated}
}
)";
  std::unique_ptr<Module> module = ParseModule(text);
  std::vector<Literal> outputs = RunSpmd(*module, std::vector<Literal>{Counting({8, 4})}, {});
  std::vector<double> expected(4, 0.0);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 4; ++c) expected[static_cast<size_t>(c)] += static_cast<double>(r * 4 + c + 1);
  EXPECT_EQ(Doubles(outputs[0]), expected);
}

TEST(RunSpmdTest, TupleRootWithNestedTuple) {
  std::string text = R"(HloModule m, num_partitions=2
ENTRY %e (x: f32[2,3]) -> (f32[2,3], (f32[2,3], f32[4,3])) {
  %x = f32[2,3]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %y = f32[4,3]{1,0} all-gather(%x), channel_id=1, replica_groups={}, use_global_device_ids=true, dimensions={0}
  %inner = (f32[2,3], f32[4,3]) tuple(%x, %y)
  ROOT %t = (f32[2,3], (f32[2,3], f32[4,3])) tuple(%x, %inner), sharding={{devices=[2,1]<=[2]}, {devices=[1,2]<=[2]}, {replicated}}
}
)";
  std::unique_ptr<Module> module = ParseModule(text);
  Literal global = Counting({4, 3});
  std::vector<Literal> outputs = RunSpmd(*module, std::vector<Literal>{global}, {});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_TRUE(outputs[0].BitwiseEquals(global));
  // Device d's [2,3] rows placed side by side: [2,6].
  EXPECT_EQ(outputs[1].shape().dims(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(Doubles(outputs[1]), (std::vector<double>{1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}));
  EXPECT_TRUE(outputs[2].BitwiseEquals(global));
}

TEST(RunSpmdTest, ReplicaProgramsRunCrossReplicaCollectives) {
  std::string text = R"(HloModule m, replica_count=4
%sum (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = s32[] add(%a, %b)
}
ENTRY %e () -> s32[] {
  %id = u32[] replica-id()
  %v = s32[] convert(%id)
  ROOT %ar = s32[] all-reduce(%v), replica_groups={{0,1},{2,3}}, to_apply=%sum
}
)";
  std::unique_ptr<Module> module = ParseModule(text);
  SpmdRunOptions options;
  options.root_sharding = ParseSharding("{maximal device=3}");
  std::vector<Literal> outputs = RunSpmd(*module, {}, options);
  EXPECT_EQ(outputs[0].GetAsInt64(0), 5);
}

TEST(RunSpmdTest, BadArgumentsAreUserErrorsNamingTheParameter) {
  std::string text = IdentityProgram("f32[2,4]", "{devices=[2,1]<=[2]}", 2);
  EXPECT_NE(RunError(text, {}).find("1 parameters, got 0"), std::string::npos);
  std::string wrong_type = RunError(text, {Counting({4, 4}, ElementType::kS32)});
  EXPECT_NE(wrong_type.find("parameter 0 (%p)"), std::string::npos) << wrong_type;
  std::string wrong_shape = RunError(text, {Counting({6, 4})});
  EXPECT_NE(wrong_shape.find("parameter 0 (%p)"), std::string::npos) << wrong_shape;
  EXPECT_NE(wrong_shape.find("f32[2,4]"), std::string::npos) << wrong_shape;
}

TEST(RunSpmdTest, ShardingsThatDoNotFitTheDevicesAreUserErrors) {
  // Without num_partitions the parser cannot check device ids; the runtime does.
  SpmdRunOptions two;
  two.num_devices = 2;
  std::string big_id = IdentityProgram("f32[2]", "{devices=[2]0,5}", 0);
  EXPECT_NE(RunError(big_id, {Counting({4})}, two).find("parameter 0"), std::string::npos);
  std::string maximal = IdentityProgram("f32[4]", "{maximal device=9}", 0);
  EXPECT_NE(RunError(maximal, {Counting({4})}, two).find("device 9"), std::string::npos);
  std::string few_tiles = IdentityProgram("f32[2]", "{devices=[2]<=[2]}", 0);
  SpmdRunOptions three;
  three.num_devices = 3;
  EXPECT_NE(RunError(few_tiles, {Counting({4})}, three).find("runs on 3 devices"), std::string::npos);
  SpmdRunOptions wrong_rank;
  wrong_rank.parameter_shardings = {ParseSharding("{devices=[2,1]<=[2]}")};
  std::string rank = IdentityProgram("f32[2]", "{devices=[2]<=[2]}", 2);
  EXPECT_NE(RunError(rank, {Counting({4})}, wrong_rank).find("rank"), std::string::npos);
  SpmdRunOptions options;
  options.num_devices = 4;
  EXPECT_NE(RunError(IdentityProgram("f32[2]", "{devices=[2]<=[2]}", 2), {Counting({4})}, options)
                .find("compiled for 2 partitions"),
            std::string::npos);
}

TEST(RunSpmdTest, ErrorOnOneDeviceDoesNotHangTheOthers) {
  // Device 3 is in no group of the first all-reduce; the others then wait for it in the second.
  std::string text = R"(HloModule m, num_partitions=4
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY %e (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %first = f32[2] all-reduce(%x), channel_id=1, replica_groups={{0,1},{2}}, use_global_device_ids=true, to_apply=%sum
  ROOT %second = f32[2] all-reduce(%first), channel_id=2, replica_groups={}, use_global_device_ids=true, to_apply=%sum
}
)";
  std::string error = RunError(text, {Counting({2})});
  EXPECT_NE(error.find("device 3"), std::string::npos) << error;
  EXPECT_NE(error.find("%first"), std::string::npos) << error;
}

TEST(RunSpmdTest, DeviceSkippingACollectiveIsAnErrorNotAHang) {
  // Only partition 0 takes the branch with the all-reduce.
  std::string text = R"(HloModule m, num_partitions=3
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
%reduce_branch (p: f32[2]) -> f32[2] {
  %p = f32[2] parameter(0)
  ROOT %ar = f32[2] all-reduce(%p), channel_id=1, replica_groups={}, use_global_device_ids=true, to_apply=%sum
}
%plain_branch (q: f32[2]) -> f32[2] {
  %q = f32[2] parameter(0)
  ROOT %c = f32[2] copy(%q)
}
ENTRY %e (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %id = u32[] partition-id()
  %zero = u32[] constant(0)
  %first = pred[] compare(%id, %zero), direction=EQ
  ROOT %cond = f32[2] conditional(%first, %x, %x), true_computation=%reduce_branch, false_computation=%plain_branch
}
)";
  std::string error = RunError(text, {Counting({2})});
  EXPECT_NE(error.find("finished"), std::string::npos) << error;
}

TEST(OptionsFromLikeModuleTest, TakesMissingShardingsAndGlobalShapes) {
  std::string per_device = R"(HloModule m, num_partitions=2
ENTRY %e (x: f32[3,4], y: f32[2]) -> (f32[3,4], f32[2]) {
  %x = f32[3,4] parameter(0)
  %y = f32[2] parameter(1), sharding={replicated}
  ROOT %t = (f32[3,4], f32[2]) tuple(%x, %y)
}
)";
  std::string like = R"(HloModule m, num_partitions=2
ENTRY %e (x: f32[5,4], y: f32[2]) -> (f32[5,4], f32[2]) {
  %x = f32[5,4] parameter(0), sharding={devices=[2,1]<=[2]}
  %y = f32[2] parameter(1), sharding={devices=[2]<=[2]}
  ROOT %t = (f32[5,4], f32[2]) tuple(%x, %y), sharding={{devices=[2,1]<=[2]}, {replicated}}
}
)";
  std::unique_ptr<Module> local = ParseModule(per_device);
  std::unique_ptr<Module> global = ParseModule(like);
  SpmdRunOptions options = OptionsFromLikeModule(*local, global.get());
  ASSERT_EQ(options.parameter_shardings.size(), 2u);
  EXPECT_EQ(options.parameter_shardings[0], ParseSharding("{devices=[2,1]<=[2]}"));
  EXPECT_EQ(options.parameter_shardings[1], Sharding::Replicated());  // the per-device one wins
  ASSERT_TRUE(options.root_sharding.has_value());
  ASSERT_EQ(options.global_result_shapes.size(), 2u);
  EXPECT_EQ(options.global_result_shapes[0].dims(), (std::vector<int64_t>{5, 4}));
  std::vector<Literal> outputs =
      RunSpmd(*local, std::vector<Literal>{Counting({5, 4}), Counting({2})}, options);
  EXPECT_TRUE(outputs[0].BitwiseEquals(Counting({5, 4})));
  EXPECT_TRUE(outputs[1].BitwiseEquals(Counting({2})));
}

}  // namespace
}  // namespace gspmd
