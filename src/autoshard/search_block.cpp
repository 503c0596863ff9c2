// SearchState::ImproveBlock: exact re-optimization of a connected block of up to 64 nodes,
// everything outside fixed, by variable elimination (cycles inside the block allowed). The
// block is the longest prefix of a BFS from the root whose elimination, in greedy
// smallest-table order, keeps every intermediate table and the total work within limits.
#include <algorithm>
#include <bit>

#include "autoshard/search_state.h"

namespace gspmd::autoshard {
namespace {

struct Factor {
  uint64_t scope = 0;          // bit i: block node i
  std::vector<int> vars;       // the scope's nodes, ascending
  std::vector<int64_t> strides;
  std::vector<Cost> table;
  bool alive = true;
};

// Greedy elimination order of the block's first `count` nodes; false when some table would
// exceed max_table entries or the total work max_work.
bool PlanElimination(int count, const std::vector<uint64_t>& neighbours, const std::vector<int>& k, int64_t max_table,
                     int64_t max_work, std::vector<int>& order) {
  const uint64_t all = count == 64 ? ~0ULL : ((1ULL << count) - 1);
  std::vector<uint64_t> graph(count);
  for (int i = 0; i < count; ++i) graph[i] = neighbours[i] & all;
  uint64_t left = all;
  order.clear();
  int64_t work = 0;
  while (left != 0) {
    int best = -1;
    int64_t best_size = 0;
    for (uint64_t rest = left; rest != 0; rest &= rest - 1) {
      const int v = std::countr_zero(rest);
      int64_t size = 1;
      for (uint64_t nb = graph[v] & left; nb != 0 && size <= max_table; nb &= nb - 1) size *= k[std::countr_zero(nb)];
      if (best < 0 || size < best_size) {
        best = v;
        best_size = size;
      }
    }
    if (best_size > max_table) return false;
    work += best_size * k[best];
    if (work > max_work) return false;
    const uint64_t nb = graph[best] & left & ~(1ULL << best);
    for (uint64_t rest = nb; rest != 0; rest &= rest - 1) graph[std::countr_zero(rest)] |= nb & ~(1ULL << std::countr_zero(rest));
    left &= ~(1ULL << best);
    order.push_back(best);
  }
  return true;
}

}  // namespace

bool SearchState::ImproveBlock(int root, int max_nodes, int64_t max_table, int64_t max_work, MoveMode mode,
                               Random& random) {
  const int n = static_cast<int>(problem_.nodes.size());
  if (n == 0) return false;
  max_nodes = std::min(max_nodes, 64);
  if (local_.size() != static_cast<size_t>(n)) local_.assign(n, -1);
  ++stamp_now_;
  block_.assign(1, root);
  stamp_[root] = stamp_now_;
  local_[root] = 0;
  for (size_t i = 0; i < block_.size() && static_cast<int>(block_.size()) < max_nodes; ++i) {
    const std::vector<ReducedProblem::Adjacent>& adjacent = problem_.nodes[block_[i]].adjacent;
    const int degree = static_cast<int>(adjacent.size());
    if (degree == 0) continue;
    const int first = random.Below(degree);
    for (int j = 0; j < degree && static_cast<int>(block_.size()) < max_nodes; ++j) {
      const int w = adjacent[(first + j) % degree].node;
      if (stamp_[w] == stamp_now_) continue;
      stamp_[w] = stamp_now_;
      local_[w] = static_cast<int>(block_.size());
      block_.push_back(w);
    }
  }
  int size = static_cast<int>(block_.size());
  std::vector<uint64_t> neighbours(size, 0);
  std::vector<int> k(size);
  for (int i = 0; i < size; ++i) {
    k[i] = problem_.nodes[block_[i]].strategy_count();
    for (const ReducedProblem::Adjacent& a : problem_.nodes[block_[i]].adjacent)
      if (stamp_[a.node] == stamp_now_) neighbours[i] |= 1ULL << local_[a.node];
  }
  // The longest BFS prefix that can be eliminated within the limits.
  std::vector<int> order;
  while (size > 1 && !PlanElimination(size, neighbours, k, max_table, max_work, order)) size = size * 3 / 4;
  if (size == 1) PlanElimination(1, neighbours, k, max_table, max_work, order);
  for (int i = size; i < static_cast<int>(block_.size()); ++i) stamp_[block_[i]] = stamp_now_ - 1;
  block_.resize(size);
  work_ += static_cast<int64_t>(size) * size;

  std::vector<char> allowed;
  for (int strict = 0; strict < 2; ++strict) {
    if (strict == 1 && mode != MoveMode::kFeasible) break;
    std::vector<Factor> factors;
    Cost old_objective = 0;
    for (int i = 0; i < size; ++i) {
      const int v = block_[i];
      const ReducedProblem::Node& node = problem_.nodes[v];
      Factor unary;
      unary.scope = 1ULL << i;
      unary.vars = {i};
      unary.strides = {1};
      unary.table.resize(k[i]);
      for (int s = 0; s < k[i]; ++s) unary.table[s] = NodeObjective(v, s, mode);
      for (const ReducedProblem::Adjacent& a : node.adjacent) {
        if (stamp_[a.node] == stamp_now_) {
          if (local_[a.node] > i) {  // an edge inside the block, once
            const int j = local_[a.node];
            Factor pair;
            pair.scope = (1ULL << i) | (1ULL << j);
            pair.vars = {i, j};
            pair.strides = {k[j], 1};
            pair.table.resize(static_cast<size_t>(k[i]) * k[j]);
            for (int s = 0; s < k[i]; ++s)
              for (int t = 0; t < k[j]; ++t)
                pair.table[static_cast<size_t>(s) * k[j] + t] = problem_.EdgeCost(a.edge, v, s, t);
            old_objective = AddCost(old_objective, pair.table[static_cast<size_t>(x_[v]) * k[j] + x_[a.node]]);
            work_ += static_cast<int64_t>(k[i]) * k[j];
            factors.push_back(std::move(pair));
          }
          continue;
        }
        const int other = x_[a.node];
        for (int s = 0; s < k[i]; ++s) unary.table[s] = AddCost(unary.table[s], problem_.EdgeCost(a.edge, v, s, other));
      }
      work_ += static_cast<int64_t>(k[i]) * (1 + node.adjacent.size());
      old_objective = AddCost(old_objective, unary.table[x_[v]]);
      if (mode == MoveMode::kFeasible) {
        AllowedStrategies(v, strict == 1, allowed);
        for (int s = 0; s < k[i]; ++s)
          if (!allowed[s]) unary.table[s] = kForbiddenCost;
      }
      factors.push_back(std::move(unary));
    }
    // Eliminate: each step replaces the factors holding v by one over their other nodes.
    std::vector<Factor> argmins(size);  // per node: its best strategy per assignment of the new scope
    Cost constant = 0;
    std::vector<int> values(size, 0);
    for (int v : order) {
      std::vector<int> holding;
      uint64_t scope = 0;
      for (size_t f = 0; f < factors.size(); ++f)
        if (factors[f].alive && (factors[f].scope >> v & 1)) {
          holding.push_back(static_cast<int>(f));
          scope |= factors[f].scope;
        }
      scope &= ~(1ULL << v);
      Factor result;
      result.scope = scope;
      for (uint64_t rest = scope; rest != 0; rest &= rest - 1) result.vars.push_back(std::countr_zero(rest));
      const int arity = static_cast<int>(result.vars.size());
      result.strides.assign(arity, 1);
      int64_t entries = 1;
      for (int a = arity - 1; a >= 0; --a) {
        result.strides[a] = entries;
        entries *= k[result.vars[a]];
      }
      result.table.assign(entries, kCostCap);
      Factor choice;
      choice.vars = result.vars;
      choice.strides = result.strides;
      choice.table.assign(entries, 0);
      // For each factor: its stride for v and for each of the new scope's nodes (0 if absent).
      const int held = static_cast<int>(holding.size());
      std::vector<int64_t> v_stride(held, 0), var_stride(static_cast<size_t>(held) * arity, 0);
      for (int h = 0; h < held; ++h) {
        const Factor& f = factors[holding[h]];
        for (size_t a = 0; a < f.vars.size(); ++a) {
          if (f.vars[a] == v) {
            v_stride[h] = f.strides[a];
            continue;
          }
          const int position = static_cast<int>(std::find(result.vars.begin(), result.vars.end(), f.vars[a]) - result.vars.begin());
          var_stride[static_cast<size_t>(h) * arity + position] = f.strides[a];
        }
      }
      std::vector<int> digit(arity, 0);
      std::vector<int64_t> base(held, 0);
      for (int64_t index = 0; index < entries; ++index) {
        Cost best = kCostCap;
        int best_s = x_[block_[v]];
        for (int s = 0; s < k[v]; ++s) {
          Cost c = 0;
          for (int h = 0; h < held; ++h) c = AddCost(c, factors[holding[h]].table[base[h] + v_stride[h] * s]);
          if (c < best) {
            best = c;
            best_s = s;
          }
        }
        result.table[index] = best;
        choice.table[index] = best_s;
        // Next assignment of the new scope (last node fastest), moving each factor's base.
        for (int a = arity - 1; a >= 0; --a) {
          for (int h = 0; h < held; ++h) base[h] += var_stride[static_cast<size_t>(h) * arity + a];
          if (++digit[a] < k[result.vars[a]]) break;
          for (int h = 0; h < held; ++h) base[h] -= var_stride[static_cast<size_t>(h) * arity + a] * digit[a];
          digit[a] = 0;
        }
      }
      work_ += entries * k[v] * held;
      for (int h : holding) {
        factors[h].alive = false;
        factors[h].table.clear();
      }
      argmins[v] = std::move(choice);
      if (arity == 0) {
        constant = AddCost(constant, result.table[0]);
      } else {
        factors.push_back(std::move(result));
      }
    }
    const Cost new_objective = constant;
    if (new_objective >= old_objective || new_objective >= kForbiddenCost) return false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Factor& choice = argmins[*it];
      int64_t index = 0;
      for (size_t a = 0; a < choice.vars.size(); ++a) index += choice.strides[a] * values[choice.vars[a]];
      values[*it] = choice.table[index];
    }
    std::vector<int> previous(size);
    for (int i = 0; i < size; ++i) {
      previous[i] = x_[block_[i]];
      Set(block_[i], values[i]);
    }
    if (mode == MoveMode::kPenalized) return true;
    bool fits = true;
    for (int i = 0; i < size && fits; ++i)
      if (values[i] != previous[i]) fits = Fits(block_[i]);
    if (fits) return true;
    for (int i = size - 1; i >= 0; --i) Set(block_[i], previous[i]);
  }
  return false;
}

}  // namespace gspmd::autoshard
