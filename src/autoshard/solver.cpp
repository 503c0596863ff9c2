// The solver's driver. Steps:
//  1. reduce (reduce.h);
//  2. a first feasible assignment: every node's least-memory strategy, repaired (cheapest
//     memory freed first) until it fits, then improved by local search under the limit;
//  3. Lagrangian rounds: memory at each time point has a price; TRW-S message passing
//     (trws.h) minimizes cost + price x memory, which gives a lower bound (the dual value)
//     and a decoded assignment; that assignment is repaired and improved under the limit
//     (search_state.h) and kept when best; the prices follow the decoded assignment's
//     overflow by subgradient steps (Polyak's step length toward the best cost found).
// Everything is deterministic: a fixed seed, and a budget counted in work steps; the clock
// only stops a run that the budget would have let go on.
#include "autoshard/solver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "autoshard/lower_bound.h"
#include "autoshard/reduce.h"
#include "autoshard/search_state.h"
#include "autoshard/trws.h"

namespace gspmd::autoshard {
namespace {

// Price steps per Lagrangian round, and TRW-S passes per price step (each pass: a forward
// and a backward sweep).
constexpr int kPriceStepsPerRound = 5;
constexpr int kPassesPerStep = 3;
// Rounds without a better assignment after which the search stops before its budget.
constexpr int kStallRounds = 1000;
// Reduced problems with at most this many assignments are enumerated.
constexpr int64_t kEnumerateLimit = 1 << 16;

class Driver {
 public:
  Driver(const ReducedProblem& problem, const SolveOptions& options, int64_t budget)
      : problem_(problem), options_(options), budget_(budget), random_(options.seed) {}

  // Improves `state` while moves find something, within the budget; blocks: also the
  // variable-elimination moves over blocks of up to 48 nodes.
  void LocalSearch(SearchState& state, MoveMode mode, bool blocks);
  // Single-node moves only, until none improves.
  void NodeSearch(SearchState& state, MoveMode mode);
  // Brings `state` within the memory limit: a few times, memory at the time points still over
  // the limit gets a steeper price and the priced local search runs (it moves whole subtrees,
  // where single changes would break edges); then Repair's greedy finishes.
  void PricedRepair(SearchState& state, double cost_scale);
  // One subtree move (up to `size` nodes) from every node, in index order.
  void TreeSweep(SearchState& state, MoveMode mode, int size);
  std::vector<int> LeastMemoryAssignment() const;
  bool OutOfWork(int64_t pending = 0) {
    if (spent_ + pending >= budget_) return true;
    if (++clock_checks_ % 16 == 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - options_.start).count();
      if (elapsed >= options_.time_limit_seconds) stopped_by_clock_ = true;
    }
    return stopped_by_clock_;
  }
  void Spend(int64_t work) { spent_ += work; }
  void Spend(SearchState& state) { spent_ += state.TakeWork(); }
  int64_t spent() const { return spent_; }
  bool stopped_by_clock() const { return stopped_by_clock_; }

 private:
  const ReducedProblem& problem_;
  const SolveOptions& options_;
  int64_t budget_;
  int64_t spent_ = 0;
  int64_t clock_checks_ = 0;
  bool stopped_by_clock_ = false;
  Random random_;
};

std::vector<int> Driver::LeastMemoryAssignment() const {
  std::vector<int> x(problem_.nodes.size(), 0);
  for (size_t v = 0; v < problem_.nodes.size(); ++v) {
    const ReducedProblem::Node& node = problem_.nodes[v];
    int64_t best_usage = 0;
    for (int s = 0; s < node.strategy_count(); ++s) {
      int64_t usage = 0;
      for (size_t g = 0; g < node.segments.size(); ++g) usage += node.usage(g, s);
      if (s == 0 || usage < best_usage || (usage == best_usage && node.costs[s] < node.costs[x[v]])) {
        best_usage = usage;
        x[v] = s;
      }
    }
  }
  return x;
}

void Driver::LocalSearch(SearchState& state, MoveMode mode, bool blocks) {
  const int n = static_cast<int>(problem_.nodes.size());
  std::vector<int> order(n);
  for (int v = 0; v < n; ++v) order[v] = v;
  static constexpr int kTreeSizes[] = {8, 32, 128};
  static constexpr int kBlockSizes[] = {12, 24, 48};
  for (int sweep = 0; sweep < 1000; ++sweep) {
    for (int i = n - 1; i > 0; --i) std::swap(order[i], order[random_.Below(i + 1)]);
    bool improved = false;
    for (int v : order) {
      if (OutOfWork(state.work())) return;
      improved = state.ImproveNode(v, mode) || improved;
    }
    for (int v : order) {
      if (OutOfWork(state.work())) return;
      improved = state.ImproveTree(v, kTreeSizes[sweep % 3], 4'000'000, mode, random_) || improved;
    }
    if (blocks) {
      for (int v : order) {
        if (OutOfWork(state.work())) return;
        improved = state.ImproveBlock(v, kBlockSizes[sweep % 3], 200'000, 4'000'000, mode, random_) || improved;
      }
    }
    if (!improved) return;
  }
}

void Driver::NodeSearch(SearchState& state, MoveMode mode) {
  const int n = static_cast<int>(problem_.nodes.size());
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool improved = false;
    for (int v = 0; v < n; ++v) {
      if (OutOfWork(state.work())) return;
      improved = state.ImproveNode(v, mode) || improved;
    }
    if (!improved) return;
  }
}

void Driver::TreeSweep(SearchState& state, MoveMode mode, int size) {
  for (int v = 0; v < static_cast<int>(problem_.nodes.size()); ++v) {
    if (OutOfWork(state.work())) return;
    state.ImproveTree(v, size, 4'000'000, mode, random_);
  }
}

void Driver::PricedRepair(SearchState& state, double cost_scale) {
  const int64_t horizon = problem_.horizon;
  std::vector<double> prices(horizon, 0.0);
  for (int attempt = 0; attempt < 6 && !state.Feasible() && !OutOfWork(state.work()); ++attempt) {
    const std::vector<int64_t> usage = state.memory().Values();
    int64_t over = 0;
    for (int64_t t = 0; t < horizon; ++t) over += usage[t] > problem_.usage_limit ? 1 : 0;
    const double unit = cost_scale / (static_cast<double>(problem_.usage_limit) * static_cast<double>(std::max<int64_t>(over, 1)));
    for (int64_t t = 0; t < horizon; ++t)
      if (usage[t] > problem_.usage_limit) prices[t] = prices[t] > 0 ? prices[t] * 4 : unit;
    state.SetPrices(prices);
    NodeSearch(state, MoveMode::kPenalized);
    TreeSweep(state, MoveMode::kPenalized, 32);
  }
  state.Repair(static_cast<int64_t>(problem_.nodes.size()) * 4);
}

// Node costs plus memory x price: per (node, strategy), the strategy's usage in each segment
// times the sum of the prices of the segment's time points.
std::vector<double> PricedCosts(const ReducedProblem& problem, const std::vector<double>& prices) {
  std::vector<double> prefix(problem.horizon + 1, 0.0);
  for (int64_t t = 0; t < problem.horizon; ++t) prefix[t + 1] = prefix[t] + prices[t];
  std::vector<double> costs;
  for (const ReducedProblem::Node& node : problem.nodes) {
    for (int s = 0; s < node.strategy_count(); ++s) {
      double c = static_cast<double>(node.costs[s]);
      for (size_t g = 0; g < node.segments.size(); ++g)
        c += (prefix[node.segments[g].end] - prefix[node.segments[g].start]) * static_cast<double>(node.usage(g, s));
      costs.push_back(c);
    }
  }
  return costs;
}

// Tries every assignment when there are at most kEnumerateLimit, odometer order (each step
// changes the first few nodes); updates best when it finds a better valid one. Returns
// whether it ran (and so proved the best optimal).
bool Enumerate(const ReducedProblem& problem, std::vector<int>& best, WideCost& best_cost, bool& best_feasible,
               Driver& driver) {
  int64_t count = 1;
  for (const ReducedProblem::Node& node : problem.nodes) {
    count *= node.strategy_count();
    if (count > kEnumerateLimit) return false;
  }
  const int n = static_cast<int>(problem.nodes.size());
  SearchState state(problem, std::vector<int>(n, 0));
  std::vector<int> x(n, 0);
  while (true) {
    if (state.Feasible() && (!best_feasible || state.cost() < best_cost)) {
      best = state.assignment();
      best_cost = state.cost();
      best_feasible = true;
    }
    int i = 0;
    while (i < n && x[i] + 1 == problem.nodes[i].strategy_count()) {
      x[i] = 0;
      state.Set(i, 0);
      ++i;
    }
    if (i == n) break;
    state.Set(i, ++x[i]);
  }
  driver.Spend(state);
  return true;
}

}  // namespace

SolveResult SolveStrategyProblem(const StrategyProblem& input, const SolveOptions& options) {
  SolveResult result;
  int64_t budget = options.work_budget;
  if (budget <= 0) budget = static_cast<int64_t>(options.time_limit_seconds * kNominalWorkPerSecond);
  result.work_budget = budget;
  Reduction reduction = Reduce(input);
  const ReducedProblem& problem = reduction.problem;
  result.reduction = reduction.stats;
  Driver driver(problem, options, budget);
  int64_t work = 0;
  WideCost bound = SpanningForestLowerBound(problem, work);
  driver.Spend(work);

  SearchState state(problem, driver.LeastMemoryAssignment());
  state.Repair(static_cast<int64_t>(problem.nodes.size()) * 4);
  driver.LocalSearch(state, MoveMode::kFeasible, false);
  driver.Spend(state);
  result.initial_cost = state.cost() + problem.constant;
  std::vector<int> best = state.assignment();
  WideCost best_cost = state.cost();
  bool best_feasible = state.Feasible();

  // A reduced problem small enough to enumerate is solved exactly.
  if (Enumerate(problem, best, best_cost, best_feasible, driver) && best_feasible) bound = best_cost + problem.constant;
  const bool exact = best_feasible && bound == best_cost + problem.constant;

  // Lagrangian rounds, until the budget is spent or kStallRounds rounds find nothing better.
  MessagePassing passing(problem);
  std::vector<double> prices(problem.horizon, 0.0);
  double best_dual = -1e300;       // the best valid bound (TRW-S's, priced)
  double best_lagrangian = -1e300;  // the best Lagrangian value of a decoded assignment
  double step_scale = 1.0;
  int since_gain = 0;
  int stalled = 0;
  for (int round = 0; !exact && stalled < kStallRounds && !driver.OutOfWork(); ++round) {
    // Several cheap price steps (message passing and decoding), then the expensive repair and
    // local search on the most promising decoded assignment: the cheapest that fits, else the
    // one that overflows least.
    std::optional<SearchState> chosen;
    int64_t chosen_overflow = 0;
    double dual = 0;
    for (int step_index = 0; step_index < kPriceStepsPerRound; ++step_index) {
      passing.SetNodeCosts(PricedCosts(problem, prices));
      work = 0;
      for (int i = 0; i < kPassesPerStep; ++i) passing.Iterate(work);
      dual = passing.LowerBound(work);
      for (int64_t t = 0; t < problem.horizon; ++t)
        dual += prices[t] * static_cast<double>(problem.baseline[t] - problem.usage_limit);
      best_dual = std::max(best_dual, dual);
      SearchState guided(problem, passing.Decode(work));
      driver.Spend(work);
      const std::vector<int64_t> usage = guided.memory().Values();
      driver.Spend(4 * problem.horizon + static_cast<int64_t>(problem.nodes.size()));
      // The decoded assignment's Lagrangian value: cost + sum of price x (memory - limit), an
      // estimate of the dual function at these prices; the step length follows it.
      std::vector<double> gradient(problem.horizon);
      double lagrangian = static_cast<double>(guided.cost() + problem.constant);
      double norm = 0;
      int64_t overflow = 0;
      for (int64_t t = 0; t < problem.horizon; ++t) {
        gradient[t] = static_cast<double>(usage[t] - problem.usage_limit);
        lagrangian += prices[t] * gradient[t];
        if (prices[t] > 0 || gradient[t] > 0) norm += gradient[t] * gradient[t];
        overflow += std::max<int64_t>(0, usage[t] - problem.usage_limit);
      }
      if (lagrangian > best_lagrangian + 1e-9 * std::abs(best_lagrangian)) {
        best_lagrangian = lagrangian;
        since_gain = 0;
      } else if (++since_gain >= 5) {
        step_scale = std::max(step_scale / 2, 1e-3);
        since_gain = 0;
      }
      const double target = static_cast<double>(best_cost + problem.constant);
      if (norm > 0) {
        const double step = step_scale * std::max(target - lagrangian, 0.001 * std::abs(target)) / norm;
        for (int64_t t = 0; t < problem.horizon; ++t) prices[t] = std::max(0.0, prices[t] + step * gradient[t]);
      }
      const bool better = !chosen.has_value() || overflow < chosen_overflow ||
                          (overflow == chosen_overflow && guided.cost() < chosen->cost());
      if (better) {
        chosen_overflow = overflow;
        chosen.emplace(std::move(guided));
      }
    }
    SearchState& guided = *chosen;
    const WideCost decoded_cost = guided.cost();
    driver.PricedRepair(guided, static_cast<double>(best_cost + problem.constant));
    if (guided.Feasible()) {
      driver.NodeSearch(guided, MoveMode::kFeasible);
      // The subtree moves only for candidates close to the best.
      if (guided.cost() < best_cost + best_cost / 50) driver.LocalSearch(guided, MoveMode::kFeasible, false);
    }
    driver.Spend(guided);
    ++stalled;
    if (guided.Feasible() && (!best_feasible || guided.cost() < best_cost)) {
      best = guided.assignment();
      best_cost = guided.cost();
      best_feasible = true;
      stalled = 0;
    }
    result.rounds = round + 1;
    if (options.trace)
      std::fprintf(stderr, "round %d: bound %.6g, decoded %s (over the limit by %lld in all) -> %s, best %s, step %.3g\n",
                   round, dual, WideToString(decoded_cost + problem.constant).c_str(),
                   static_cast<long long>(chosen_overflow), WideToString(guided.cost() + problem.constant).c_str(),
                   WideToString(best_cost + problem.constant).c_str(), step_scale);
  }
  // A last polish of the best with the block moves.
  SearchState final_state(problem, best);
  if (!exact && final_state.Feasible()) {
    driver.LocalSearch(final_state, MoveMode::kFeasible, true);
    if (final_state.cost() < best_cost) {
      best = final_state.assignment();
      best_cost = final_state.cost();
    }
  }
  if (best_dual > static_cast<double>(bound)) bound = static_cast<WideCost>(std::floor(best_dual));
  result.lower_bound = bound;
  result.has_lower_bound = true;
  result.assignment = reduction.expansion.Expand(best);
  const AssignmentCheck check = CheckAssignment(input, result.assignment);
  result.cost = check.cost;
  result.feasible = check.valid();
  result.work = driver.spent();
  result.stopped_by_clock = driver.stopped_by_clock();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - options.start).count();
  return result;
}

}  // namespace gspmd::autoshard
