// Tests of Sharding: kinds, canonical construction, per-device regions, named-mesh forms.
#include "sharding/sharding.h"

#include <gtest/gtest.h>

#include "ir/shape.h"
#include "sharding/sharding_text.h"

namespace gspmd {
namespace {

using Region = Sharding::ShardRegion;
std::vector<int64_t> V(std::initializer_list<int64_t> v) { return v; }

Shape F32(std::vector<int64_t> dims) { return Shape(ElementType::kF32, std::move(dims)); }

TEST(ShardingTest, Kinds) {
  EXPECT_EQ(Sharding::Replicated().ToString(), "{replicated}");
  EXPECT_EQ(Sharding::Manual().ToString(), "{manual}");
  EXPECT_EQ(Sharding::Unknown().ToString(), "{unknown}");
  EXPECT_EQ(Sharding::Maximal(3).ToString(), "{maximal device=3}");
  EXPECT_EQ(Sharding::Tiled(TileAssignment::Iota({8, 1})).ToString(), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(Sharding::PartiallyReplicated(TileAssignment::Iota({2, 1, 4})).ToString(),
            "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(Sharding::Tuple({}).ToString(), "{}");
}

TEST(ShardingTest, TupleIndexComments) {
  std::vector<Sharding> elements(11, Sharding::Replicated());
  EXPECT_EQ(Sharding::Tuple(elements).ToString(),
            "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, "
            "/*index=5*/{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, "
            "/*index=10*/{replicated}}");
}

TEST(ShardingTest, PartialReplicationCanonicalForms) {
  // Last dim holding all devices: replicated. Last dim 1: plain tiled.
  EXPECT_TRUE(Sharding::PartiallyReplicated(TileAssignment::Iota({1, 8})).IsReplicated());
  EXPECT_EQ(Sharding::PartiallyReplicated(TileAssignment::Iota({8, 1})).ToString(),
            "{devices=[8]<=[8]}");
  // Explicit groups get sorted.
  EXPECT_EQ(Sharding::PartiallyReplicated(TileAssignment({2, 2}, {1, 0, 3, 2})).ToString(),
            "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
}

TEST(ShardingTest, SubgroupNormalization) {
  using T = Sharding::SubgroupType;
  // Replicated then manual is reordered to manual, replicated.
  Sharding s = Sharding::Tiled(TileAssignment::Iota({2, 2, 2}), {T::kReplicated, T::kManual});
  EXPECT_EQ(s.ToString(), "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}");
  EXPECT_EQ(s.subgroup_types(), (std::vector<T>{T::kManual, T::kReplicated}));
  EXPECT_EQ(s.TiledDataRank(), 1);
  // Size-1 subgroup dims vanish.
  EXPECT_EQ(
      Sharding::Tiled(TileAssignment::Iota({4, 1, 2}), {T::kManual, T::kReplicated}).ToString(),
      "{devices=[4,2]<=[8] last_tile_dim_replicate}");
  // Only manual subgroup over all devices: manual.
  EXPECT_TRUE(Sharding::Tiled(TileAssignment::Iota({1, 8}), {T::kManual}).IsManual());
  // A lone replicated subgroup prints as last_tile_dim_replicate.
  EXPECT_EQ(Sharding::Tiled(TileAssignment::Iota({4, 2}), {T::kReplicated}).ToString(),
            "{devices=[4,2]<=[8] last_tile_dim_replicate}");
}

TEST(ShardingTest, EvenRegions) {
  Sharding s = ParseSharding("{devices=[2,4]<=[8]}");
  Region r = s.RegionForDevice(F32({8, 16}), 6);
  EXPECT_EQ(r.offsets, V({4, 8}));
  EXPECT_EQ(r.sizes, V({4, 4}));
  EXPECT_EQ(r.padded_sizes, V({4, 4}));
  EXPECT_EQ(s.ShardDims({8, 16}), V({4, 4}));
  EXPECT_EQ(s.RequiredDeviceCount(), 8);
}

TEST(ShardingTest, UnevenRegions) {
  Sharding s = ParseSharding("{devices=[4]<=[4]}");
  std::vector<int64_t> sizes, offsets;
  for (int64_t d = 0; d < 4; ++d) {
    Region r = s.RegionForDevice(F32({10}), d);
    sizes.push_back(r.sizes[0]);
    offsets.push_back(r.offsets[0]);
    EXPECT_EQ(r.padded_sizes[0], 3);
  }
  EXPECT_EQ(sizes, V({3, 3, 3, 1}));
  EXPECT_EQ(offsets, V({0, 3, 6, 9}));
  sizes.clear();
  offsets.clear();
  for (int64_t d = 0; d < 4; ++d) {
    Region r = s.RegionForDevice(F32({2}), d);
    sizes.push_back(r.sizes[0]);
    offsets.push_back(r.offsets[0]);
    EXPECT_EQ(r.padded_sizes[0], 1);
  }
  EXPECT_EQ(sizes, V({1, 1, 0, 0}));
  EXPECT_EQ(offsets, V({0, 1, 2, 2}));
}

TEST(ShardingTest, PartiallyReplicatedRegions) {
  // [1,4,2]<=[2,4]T(1,0): tile (0,j,k) holds device j + 4k; devices j and j+4 share data.
  Sharding s = ParseSharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  for (int64_t j = 0; j < 4; ++j) {
    Region a = s.RegionForDevice(F32({8, 16}), j);
    Region b = s.RegionForDevice(F32({8, 16}), j + 4);
    EXPECT_EQ(a.offsets, b.offsets);
    EXPECT_EQ(a.offsets, V({0, 4 * j}));
    EXPECT_EQ(a.sizes, V({8, 4}));
  }
}

TEST(ShardingTest, SubgroupRegions) {
  Sharding s = ParseSharding("{devices=[2,2,2]<=[8] last_tile_dims={manual}}");
  // Devices 2k and 2k+1 differ only in the manual dim: same region.
  for (int64_t d = 0; d < 8; d += 2) {
    EXPECT_EQ(s.RegionForDevice(F32({4, 6}), d).offsets,
              s.RegionForDevice(F32({4, 6}), d + 1).offsets);
  }
  EXPECT_EQ(s.RegionForDevice(F32({4, 6}), 6).offsets, V({2, 3}));
}

TEST(ShardingTest, IotaTransposedRegions) {
  Sharding s = ParseSharding("{devices=[4,2]<=[2,4]T(1,0)}");
  // Device 5 is at tile (1,1).
  Region r = s.RegionForDevice(F32({8, 8}), 5);
  EXPECT_EQ(r.offsets, V({2, 4}));
  EXPECT_EQ(r.sizes, V({2, 4}));
}

TEST(ShardingTest, ReplicatedManualMaximalRegions) {
  for (const char* text : {"{replicated}", "{manual}", "{maximal device=2}"}) {
    Region r = ParseSharding(text).RegionForDevice(F32({5, 3}), 2);
    EXPECT_EQ(r.offsets, V({0, 0})) << text;
    EXPECT_EQ(r.sizes, V({5, 3})) << text;
  }
  Sharding m = Sharding::Maximal(2);
  EXPECT_TRUE(m.DeviceHoldsData(2));
  EXPECT_FALSE(m.DeviceHoldsData(1));
  EXPECT_EQ(m.RequiredDeviceCount(), 3);
}

TEST(ShardingTest, SemanticEquality) {
  EXPECT_EQ(ParseSharding("{devices=[4,2]<=[2,4]T(1,0)}"),
            ParseSharding("{devices=[4,2]0,4,1,5,2,6,3,7}"));
  EXPECT_FALSE(ParseSharding("{devices=[4,2]<=[8]}") ==
               ParseSharding("{devices=[4,2]<=[2,4]T(1,0)}"));
  EXPECT_FALSE(ParseSharding("{replicated}") == ParseSharding("{manual}"));
  EXPECT_EQ(ParseSharding("{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}"),
            ParseSharding("{devices=[2,4]<=[8]}"));
  EXPECT_FALSE(ParseSharding("{devices=[2,1]<=[2] shard_as 1}") ==
               ParseSharding("{devices=[2,1]<=[2] shard_like 1}"));
}

TEST(ShardingTest, NamedMeshConversion) {
  struct Case {
    const char* named;
    const char* gspmd;
  };
  const Case cases[] = {
      {"{mesh['data'=2,'model'=4], [{'data'}, {}, {}]}",
       "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"},
      {"{mesh['data'=2,'model'=4], [{}, {'model'}]}",
       "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"},
      {"{mesh['data'=2,'model'=4], [{'data'}, {'model'}]}", "{devices=[2,4]<=[8]}"},
      {"{mesh['data'=2,'model'=4], [{'model'}, {'data'}]}", "{devices=[4,2]<=[2,4]T(1,0)}"},
      {"{mesh['data'=2,'model'=4], [{'data', 'model'}]}", "{devices=[8]<=[8]}"},
      {"{mesh['data'=2,'model'=4], [{'model','data'}]}", "{devices=[8]<=[2,4]T(1,0)}"},
      {"{mesh['data'=2,'model'=4], [{}, {}]}", "{replicated}"},
      {"{mesh[], replicated}", "{replicated}"},
      {"{mesh[], [{}, {}]}", "{replicated}"},
      {"{mesh['a'=1,'b'=8], [{'a'}, {'b'}]}", "{devices=[1,8]<=[8]}"},
      {"{mesh['d'=8], manual}", "{manual}"},
      {"{maximal_mesh[device_id=3]}", "{maximal device=3}"},
      {"{mesh['a'=2,'b'=4], [{'b':(2)2}, {'a'}]}",
       "{devices=[2,2,2]<=[4,2]T(1,0) last_tile_dim_replicate}"},
      {"{mesh['a'=2,'b'=4], [{'b':(1)2}, {}]}",
       "{devices=[2,1,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"},
      {"{mesh['a'=2,'b'=4], [{'b':(1)2, 'b':(2)2}]}",
       "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"},
      {"{mesh['a'=2,'b'=4], [{'a'}], manual={'b'}}",
       "{devices=[2,4]<=[8] last_tile_dims={manual}}"},
      {"{mesh['a'=2,'b'=4], [{}], manual={'a', 'b'}}", "{manual}"},
      {"{mesh['a'=2,'b'=2,'c'=2], [{'a'}], manual={'c'}}",
       "{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual, replicated}}"},
      {"{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}",
       "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"},
      {"{mesh['a'=2,'b'=2], device_ids=(3,2,1,0), [{'a'}, {'b'}]}", "{devices=[2,2]3,2,1,0}"},
  };
  for (const Case& c : cases) {
    Sharding named = ParseSharding(c.named);
    EXPECT_EQ(named.ToString(), ParseSharding(named.ToString()).ToString()) << c.named;
    ASSERT_TRUE(named.named_view().has_value()) << c.named;
    Sharding plain = named;
    plain.set_named_view(std::nullopt);
    EXPECT_EQ(plain.ToString(), c.gspmd) << c.named;
    EXPECT_EQ(named, ParseSharding(c.gspmd)) << c.named;
  }
}

TEST(ShardingTest, NamedMeshRegions) {
  Sharding s = ParseSharding("{mesh['data'=2,'model'=4], [{'data'}, {'model'}]}");
  Region r = s.RegionForDevice(F32({4, 8}), 6);  // data=1, model=2
  EXPECT_EQ(r.offsets, V({2, 4}));
  EXPECT_EQ(r.sizes, V({2, 2}));
  // Unused axis: replicas.
  Sharding p = ParseSharding("{mesh['data'=2,'model'=4], [{'model'}]}");
  EXPECT_EQ(p.RegionForDevice(F32({8}), 1).offsets, p.RegionForDevice(F32({8}), 5).offsets);
  EXPECT_EQ(p.RegionForDevice(F32({8}), 3).offsets, V({6}));
}

TEST(ShardingTest, MetadataKeptVerbatim) {
  const char* text = "{devices=[2,1]<=[2] metadata={op_name=\"a\" source_file=\"b.py\"}}";
  EXPECT_EQ(ParseSharding(text).ToString(), text);
  const char* named = "{mesh['d'=8], manual, metadata={op_name=\"x\"}}";
  EXPECT_EQ(ParseSharding(named).ToString(), named);
  EXPECT_EQ(ParseSharding(text), ParseSharding("{devices=[2,1]<=[2]}"));
}

// Copies share one representation; writing to one copy leaves the others as they were.
TEST(ShardingTest, CopiesAreIndependentAfterWrites) {
  Sharding original = Sharding::Tiled(TileAssignment::Iota({2, 4}));
  Sharding copy = original;
  copy.set_metadata("{op_name=\"x\"}");
  copy.set_shard_group(Sharding::ShardGroup{3, true});
  EXPECT_EQ(original.ToString(), "{devices=[2,4]<=[8]}");
  EXPECT_EQ(copy.ToString(), "{devices=[2,4]<=[8] shard_as 3 metadata={op_name=\"x\"}}");

  Sharding tuple = Sharding::Tuple({Sharding::Replicated(), original});
  Sharding tuple_copy = tuple;
  tuple_copy.mutable_tuple_elements()[0] = Sharding::Maximal(1);
  EXPECT_EQ(tuple.ToString(), "{{replicated}, {devices=[2,4]<=[8]}}");
  EXPECT_EQ(tuple_copy.ToString(), "{{maximal device=1}, {devices=[2,4]<=[8]}}");

  // A default-constructed sharding is replicated and equal to every other replicated one.
  Sharding written = Sharding::Replicated();
  written.set_metadata("");
  EXPECT_EQ(Sharding(), written);
  EXPECT_TRUE(Sharding().IsReplicated());
}

}  // namespace
}  // namespace gspmd
