// Tests of ScaleShardingMesh / ScaleModuleMesh (shardings moved onto a bigger mesh), and that a
// rescaled program partitions without offset tables that grow with the device count.
#include <gtest/gtest.h>

#include "partitioner/partition_test_harness.h"
#include "partitioner/mesh_rewrite.h"
#include "sharding/sharding_text.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

using partition_test::ExpectSameNumbers;
using partition_test::InstructionsWith;
using partition_test::Partitioned;

Sharding Parse(const std::string& text) { return ParseSharding(text); }

std::string Scaled(const std::string& text, const MeshScale& scale) {
  return ScaleShardingMesh(Parse(text), scale).ToString();
}

const MeshScale k32x64{{2, 4}, {16, 16}};

TEST(MeshRewriteTest, ScalesEveryMeshAxis) {
  EXPECT_EQ(Scaled("{devices=[2,4]<=[8]}", k32x64), "{devices=[32,64]<=[2048]}");
  EXPECT_EQ(Scaled("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", k32x64),
            "{devices=[32,1,64]<=[2048] last_tile_dim_replicate}");
  EXPECT_EQ(Scaled("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", k32x64),
            "{devices=[1,64,32]<=[32,64]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Scaled("{devices=[4,2]<=[2,4]T(1,0)}", k32x64), "{devices=[64,32]<=[32,64]T(1,0)}");
}

TEST(MeshRewriteTest, KeepsReplicatedManualAndMovesMaximal) {
  EXPECT_EQ(Scaled("{replicated}", k32x64), "{replicated}");
  EXPECT_EQ(Scaled("{manual}", k32x64), "{manual}");
  // Device 5 = mesh (1, 1) -> (16, 16) on the 32x64 mesh.
  EXPECT_EQ(Scaled("{maximal device=5}", k32x64), "{maximal device=1040}");
  EXPECT_EQ(Scaled("{{replicated}, {devices=[2,4]<=[8]}}", k32x64), "{{replicated}, {devices=[32,64]<=[2048]}}");
}

TEST(MeshRewriteTest, MinorPartOfASplitMeshAxisKeepsItsSize) {
  // The 4-way axis split 2x2 between two dims: only its major half grows.
  Sharding scaled = ScaleShardingMesh(Parse("{devices=[1,2,2,2]<=[8] last_tile_dim_replicate}"), k32x64);
  EXPECT_EQ(scaled.tile_assignment().dims(), (std::vector<int64_t>{1, 32, 32, 2}));
  EXPECT_EQ(scaled.RequiredDeviceCount(), 2048);
}

TEST(MeshRewriteTest, NewSizeOneAxisIsReplicated) {
  MeshScale replicated{{2, 4, 1}, {1, 1, 256}};
  EXPECT_EQ(Scaled("{devices=[2,4]<=[8]}", replicated), "{devices=[2,4,256]<=[2048] last_tile_dim_replicate}");
  EXPECT_EQ(Scaled("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", replicated),
            "{devices=[2,1,1024]<=[2048] last_tile_dim_replicate}");
}

TEST(MeshRewriteTest, RejectsNonIotaDeviceOrders) {
  EXPECT_THROW(ScaleShardingMesh(Parse("{devices=[8]0,1,2,3,4,5,7,6}"), k32x64), UserError);
}

constexpr char kMlp[] = R"(HloModule mlp, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[8,12], w: f32[12,6]) -> f32[8] {
  %x = f32[8,12]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %w = f32[12,6]{1,0} parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  %y = f32[8,6]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2]<=[4]}
  %t = f32[8,6]{1,0} tanh(%y), sharding={devices=[2,2]<=[4]}
  %zero = f32[] constant(0), sharding={replicated}
  ROOT %r = f32[8]{0} reduce(%t, %zero), dimensions={1}, to_apply=%sum, sharding={devices=[2,2]<=[4] last_tile_dim_replicate}
}
)";

TEST(MeshRewriteTest, ModuleRescaledTo16DevicesPartitionsAndMatchesTheInterpreter) {
  std::unique_ptr<Module> module = ParseModule(kMlp);
  ScaleModuleMesh(*module, MeshScale{{2, 2}, {2, 2}});  // 4x4: dim 6 splits 4 ways unevenly
  EXPECT_EQ(module->num_partitions(), 16);
  Partitioned p = partition_test::Partition(PrintModule(*module));
  ExpectSameNumbers(p);
}

TEST(MeshRewriteTest, ModuleRescaledTo64DevicesMatchesTheInterpreter) {
  // 8x8: moving axes of 8 cut into primes would give more axes than the planner searches
  // exhaustively, so this runs its whole-axis search.
  std::unique_ptr<Module> module = ParseModule(kMlp);
  ScaleModuleMesh(*module, MeshScale{{2, 2}, {4, 4}});
  Partitioned p = partition_test::Partition(PrintModule(*module));
  ExpectSameNumbers(p);
}

TEST(MeshRewriteTest, OffsetsOn2048DevicesNeedNoTables) {
  std::unique_ptr<Module> module = ParseModule(kMlp);
  ScaleModuleMesh(*module, MeshScale{{2, 2}, {32, 16}});  // 64x32
  Partitioned p = partition_test::Partition(PrintModule(*module));
  for (const Instruction* constant : InstructionsWith(*p.module, Opcode::kConstant))
    EXPECT_LE(constant->shape().element_count(), 1) << PrintInstruction(*constant);
  EXPECT_LT(p.text.size(), 20000u) << p.text;
}

TEST(MeshRewriteTest, RejectsAMeshOfAnotherSize) {
  std::unique_ptr<Module> module = ParseModule(kMlp);
  EXPECT_THROW(ScaleModuleMesh(*module, k32x64), UserError);
}

}  // namespace
}  // namespace gspmd
