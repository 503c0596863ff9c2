// Tests for the propagation sharding algebra: dim maps, transposes, partial replication,
// reshapes (split, merge, partial, uneven), reverses and merges, on iota and explicit orders.
#include <gtest/gtest.h>

#include "ir/shape.h"
#include "propagation/op_rules.h"
#include "propagation/sharding_algebra.h"
#include "sharding/sharding_text.h"

#include <algorithm>
#include <numeric>

namespace gspmd::propagation {
namespace {

Sharding S(const char* text) { return ParseSharding(text); }

// Compares semantically and prints both in XLA text on failure.
#define EXPECT_SHARDING(actual, expected_text)                                      \
  do {                                                                             \
    Sharding expected__ = S(expected_text);                                        \
    Sharding actual__ = (actual);                                                  \
    EXPECT_TRUE(actual__ == expected__)                                            \
        << "actual " << actual__.ToString() << " expected " << expected__.ToString(); \
  } while (false)

TEST(ShardingAlgebra, TransposeKeepsDevicesAndSubgroups) {
  EXPECT_SHARDING(TransposeSharding(S("{devices=[2,4]<=[8]}"), {1, 0}),
                  "{devices=[4,2]<=[2,4]T(1,0)}");
  EXPECT_SHARDING(TransposeSharding(S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"), {1, 0}),
                  "{devices=[1,2,4]<=[8] last_tile_dim_replicate}");
  EXPECT_SHARDING(TransposeSharding(S("{devices=[2,2]3,2,1,0}"), {1, 0}),
                  "{devices=[2,2]3,1,2,0}");
  EXPECT_SHARDING(TransposeSharding(S("{replicated}"), {1, 0}), "{replicated}");
}

TEST(ShardingAlgebra, ReplicateDimsMovesDevicesToTheReplicatedGroup) {
  EXPECT_SHARDING(ReplicateDims(S("{devices=[2,4]<=[8]}"), {1}),
                  "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_SHARDING(ReplicateDims(S("{devices=[2,4]<=[8]}"), {0}),
                  "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_SHARDING(ReplicateDims(S("{devices=[2,4]<=[8]}"), {0, 1}), "{replicated}");
  EXPECT_SHARDING(ReplicateDims(S("{devices=[2,2,2]<=[8] last_tile_dim_replicate}"), {0}),
                  "{devices=[1,2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}");
  // Manual subgroups stay manual.
  EXPECT_SHARDING(ReplicateDims(S("{devices=[2,2,2]<=[8] last_tile_dims={manual}}"), {0}),
                  "{devices=[1,2,2,2]<=[2,2,2]T(1,2,0) last_tile_dims={manual, replicated}}");
}

TEST(ShardingAlgebra, RemoveAndInsertDims) {
  EXPECT_SHARDING(RemoveDims(S("{devices=[2,1,4]<=[8]}"), {1}), "{devices=[2,4]<=[8]}");
  EXPECT_SHARDING(RemoveDims(S("{devices=[2,4]<=[8]}"), {1}),
                  "{devices=[2,4]<=[8] last_tile_dim_replicate}");
  EXPECT_SHARDING(InsertDims(S("{devices=[2,4]<=[8]}"), {0, 2}), "{devices=[1,2,1,4]<=[8]}");
  EXPECT_SHARDING(InsertDims(S("{devices=[2,4]<=[8] last_tile_dim_replicate}"), {1}),
                  "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
}

TEST(ShardingAlgebra, MapDimsDropsAndMoves) {
  // [a,b,c] -> [c,a], b dropped.
  std::optional<Sharding> mapped = MapDims(S("{devices=[2,2,2]<=[8]}"), {1, -1, 0}, 2);
  ASSERT_TRUE(mapped.has_value());
  EXPECT_SHARDING(*mapped, "{devices=[2,2,2]<=[2,2,2]T(2,0,1) last_tile_dim_replicate}");
}

TEST(ShardingAlgebra, ReshapeSplitsADim) {
  // [16] split 4 ways -> [4,4]: the split lands on the major dim.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[4]<=[4]}"), {16}, {4, 4}), "{devices=[4,1]<=[4]}");
  // [16] split 8 ways -> [4,4]: 4 on the major dim, 2 on the minor one.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[8]<=[8]}"), {16}, {4, 4}), "{devices=[4,2]<=[8]}");
  // [768] split 8 ways -> [12,64]: only gcd(12, 8) = 4 fits on the head dim.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[8]<=[8]}"), {768}, {12, 64}),
                  "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
  // Size-1 dims come and go.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
                                  {128}, {1, 1, 128}),
                  "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
                                  {1, 1, 128}, {128}),
                  "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
}

TEST(ShardingAlgebra, ReshapeMergesDims) {
  // [4,8] tiled [4,2] -> [32]: the major dim is fully split, so the tiles chain.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[4,2]<=[8]}"), {4, 8}, {32}), "{devices=[8]<=[8]}");
  // [8,8] tiled [2,2]: the minor dim's split cannot follow; it becomes replicated.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[2,2]<=[4]}"), {8, 8}, {64}),
                  "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  // [2,8] tiled [1,4] -> [16]: the top digit of the merged dim is not split.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[1,4]<=[4]}"), {2, 8}, {16}), "{replicated}");
  // Batch and heads: [8,16,128] [2,1,4] -> [8,16,4,32] [2,1,4,1].
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[2,1,4]<=[8]}"), {8, 16, 128}, {8, 16, 4, 32}),
                  "{devices=[2,1,4,1]<=[8]}");
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[2,1,4,1]<=[8]}"), {8, 16, 4, 32}, {8, 16, 128}),
                  "{devices=[2,1,4]<=[8]}");
}

TEST(ShardingAlgebra, ReshapeUnevenAndExplicitOrders) {
  // An uneven dim that survives unchanged keeps its tiling.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[4,1]<=[4]}"), {10, 6}, {10, 2, 3}),
                  "{devices=[4,1,1]<=[4]}");
  // Reversed device order.
  EXPECT_SHARDING(ReshapeSharding(S("{devices=[4]3,2,1,0}"), {16}, {4, 4}),
                  "{devices=[4,1]3,2,1,0}");
}

TEST(ShardingAlgebra, ReverseTiles) {
  EXPECT_SHARDING(ReverseTiles(S("{devices=[4,1]<=[4]}"), {0}), "{devices=[4,1]3,2,1,0}");
  EXPECT_SHARDING(ReverseTiles(S("{devices=[4,1]<=[4]}"), {1}), "{devices=[4,1]<=[4]}");
}

TEST(ShardingAlgebra, Merge) {
  Shape shape(ElementType::kF32, {16, 32});
  // Data-split activation x model-split weight.
  std::optional<Sharding> merged =
      MergeShardings(S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
                     S("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"), shape);
  ASSERT_TRUE(merged.has_value());
  EXPECT_SHARDING(*merged, "{devices=[2,4]<=[8]}");
  EXPECT_TRUE(merged->tile_assignment().is_iota());
  // Both use the same device digit: no consistent merge.
  EXPECT_FALSE(MergeShardings(S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
                              S("{devices=[1,4,2]<=[8] last_tile_dim_replicate}"), shape)
                   .has_value());
  // Replicated + tiled -> tiled; tiled + replicated adds nothing.
  merged = MergeShardings(S("{replicated}"), S("{devices=[2,4]<=[8]}"), shape);
  ASSERT_TRUE(merged.has_value());
  EXPECT_SHARDING(*merged, "{devices=[2,4]<=[8]}");
  EXPECT_FALSE(MergeShardings(S("{devices=[2,4]<=[8]}"), S("{replicated}"), shape).has_value());
  // Conflicting dims.
  EXPECT_FALSE(
      MergeShardings(S("{devices=[2,4]<=[8]}"), S("{devices=[4,2]<=[8]}"), shape).has_value());
  // Partial refinement: [2,1,(4)] + [2,2,(2)] agreeing on dim 0.
  merged = MergeShardings(S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
                          S("{devices=[2,2,2]<=[8] last_tile_dim_replicate}"), shape);
  ASSERT_TRUE(merged.has_value());
  EXPECT_SHARDING(*merged, "{devices=[2,2,2]<=[8] last_tile_dim_replicate}");
}

TEST(ShardingAlgebra, IsMoreSpecific) {
  EXPECT_TRUE(IsMoreSpecific(S("{devices=[2,4]<=[8]}"),
                             S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")));
  EXPECT_FALSE(IsMoreSpecific(S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
                              S("{devices=[2,4]<=[8]}")));
  EXPECT_TRUE(IsMoreSpecific(S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"), S("{replicated}")));
  EXPECT_FALSE(IsMoreSpecific(S("{replicated}"), S("{replicated}")));
}

TEST(ShardingAlgebra, SubTiling) {
  EXPECT_TRUE(IsSubTilingOrEqual({16, 32}, S("{devices=[2,4]<=[8]}"),
                                 S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}")));
  EXPECT_FALSE(IsSubTilingOrEqual({16, 32}, S("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
                                  S("{devices=[2,4]<=[8]}")));
}

}  // namespace
}  // namespace gspmd::propagation

// ---- Randomized properties ----
#include <random>

namespace gspmd::propagation {
namespace {

// Elements (row-major linear indices) that `device` holds of a value of `dims`.
std::vector<int64_t> HeldElements(const Sharding& sharding, const std::vector<int64_t>& dims,
                                  int64_t device) {
  Shape shape(ElementType::kF32, dims);
  Sharding::ShardRegion region = sharding.RegionForDevice(shape, device);
  std::vector<int64_t> held;
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> index(rank, 0);
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) count *= region.sizes[d];
  if (count == 0) return held;
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  while (true) {
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d) linear += (region.offsets[d] + index[d]) * strides[d];
    held.push_back(linear);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < region.sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) break;
  }
  std::sort(held.begin(), held.end());
  return held;
}

bool Includes(const std::vector<int64_t>& big, const std::vector<int64_t>& small) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());
}

struct RandomCase {
  std::vector<int64_t> dims;
  Sharding sharding;
  int64_t devices;
};

// A random tiling of random dims over `devices` devices in a random order, evenly dividing
// every dim, with the rest of the devices replicated.
RandomCase RandomEvenSharding(std::mt19937& rng, int64_t devices) {
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  const int64_t rank = 1 + pick(4);
  RandomCase c;
  c.devices = devices;
  std::vector<int64_t> tiles(rank, 1);
  int64_t left = devices;
  for (int64_t p : {2, 2, 2, 3, 2}) {
    if (left % p != 0 || pick(3) == 0) continue;
    tiles[pick(rank)] *= p;
    left /= p;
  }
  for (int64_t d = 0; d < rank; ++d) c.dims.push_back(tiles[d] * (1 + pick(3)) * (pick(2) ? 2 : 1));
  std::vector<int64_t> order(devices);
  std::iota(order.begin(), order.end(), 0);
  if (pick(2)) std::shuffle(order.begin(), order.end(), rng);
  std::vector<int64_t> tile_dims = tiles;
  tile_dims.push_back(left);
  c.sharding = Sharding::PartiallyReplicated(TileAssignment(tile_dims, order));
  return c;
}

std::vector<int64_t> RandomReshapeOf(std::mt19937& rng, const std::vector<int64_t>& dims) {
  std::vector<int64_t> primes;
  for (int64_t d : dims) {
    int64_t x = d;
    for (int64_t p = 2; p <= x; ++p)
      while (x % p == 0) {
        primes.push_back(p);
        x /= p;
      }
  }
  if (rng() % 2) std::shuffle(primes.begin(), primes.end(), rng);
  std::vector<int64_t> out;
  int64_t current = 1;
  for (int64_t p : primes) {
    current *= p;
    if (rng() % 2) {
      out.push_back(current);
      current = 1;
    }
  }
  out.push_back(current);
  if (rng() % 3 == 0) out.insert(out.begin() + rng() % (out.size() + 1), 1);
  return out;
}

TEST(ShardingAlgebraRandom, ReshapeKeepsEveryDevicesData) {
  std::mt19937 rng(1234);
  int kept_tiled = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t devices = std::vector<int64_t>{2, 4, 6, 8, 12, 16}[trial % 6];
    RandomCase c = RandomEvenSharding(rng, devices);
    std::vector<int64_t> to = RandomReshapeOf(rng, c.dims);
    Sharding out = ReshapeSharding(c.sharding, c.dims, to);
    ASSERT_TRUE(out.IsReplicated() || (out.IsTiled() && out.TiledDataRank() == static_cast<int64_t>(to.size())))
        << out.ToString();
    if (IsSpatiallyPartitioned(out)) ++kept_tiled;
    for (int64_t device = 0; device < devices; ++device) {
      // Row-major linear indices are the same elements on both sides of a reshape.
      ASSERT_TRUE(Includes(HeldElements(out, to, device), HeldElements(c.sharding, c.dims, device)))
          << c.sharding.ToString() << " dims " << ::testing::PrintToString(c.dims) << " -> "
          << ::testing::PrintToString(to) << " gave " << out.ToString() << " (device " << device << ")";
    }
  }
  EXPECT_GT(kept_tiled, 100);
}

TEST(ShardingAlgebraRandom, MergeRefinesBoth) {
  std::mt19937 rng(99);
  int merged_count = 0, full_recovered = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t devices = std::vector<int64_t>{4, 8, 12, 16}[trial % 4];
    RandomCase full = RandomEvenSharding(rng, devices);
    const int64_t rank = static_cast<int64_t>(full.dims.size());
    // Two partial views of one tiling (always compatible), or an unrelated second sharding.
    std::vector<int64_t> drop_a, drop_b;
    for (int64_t d = 0; d < rank; ++d) (rng() % 2 ? drop_a : drop_b).push_back(d);
    Sharding a = ReplicateDims(full.sharding, drop_a);
    Sharding b = ReplicateDims(full.sharding, drop_b);
    if (trial % 3 == 0) {
      RandomCase other = RandomEvenSharding(rng, devices);
      bool fits = other.dims.size() == full.dims.size();
      for (int64_t d = 0; fits && d < rank; ++d) fits = full.dims[d] % DimTiles(other.sharding, d) == 0;
      if (!fits) continue;
      b = other.sharding;
    }
    Shape shape(ElementType::kF32, full.dims);
    std::optional<Sharding> merged = MergeShardings(a, b, shape);
    if (!merged) {
      ASSERT_TRUE(trial % 3 == 0 || b == a || IsSubTilingOrEqual(full.dims, a, b))
          << "two views of " << full.sharding.ToString() << " did not merge: " << a.ToString()
          << " + " << b.ToString();
      continue;
    }
    ++merged_count;
    if (trial % 3 != 0 && *merged == full.sharding) ++full_recovered;
    for (int64_t device = 0; device < devices; ++device) {
      std::vector<int64_t> m = HeldElements(*merged, full.dims, device);
      ASSERT_TRUE(Includes(HeldElements(a, full.dims, device), m)) << merged->ToString();
      ASSERT_TRUE(Includes(HeldElements(b, full.dims, device), m)) << merged->ToString();
    }
  }
  EXPECT_GT(merged_count, 100);
  EXPECT_GT(full_recovered, 50);
}

TEST(ShardingAlgebraRandom, MapDimsRoundTrips) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    RandomCase c = RandomEvenSharding(rng, 8);
    const int64_t rank = static_cast<int64_t>(c.dims.size());
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> inverse(rank);
    for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
    Sharding back = TransposeSharding(TransposeSharding(c.sharding, perm), inverse);
    ASSERT_TRUE(back == c.sharding) << c.sharding.ToString() << " -> " << back.ToString();
    Sharding inserted = InsertDims(c.sharding, {0, rank + 1});
    ASSERT_TRUE(RemoveDims(inserted, {0, rank + 1}) == c.sharding);
  }
}

}  // namespace
}  // namespace gspmd::propagation
