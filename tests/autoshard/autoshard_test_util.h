// Shared by the autoshard tests: small random strategy problems shaped like the contest's
// (functional and forbidding edges, separable edges, memory that binds) and a brute force.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "autoshard/search_state.h"
#include "autoshard/strategy_problem.h"

namespace gspmd::autoshard::test {

inline const std::filesystem::path kIopddlData = std::filesystem::path(GSPMD_TEST_DATA_DIR) / "iopddl";

// A random problem of `nodes` nodes with 1..max_strategies strategies each. Edges join random
// pairs (some twice); some are one-to-one maps (forbidden off the map), some forbid a few
// pairs, some are sums of per-node terms. Memory: random intervals, the limit between the
// least and the largest possible peak.
inline StrategyProblem RandomProblem(uint64_t seed, int nodes, int max_strategies, int edges) {
  Random random(seed);
  StrategyProblem problem;
  problem.nodes.resize(nodes);
  for (StrategyProblem::Node& node : problem.nodes) {
    const int k = 1 + random.Below(max_strategies);
    node.start = random.Below(10);
    node.end = node.start + random.Below(6);  // sometimes empty
    for (int s = 0; s < k; ++s) {
      node.costs.push_back(random.Below(8) == 0 ? kForbiddenCost : random.Below(100));
      node.usages.push_back(random.Below(3) == 0 ? 0 : random.Below(50));
    }
  }
  for (int e = 0; e < edges; ++e) {
    StrategyProblem::Edge edge;
    edge.from = random.Below(nodes);
    edge.to = random.Below(nodes);
    if (edge.from == edge.to) edge.to = (edge.to + 1) % nodes;
    const int ku = problem.nodes[edge.from].strategy_count(), kv = problem.nodes[edge.to].strategy_count();
    const int kind = random.Below(4);
    std::vector<Cost> row(ku), column(kv);
    for (Cost& c : row) c = random.Below(30);
    for (Cost& c : column) c = random.Below(30);
    for (int s = 0; s < ku; ++s) {
      for (int t = 0; t < kv; ++t) {
        Cost c = random.Below(60);
        if (kind == 0) c = (t == s % kv) ? random.Below(20) : kForbiddenCost;  // functional
        if (kind == 1 && random.Below(4) == 0) c = kForbiddenCost;
        if (kind == 2) c = row[s] + column[t];  // separable
        edge.costs.push_back(c);
      }
    }
    problem.edges.push_back(std::move(edge));
  }
  int64_t least = 0, most = 0;
  for (int64_t t = 0; t < problem.TimeHorizon(); ++t) {
    int64_t low = 0, high = 0;
    for (const StrategyProblem::Node& node : problem.nodes) {
      if (node.start > t || t >= node.end) continue;
      low += *std::min_element(node.usages.begin(), node.usages.end());
      high += *std::max_element(node.usages.begin(), node.usages.end());
    }
    least = std::max(least, low);
    most = std::max(most, high);
  }
  problem.usage_limit = least + (most - least) / 3;
  return problem;
}

// The cheapest valid assignment by enumeration (cost -1 when none is valid).
inline WideCost BruteForceOptimum(const StrategyProblem& problem, std::vector<int>* best = nullptr) {
  const int n = static_cast<int>(problem.nodes.size());
  std::vector<int> x(n, 0);
  WideCost optimum = -1;
  while (true) {
    const AssignmentCheck check = CheckAssignment(problem, x);
    if (check.valid() && (optimum < 0 || check.cost < optimum)) {
      optimum = check.cost;
      if (best != nullptr) *best = x;
    }
    int i = 0;
    while (i < n && ++x[i] == problem.nodes[i].strategy_count()) x[i++] = 0;
    if (i == n) break;
  }
  return optimum;
}

}  // namespace gspmd::autoshard::test
