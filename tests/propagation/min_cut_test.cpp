// MinCut: the max-flow value and the source side of the cut closest to the source, on graphs
// where many augmenting paths share a prefix (one walk from the source pushes along several).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "propagation/min_cut.h"

namespace gspmd::propagation {
namespace {

TEST(MinCut, PathsSharingAPrefixAreAllUsed) {
  MinCut cut;
  const int32_t a = cut.AddNode();
  cut.AddEdge(MinCut::kSource, a, 10);
  for (int i = 0; i < 3; ++i) {
    const int32_t b = cut.AddNode();
    cut.AddEdge(a, b, 2);
    cut.AddEdge(b, MinCut::kSink, MinCut::kInfinite);
  }
  EXPECT_DOUBLE_EQ(cut.Solve(), 6);
  EXPECT_TRUE(cut.OnSourceSide(a));
  EXPECT_FALSE(cut.OnSourceSide(a + 1));
}

// A chain: the cheapest edge is cut, and of two equal cheapest the one nearest the source.
TEST(MinCut, CutClosestToTheSource) {
  MinCut cut;
  const double capacities[] = {5, 3, 4, 3, 7};
  int32_t previous = MinCut::kSource;
  std::vector<int32_t> nodes;
  for (double capacity : capacities) {
    const int32_t node = cut.AddNode();
    cut.AddEdge(previous, node, capacity);
    nodes.push_back(node);
    previous = node;
  }
  cut.AddEdge(previous, MinCut::kSink, MinCut::kInfinite);
  EXPECT_DOUBLE_EQ(cut.Solve(), 3);
  EXPECT_TRUE(cut.OnSourceSide(nodes[0]));
  EXPECT_FALSE(cut.OnSourceSide(nodes[1]));
}

TEST(MinCut, UncuttablePathGivesInfinity) {
  MinCut cut;
  const int32_t a = cut.AddNode();
  cut.AddEdge(MinCut::kSource, a, 1);
  cut.AddEdge(MinCut::kSource, a, MinCut::kInfinite);
  cut.AddEdge(a, MinCut::kSink, MinCut::kInfinite);
  EXPECT_TRUE(std::isinf(cut.Solve()));
}

}  // namespace
}  // namespace gspmd::propagation
