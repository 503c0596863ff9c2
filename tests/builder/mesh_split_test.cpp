// mesh_split: the sharding text written for 1-D/2-D/3-D meshes and device orders, the
// partially specified form, user errors, and modules that print and parse again.
#include <gtest/gtest.h>

#include "builder/mesh_split.h"
#include "ir/verifier.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

std::string Text(const Mesh& mesh, const std::vector<int64_t>& mapping, int64_t rank) {
  return MeshSharding(mesh, mapping, rank).ToString();
}

// The UserError message of `body`, or "" when it does not throw one.
template <typename F>
std::string ErrorOf(F body) {
  try {
    body();
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(MeshSplitTest, OneDimensionalMesh) {
  Mesh mesh = MakeMesh({{"x", 8}});
  EXPECT_EQ(Text(mesh, {0, -1}, 2), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(Text(mesh, {-1, 0}, 2), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(Text(mesh, {-1, -1}, 2), "{replicated}");
  EXPECT_EQ(Text(mesh, {}, 0), "{replicated}");
}

TEST(MeshSplitTest, OneDimensionalMeshWithDeviceOrder) {
  Mesh mesh = MakeMesh({{"x", 4}}, {0, 2, 1, 3});
  EXPECT_EQ(Text(mesh, {0}, 1), "{devices=[4]0,2,1,3}");
  EXPECT_EQ(Text(mesh, {-1, 0, -1}, 3), "{devices=[1,4,1]0,2,1,3}");
  // The default order given explicitly prints compactly.
  EXPECT_EQ(Text(MakeMesh({{"x", 4}}, {0, 1, 2, 3}), {0}, 1), "{devices=[4]<=[4]}");
}

// The same texts JAX wrote for P('data', ...) / P(None, 'model') on mesh (data=2, model=4)
// (tests/data/corpus/gspmd/megatron_mlp/pre.hlo).
TEST(MeshSplitTest, TwoDimensionalMeshMatchesJax) {
  Mesh mesh = MakeMesh({{"data", 2}, {"model", 4}});
  EXPECT_EQ(Text(mesh, {0, -1, -1}, 3), "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Text(mesh, {-1, 1}, 2), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Text(mesh, {1, -1}, 2), "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Text(mesh, {0, 1}, 2), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(Text(mesh, {1, 0}, 2), "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_EQ(Text(mesh, {-1, -1}, 2), "{replicated}");
}

TEST(MeshSplitTest, TwoDimensionalMeshWithDeviceOrder) {
  // Devices [[3,1],[2,0]]: splitting dim 0 over the minor axis takes columns (3,2) and (1,0);
  // the replicated groups are the rows, listed sorted.
  Mesh mesh = MakeMesh({{"a", 2}, {"b", 2}}, {3, 1, 2, 0});
  EXPECT_EQ(Text(mesh, {1, -1}, 2), "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}");
  EXPECT_EQ(Text(mesh, {0, -1}, 2), "{devices=[2,1,2]1,3,0,2 last_tile_dim_replicate}");
  EXPECT_EQ(Text(mesh, {0, 1}, 2), "{devices=[2,2]3,1,2,0}");
  EXPECT_EQ(Text(mesh, {1, 0}, 2), "{devices=[2,2]3,2,1,0}");
}

TEST(MeshSplitTest, ThreeDimensionalMesh) {
  Mesh mesh = MakeMesh({{"x", 2}, {"y", 2}, {"z", 2}});
  EXPECT_EQ(Text(mesh, {0, 1, 2}, 3), "{devices=[2,2,2]<=[8]}");
  EXPECT_EQ(Text(mesh, {2, 0, -1}, 3), "{devices=[2,2,1,2]<=[4,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Text(mesh, {-1, 1}, 2), "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
  Mesh uneven = MakeMesh({{"x", 2}, {"y", 4}, {"z", 1}});
  EXPECT_EQ(Text(uneven, {1, 2}, 2), "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
}

TEST(MeshSplitTest, ThreeDimensionalMeshWithDeviceOrder) {
  Mesh mesh = MakeMesh({{"x", 2}, {"y", 2}, {"z", 2}}, {7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_EQ(Text(mesh, {0, 1, 2}, 3), "{devices=[2,2,2]7,6,5,4,3,2,1,0}");
  // z splits dim 0: z=0 holds (7,5,3,1), z=1 holds (6,4,2,0); x splits dim 1.
  EXPECT_EQ(Text(mesh, {2, 0}, 2), "{devices=[2,2,2]5,7,1,3,4,6,0,2 last_tile_dim_replicate}");
}

TEST(MeshSplitTest, NamedAxes) {
  Mesh mesh = MakeMesh({{"data", 2}, {"model", 4}});
  EXPECT_EQ(DimsMappingFromAxes(mesh, {"model", "", "?", "data"}), (std::vector<int64_t>{1, -1, -2, 0}));
  EXPECT_NE(ErrorOf([&] { DimsMappingFromAxes(mesh, {"expert"}); }).find("no axis 'expert'"), std::string::npos);
}

TEST(MeshSplitTest, WritesShardingCustomCallsAndParameterShardings) {
  Mesh mesh = MakeMesh({{"data", 2}, {"model", 4}});
  ProgramBuilder p("mesh_split");
  Instruction* x = ShardParameter(p.Parameter(F32({8, 16}), "x"), mesh, {0, -1});
  Instruction* w = ShardParameter(p.Parameter(F32({16, 32}), "w"), mesh, {-1, 1});
  Instruction* h = mesh_split(p, p.Einsum("bd,dh->bh", x, w), mesh, std::vector<int64_t>{0, 1});
  Instruction* open = mesh_split(p, p.Relu(h), mesh, std::vector<int64_t>{0, kUnspecified});
  std::unique_ptr<Module> module = p.Build(open, MeshSharding(mesh, {0, -1}, 2));
  VerifyModule(*module);
  EXPECT_EQ(module->num_partitions(), 8);

  EXPECT_EQ(PrintInstruction(*x), "%x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(h->custom_call_target, "Sharding");
  EXPECT_EQ(h->sharding()->ToString(), "{devices=[2,4]<=[8]}");
  EXPECT_FALSE(h->backend_config.has_value());
  std::string open_text = PrintInstruction(*open);
  EXPECT_NE(open_text.find("custom_call_target=\"Sharding\""), std::string::npos) << open_text;
  EXPECT_NE(open_text.find("sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}"), std::string::npos) << open_text;
  EXPECT_NE(open_text.find("backend_config=\"unspecified_dims=[1]\""), std::string::npos) << open_text;
  EXPECT_EQ(module->entry()->root()->sharding()->ToString(), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");

  // Prints and parses back to the same text.
  std::string text = PrintModule(*module);
  std::unique_ptr<Module> reparsed = ParseModule(text, "mesh_split.hlo");
  EXPECT_EQ(PrintModule(*reparsed), text);
  EXPECT_NE(text.find("entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0})->f32[8,32]{1,0}}"),
            std::string::npos)
      << text;
}

TEST(MeshSplitTest, PartialResultShardingsBecomeConstraints) {
  Mesh mesh = MakeMesh({{"x", 4}});
  ProgramBuilder p("partial_results");
  Instruction* a = p.Parameter(F32({8}), "a");
  Instruction* b = p.Exp(a);
  std::unique_ptr<Module> module = p.Build({a, b}, {MeshSharding(mesh, {0}, 1), std::nullopt});
  Instruction* root = module->entry()->root();
  EXPECT_FALSE(root->sharding().has_value());
  EXPECT_EQ(root->operand(0)->custom_call_target, "Sharding");
  EXPECT_EQ(root->operand(1), b);
  EXPECT_EQ(module->num_partitions(), 4);
  ParseModule(PrintModule(*module));
}

TEST(MeshSplitTest, ResultShardingNeverOverwritesAnAnnotation) {
  Mesh mesh = MakeMesh({{"x", 4}});
  ProgramBuilder p("keep_annotation");
  Instruction* a = p.Parameter(F32({8}), "a");
  Instruction* split = mesh_split(p, p.Exp(a), mesh, std::vector<int64_t>{0});
  std::unique_ptr<Module> module = p.Build(split, Sharding::Replicated());
  Instruction* root = module->entry()->root();
  EXPECT_EQ(root->opcode(), Opcode::kCopy);
  EXPECT_EQ(root->sharding()->ToString(), "{replicated}");
  EXPECT_EQ(split->sharding()->ToString(), "{devices=[4]<=[4]}");
}

TEST(MeshSplitTest, BadDimsMappingsAreUserErrors) {
  Mesh mesh = MakeMesh({{"data", 2}, {"model", 4}});
  ProgramBuilder p("errors");
  Instruction* x = p.Parameter(F32({8, 16}), "x");
  std::string wrong_length = ErrorOf([&] { mesh_split(p, x, mesh, std::vector<int64_t>{0}); });
  EXPECT_NE(wrong_length.find("%x"), std::string::npos) << wrong_length;
  EXPECT_NE(wrong_length.find("has 1 entries, expected 2"), std::string::npos) << wrong_length;

  std::string twice = ErrorOf([&] { mesh_split(p, x, mesh, std::vector<int64_t>{1, 1}); });
  EXPECT_NE(twice.find("uses mesh dim 1 ('model') for tensor dims 0 and 1"), std::string::npos) << twice;

  std::string out_of_range = ErrorOf([&] { mesh_split(p, x, mesh, std::vector<int64_t>{2, -1}); });
  EXPECT_NE(out_of_range.find("maps tensor dim 0 to mesh dim 2, out of range"), std::string::npos) << out_of_range;
  std::string negative = ErrorOf([&] { mesh_split(p, x, mesh, std::vector<int64_t>{-3, -1}); });
  EXPECT_NE(negative.find("mesh dim -3"), std::string::npos) << negative;

  std::string open_parameter = ErrorOf([&] { ShardParameter(x, mesh, {0, kUnspecified}); });
  EXPECT_NE(open_parameter.find("parameter shardings must be complete"), std::string::npos) << open_parameter;
  std::string not_parameter = ErrorOf([&] { ShardParameter(p.Exp(x), mesh, {0, -1}); });
  EXPECT_NE(not_parameter.find("not a parameter"), std::string::npos) << not_parameter;
}

TEST(MeshSplitTest, BadMeshesAreUserErrors) {
  EXPECT_NE(ErrorOf([] { MakeMesh({{"a", 2}, {"a", 2}}); }).find("names axis 'a' twice"), std::string::npos);
  EXPECT_NE(ErrorOf([] { MakeMesh({{"a", 0}}); }).find("size 0"), std::string::npos);
  EXPECT_NE(ErrorOf([] { MakeMesh({{"a", 2}}, {0, 1, 2}); }).find("3 device ids for 2 positions"), std::string::npos);
  EXPECT_NE(ErrorOf([] { MakeMesh({{"a", 2}}, {1, 1}); }).find("lists device 1 twice"), std::string::npos);
  EXPECT_NE(ErrorOf([] { MakeMesh({{"", 2}}); }).find("unnamed axis"), std::string::npos);
}

// A tensor dim split over several mesh axes at once (JAX's P(('x', 'y'), None)).
TEST(MeshSplitTest, DimsSplitOverSeveralAxes) {
  Mesh mesh = MakeMesh({{"x", 2}, {"y", 4}});
  auto text = [&](const PartitionSpec& spec, int64_t rank) {
    return MeshShardingOverAxes(mesh, DimAxesFromSpec(mesh, spec), rank).ToString();
  };
  EXPECT_EQ(text({{"x", "y"}, {}}, 2), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(text({{"y", "x"}, {}}, 2), "{devices=[8,1]<=[2,4]T(1,0)}");
  EXPECT_EQ(text({{}, {"y"}}, 2), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(text({{"y"}, {"x"}}, 2), MeshSharding(mesh, {1, 0}, 2).ToString());
  EXPECT_EQ(SpecText({{"x", "y"}, {}, {"y"}}), "P(('x', 'y'), None, 'y')");
  EXPECT_NE(ErrorOf([&] { text({{"x"}, {"x"}}, 2); }).find("splits both tensor dims 0 and 1"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { DimAxesFromSpec(mesh, {{"z"}}); }).find("no axis 'z'"), std::string::npos);
  // In a program: the parameter sharding and a partially open mesh_split.
  ProgramBuilder p("spec");
  Instruction* w = ShardParameter(p.Parameter(F32({8, 6}), "w"), mesh, PartitionSpec{{"x", "y"}, {}});
  Instruction* v = mesh_split(p, p.Neg(w), mesh, PartitionSpec{{"?"}, {"y"}});
  EXPECT_EQ(w->sharding()->ToString(), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(v->backend_config, "\"unspecified_dims=[0]\"");
}

}  // namespace
}  // namespace gspmd
