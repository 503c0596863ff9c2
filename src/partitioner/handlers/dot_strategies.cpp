// Candidate placements of device axes on a dot's dims, costed with the reshard planner.
#include "partitioner/handlers/dot_strategies.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kAbsent = std::numeric_limits<int64_t>::max() / 4;
// Above this many axis-to-slot assignments, only the operands' and the output's own slots
// (not their combinations with replication) are tried.
constexpr int64_t kMaxAssignments = 512;

int64_t PositionIn(const std::vector<DeviceAxis>& list, const DeviceAxis& axis) {
  auto it = std::find(list.begin(), list.end(), axis);
  return it == list.end() ? kAbsent : it - list.begin();
}

bool Contains(const std::vector<DeviceAxis>& list, const DeviceAxis& axis) {
  return std::find(list.begin(), list.end(), axis) != list.end();
}

void CheckDimList(const std::vector<int64_t>& list, int64_t rank, const char* what) {
  std::vector<bool> seen(std::max<int64_t>(rank, 0), false);
  for (int64_t d : list) {
    if (d < 0 || d >= rank) GSPMD_USER_ERROR("dot ", what, " dim ", d, " is out of range for rank ", rank);
    if (seen[d]) GSPMD_USER_ERROR("dot ", what, " dim ", d, " is listed twice");
    seen[d] = true;
  }
}

// Where every operand/output dim sits among the device axes, after refining the three
// layouts to common axes.
struct RefinedLayouts {
  AxisSharding lhs, rhs, out;
  std::vector<DeviceAxis> axes;    // the non-manual axes, by stride
  std::vector<DeviceAxis> manual;  // shared by all three
};

std::optional<RefinedLayouts> Refine(const DotProblem& problem) {
  // Operands in device orders that do not refine with the output's are searched as stand-ins in
  // one that does; their costs still come from their real layouts.
  std::optional<std::vector<AxisSharding>> common =
      RefineAllToCommonAxes({problem.lhs, problem.rhs, problem.out}, 2);
  if (!common) return std::nullopt;
  RefinedLayouts refined{(*common)[0], (*common)[1], (*common)[2], {}, {}};
  if (refined.lhs.manual != refined.rhs.manual || refined.lhs.manual != refined.out.manual) return std::nullopt;
  refined.manual = refined.lhs.manual;
  for (const DeviceAxis& axis : refined.lhs.AllAxes())
    if (!Contains(refined.manual, axis)) refined.axes.push_back(axis);
  return refined;
}

// The slot of `axis` in a layout whose dim d has slot slot_of_dim[d] (nullopt: replicated).
std::optional<int64_t> SlotIn(const AxisSharding& layout, const std::vector<int64_t>& slot_of_dim,
                              const DeviceAxis& axis) {
  for (int64_t d = 0; d < layout.rank(); ++d)
    if (Contains(layout.dims[d], axis)) return slot_of_dim[d];
  return std::nullopt;
}

class PlacementSearch {
 public:
  PlacementSearch(SpmdContext& context, const DotProblem& problem, RefinedLayouts refined)
      : context_(context), p_(problem), roles_(problem.roles), refined_(std::move(refined)) {
    for (int64_t o = 0; o < roles_.output_rank(); ++o) out_slot_.push_back(o);
  }

  std::optional<DotPlacement> Run() {
    std::vector<std::vector<int64_t>> options = SlotOptions(/*with_replicated=*/true);
    if (AssignmentCount(options) > kMaxAssignments) options = SlotOptions(/*with_replicated=*/false);
    // Still too many (many small axes): drop the last-listed slots of the most flexible axes.
    while (AssignmentCount(options) > kMaxAssignments) {
      auto widest = std::max_element(options.begin(), options.end(),
                                     [](const auto& a, const auto& b) { return a.size() < b.size(); });
      widest->pop_back();
    }
    std::vector<size_t> choice(options.size(), 0);
    while (true) {
      std::vector<int64_t> assignment;
      for (size_t a = 0; a < options.size(); ++a) assignment.push_back(options[a][choice[a]]);
      for (int variant = 0; variant < 3; ++variant) Consider(assignment, variant);
      size_t a = 0;
      while (a < choice.size() && ++choice[a] == options[a].size()) choice[a++] = 0;
      if (a == choice.size()) break;
    }
    return best_;
  }

 private:
  static int64_t AssignmentCount(const std::vector<std::vector<int64_t>>& options) {
    int64_t count = 1;
    for (const auto& o : options) count = std::min<int64_t>(count * static_cast<int64_t>(o.size()), kMaxAssignments + 1);
    return count;
  }

  // Per axis: the slots it has in lhs, rhs and the output, then replicated.
  std::vector<std::vector<int64_t>> SlotOptions(bool with_replicated) const {
    std::vector<std::vector<int64_t>> options;
    for (const DeviceAxis& axis : refined_.axes) {
      std::vector<int64_t> slots;
      auto add = [&](std::optional<int64_t> slot) {
        if (slot && std::find(slots.begin(), slots.end(), *slot) == slots.end()) slots.push_back(*slot);
      };
      add(SlotIn(refined_.lhs, roles_.lhs_slot, axis));
      add(SlotIn(refined_.rhs, roles_.rhs_slot, axis));
      add(SlotIn(refined_.out, out_slot_, axis));
      if (with_replicated || slots.empty()) add(roles_.replicated_slot());
      options.push_back(std::move(slots));
    }
    return options;
  }

  // Order of the axes sharing a slot: by their positions in the output's, lhs's and rhs's dim
  // of that slot, with the variant deciding which layout's order counts first.
  std::vector<DeviceAxis> OrderedAxes(int64_t slot, std::vector<DeviceAxis> axes, int variant) const {
    int64_t out_dim = slot < roles_.output_rank() ? slot : -1;
    int64_t lhs_dim = roles_.LhsDimOfSlot(slot), rhs_dim = roles_.RhsDimOfSlot(slot);
    auto key = [&](const DeviceAxis& axis) {
      int64_t in_out = out_dim >= 0 ? PositionIn(refined_.out.dims[out_dim], axis) : kAbsent;
      int64_t in_lhs = lhs_dim >= 0 ? PositionIn(refined_.lhs.dims[lhs_dim], axis) : kAbsent;
      int64_t in_rhs = rhs_dim >= 0 ? PositionIn(refined_.rhs.dims[rhs_dim], axis) : kAbsent;
      std::vector<int64_t> k;
      if (variant == 0) k = {in_out, in_lhs, in_rhs};
      if (variant == 1) k = {in_lhs, in_rhs, in_out};
      if (variant == 2) k = {in_rhs, in_lhs, in_out};
      k.push_back(-axis.stride);
      return k;
    };
    std::stable_sort(axes.begin(), axes.end(),
                     [&](const DeviceAxis& a, const DeviceAxis& b) { return key(a) < key(b); });
    return axes;
  }

  // The layout of a value whose dim d holds slot slot_of_dim[d] (or nothing when -1).
  AxisSharding LayoutFor(const std::vector<int64_t>& slot_of_dim,
                         const std::vector<std::vector<DeviceAxis>>& slot_axes) const {
    AxisSharding layout;
    layout.manual = refined_.manual;
    std::vector<DeviceAxis> placed;
    for (int64_t slot : slot_of_dim) {
      layout.dims.push_back(slot >= 0 ? slot_axes[slot] : std::vector<DeviceAxis>{});
      placed.insert(placed.end(), layout.dims.back().begin(), layout.dims.back().end());
    }
    for (const DeviceAxis& axis : refined_.axes)
      if (!Contains(placed, axis)) layout.replicated.push_back(axis);
    return layout;
  }

  double SlotSize(int64_t slot) const {
    int64_t lhs_dim = roles_.LhsDimOfSlot(slot);
    if (lhs_dim >= 0) return static_cast<double>(p_.lhs_dims[lhs_dim]);
    return static_cast<double>(p_.rhs_dims[roles_.RhsDimOfSlot(slot)]);
  }

  // Plan cost from `source` to `target` (written as the context decomposes its sharding, so
  // the emitted reshard later finds the cached plan); nullopt when there is no plan.
  std::optional<double> OperandCost(const std::vector<int64_t>& dims, int64_t element_bytes,
                                    const AxisSharding& source, const AxisSharding& target, int64_t& steps) {
    const auto& normalized = context_.Axes(target.ToSharding(), target.rank());
    if (!normalized) return std::nullopt;
    const auto& plan = context_.Plan(ReshardProblem{dims, element_bytes, source, *normalized, {}});
    if (!plan) return std::nullopt;
    steps += static_cast<int64_t>(plan->steps.size());
    return plan->total_cost_bytes;
  }

  void Consider(const std::vector<int64_t>& assignment, int variant) {
    int64_t slot_count = roles_.replicated_slot();
    std::vector<std::vector<DeviceAxis>> slot_axes(slot_count);
    for (size_t a = 0; a < assignment.size(); ++a)
      if (assignment[a] < slot_count) slot_axes[assignment[a]].push_back(refined_.axes[a]);
    for (int64_t s = 0; s < slot_count; ++s)
      if (slot_axes[s].size() > 1) slot_axes[s] = OrderedAxes(s, slot_axes[s], variant);

    DotPlacement placement;
    placement.lhs = LayoutFor(roles_.lhs_slot, slot_axes);
    placement.rhs = LayoutFor(roles_.rhs_slot, slot_axes);
    placement.out = LayoutFor(out_slot_, slot_axes);
    for (int64_t s = roles_.output_rank(); s < slot_count; ++s)
      placement.partial.insert(placement.partial.end(), slot_axes[s].begin(), slot_axes[s].end());
    std::sort(placement.partial.begin(), placement.partial.end());

    std::string key = placement.lhs.ToString() + "|" + placement.rhs.ToString() + "|" + placement.out.ToString();
    if (!seen_.insert(key).second) return;

    int64_t steps = 0;
    auto lhs_cost = OperandCost(p_.lhs_dims, p_.lhs_element_bytes, p_.lhs, placement.lhs, steps);
    if (!lhs_cost || CannotWin(*lhs_cost)) return;
    auto rhs_cost = OperandCost(p_.rhs_dims, p_.rhs_element_bytes, p_.rhs, placement.rhs, steps);
    if (!rhs_cost || CannotWin(*lhs_cost + *rhs_cost)) return;
    const auto& out_plan = context_.Plan(
        ReshardProblem{p_.out_dims, p_.out_element_bytes, placement.out, p_.out, placement.partial});
    if (!out_plan) return;
    steps += static_cast<int64_t>(out_plan->steps.size());
    placement.cost_bytes = *lhs_cost + *rhs_cost + out_plan->total_cost_bytes;
    placement.steps = steps;
    placement.local_flops = 1;
    for (int64_t s = 0; s < slot_count; ++s) {
      int64_t tiles = 1;
      for (const DeviceAxis& axis : slot_axes[s]) tiles *= axis.size;
      placement.local_flops *= static_cast<double>(ShardSize(static_cast<int64_t>(SlotSize(s)), tiles));
    }
    if (!best_ || Better(placement, *best_)) best_ = std::move(placement);
  }

  static constexpr double kTolerance = 1e-6;

  // Whether a candidate that already costs `bytes` before its result is resolved can no
  // longer beat the best one (the result's own plan is the costliest search: skip it).
  bool CannotWin(double bytes) const { return best_ && bytes > best_->cost_bytes + kTolerance; }

  static bool Better(const DotPlacement& a, const DotPlacement& b) {
    if (a.cost_bytes < b.cost_bytes - kTolerance) return true;
    if (a.cost_bytes > b.cost_bytes + kTolerance) return false;
    if (a.local_flops != b.local_flops) return a.local_flops < b.local_flops;
    return a.steps < b.steps;
  }

  SpmdContext& context_;
  const DotProblem& p_;
  const DotRoles& roles_;
  RefinedLayouts refined_;
  std::vector<int64_t> out_slot_;
  std::set<std::string> seen_;
  std::optional<DotPlacement> best_;
};

}  // namespace

int64_t DotRoles::LhsDimOfSlot(int64_t slot) const {
  int64_t b = batch_count(), lf = static_cast<int64_t>(lhs_free.size());
  int64_t rf = static_cast<int64_t>(rhs_free.size());
  if (slot < b) return lhs_batch[slot];
  if (slot < b + lf) return lhs_free[slot - b];
  if (slot < b + lf + rf) return -1;
  if (slot < replicated_slot()) return lhs_contracting[slot - b - lf - rf];
  return -1;
}

int64_t DotRoles::RhsDimOfSlot(int64_t slot) const {
  int64_t b = batch_count(), lf = static_cast<int64_t>(lhs_free.size());
  int64_t rf = static_cast<int64_t>(rhs_free.size());
  if (slot < b) return rhs_batch[slot];
  if (slot < b + lf) return -1;
  if (slot < b + lf + rf) return rhs_free[slot - b - lf];
  if (slot < replicated_slot()) return rhs_contracting[slot - b - lf - rf];
  return -1;
}

DotRoles MakeDotRoles(const DotDimensionNumbers& dims, int64_t lhs_rank, int64_t rhs_rank) {
  if (dims.lhs_batch_dims.size() != dims.rhs_batch_dims.size())
    GSPMD_USER_ERROR("dot has ", dims.lhs_batch_dims.size(), " lhs batch dims but ", dims.rhs_batch_dims.size(),
                     " rhs batch dims");
  if (dims.lhs_contracting_dims.size() != dims.rhs_contracting_dims.size())
    GSPMD_USER_ERROR("dot has ", dims.lhs_contracting_dims.size(), " lhs contracting dims but ",
                     dims.rhs_contracting_dims.size(), " rhs contracting dims");
  std::vector<int64_t> lhs_all = dims.lhs_batch_dims, rhs_all = dims.rhs_batch_dims;
  lhs_all.insert(lhs_all.end(), dims.lhs_contracting_dims.begin(), dims.lhs_contracting_dims.end());
  rhs_all.insert(rhs_all.end(), dims.rhs_contracting_dims.begin(), dims.rhs_contracting_dims.end());
  CheckDimList(lhs_all, lhs_rank, "lhs batch/contracting");
  CheckDimList(rhs_all, rhs_rank, "rhs batch/contracting");

  DotRoles roles;
  roles.lhs_batch = dims.lhs_batch_dims;
  roles.rhs_batch = dims.rhs_batch_dims;
  roles.lhs_contracting = dims.lhs_contracting_dims;
  roles.rhs_contracting = dims.rhs_contracting_dims;
  for (int64_t d = 0; d < lhs_rank; ++d)
    if (std::find(lhs_all.begin(), lhs_all.end(), d) == lhs_all.end()) roles.lhs_free.push_back(d);
  for (int64_t d = 0; d < rhs_rank; ++d)
    if (std::find(rhs_all.begin(), rhs_all.end(), d) == rhs_all.end()) roles.rhs_free.push_back(d);

  int64_t b = roles.batch_count(), lf = static_cast<int64_t>(roles.lhs_free.size());
  int64_t rf = static_cast<int64_t>(roles.rhs_free.size());
  roles.lhs_slot.assign(lhs_rank, -1);
  roles.rhs_slot.assign(rhs_rank, -1);
  for (int64_t k = 0; k < b; ++k) {
    roles.lhs_slot[roles.lhs_batch[k]] = k;
    roles.rhs_slot[roles.rhs_batch[k]] = k;
  }
  for (int64_t i = 0; i < lf; ++i) roles.lhs_slot[roles.lhs_free[i]] = b + i;
  for (int64_t j = 0; j < rf; ++j) roles.rhs_slot[roles.rhs_free[j]] = b + lf + j;
  for (size_t c = 0; c < roles.lhs_contracting.size(); ++c) {
    roles.lhs_slot[roles.lhs_contracting[c]] = roles.contracting_slot(c);
    roles.rhs_slot[roles.rhs_contracting[c]] = roles.contracting_slot(c);
  }
  return roles;
}

std::optional<DotPlacement> ChooseDotPlacement(SpmdContext& context, const DotProblem& problem) {
  // A pure function of the problem: decided once per distinct dot (layers repeat).
  std::string key = "dot-placement|";
  for (const auto* dims : {&problem.roles.lhs_batch, &problem.roles.rhs_batch, &problem.roles.lhs_contracting,
                           &problem.roles.rhs_contracting, &problem.lhs_dims, &problem.rhs_dims, &problem.out_dims})
    AppendKey(key, *dims);
  for (int64_t bytes : {problem.lhs_element_bytes, problem.rhs_element_bytes, problem.out_element_bytes})
    AppendKey(key, bytes);
  for (const AxisSharding* layout : {&problem.lhs, &problem.rhs, &problem.out}) AppendKey(key, *layout);
  return context.Decision<std::optional<DotPlacement>>(key, [&]() -> std::optional<DotPlacement> {
    std::optional<RefinedLayouts> refined = Refine(problem);
    if (!refined) return std::nullopt;
    PlacementSearch search(context, problem, std::move(*refined));
    return search.Run();
  });
}

}  // namespace gspmd
