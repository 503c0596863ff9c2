// The search of one mesh for api::Autoshard: parameter groups' candidates (their leader's
// decision, propagation's, a kept annotation or a PartitionSpec), each plan annotated,
// partitioned and simulated. Internal to src/api/.
#pragma once

#include <chrono>
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
  autoshard::DimAxes spec;
};

class MeshSearch {
 public:
  // `keep_base`: candidate 0 of each group keeps what `base` says (refining a recipe) instead
  // of leaving the group to propagation.
  MeshSearch(const Program& base, const std::vector<autoshard::ParameterGroup>& groups, const Mesh& mesh,
             const SimulateOptions& simulate, bool keep_base);

  std::vector<int> CandidateCounts() const;
  bool HasSplits() const;  // some group can be split on this mesh
  Program Annotated(const std::vector<int>& choice) const;
  autoshard::PlanCost Evaluate(const std::vector<int>& choice) const;
  std::string SpecText(size_t group, int candidate) const;
  // Weights first, with their optimizer state following them; then each state group alone
  // (weight-update sharding).
  autoshard::PlanSearchResult Search(Clock::time_point deadline, int64_t max_evaluations) const;

 private:
  const Candidate& Resolved(const std::vector<int>& choice, size_t group) const;

  Program base_;
  const std::vector<autoshard::ParameterGroup>& groups_;
  Mesh mesh_;
  SimulateOptions simulate_;
  std::vector<std::vector<Candidate>> candidates_;
};

}  // namespace gspmd::api::autoshard_internal
