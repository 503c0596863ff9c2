// The problem the search works on: what is left after reduce.cpp's exact reductions, with
// only the allowed strategies of each node, several memory segments per (merged) node, and
// the record that turns one of its assignments back into an assignment of the input problem.
#pragma once

#include <cstdint>
#include <vector>

#include "autoshard/strategy_problem.h"

namespace gspmd::autoshard {

// Invariant: every node has at least one strategy; every strategy kept has a node cost below
// kForbiddenCost (edges may still forbid pairs). usage(n, seg, s) is what strategy s of node
// n adds to the memory on [start, end) of segment seg, on top of `baseline`.
struct ReducedProblem {
  struct Segment {
    int64_t start = 0;
    int64_t end = 0;
    size_t usage_offset = 0;  // into Node::usages: usages[usage_offset + s]
  };
  struct Adjacent {
    int node;
    int edge;
  };
  struct Node {
    std::vector<Cost> costs;
    std::vector<Segment> segments;
    std::vector<int64_t> usages;  // segments.size() x strategy_count()
    std::vector<Adjacent> adjacent;
    int strategy_count() const { return static_cast<int>(costs.size()); }
    int64_t usage(size_t segment, int s) const { return usages[segments[segment].usage_offset + s]; }
  };
  struct Edge {
    int a = 0;  // a < b
    int b = 0;
    std::vector<Cost> costs;  // |S_a| x |S_b| row-major
  };

  std::vector<Node> nodes;
  std::vector<Edge> edges;
  int64_t usage_limit = 0;
  int64_t horizon = 0;                 // time points are 0 .. horizon-1
  std::vector<int64_t> baseline;       // per time point: usage fixed whatever is chosen
  Cost constant = 0;                   // cost fixed whatever is chosen (folded nodes and edges)
  bool infeasible_strategies = false;  // some input node had no allowed strategy left
  // Nodes with a segment meeting time bucket b = t >> kBucketShift, ascending, each once.
  static constexpr int kBucketShift = 6;
  std::vector<std::vector<int>> live_by_bucket;

  // Cost of edge `e` when `from` (one of its ends) takes s_from and the other end s_other.
  Cost EdgeCost(int e, int from, int s_from, int s_other) const {
    const Edge& edge = edges[e];
    const int columns = nodes[edge.b].strategy_count();
    return from == edge.a ? edge.costs[static_cast<size_t>(s_from) * columns + s_other]
                          : edge.costs[static_cast<size_t>(s_other) * columns + s_from];
  }
};

// How the reduction went, for the report.
struct ReductionStats {
  int input_nodes = 0;
  int input_edges = 0;
  int nodes = 0;
  int edges = 0;
  int merged = 0;     // nodes whose strategy follows from a neighbour's (functional edges)
  int folded = 0;     // memory-free nodes of degree <= 2 folded into their neighbours
  int pruned_strategies = 0;
};

}  // namespace gspmd::autoshard
