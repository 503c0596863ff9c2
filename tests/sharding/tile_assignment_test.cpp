// Tests of TileAssignment: iota/explicit forms, lookups, reshape/transpose, canonical text.
#include "sharding/tile_assignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <thread>

#include "sharding/sharding_text.h"

namespace gspmd {
namespace {

std::vector<int64_t> V(std::initializer_list<int64_t> v) { return v; }

TEST(TileAssignmentTest, IotaIdentity) {
  TileAssignment t = TileAssignment::Iota({2, 4});
  EXPECT_TRUE(t.is_iota());
  EXPECT_EQ(t.ToString(), "[2,4]<=[8]");
  EXPECT_EQ(t.Devices(), V({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(t.DeviceAt({1, 2}), 6);
  EXPECT_EQ(t.num_elements(), 8);
}

TEST(TileAssignmentTest, IotaTransposed) {
  TileAssignment t = TileAssignment::Iota({4, 2}, {2, 4}, {1, 0});
  EXPECT_EQ(t.ToString(), "[4,2]<=[2,4]T(1,0)");
  EXPECT_EQ(t.Devices(), V({0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(t.DeviceAt({3, 1}), 7);
  EXPECT_EQ(*t.IndexOf(5), V({1, 1}));
  EXPECT_FALSE(t.IndexOf(8).has_value());
}

TEST(TileAssignmentTest, IotaThreeDimsReversed) {
  TileAssignment t = TileAssignment::Iota({2, 2, 2}, {2, 2, 2}, {2, 1, 0});
  EXPECT_EQ(t.ToString(), "[2,2,2]<=[2,2,2]T(2,1,0)");
  EXPECT_EQ(t.Devices(), V({0, 4, 2, 6, 1, 5, 3, 7}));
}

TEST(TileAssignmentTest, CanonicalIotaPrinting) {
  EXPECT_EQ(TileAssignment::Iota({2, 4}, {2, 4}).ToString(), "[2,4]<=[8]");
  EXPECT_EQ(TileAssignment::Iota({8}, {2, 2, 2}, {0, 1, 2}).ToString(), "[8]<=[8]");
  // Size-1 reshape dims drop; adjacent transposed dims merge.
  EXPECT_EQ(TileAssignment::Iota({4, 2}, {1, 2, 4}, {0, 2, 1}).ToString(), "[4,2]<=[2,4]T(1,0)");
  EXPECT_EQ(TileAssignment::Iota({2, 4, 2}, {2, 2, 4}, {2, 0, 1}).ToString(),
            "[2,4,2]<=[4,4]T(1,0)");
  // Parse -> print -> parse -> print is stable.
  for (const char* text :
       {"[2,4]<=[8]", "[1,4,2]<=[2,4]T(1,0)", "[4,2]<=[2,4]T(1,0)", "[2,2,2]<=[2,2,2]T(2,1,0)",
        "[8,1]7,6,5,4,3,2,1,0", "[2,4]<=[2,4]", "[2,2,2]<=[2,2,2]T(0,2,1)"}) {
    std::string once = ParseTileAssignment(text).ToString();
    EXPECT_EQ(ParseTileAssignment(once).ToString(), once) << text;
  }
}

TEST(TileAssignmentTest, ExplicitForm) {
  TileAssignment t({8, 1}, {7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_FALSE(t.is_iota());
  EXPECT_EQ(t.ToString(), "[8,1]7,6,5,4,3,2,1,0");
  EXPECT_EQ(t.DeviceAt({2, 0}), 5);
  EXPECT_EQ(*t.IndexOf(0), V({7, 0}));
  EXPECT_EQ(t.DeviceAtLinear(7), 0);
}

TEST(TileAssignmentTest, ExplicitAndIotaCompareEqual) {
  TileAssignment iota = TileAssignment::Iota({4, 2}, {2, 4}, {1, 0});
  TileAssignment expl({4, 2}, {0, 4, 1, 5, 2, 6, 3, 7});
  EXPECT_EQ(iota, expl);
  EXPECT_FALSE(iota == TileAssignment::Iota({4, 2}));
  EXPECT_FALSE(TileAssignment::Iota({8}) == TileAssignment::Iota({2, 4}));
}

TEST(TileAssignmentTest, ReshapeKeepsIota) {
  TileAssignment t = TileAssignment::Iota({4, 2}, {2, 4}, {1, 0}).Reshape({2, 2, 2});
  EXPECT_TRUE(t.is_iota());
  EXPECT_EQ(t.ToString(), "[2,2,2]<=[2,4]T(1,0)");
  EXPECT_EQ(t.Devices(), V({0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(TileAssignmentTest, TransposeStaysIota) {
  TileAssignment t = TileAssignment::Iota({2, 4}).Transpose({1, 0});
  EXPECT_TRUE(t.is_iota());
  EXPECT_EQ(t.ToString(), "[4,2]<=[2,4]T(1,0)");
  // Dims that split an iota dim.
  TileAssignment u = TileAssignment::Iota({2, 2, 2}).Transpose({2, 0, 1});
  EXPECT_TRUE(u.is_iota());
  EXPECT_EQ(u.Devices(), V({0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(u.ToString(), "[2,2,2]<=[4,2]T(1,0)");
  // Transposing back gives the original.
  EXPECT_EQ(u.Transpose({1, 2, 0}).ToString(), "[2,2,2]<=[8]");
  // A transpose of a transposed iota.
  TileAssignment w = TileAssignment::Iota({1, 4, 2}, {2, 4}, {1, 0}).Transpose({0, 2, 1});
  EXPECT_EQ(w.ToString(), "[1,2,4]<=[8]");
}

TEST(TileAssignmentTest, TransposeMatchesExplicitGather) {
  const std::vector<std::vector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                   {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const std::vector<TileAssignment> inputs = {
      TileAssignment::Iota({2, 3, 4}), TileAssignment::Iota({3, 2, 4}, {4, 6}, {1, 0}),
      TileAssignment::Iota({6, 2, 2}, {2, 3, 4}, {2, 0, 1}),
      TileAssignment::Iota({4, 3, 2}, {2, 2, 6}, {1, 2, 0})};
  for (const TileAssignment& in : inputs) {
    TileAssignment expl(in.dims(), in.Devices());
    for (const auto& perm : perms) {
      TileAssignment a = in.Transpose(perm);
      TileAssignment b = expl.Transpose(perm);
      EXPECT_EQ(a.Devices(), b.Devices()) << in.ToString();
      EXPECT_EQ(a.dims(), b.dims());
      EXPECT_EQ(ParseTileAssignment(a.ToString()), a) << a.ToString();
    }
  }
}

// Random factorizations of a device count into dims.
std::vector<int64_t> RandomFactors(int64_t n, std::mt19937& rng) {
  std::vector<int64_t> dims;
  while (n > 1) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= n; ++d) {
      if (n % d == 0) divisors.push_back(d);
    }
    const int64_t d = divisors[rng() % divisors.size()];
    dims.push_back(d);
    n /= d;
    if (d == 1 && rng() % 2 == 0) break;
  }
  if (n > 1) dims.push_back(n);
  if (dims.empty()) dims.push_back(1);
  return dims;
}

std::vector<int64_t> RandomPerm(size_t n, std::mt19937& rng) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

TEST(TileAssignmentTest, RandomizedTransposeAndSortMatchExplicit) {
  std::mt19937 rng(1234);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    const int64_t count = std::vector<int64_t>{8, 12, 16, 24, 36, 64}[rng() % 6];
    std::vector<int64_t> reshape = RandomFactors(count, rng);
    std::vector<int64_t> dims = RandomFactors(count, rng);
    TileAssignment iota = TileAssignment::Iota(dims, reshape, RandomPerm(reshape.size(), rng));
    TileAssignment expl(iota.dims(), iota.Devices());
    EXPECT_EQ(ParseTileAssignment(iota.ToString()).Devices(), iota.Devices()) << iota.ToString();
    const std::vector<int64_t> perm = RandomPerm(dims.size(), rng);
    TileAssignment a = iota.Transpose(perm);
    TileAssignment b = expl.Transpose(perm);
    ASSERT_EQ(a.Devices(), b.Devices()) << iota.ToString();
    EXPECT_EQ(a.ToString(), ParseTileAssignment(a.ToString()).ToString());
    TileAssignment sa = iota.SortedAlongLastDim();
    TileAssignment sb = expl.SortedAlongLastDim();
    ASSERT_EQ(sa.Devices(), sb.Devices()) << iota.ToString();
    for (int64_t d = 0; d < count; ++d) {
      auto index = iota.IndexOf(d);
      ASSERT_TRUE(index.has_value());
      EXPECT_EQ(iota.DeviceAt(*index), d);
    }
  }
}

TEST(TileAssignmentTest, SortedAlongLastDim) {
  TileAssignment t = TileAssignment::Iota({2, 4}, {2, 2, 2}, {0, 2, 1}).SortedAlongLastDim();
  EXPECT_EQ(t.ToString(), "[2,4]<=[8]");
  TileAssignment e = TileAssignment({2, 2}, {3, 1, 0, 2}).SortedAlongLastDim();
  EXPECT_EQ(e.ToString(), "[2,2]1,3,0,2");
}

TEST(TileAssignmentTest, ConcurrentConstReads) {
  const TileAssignment t = TileAssignment::Iota({16, 16}, {16, 16}, {1, 0});
  std::vector<std::thread> threads;
  std::vector<int64_t> sums(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int64_t d = 0; d < 256; ++d) sums[k] += (*t.IndexOf(d))[0] + t.Devices()[d];
    });
  }
  for (auto& th : threads) th.join();
  for (int k = 1; k < 4; ++k) EXPECT_EQ(sums[k], sums[0]);
}

}  // namespace
}  // namespace gspmd
