// Dinic's max flow: breadth-first levels, then blocking flows along strictly increasing levels.
#include "propagation/min_cut.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "support/diagnostic.h"

namespace gspmd::propagation {
namespace {

// Flows below this are rounding noise (capacities are byte counts).
constexpr double kEpsilon = 1e-9;

}  // namespace

MinCut::MinCut() : first_edge_(2, -1) {}

int32_t MinCut::AddNode() {
  first_edge_.push_back(-1);
  return static_cast<int32_t>(first_edge_.size()) - 1;
}

void MinCut::AddEdge(int32_t from, int32_t to, double capacity) {
  GSPMD_CHECK(from >= 0 && from < node_count() && to >= 0 && to < node_count(), "min-cut edge out of range");
  if (from == to || !(capacity > 0)) return;
  edges_.push_back(Edge{to, first_edge_[from], capacity});
  first_edge_[from] = static_cast<int32_t>(edges_.size()) - 1;
  edges_.push_back(Edge{from, first_edge_[to], 0});
  first_edge_[to] = static_cast<int32_t>(edges_.size()) - 1;
}

bool MinCut::Levels() {
  level_.assign(first_edge_.size(), -1);
  std::queue<int32_t> queue;
  level_[kSource] = 0;
  queue.push(kSource);
  while (!queue.empty()) {
    int32_t node = queue.front();
    queue.pop();
    for (int32_t e = first_edge_[node]; e >= 0; e = edges_[e].next) {
      const Edge& edge = edges_[e];
      if (edge.capacity <= kEpsilon || level_[edge.to] >= 0) continue;
      level_[edge.to] = level_[node] + 1;
      queue.push(edge.to);
    }
  }
  return level_[kSink] >= 0;
}

// Pushes up to `limit` from `node` towards the sink along the level graph, over as many paths
// as it takes (one walk from the source serves many augmenting paths that share its prefix).
double MinCut::Push(int32_t node, double limit) {
  if (node == kSink) return limit;
  double total = 0;
  for (int32_t& e = cursor_[node]; e >= 0; e = edges_[e].next) {
    Edge& edge = edges_[e];
    if (edge.capacity <= kEpsilon || level_[edge.to] != level_[node] + 1) continue;
    const double pushed = Push(edge.to, std::min(limit - total, edge.capacity));
    if (pushed <= kEpsilon) continue;
    if (std::isinf(pushed)) return pushed;  // an uncuttable path: the cut is infinite
    if (!std::isinf(edge.capacity)) edge.capacity -= pushed;
    Edge& reverse = edges_[e ^ 1];
    if (!std::isinf(reverse.capacity)) reverse.capacity += pushed;
    total += pushed;
    // Stay on this edge while it may carry more; leave when the node's share is used up.
    if (limit - total <= kEpsilon) return total;
  }
  return total;
}

double MinCut::Solve() {
  double total = 0;
  while (Levels()) {
    cursor_ = first_edge_;
    while (true) {
      double pushed = Push(kSource, kInfinite);
      if (pushed <= kEpsilon) break;
      if (std::isinf(pushed)) return kInfinite;
      total += pushed;
    }
  }
  source_side_.assign(first_edge_.size(), false);
  std::queue<int32_t> queue;
  source_side_[kSource] = true;
  queue.push(kSource);
  while (!queue.empty()) {
    int32_t node = queue.front();
    queue.pop();
    for (int32_t e = first_edge_[node]; e >= 0; e = edges_[e].next) {
      const Edge& edge = edges_[e];
      if (edge.capacity <= kEpsilon || source_side_[edge.to]) continue;
      source_side_[edge.to] = true;
      queue.push(edge.to);
    }
  }
  return total;
}

}  // namespace gspmd::propagation
