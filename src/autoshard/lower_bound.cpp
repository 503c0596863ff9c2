// The spanning-forest bound: dropping the coupling of a non-tree edge (u, v) to min over v's
// strategies of its cost, charged to u, can only lower the optimum; the rest is a forest,
// solved exactly leaves-up.
#include "autoshard/lower_bound.h"

#include <algorithm>

namespace gspmd::autoshard {

WideCost SpanningForestLowerBound(const ReducedProblem& problem, int64_t& work, std::vector<int>* decoded) {
  const int n = static_cast<int>(problem.nodes.size());
  std::vector<std::vector<Cost>> unary(n);
  for (int v = 0; v < n; ++v) unary[v] = problem.nodes[v].costs;
  // BFS forest: the order, each node's parent and the edge to it.
  std::vector<int> order, parent(n, -1), parent_edge(n, -1);
  std::vector<char> seen(n, 0), tree_edge(problem.edges.size(), 0);
  for (int r = 0; r < n; ++r) {
    if (seen[r]) continue;
    seen[r] = 1;
    order.push_back(r);
    for (size_t i = order.size() - 1; i < order.size(); ++i) {
      const int v = order[i];
      for (const ReducedProblem::Adjacent& a : problem.nodes[v].adjacent) {
        if (seen[a.node]) continue;
        seen[a.node] = 1;
        parent[a.node] = v;
        parent_edge[a.node] = a.edge;
        tree_edge[a.edge] = 1;
        order.push_back(a.node);
      }
    }
  }
  for (size_t e = 0; e < problem.edges.size(); ++e) {
    if (tree_edge[e]) continue;
    const ReducedProblem::Edge& edge = problem.edges[e];
    const int ka = problem.nodes[edge.a].strategy_count(), kb = problem.nodes[edge.b].strategy_count();
    for (int s = 0; s < ka; ++s) {
      const Cost* row = edge.costs.data() + static_cast<size_t>(s) * kb;
      unary[edge.a][s] = AddCost(unary[edge.a][s], *std::min_element(row, row + kb));
    }
    work += static_cast<int64_t>(ka) * kb;
  }
  WideCost bound = problem.constant;
  std::vector<std::vector<int>> choice(n);  // v's best strategy per strategy of its parent
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int v = *it;
    if (parent[v] < 0) {
      bound += *std::min_element(unary[v].begin(), unary[v].end());
      continue;
    }
    const int u = parent[v];
    const int ku = problem.nodes[u].strategy_count(), kv = problem.nodes[v].strategy_count();
    if (decoded != nullptr) choice[v].assign(ku, 0);
    for (int su = 0; su < ku; ++su) {
      Cost best = kCostCap;
      for (int sv = 0; sv < kv; ++sv) {
        const Cost c = AddCost(unary[v][sv], problem.EdgeCost(parent_edge[v], v, sv, su));
        if (c < best) {
          best = c;
          if (decoded != nullptr) choice[v][su] = sv;
        }
      }
      unary[u][su] = AddCost(unary[u][su], best);
    }
    work += static_cast<int64_t>(ku) * kv;
  }
  if (decoded != nullptr) {
    decoded->assign(n, 0);
    for (int v : order)
      (*decoded)[v] = parent[v] < 0 ? static_cast<int>(std::min_element(unary[v].begin(), unary[v].end()) - unary[v].begin())
                                    : choice[v][(*decoded)[parent[v]]];
  }
  return bound;
}

}  // namespace gspmd::autoshard
