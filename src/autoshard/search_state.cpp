// SearchState's moves. Costs inside a move saturate at kForbiddenCost (AddCost), so a
// forbidden pair never looks cheaper than an allowed one; totals are kept in 128 bits.
#include "autoshard/search_state.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/diagnostic.h"

namespace gspmd::autoshard {

// Penalized costs stay below this so that they never reach kForbiddenCost when summed.
constexpr Cost kMaxPenalized = 100'000'000'000'000'000;  // 1e17
// Work charged per edge-cost lookup through EdgeCost (a branch and a scattered load; the DP
// loops over a whole matrix are charged 1 per entry).
constexpr int64_t kLookupWork = 4;
// Work charged for one range query or update of the memory profile (two root-to-leaf paths).
constexpr int64_t kMemoryOpWork = 40;

SearchState::SearchState(const ReducedProblem& problem, std::vector<int> assignment)
    : problem_(problem), x_(std::move(assignment)) {
  const int n = static_cast<int>(problem_.nodes.size());
  GSPMD_CHECK(static_cast<int>(x_.size()) == n, "assignment size");
  std::vector<int64_t> usage(problem_.baseline);
  std::vector<int64_t> diff(problem_.horizon + 1, 0);
  offset_.resize(n + 1, 0);
  for (int v = 0; v < n; ++v) {
    const ReducedProblem::Node& node = problem_.nodes[v];
    cost_ += node.costs[x_[v]];
    for (size_t g = 0; g < node.segments.size(); ++g) {
      diff[node.segments[g].start] += node.usage(g, x_[v]);
      diff[node.segments[g].end] -= node.usage(g, x_[v]);
    }
    offset_[v + 1] = offset_[v] + node.strategy_count();
  }
  int64_t running = 0;
  for (int64_t t = 0; t < problem_.horizon; ++t) usage[t] += running += diff[t];
  memory_ = MemoryProfile(usage);
  for (size_t e = 0; e < problem_.edges.size(); ++e) {
    const ReducedProblem::Edge& edge = problem_.edges[e];
    cost_ += problem_.EdgeCost(static_cast<int>(e), edge.a, x_[edge.a], x_[edge.b]);
  }
  penalized_.resize(offset_[n]);
  for (int v = 0; v < n; ++v)
    std::copy(problem_.nodes[v].costs.begin(), problem_.nodes[v].costs.end(), penalized_.begin() + offset_[v]);
  stamp_.assign(n, 0);
  work_ += 4 * (static_cast<int64_t>(offset_[n]) + problem_.horizon + static_cast<int64_t>(problem_.edges.size()));
}

void SearchState::SetPrices(const std::vector<double>& prices) {
  std::vector<double> prefix(problem_.horizon + 1, 0.0);
  for (int64_t t = 0; t < problem_.horizon; ++t) prefix[t + 1] = prefix[t] + (t < (int64_t)prices.size() ? prices[t] : 0);
  for (size_t v = 0; v < problem_.nodes.size(); ++v) {
    const ReducedProblem::Node& node = problem_.nodes[v];
    for (int s = 0; s < node.strategy_count(); ++s) {
      double penalty = 0;
      for (size_t g = 0; g < node.segments.size(); ++g)
        penalty += (prefix[node.segments[g].end] - prefix[node.segments[g].start]) * static_cast<double>(node.usage(g, s));
      const double total = static_cast<double>(node.costs[s]) + penalty;
      penalized_[offset_[v] + s] = total >= static_cast<double>(kMaxPenalized) ? kMaxPenalized : static_cast<Cost>(std::llround(total));
    }
  }
}

void SearchState::Set(int v, int s) {
  const int old = x_[v];
  if (old == s) return;
  const ReducedProblem::Node& node = problem_.nodes[v];
  cost_ += static_cast<WideCost>(node.costs[s]) - node.costs[old];
  for (const ReducedProblem::Adjacent& adjacent : node.adjacent)
    cost_ += static_cast<WideCost>(problem_.EdgeCost(adjacent.edge, v, s, x_[adjacent.node])) -
             problem_.EdgeCost(adjacent.edge, v, old, x_[adjacent.node]);
  for (size_t g = 0; g < node.segments.size(); ++g)
    memory_.Add(node.segments[g].start, node.segments[g].end, node.usage(g, s) - node.usage(g, old));
  work_ += kMemoryOpWork * static_cast<int64_t>(node.segments.size()) + static_cast<int64_t>(node.adjacent.size());
  x_[v] = s;
}

bool SearchState::Fits(int v) {
  const ReducedProblem::Node& node = problem_.nodes[v];
  work_ += kMemoryOpWork * static_cast<int64_t>(node.segments.size());
  for (const ReducedProblem::Segment& segment : node.segments)
    if (memory_.Max(segment.start, segment.end) > problem_.usage_limit) return false;
  return true;
}

void SearchState::AllowedStrategies(int v, bool strict, std::vector<char>& allowed) {
  const ReducedProblem::Node& node = problem_.nodes[v];
  work_ += (kMemoryOpWork + node.strategy_count()) * static_cast<int64_t>(node.segments.size());
  allowed.assign(node.strategy_count(), 1);
  for (size_t g = 0; g < node.segments.size(); ++g) {
    const int64_t slack =
        strict ? 0 : std::max<int64_t>(0, problem_.usage_limit - memory_.Max(node.segments[g].start, node.segments[g].end));
    const int64_t now = node.usage(g, x_[v]);
    for (int s = 0; s < node.strategy_count(); ++s)
      if (node.usage(g, s) - now > slack) allowed[s] = 0;
  }
}

bool SearchState::ImproveNode(int v, MoveMode mode) {
  const ReducedProblem::Node& node = problem_.nodes[v];
  const int k = node.strategy_count();
  if (k == 1) return false;
  std::vector<Cost> objective(k);
  for (int s = 0; s < k; ++s) {
    Cost c = NodeObjective(v, s, mode);
    for (const ReducedProblem::Adjacent& adjacent : node.adjacent)
      c = AddCost(c, problem_.EdgeCost(adjacent.edge, v, s, x_[adjacent.node]));
    objective[s] = c;
  }
  work_ += kLookupWork * k * static_cast<int64_t>(1 + node.adjacent.size());
  const int old = x_[v];
  if (mode == MoveMode::kPenalized) {
    const int best = static_cast<int>(std::min_element(objective.begin(), objective.end()) - objective.begin());
    if (objective[best] >= objective[old]) return false;
    Set(v, best);
    return true;
  }
  std::vector<char> allowed;
  AllowedStrategies(v, false, allowed);
  // Cheapest first among the allowed ones that improve; the exact memory check decides.
  for (int tries = 0; tries < 4; ++tries) {
    int best = -1;
    for (int s = 0; s < k; ++s)
      if (allowed[s] && objective[s] < objective[old] && (best < 0 || objective[s] < objective[best])) best = s;
    if (best < 0) return false;
    Set(v, best);
    if (Fits(v)) return true;
    Set(v, old);
    allowed[best] = 0;
  }
  return false;
}

bool SearchState::ImproveTree(int root, int max_nodes, int64_t max_work, MoveMode mode, Random& random) {
  const int n = static_cast<int>(problem_.nodes.size());
  if (n == 0) return false;
  // Grow the block: a node joins when exactly one of its neighbours is in the block already,
  // so the block's own edges form a tree.
  ++stamp_now_;
  block_.assign(1, root);
  parent_.assign(1, -1);
  parent_edge_.assign(1, -1);
  stamp_[root] = stamp_now_;
  int64_t budget = max_work;
  for (size_t i = 0; i < block_.size() && static_cast<int>(block_.size()) < max_nodes; ++i) {
    const int v = block_[i];
    const std::vector<ReducedProblem::Adjacent>& adjacent = problem_.nodes[v].adjacent;
    const int degree = static_cast<int>(adjacent.size());
    if (degree == 0) continue;
    const int first = random.Below(degree);
    for (int j = 0; j < degree && static_cast<int>(block_.size()) < max_nodes; ++j) {
      const ReducedProblem::Adjacent& a = adjacent[(first + j) % degree];
      const int w = a.node;
      if (stamp_[w] == stamp_now_) continue;
      const int64_t step = static_cast<int64_t>(problem_.nodes[w].strategy_count()) * problem_.nodes[v].strategy_count() +
                           static_cast<int64_t>(problem_.nodes[w].strategy_count()) * problem_.nodes[w].adjacent.size();
      if (step > budget) continue;
      int inside = 0;
      for (const ReducedProblem::Adjacent& b : problem_.nodes[w].adjacent)
        if (stamp_[b.node] == stamp_now_) ++inside;
      work_ += static_cast<int64_t>(problem_.nodes[w].adjacent.size());
      if (inside != 1) continue;
      budget -= step;
      stamp_[w] = stamp_now_;
      block_.push_back(w);
      parent_.push_back(static_cast<int>(i));
      parent_edge_.push_back(a.edge);
    }
  }
  const int size = static_cast<int>(block_.size());
  if (table_.size() < static_cast<size_t>(size)) {
    table_.resize(size);
    choice_.resize(size);
  }
  std::vector<char> allowed;
  std::vector<int>& proposal = scratch_proposal_;
  for (int strict = 0; strict < 2; ++strict) {
    if (strict == 1 && mode != MoveMode::kFeasible) break;
    // Unary terms: own objective plus the edges to fixed neighbours.
    Cost old_objective = 0;
    for (int i = 0; i < size; ++i) {
      const int v = block_[i];
      const ReducedProblem::Node& node = problem_.nodes[v];
      const int k = node.strategy_count();
      if (mode == MoveMode::kFeasible) AllowedStrategies(v, strict == 1, allowed);
      std::vector<Cost>& table = table_[i];
      table.assign(k, 0);
      for (int s = 0; s < k; ++s) table[s] = NodeObjective(v, s, mode);
      for (const ReducedProblem::Adjacent& a : node.adjacent) {
        if (stamp_[a.node] == stamp_now_) {
          if (i > 0 && a.edge == parent_edge_[i])
            old_objective = AddCost(old_objective, problem_.EdgeCost(a.edge, v, x_[v], x_[a.node]));
          continue;
        }
        const int other = x_[a.node];
        for (int s = 0; s < k; ++s) table[s] = AddCost(table[s], problem_.EdgeCost(a.edge, v, s, other));
      }
      work_ += kLookupWork * k * static_cast<int64_t>(1 + node.adjacent.size());
      old_objective = AddCost(old_objective, table[x_[v]]);
      if (mode == MoveMode::kFeasible)
        for (int s = 0; s < k; ++s)
          if (!allowed[s]) table[s] = kForbiddenCost;
    }
    // Leaves up: each node's best strategy for every strategy of its parent.
    for (int i = size - 1; i > 0; --i) {
      const int v = block_[i];
      const int p = parent_[i];
      const int u = block_[p];
      const int kv = problem_.nodes[v].strategy_count();
      const int ku = problem_.nodes[u].strategy_count();
      const ReducedProblem::Edge& edge = problem_.edges[parent_edge_[i]];
      const bool v_is_a = edge.a == v;
      const int columns = problem_.nodes[edge.b].strategy_count();
      std::vector<Cost>& message = choice_cost_;
      message.assign(ku, kForbiddenCost);
      std::vector<int>& choice = choice_[i];
      choice.assign(ku, 0);
      const std::vector<Cost>& table = table_[i];
      std::vector<Cost>& parent_table = table_[p];
      // Only v's strategies still allowed, for the parent's strategies still allowed.
      std::vector<int>& candidates = scratch_candidates_;
      candidates.clear();
      for (int sv = 0; sv < kv; ++sv)
        if (table[sv] < kForbiddenCost) candidates.push_back(sv);
      int64_t live_parents = 0;
      for (int su = 0; su < ku; ++su) {
        Cost best = kForbiddenCost;
        int best_s = x_[v];
        if (parent_table[su] < kForbiddenCost) {
          ++live_parents;
          for (int sv : candidates) {
            const Cost edge_cost = v_is_a ? edge.costs[static_cast<size_t>(sv) * columns + su]
                                          : edge.costs[static_cast<size_t>(su) * columns + sv];
            const Cost c = AddCost(table[sv], edge_cost);
            if (c < best) {
              best = c;
              best_s = sv;
            }
          }
        }
        message[su] = best;
        choice[su] = best_s;
      }
      work_ += ku + kv + live_parents * static_cast<int64_t>(candidates.size());
      for (int su = 0; su < ku; ++su) parent_table[su] = AddCost(parent_table[su], message[su]);
    }
    const std::vector<Cost>& root_table = table_[0];
    const int best_root = static_cast<int>(std::min_element(root_table.begin(), root_table.end()) - root_table.begin());
    const Cost new_objective = root_table[best_root];
    if (new_objective >= old_objective || new_objective >= kForbiddenCost) return false;
    proposal.assign(size, 0);
    proposal[0] = best_root;
    for (int i = 1; i < size; ++i) proposal[i] = choice_[i][proposal[parent_[i]]];
    std::vector<int> previous(size);
    for (int i = 0; i < size; ++i) {
      previous[i] = x_[block_[i]];
      Set(block_[i], proposal[i]);
    }
    if (mode == MoveMode::kPenalized) return true;
    bool fits = true;
    for (int i = 0; i < size && fits; ++i)
      if (proposal[i] != previous[i]) fits = Fits(block_[i]);
    if (fits) return true;
    for (int i = size - 1; i >= 0; --i) Set(block_[i], previous[i]);
  }
  return false;
}

bool SearchState::Repair(int64_t max_steps) {
  for (int64_t step = 0; step < max_steps; ++step) {
    if (Feasible()) return true;
    const int64_t t = memory_.ArgMax();
    int best_v = -1, best_s = -1;
    double best_ratio = std::numeric_limits<double>::infinity();
    int64_t best_freed = 0;
    for (int v : problem_.live_by_bucket[t >> ReducedProblem::kBucketShift]) {
      const ReducedProblem::Node& node = problem_.nodes[v];
      bool live = false;
      for (const ReducedProblem::Segment& segment : node.segments) live = live || (segment.start <= t && t < segment.end);
      work_ += static_cast<int64_t>(node.segments.size());
      if (!live) continue;
      const int k = node.strategy_count();
      for (int s = 0; s < k; ++s) {
        int64_t freed = 0;
        for (size_t g = 0; g < node.segments.size(); ++g)
          if (node.segments[g].start <= t && t < node.segments[g].end) freed += node.usage(g, x_[v]) - node.usage(g, s);
        if (freed <= 0) continue;
        WideCost delta = static_cast<WideCost>(node.costs[s]) - node.costs[x_[v]];
        for (const ReducedProblem::Adjacent& a : node.adjacent)
          delta += static_cast<WideCost>(problem_.EdgeCost(a.edge, v, s, x_[a.node])) -
                   problem_.EdgeCost(a.edge, v, x_[v], x_[a.node]);
        const double ratio = static_cast<double>(delta) / static_cast<double>(freed);
        if (ratio < best_ratio || (ratio == best_ratio && freed > best_freed)) {
          best_ratio = ratio;
          best_freed = freed;
          best_v = v;
          best_s = s;
        }
      }
      work_ += kLookupWork * k * static_cast<int64_t>(1 + node.adjacent.size() + node.segments.size());
    }
    if (best_v < 0) return false;
    Set(best_v, best_s);
  }
  return Feasible();
}

}  // namespace gspmd::autoshard
