// Tests of manual (shard_map) regions: SPMDFullToShardShape / SPMDShardToFullShape, partially
// manual regions with user collectives, Shardy's xla.sdy.* form, and loops inside regions.
// The interpreter cannot run manual regions on one device, so expected values are computed
// here by hand (or read from the reference corpus).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/npy.h"
#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

// A literal of `shape` whose element at (row, column) is f(row, column) (rank 2).
Literal Table(const Shape& shape, const std::function<double(int64_t, int64_t)>& f) {
  Literal literal(shape);
  int64_t columns = shape.dim(1);
  for (int64_t e = 0; e < literal.element_count(); ++e) literal.SetFromDouble(e, f(e / columns, e % columns));
  return literal;
}

double At(const Literal& literal, int64_t row, int64_t column) {
  return literal.GetAsDouble(row * literal.shape().dim(1) + column);
}

// 2x4 mesh (a=2 major, b=4 minor); the region is manual over a, b stays automatic.
constexpr const char* kPartialLocal = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}";

std::string PartiallyManual(const std::string& body_lines, const std::string& result_shape) {
  std::string text = std::string("HloModule m, num_partitions=8\n") + kSum + R"(
ENTRY %main (x: f32[8,16]) -> )" + result_shape + R"( {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %local = f32[4,16]{1,0} custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding=LOCAL
)" + body_lines + "}\n";
  for (size_t at; (at = text.find("LOCAL")) != std::string::npos;) text.replace(at, 5, kPartialLocal);
  return text;
}

const std::vector<PartitionCase> kCases = {
    {.name = "FullToShardAndBackKeepsTheUserAllReduce",
     .hlo = std::string("HloModule m, num_partitions=8\n") + kSum + R"(
ENTRY %main (x: f32[16,32]) -> f32[1,32] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %cp = f32[16,32]{1,0} copy(%x), sharding={devices=[8,1]<=[8]}
  %local = f32[2,32]{1,0} custom-call(%cp), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %zero = f32[] constant(0), sharding={manual}
  %r = f32[32]{0} reduce(%local, %zero), dimensions={0}, to_apply=%sum, sharding={manual}
  %rs = f32[1,32]{1,0} reshape(%r), sharding={manual}
  %ar = f32[1,32]{1,0} all-reduce(%rs), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=%sum, sharding={manual}
  ROOT %full = f32[1,32]{1,0} custom-call(%ar), custom_call_target="SPMDShardToFullShape", sharding={replicated}
}
)",
     .expect = {.collectives = 1, .counts = {{Opcode::kCustomCall, 0}}},
     .check =
         [](const Partitioned& p) {
           const Instruction* all_reduce = TheOnly(p, Opcode::kAllReduce);
           if (all_reduce != nullptr) {
             EXPECT_TRUE(all_reduce->use_global_device_ids);
             EXPECT_EQ(all_reduce->replica_groups().ToString(), "{{0,1,2,3,4,5,6,7}}") << p.text;
           }
           const Instruction* reduce = TheOnly(p, Opcode::kReduce);
           if (reduce != nullptr) EXPECT_EQ(reduce->operand(0)->shape().dims(), (Dims{2, 32}));
         },
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(Shape(ElementType::kF32, {1, 32}), [&](int64_t, int64_t c) {
             double total = 0;
             for (int64_t r = 0; r < 16; ++r) total += At(in[0], r, c);
             return total;
           });
         }},
    {.name = "ShardToFullIntoATiledResultNeedsNoCommunication",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY %main (x: f32[16,32]) -> f32[16,32] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %local = f32[2,32]{1,0} custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %double = f32[2,32]{1,0} add(%local, %local), sharding={manual}
  ROOT %full = f32[16,32]{1,0} custom-call(%double), custom_call_target="SPMDShardToFullShape", sharding={devices=[8,1]<=[8]}
}
)",
     .expect = {.collectives = 0},
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(in[0].shape(), [&](int64_t r, int64_t c) { return 2 * At(in[0], r, c); });
         }},
    // x is column-sharded, but the manual region wants 2-row blocks: one all-to-all.
    {.name = "FullToShardReshardsAnOperandInAnotherLayout",
     .hlo = std::string("HloModule m, num_partitions=8\n") + kSum + R"(
ENTRY %main (x: f32[16,32]) -> f32[8,32] {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %local = f32[2,32]{1,0} custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %zero = f32[] constant(0), sharding={manual}
  %r = f32[32]{0} reduce(%local, %zero), dimensions={0}, to_apply=%sum, sharding={manual}
  %rs = f32[1,32]{1,0} reshape(%r), sharding={manual}
  ROOT %full = f32[8,32]{1,0} custom-call(%rs), custom_call_target="SPMDShardToFullShape", sharding={devices=[8,1]<=[8]}
}
)",
     .expect = {.counts = {{Opcode::kAllGather, 0}}, .at_least = {{Opcode::kAllToAll, 1}}},
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(Shape(ElementType::kF32, {8, 32}),
                        [&](int64_t r, int64_t c) { return At(in[0], 2 * r, c) + At(in[0], 2 * r + 1, c); });
         }},
    // in_specs P(): every device gets the whole value; the region's result is replicated.
    {.name = "ReplicatedInputEntersWhole",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY %main (x: f32[6,5]) -> f32[6,5] {
  %x = f32[6,5]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %local = f32[6,5]{1,0} custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %m = f32[6,5]{1,0} multiply(%local, %local), sharding={manual}
  ROOT %full = f32[6,5]{1,0} custom-call(%m), custom_call_target="SPMDShardToFullShape", sharding={replicated}
}
)",
     .expect = {.counts = {{Opcode::kAllGather, 1}}},
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(in[0].shape(), [&](int64_t r, int64_t c) { return At(in[0], r, c) * At(in[0], r, c); });
         }},
    {.name = "PartiallyManualRegionWithUserAllReduce",
     .hlo = PartiallyManual(R"(  %sq = f32[4,16]{1,0} multiply(%local, %local), sharding=LOCAL
  %ar = f32[4,16]{1,0} all-reduce(%sq), channel_id=1, replica_groups={{0,4},{1,5},{2,6},{3,7}}, use_global_device_ids=true, to_apply=%sum, sharding=LOCAL
  ROOT %full = f32[8,16]{1,0} custom-call(%ar), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,4]<=[8]}
)", "f32[8,16]"),
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           const Instruction* all_reduce = TheOnly(p, Opcode::kAllReduce);
           if (all_reduce == nullptr) return;
           EXPECT_EQ(all_reduce->shape().dims(), (Dims{4, 4})) << p.text;
           EXPECT_EQ(all_reduce->replica_groups().ToString(), "{{0,4},{1,5},{2,6},{3,7}}") << p.text;
         },
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(in[0].shape(), [&](int64_t r, int64_t c) {
             double a = At(in[0], r % 4, c), b = At(in[0], r % 4 + 4, c);
             return a * a + b * b;
           });
         }},
    // The user gathers dim 1 over the manual axis while b splits dim 1: b's split is undone
    // around the user's all-gather and redone after it.
    {.name = "PartiallyManualAllGatherAlongAnAutomaticallyShardedDim",
     .hlo = PartiallyManual(R"(  %ag = f32[4,32]{1,0} all-gather(%local), channel_id=1, replica_groups={{0,4},{1,5},{2,6},{3,7}}, dimensions={1}, use_global_device_ids=true, sharding=LOCAL
  ROOT %full = f32[8,32]{1,0} custom-call(%ag), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,4]<=[8]}
)", "f32[8,32]"),
     .check =
         [](const Partitioned& p) {
           bool kept = false;
           for (const Instruction* gather : InstructionsWith(*p.module, Opcode::kAllGather))
             kept = kept || gather->replica_groups().ToString() == "{{0,4},{1,5},{2,6},{3,7}}";
           EXPECT_TRUE(kept) << p.text;
         },
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(Shape(ElementType::kF32, {8, 32}), [&](int64_t r, int64_t c) {
             return c < 16 ? At(in[0], r % 4, c) : At(in[0], r % 4 + 4, c - 16);
           });
         }},
    // %n holds each manual group's whole local value (replicated over b): b's split of dim 1
    // is gathered before it, and the exit slices the result back.
    {.name = "PartiallyManualOpReplicatedOverTheAutomaticAxis",
     .hlo = PartiallyManual(R"(  %n = f32[4,16]{1,0} negate(%local), sharding={devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}
  ROOT %full = f32[8,16]{1,0} custom-call(%n), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,4]<=[8]}
)", "f32[8,16]"),
     .expect = {.counts = {{Opcode::kAllGather, 1}}},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kNegate), (Dims{4, 16})); },
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(in[0].shape(), [&](int64_t r, int64_t c) { return -At(in[0], r, c); });
         }},
    {.name = "WhileLoopInsideAManualRegion",
     .hlo = R"(HloModule m, num_partitions=4

%body (p: (s32[], f32[2,6])) -> (s32[], f32[2,6]) {
  %p = (s32[], f32[2,6]{1,0}) parameter(0), sharding={{manual}, {manual}}
  %i = s32[] get-tuple-element(%p), index=0, sharding={manual}
  %v = f32[2,6]{1,0} get-tuple-element(%p), index=1, sharding={manual}
  %one = s32[] constant(1), sharding={manual}
  %next = s32[] add(%i, %one), sharding={manual}
  %sq = f32[2,6]{1,0} multiply(%v, %v), sharding={manual}
  %w = f32[2,6]{1,0} subtract(%sq, %v), sharding={manual}
  ROOT %r = (s32[], f32[2,6]{1,0}) tuple(%next, %w), sharding={{manual}, {manual}}
}

%cond (q: (s32[], f32[2,6])) -> pred[] {
  %q = (s32[], f32[2,6]{1,0}) parameter(0), sharding={{manual}, {manual}}
  %j = s32[] get-tuple-element(%q), index=0, sharding={manual}
  %n = s32[] constant(3), sharding={manual}
  ROOT %lt = pred[] compare(%j, %n), direction=LT, sharding={manual}
}

ENTRY %main (x: f32[8,6]) -> f32[8,6] {
  %x = f32[8,6]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %local = f32[2,6]{1,0} custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %zero = s32[] constant(0), sharding={manual}
  %init = (s32[], f32[2,6]{1,0}) tuple(%zero, %local), sharding={{manual}, {manual}}
  %loop = (s32[], f32[2,6]{1,0}) while(%init), condition=%cond, body=%body, sharding={{manual}, {manual}}
  %res = f32[2,6]{1,0} get-tuple-element(%loop), index=1, sharding={manual}
  ROOT %full = f32[8,6]{1,0} custom-call(%res), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
}
)",
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* loop = TheOnly(p, Opcode::kWhile);
           if (loop != nullptr) EXPECT_EQ(loop->shape().tuple_shape(1).dims(), (Dims{2, 6}));
         },
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(in[0].shape(), [&](int64_t r, int64_t c) {
             float v = static_cast<float>(At(in[0], r, c));
             for (int step = 0; step < 3; ++step) v = v * v - v;
             return static_cast<double>(v);
           });
         }},
    {.name = "ShardyRegionWithTwoOperandsAndAPartiallyManualMesh",
     .hlo = R"(HloModule m, num_partitions=8, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=2, "b"=4]>}}

%xla.sdy.manual_computation_body (l: f32[4,16], s: f32[4,16]) -> f32[4,16] {
  %l = f32[4,16]{1,0} parameter(0), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
  %s = f32[4,16]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
  ROOT %m = f32[4,16]{1,0} multiply(%l, %s), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
}

ENTRY %main (x: f32[8,16], y: f32[4,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %y = f32[4,16]{1,0} parameter(1), sharding={replicated}
  %g = (f32[4,16]{1,0}, f32[4,16]{1,0}) custom-call(%x, %y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>, <@mesh, [{}, {\"b\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"a\"}>"}, sharding={{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}, {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}}
  %g0 = f32[4,16]{1,0} get-tuple-element(%g), index=0, sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
  %g1 = f32[4,16]{1,0} get-tuple-element(%g), index=1, sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
  %c = f32[4,16]{1,0} call(%g0, %g1), to_apply=%xla.sdy.manual_computation_body, frontend_attributes={inlineable="xla_late"}, sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}
  ROOT %out = f32[8,16]{1,0} custom-call(%c), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"a\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>"}, sharding={devices=[2,4]<=[8]}
}
)",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kCall), (Dims{4, 4})); },
     .expected =
         [](const std::vector<Literal>& in) {
           return Table(in[0].shape(), [&](int64_t r, int64_t c) { return At(in[0], r, c) * At(in[1], r % 4, c); });
         }},
};

PARTITION_CASE_TESTS(ManualPartitionTest, kCases);

TEST(ManualPartitionTest, ShardyPreFormOfTheCorpusRunsToTheReferenceOutput) {
  // pre.hlo: xla.sdy.GlobalToLocalShape / LocalToGlobalShape around the body call, with the
  // mesh in the module's frontend attributes and no shardings inside.
  const std::string dir = std::string(GSPMD_TEST_DATA_DIR) + "/corpus/shardy/shard_map_psum/";
  std::unique_ptr<Module> pre = ParseModuleFile(dir + "pre.hlo");
  pre->set_num_partitions(8);
  Partitioned p = PartitionParsed(std::move(pre));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;  // the user's psum only
  std::vector<Literal> inputs;
  inputs.push_back(ReadNpy(dir + "in0.npy"));
  ExpectResult(p, inputs, ReadNpy(dir + "out0.npy"));
}

TEST(ManualPartitionTest, BadShardyAttributeIsAUserError) {
  std::unique_ptr<Module> module = ParseModule(R"(HloModule m, num_partitions=2, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=2]>}}
ENTRY %main (x: f32[4]) -> f32[2] {
  %x = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}
  ROOT %g = f32[2]{0} custom-call(%x), custom_call_target="xla.sdy.GlobalToLocalShape", frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@nomesh, [{\"a\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"a\"}>"}, sharding={manual}
}
)");
  try {
    PartitionModule(*module);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("@nomesh"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace gspmd::partition_test
