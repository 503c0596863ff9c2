// SearchPlan: coordinate descent over parameter groups with memoized plan evaluations.
#include "autoshard/program/plan_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace gspmd::autoshard {

bool BetterPlan(const PlanCost& a, const PlanCost& b) {
  if (a.valid != b.valid) return a.valid;
  if (!a.valid) return false;
  if (a.fits != b.fits) return a.fits;
  if (!a.fits) return a.peak_bytes < b.peak_bytes;
  // Times within one part in 10^6 are the same time: memory, then bytes decide.
  const double scale = std::max(a.step_time_s, b.step_time_s);
  if (std::abs(a.step_time_s - b.step_time_s) > 1e-6 * scale) return a.step_time_s < b.step_time_s;
  if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
  return a.comm_bytes < b.comm_bytes;
}

PlanSearchResult SearchPlan(const std::vector<int>& candidates, const std::vector<int64_t>& weight,
                            const std::function<PlanCost(const std::vector<int>&)>& evaluate,
                            const PlanSearchOptions& options) {
  const size_t groups = candidates.size();
  PlanSearchResult result;
  result.choice = options.start.empty() ? std::vector<int>(groups, 0) : options.start;
  std::map<std::vector<int>, PlanCost> memo;
  auto out_of_budget = [&] {
    if (options.max_evaluations > 0 && result.evaluations >= options.max_evaluations) return true;
    return std::chrono::steady_clock::now() >= options.deadline;
  };
  auto cost_of = [&](const std::vector<int>& plan) -> const PlanCost& {
    auto it = memo.find(plan);
    if (it != memo.end()) return it->second;
    ++result.evaluations;
    return memo.emplace(plan, evaluate(plan)).first->second;
  };
  result.cost = cost_of(result.choice);

  std::vector<size_t> order(groups);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight[a] > weight[b]; });
  std::vector<GroupDecision> last(groups);
  std::vector<bool> weighed(groups, false);
  for (int pass = 0; pass < options.max_passes; ++pass) {
    bool changed = false;
    for (size_t g : order) {
      if (candidates[g] <= 1 || (!options.active.empty() && !options.active[g])) continue;
      GroupDecision decision;
      decision.group = static_cast<int>(g);
      int best = result.choice[g];
      PlanCost best_cost = result.cost;
      std::vector<int> tried;
      if (options.shortlist) {
        tried = options.shortlist(result.choice, static_cast<int>(g));
        if (std::find(tried.begin(), tried.end(), result.choice[g]) == tried.end()) tried.push_back(result.choice[g]);
        std::sort(tried.begin(), tried.end());
      } else {
        for (int c = 0; c < candidates[g]; ++c) tried.push_back(c);
      }
      for (int c : tried) {
        std::vector<int> plan = result.choice;
        plan[g] = c;
        if (c != result.choice[g] && memo.find(plan) == memo.end() && out_of_budget()) {
          result.stopped_early = true;
          break;
        }
        const PlanCost& cost = cost_of(plan);
        decision.alternatives.push_back({c, cost});
        if (BetterPlan(cost, best_cost)) {
          best = c;
          best_cost = cost;
        }
      }
      decision.chosen = best;
      last[g] = std::move(decision);
      weighed[g] = true;
      if (best != result.choice[g]) {
        result.choice[g] = best;
        result.cost = best_cost;
        changed = true;
      }
      if (result.stopped_early) break;
    }
    result.passes = pass + 1;
    if (!changed || result.stopped_early) break;
  }
  for (size_t g = 0; g < groups; ++g)
    if (weighed[g]) result.decisions.push_back(std::move(last[g]));
  return result;
}

}  // namespace gspmd::autoshard
