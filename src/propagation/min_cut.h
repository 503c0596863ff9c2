// A minimum s-t cut of a small directed graph with real capacities (Dinic's max flow), for
// choosing where partial sums are reduced (partial_sums.h).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace gspmd::propagation {

class MinCut {
 public:
  static constexpr double kInfinite = std::numeric_limits<double>::infinity();

  // Nodes 0 and 1 are the source and the sink.
  MinCut();
  static constexpr int32_t kSource = 0;
  static constexpr int32_t kSink = 1;

  int32_t AddNode();
  int32_t node_count() const { return static_cast<int32_t>(first_edge_.size()); }
  // An edge from -> to of `capacity` (> 0; kInfinite for one that may not be cut).
  void AddEdge(int32_t from, int32_t to, double capacity);

  // Runs the max flow; returns the cut's capacity (kInfinite when every cut is infinite).
  double Solve();
  // After Solve(): whether `node` is on the source side of the minimum cut closest to the
  // source (the nodes the source still reaches in the residual graph).
  bool OnSourceSide(int32_t node) const { return source_side_.at(node); }

 private:
  struct Edge {
    int32_t to;
    int32_t next;  // the next edge out of the same node, -1 at the end
    double capacity;
  };
  bool Levels();
  double Push(int32_t node, double limit);

  std::vector<Edge> edges_;  // edge 2k and 2k+1 are each other's reverse
  std::vector<int32_t> first_edge_;
  std::vector<int32_t> level_;
  std::vector<int32_t> cursor_;
  std::vector<bool> source_side_;
};

}  // namespace gspmd::propagation
