// One assignment of a ReducedProblem under search: its cost, its memory over time, and the
// moves that change it (one node's best strategy; exact DP over an induced subtree of nodes).
#pragma once

#include <cstdint>
#include <vector>

#include "autoshard/memory_profile.h"
#include "autoshard/reduced_problem.h"

namespace gspmd::autoshard {

// splitmix64: the search's only source of randomness (fixed seed: the same run every time).
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_;
};

// How moves judge a change. kFeasible: the true cost, and memory must stay within the limit
// at every time point. kPenalized: the true cost plus each strategy's memory times the price
// of the time points it is live at (Lagrangian prices); memory is not checked.
enum class MoveMode { kFeasible, kPenalized };

class SearchState {
 public:
  SearchState(const ReducedProblem& problem, std::vector<int> assignment);

  const std::vector<int>& assignment() const { return x_; }
  WideCost cost() const { return cost_; }  // without the problem's constant
  int64_t PeakUsage() const { return memory_.Max(0, memory_.size()); }
  bool Feasible() const { return memory_.size() == 0 || PeakUsage() <= problem_.usage_limit; }
  const MemoryProfile& memory() const { return memory_; }
  int64_t work() const { return work_; }  // inner-loop steps done by moves so far
  int64_t TakeWork() {
    const int64_t work = work_;
    work_ = 0;
    return work;
  }

  // Prices per time point (cost per unit of memory); penalized costs are recomputed.
  void SetPrices(const std::vector<double>& prices);

  // Sets node v to strategy s (memory and cost updated).
  void Set(int v, int s);

  // The best strategy for v alone given its neighbours; applied when it lowers the objective.
  bool ImproveNode(int v, MoveMode mode);

  // Grows an induced subtree from `root` (at most max_nodes nodes, at most max_work DP steps),
  // solves it exactly with everything else fixed, applies the result when it lowers the
  // objective (and, in kFeasible mode, keeps memory within the limit).
  bool ImproveTree(int root, int max_nodes, int64_t max_work, MoveMode mode, Random& random);

  // Exact re-optimization of a connected block grown by BFS from `root` (at most max_nodes,
  // at most 64 nodes; cycles allowed) by variable elimination: no intermediate table over
  // max_table entries, at most max_work steps. Applied as ImproveTree's result is.
  bool ImproveBlock(int root, int max_nodes, int64_t max_table, int64_t max_work, MoveMode mode, Random& random);

  // Lowers the memory peak until it fits, each step taking the change of least cost per unit
  // of memory freed at the worst time point. Returns whether it fits.
  bool Repair(int64_t max_steps);

 private:
  Cost NodeObjective(int v, int s, MoveMode mode) const {
    return mode == MoveMode::kPenalized ? penalized_[offset_[v] + s] : problem_.nodes[v].costs[s];
  }
  // Whether v may take s in a block move in kFeasible mode (memory slack per segment).
  void AllowedStrategies(int v, bool strict, std::vector<char>& allowed);
  bool Fits(int v);

  const ReducedProblem& problem_;
  std::vector<int> x_;
  WideCost cost_ = 0;
  MemoryProfile memory_;
  std::vector<size_t> offset_;     // node -> first entry in penalized_
  std::vector<Cost> penalized_;    // cost + memory x price, per (node, strategy)
  int64_t work_ = 0;

  // Scratch for ImproveTree.
  std::vector<int> stamp_;
  int stamp_now_ = 0;
  std::vector<int> block_, parent_, parent_edge_;
  std::vector<std::vector<Cost>> table_;
  std::vector<std::vector<int>> choice_;  // per block node: best own strategy per parent strategy
  std::vector<Cost> choice_cost_;
  std::vector<int> scratch_proposal_, scratch_candidates_;
  std::vector<int> local_;  // node -> its index in block_ (ImproveBlock)
};

}  // namespace gspmd::autoshard
