// The search of one mesh for api::Autoshard: parameter groups' candidates (their leader's
// decision, propagation's, a kept annotation or a PartitionSpec), each plan annotated,
// partitioned and simulated. Internal to src/api/.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "autoshard/program/parameter_groups.h"

namespace gspmd::api::autoshard_internal {

using Clock = std::chrono::steady_clock;

// What the simulator says a program costs.
autoshard::PlanCost CostOf(const simulate::SimulationReport& report);

// One value a group may take.
struct Candidate {
  enum class Kind {
    kLeader,      // its leader's decision (optimizer state following its weight)
    kPropagated,  // no annotation: propagation decides
    kKeep,        // the base program's own annotation (a recipe's)
    kSpec,        // this PartitionSpec
  } kind = Kind::kPropagated;
  PartitionSpec spec;
};

class MeshSearch {
 public:
  // `keep_base`: candidate 0 of each group keeps what `base` says (refining a recipe) instead
  // of leaving the group to propagation.
  MeshSearch(const Program& base, const std::vector<autoshard::ParameterGroup>& groups, const Mesh& mesh,
             const SimulateOptions& simulate, bool keep_base);

  const Program& base() const { return base_; }
  const Mesh& mesh() const { return mesh_; }
  bool keeps_base() const { return keep_base_; }
  std::vector<int> CandidateCounts() const;
  bool HasSplits() const;  // some group can be split on this mesh
  Program Annotated(const std::vector<int>& choice) const;
  autoshard::PlanCost Evaluate(const std::vector<int>& choice) const;
  std::string SpecText(size_t group, int candidate) const;
  // Weights first, with their optimizer state following them; then each state group alone
  // (weight-update sharding).
  autoshard::PlanSearchResult Search(Clock::time_point deadline, int64_t max_evaluations) const;

  // Screens candidates on `screen`, the same search on a shallower copy of the program (its
  // groups matched to these by their first parameter's name): of each group's candidates only
  // the `keep` best there (by step time) are evaluated here. `screen` must outlive this.
  void SetScreen(const MeshSearch* screen, int keep);

 private:
  const Candidate& Resolved(const std::vector<int>& choice, size_t group) const;
  std::vector<int> Shortlist(const std::vector<int>& choice, int group) const;

  Program base_;
  const std::vector<autoshard::ParameterGroup>& groups_;
  Mesh mesh_;
  SimulateOptions simulate_;
  bool keep_base_ = false;
  std::vector<std::vector<Candidate>> candidates_;
  const MeshSearch* screen_ = nullptr;
  int screen_keep_ = 0;
  std::vector<int> screen_group_;  // per group: the screen's group with the same candidates, or -1
  mutable std::map<std::vector<int>, autoshard::PlanCost> screen_memo_;
};

}  // namespace gspmd::api::autoshard_internal
