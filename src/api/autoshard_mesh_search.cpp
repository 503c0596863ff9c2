// MeshSearch: one mesh's candidates per parameter group, and the two-phase coordinate descent
// (weights, then optimizer state) over plans that are annotated, partitioned and simulated.
#include "api/autoshard_mesh_search.h"

#include <algorithm>
#include <limits>

#include "ir/computation.h"

namespace gspmd::api::autoshard_internal {

using autoshard::PlanCost;

PlanCost CostOf(const simulate::SimulationReport& report) {
  PlanCost cost;
  cost.valid = true;
  cost.step_time_s = report.step_time_s;
  cost.mfu = report.mfu;
  cost.peak_bytes = report.memory.peak_bytes;
  cost.fits = report.memory.fits;
  cost.comm_bytes = report.comm.comm_bytes_per_device;
  return cost;
}

MeshSearch::MeshSearch(const Program& base, const std::vector<autoshard::ParameterGroup>& groups, const Mesh& mesh,
                       const SimulateOptions& simulate, bool keep_base)
    : base_(base), groups_(groups), mesh_(mesh), simulate_(simulate), keep_base_(keep_base) {
  for (const autoshard::ParameterGroup& group : groups_) {
    std::vector<Candidate> candidates;
    if (group.leader >= 0) candidates.push_back({Candidate::Kind::kLeader, {}});
    candidates.push_back({keep_base ? Candidate::Kind::kKeep : Candidate::Kind::kPropagated, {}});
    for (PartitionSpec& spec : autoshard::CandidateSpecs(group.dims, mesh_))
      candidates.push_back({Candidate::Kind::kSpec, std::move(spec)});
    candidates_.push_back(std::move(candidates));
  }
}

std::vector<int> MeshSearch::CandidateCounts() const {
  std::vector<int> counts;
  for (const auto& candidates : candidates_) counts.push_back(static_cast<int>(candidates.size()));
  return counts;
}

bool MeshSearch::HasSplits() const {
  for (const auto& candidates : candidates_)
    for (const Candidate& candidate : candidates)
      if (candidate.kind == Candidate::Kind::kSpec && !candidate.spec.empty()) return true;
  return false;
}

const Candidate& MeshSearch::Resolved(const std::vector<int>& choice, size_t g) const {
  const Candidate* candidate = &candidates_[g][choice[g]];
  for (int hops = 0; candidate->kind == Candidate::Kind::kLeader && hops < 4; ++hops) {
    g = static_cast<size_t>(groups_[g].leader);
    candidate = &candidates_[g][choice[g]];
  }
  return *candidate;
}

Program MeshSearch::Annotated(const std::vector<int>& choice) const {
  std::vector<ParameterSpec> specs;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Candidate& candidate = Resolved(choice, g);
    if (candidate.kind != Candidate::Kind::kSpec) continue;
    for (int64_t number : groups_[g].parameters) specs.push_back(ParameterSpec{number, "", candidate.spec});
  }
  return Annotate(base_, specs, mesh_);
}

PlanCost MeshSearch::Evaluate(const std::vector<int>& choice) const {
  try {
    return CostOf(Simulate(Annotated(choice), simulate_));
  } catch (const UserError& error) {
    PlanCost cost;
    cost.error = error.what();
    return cost;
  }
}

std::string MeshSearch::SpecText(size_t group, int candidate) const {
  const Candidate& c = candidates_[group][candidate];
  switch (c.kind) {
    case Candidate::Kind::kLeader:
      return "(as " + groups_[groups_[group].leader].label + ")";
    case Candidate::Kind::kPropagated:
      return "(propagated)";
    case Candidate::Kind::kKeep:
      return "(as the recipe)";
    case Candidate::Kind::kSpec:
      break;
  }
  // One entry per dim, as the other commands print PartitionSpecs (P('model', None), not P('model')).
  PartitionSpec spec = c.spec;
  spec.resize(std::max(spec.size(), groups_[group].dims.size()));
  return gspmd::SpecText(spec);
}

void MeshSearch::SetScreen(const MeshSearch* screen, int keep) {
  screen_ = screen;
  screen_keep_ = keep;
  screen_group_.assign(groups_.size(), -1);
  if (!screen) return;
  const Computation& entry = *base_.module().entry();
  const Computation& screen_entry = *screen->base_.module().entry();
  std::map<std::string, int> screen_group_of;
  for (size_t g = 0; g < screen->groups_.size(); ++g)
    for (int64_t number : screen->groups_[g].parameters)
      screen_group_of[screen_entry.parameter(number)->name()] = static_cast<int>(g);
  for (size_t g = 0; g < groups_.size(); ++g) {
    auto it = screen_group_of.find(entry.parameter(groups_[g].parameters[0])->name());
    if (it == screen_group_of.end()) continue;
    const auto& mine = candidates_[g];
    const auto& theirs = screen->candidates_[it->second];
    bool same = mine.size() == theirs.size();
    for (size_t c = 0; same && c < mine.size(); ++c) same = mine[c].kind == theirs[c].kind && mine[c].spec == theirs[c].spec;
    if (same) screen_group_[g] = it->second;
  }
}

std::vector<int> MeshSearch::Shortlist(const std::vector<int>& choice, int group) const {
  std::vector<int> all(candidates_[group].size());
  for (size_t c = 0; c < all.size(); ++c) all[c] = static_cast<int>(c);
  const int mapped = screen_group_[group];
  if (mapped < 0) return all;
  std::vector<int> screen_choice(screen_->groups_.size(), 0);
  for (size_t g = 0; g < groups_.size(); ++g)
    if (screen_group_[g] >= 0) screen_choice[screen_group_[g]] = choice[g];
  std::vector<std::pair<PlanCost, int>> ranked;
  for (int c : all) {
    screen_choice[mapped] = c;
    auto it = screen_memo_.find(screen_choice);
    if (it == screen_memo_.end()) it = screen_memo_.emplace(screen_choice, screen_->Evaluate(screen_choice)).first;
    ranked.push_back({it->second, c});
  }
  // By time alone: the copy's memory says little of the whole program's.
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first.valid != b.first.valid) return a.first.valid;
    return a.first.step_time_s < b.first.step_time_s;
  });
  std::vector<int> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < screen_keep_; ++i)
    if (ranked[i].first.valid) out.push_back(ranked[i].second);
  return out;
}

autoshard::PlanSearchResult MeshSearch::Search(Clock::time_point deadline, int64_t max_evaluations) const {
  std::vector<int64_t> weight;
  std::vector<bool> leaders, followers;
  for (const autoshard::ParameterGroup& group : groups_) {
    // Batch inputs first: splitting them (data parallelism) changes every other decision.
    weight.push_back(group.role == "batch" ? std::numeric_limits<int64_t>::max() : group.bytes);
    leaders.push_back(group.leader < 0);
    followers.push_back(group.leader >= 0);
  }
  const std::vector<int> counts = CandidateCounts();
  auto evaluate = [&](const std::vector<int>& choice) { return Evaluate(choice); };
  autoshard::PlanSearchOptions options;
  options.deadline = deadline;
  options.max_evaluations = max_evaluations;
  options.active = leaders;
  if (screen_) options.shortlist = [this](const std::vector<int>& choice, int group) { return Shortlist(choice, group); };
  autoshard::PlanSearchResult first = autoshard::SearchPlan(counts, weight, evaluate, options);
  const bool any_follower = std::find(followers.begin(), followers.end(), true) != followers.end();
  if (first.stopped_early || !any_follower) return first;
  options.start = first.choice;
  options.active = followers;
  options.max_evaluations = max_evaluations > 0 ? std::max<int64_t>(1, max_evaluations - first.evaluations) : 0;
  autoshard::PlanSearchResult second = autoshard::SearchPlan(counts, weight, evaluate, options);
  second.evaluations += first.evaluations;
  second.passes += first.passes;
  // Each group's last visit: weights from the first phase, state from the second.
  std::vector<autoshard::GroupDecision> decisions = std::move(first.decisions);
  for (autoshard::GroupDecision& decision : second.decisions) decisions.push_back(std::move(decision));
  std::sort(decisions.begin(), decisions.end(),
            [](const autoshard::GroupDecision& a, const autoshard::GroupDecision& b) { return a.group < b.group; });
  second.decisions = std::move(decisions);
  return second;
}

}  // namespace gspmd::api::autoshard_internal
