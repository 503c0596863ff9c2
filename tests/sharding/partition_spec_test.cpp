// PartitionSpecs of XLA shardings: hand-picked layouts (replicated, several axes on one dim,
// device orders, axes of size 1, shardings with no spec), the --mesh text, and randomized round
// trips spec -> MeshShardingOverAxes -> PartitionSpecAxesOf -> the same layout.
#include <gtest/gtest.h>

#include <random>

#include "builder/mesh_split.h"
#include "sharding/partition_spec.h"
#include "sharding/sharding_text.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

Sharding Of(const std::string& text) { return ParseSharding(text); }

std::string SpecOf(const std::string& sharding, int64_t rank, const Mesh& mesh) {
  return PartitionSpecOf(Of(sharding), rank, mesh).value_or("(none)");
}

template <typename F>
std::string ErrorOf(F body) {
  try {
    body();
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

// Which data tile each device holds (row-major over the tensor dims): the layout a spec means.
std::vector<int64_t> Layout(const Sharding& sharding, int64_t rank, int64_t devices) {
  std::vector<int64_t> tile(devices, 0);
  if (sharding.IsReplicated()) return tile;
  const TileAssignment& tiles = sharding.tile_assignment();
  int64_t data = 1;
  for (int64_t d = 0; d < rank; ++d) data *= tiles.dim(d);
  for (int64_t i = 0; i < tiles.num_elements(); ++i) tile[tiles.DeviceAtLinear(i)] = i / (devices / data);
  return tile;
}

TEST(PartitionSpecTest, NamedAxesOfTheCommonLayouts) {
  const Mesh mesh = MakeMesh({{"data", 2}, {"model", 4}});
  EXPECT_EQ(SpecOf("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", 2, mesh), "P('data', None)");
  EXPECT_EQ(SpecOf("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", 2, mesh), "P(None, 'model')");
  EXPECT_EQ(SpecOf("{devices=[2,4]<=[8]}", 2, mesh), "P('data', 'model')");
  EXPECT_EQ(SpecOf("{devices=[4,2]<=[2,4]T(1,0)}", 2, mesh), "P('model', 'data')");
  EXPECT_EQ(SpecOf("{devices=[8,1]<=[8]}", 2, mesh), "P(('data', 'model'), None)");
  EXPECT_EQ(SpecOf("{devices=[1,8]<=[2,4]T(1,0)}", 2, mesh), "P(None, ('model', 'data'))");
  EXPECT_EQ(SpecOf("{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", 1, mesh), "P('model')");
  // One entry per dim: trailing Nones are kept, a replicated value reads P(None, None).
  EXPECT_EQ(SpecOf("{replicated}", 2, mesh), "P(None, None)");
  EXPECT_EQ(SpecOf("{replicated}", 0, mesh), "P()");
  EXPECT_EQ(SpecOf("{devices=[1,1,8]<=[8] last_tile_dim_replicate}", 2, mesh), "P(None, None)");
}

TEST(PartitionSpecTest, ShardingsWithoutASpec) {
  const Mesh mesh = MakeMesh({{"data", 2}, {"model", 4}});
  EXPECT_EQ(SpecOf("{maximal device=3}", 2, mesh), "(none)");
  EXPECT_EQ(SpecOf("{manual}", 2, mesh), "(none)");
  EXPECT_EQ(SpecOf("{devices=[2,1,4]<=[8] last_tile_dims={manual}}", 2, mesh), "(none)");
  EXPECT_EQ(SpecOf("{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}", 2, mesh), "(none)");
  EXPECT_EQ(SpecOf("{devices=[4,1]<=[4]}", 2, mesh), "(none)");             // 4 of 8 devices
  EXPECT_EQ(SpecOf("{devices=[2,4]0,2,1,3,4,5,6,7}", 2, mesh), "(none)");    // no product of axes
  EXPECT_EQ(SpecOf("{devices=[2,1,4]<=[8] last_tile_dim_replicate}", 3, mesh), "(none)");  // wrong rank
  EXPECT_FALSE(PartitionSpecOf(Of("{devices=[2]<=[2]}"), 1, Mesh{}).has_value());
}

TEST(PartitionSpecTest, DeviceOrderAndAxesOfSizeOne) {
  const Mesh reversed = MakeMesh({{"x", 2}, {"y", 2}}, {3, 2, 1, 0});
  EXPECT_EQ(SpecOf("{devices=[2,2]3,2,1,0}", 2, reversed), "P('x', 'y')");
  EXPECT_EQ(SpecOf("{devices=[2,2]<=[4]}", 2, reversed), "(none)");
  const Mesh with_one = MakeMesh({{"stage", 1}, {"data", 4}});
  EXPECT_EQ(SpecOf("{devices=[4,1]<=[4]}", 2, with_one), "P('data', None)");
  EXPECT_EQ(ShardingTextWithSpec(Of("{devices=[4,1]<=[4]}"), 2, &with_one), "{devices=[4,1]<=[4]} P('data', None)");
  EXPECT_EQ(ShardingTextWithSpec(Of("{devices=[4,1]<=[4]}"), 2, nullptr), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(ShardingTextWithSpec(Of("{maximal device=0}"), 2, &with_one), "{maximal device=0}");
}

TEST(PartitionSpecTest, MeshFlag) {
  const Mesh mesh = ParseMeshFlag("data=2,model=4", "--mesh");
  EXPECT_EQ(mesh.ToString(), "mesh['data'=2,'model'=4]");
  EXPECT_EQ(MeshFlagText(mesh), "data=2,model=4");
  EXPECT_EQ(ErrorOf([] { ParseMeshFlag("data=2,model=x", "gspmd show: error: --mesh"); }),
            "gspmd show: error: --mesh 'data=2,model=x': item 2 'model=x' (at column 8): expected AXIS=N,... with "
            "positive sizes (e.g. data=2,model=4)");
  EXPECT_NE(ErrorOf([] { ParseMeshFlag("data=2,data=4", "--mesh"); }).find("names axis 'data' twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseMeshFlag("data=0", "--mesh"); }).find("item 1 'data=0'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseMeshFlag("data=2,", "--mesh"); }).find("item 2 ''"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseMeshFlag("", "--mesh"); }).find("--mesh is empty"), std::string::npos);
  EXPECT_NE(ErrorOf([] { ParseMeshFlag("2d=2", "--mesh"); }).find("item 1 '2d=2'"), std::string::npos);
}

// Random meshes (1 to 4 axes of size 1 to 4, sometimes in a shuffled device order) and random
// specs (each axis on a random dim, in a random order, or unused): the spec found for the
// sharding they give lays the value out the same way, and lists no axis of size 1.
TEST(PartitionSpecTest, RandomRoundTrips) {
  std::mt19937 random(20261206);
  const char* const names[] = {"a", "b", "c", "d"};
  for (int trial = 0; trial < 2000; ++trial) {
    const int num_axes = 1 + static_cast<int>(random() % 4);
    std::vector<std::pair<std::string, int64_t>> axes;
    int64_t devices = 1;
    for (int a = 0; a < num_axes; ++a) {
      axes.emplace_back(names[a], 1 + static_cast<int64_t>(random() % 4));
      devices *= axes.back().second;
    }
    std::vector<int64_t> order;
    if (random() % 3 == 0) {
      for (int64_t i = 0; i < devices; ++i) order.push_back(i);
      std::shuffle(order.begin(), order.end(), random);
    }
    const Mesh mesh = MakeMesh(axes, order);
    const int64_t rank = static_cast<int64_t>(random() % 4);
    std::vector<std::vector<int64_t>> dim_axes(rank);
    std::vector<int64_t> shuffled;
    for (int64_t a = 0; a < num_axes; ++a) shuffled.push_back(a);
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    for (int64_t a : shuffled) {
      const int64_t dim = static_cast<int64_t>(random() % (rank + 1));
      if (dim < rank) dim_axes[dim].push_back(a);
    }
    const Sharding sharding = MeshShardingOverAxes(mesh, dim_axes, rank);
    const std::optional<PartitionSpec> spec = PartitionSpecAxesOf(sharding, rank, mesh);
    ASSERT_TRUE(spec.has_value()) << mesh.ToString() << " " << sharding.ToString();
    ASSERT_EQ(static_cast<int64_t>(spec->size()), rank);
    for (const auto& dim : *spec)
      for (const std::string& name : dim) EXPECT_GT(mesh.axes[mesh.AxisIndex(name)].size, 1);
    const Sharding again = MeshShardingOverAxes(mesh, DimAxesFromSpec(mesh, *spec), rank);
    EXPECT_EQ(Layout(again, rank, devices), Layout(sharding, rank, devices))
        << mesh.ToString() << " " << sharding.ToString() << " -> " << SpecText(*spec) << " -> " << again.ToString();
  }
}

}  // namespace
}  // namespace gspmd
