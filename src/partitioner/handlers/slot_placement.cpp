// Candidate placements of device axes on slots, costed with the reshard planner.
#include "partitioner/handlers/slot_placement.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

namespace gspmd {
namespace {

constexpr int64_t kAbsent = std::numeric_limits<int64_t>::max() / 4;
// Above this many axis-to-slot assignments only the slots the arrays already use are tried.
constexpr int64_t kMaxAssignments = 4096;

bool Contains(const std::vector<DeviceAxis>& list, const DeviceAxis& axis) {
  return std::find(list.begin(), list.end(), axis) != list.end();
}

int64_t PositionIn(const std::vector<DeviceAxis>& list, const DeviceAxis& axis) {
  auto it = std::find(list.begin(), list.end(), axis);
  return it == list.end() ? kAbsent : it - list.begin();
}

// All layouts written over one common set of axes.
struct Refined {
  std::vector<AxisSharding> layouts;  // inputs, then the result
  std::vector<DeviceAxis> axes;       // non-manual axes, by stride
  std::vector<DeviceAxis> manual;
};

std::optional<Refined> Refine(const SlotProblem& problem) {
  std::vector<AxisSharding> all;
  for (const SlotTensor& input : problem.inputs) all.push_back(input.layout);
  all.push_back(problem.result.layout);
  // Layouts in device orders that do not refine with the result's are searched as stand-ins in
  // one that does; their costs still come from their real layouts.
  std::optional<std::vector<AxisSharding>> common = RefineAllToCommonAxes(all, all.size() - 1);
  if (!common) return std::nullopt;
  Refined refined;
  refined.layouts = std::move(*common);
  refined.manual = refined.layouts.front().manual;
  for (const AxisSharding& layout : refined.layouts)
    if (layout.manual != refined.manual) return std::nullopt;
  for (const DeviceAxis& axis : refined.layouts.front().AllAxes())
    if (!Contains(refined.manual, axis)) refined.axes.push_back(axis);
  return refined;
}

class SlotSearch {
 public:
  SlotSearch(SpmdContext& context, const SlotProblem& problem, Refined refined)
      : context_(context), p_(problem), refined_(std::move(refined)) {
    for (const SlotTensor& input : p_.inputs) tensors_.push_back(&input);
    tensors_.push_back(&p_.result);
  }

  void Run() {
    std::vector<std::vector<int64_t>> options = SlotOptions(/*with_replicated=*/true);
    if (AssignmentCount(options) > kMaxAssignments) options = SlotOptions(/*with_replicated=*/false);
    std::vector<size_t> choice(options.size(), 0);
    int variants = static_cast<int>(tensors_.size());
    while (true) {
      std::vector<int64_t> assignment;
      for (size_t a = 0; a < options.size(); ++a) assignment.push_back(options[a][choice[a]]);
      for (int variant = 0; variant < variants; ++variant) Consider(assignment, variant);
      size_t a = 0;
      while (a < choice.size() && ++choice[a] == options[a].size()) choice[a++] = 0;
      if (a == choice.size()) break;
    }
  }

 private:
  int64_t replicated_slot() const { return p_.slot_count; }

  static int64_t AssignmentCount(const std::vector<std::vector<int64_t>>& options) {
    int64_t count = 1;
    for (const auto& o : options)
      count = std::min<int64_t>(count * static_cast<int64_t>(o.size()), kMaxAssignments + 1);
    return count;
  }

  // The slot `axis` sits on in tensor t, if any.
  std::optional<int64_t> SlotIn(size_t t, const DeviceAxis& axis) const {
    const AxisSharding& layout = refined_.layouts[t];
    for (int64_t d = 0; d < layout.rank(); ++d)
      if (Contains(layout.dims[d], axis) && tensors_[t]->slot_of_dim[d] >= 0) return tensors_[t]->slot_of_dim[d];
    return std::nullopt;
  }

  std::vector<std::vector<int64_t>> SlotOptions(bool with_replicated) const {
    std::vector<std::vector<int64_t>> options;
    for (const DeviceAxis& axis : refined_.axes) {
      std::vector<int64_t> slots;
      auto add = [&](std::optional<int64_t> slot) {
        if (slot && std::find(slots.begin(), slots.end(), *slot) == slots.end()) slots.push_back(*slot);
      };
      // The result first: its slot is the cheapest when it is feasible.
      add(SlotIn(tensors_.size() - 1, axis));
      for (size_t t = 0; t + 1 < tensors_.size(); ++t) add(SlotIn(t, axis));
      if (with_replicated || slots.empty()) add(replicated_slot());
      options.push_back(std::move(slots));
    }
    return options;
  }

  // Order of the axes sharing a slot: by their positions in the dims of that slot, the
  // variant deciding which tensor's order counts first (0: the result, k: input k-1).
  std::vector<DeviceAxis> OrderedAxes(int64_t slot, std::vector<DeviceAxis> axes, int variant) const {
    std::vector<size_t> priority;
    size_t result_index = tensors_.size() - 1;
    priority.push_back(variant == 0 ? result_index : static_cast<size_t>(variant - 1));
    for (size_t t = 0; t < tensors_.size(); ++t)
      if (t != priority.front()) priority.push_back(t);
    auto key = [&](const DeviceAxis& axis) {
      std::vector<int64_t> k;
      for (size_t t : priority) {
        int64_t position = kAbsent;
        const AxisSharding& layout = refined_.layouts[t];
        for (int64_t d = 0; d < layout.rank(); ++d)
          if (tensors_[t]->slot_of_dim[d] == slot) position = std::min(position, PositionIn(layout.dims[d], axis));
        k.push_back(position);
      }
      k.push_back(-axis.stride);
      return k;
    };
    std::stable_sort(axes.begin(), axes.end(),
                     [&](const DeviceAxis& a, const DeviceAxis& b) { return key(a) < key(b); });
    return axes;
  }

  AxisSharding LayoutFor(const SlotTensor& tensor, const std::vector<std::vector<DeviceAxis>>& slot_axes) const {
    AxisSharding layout;
    layout.manual = refined_.manual;
    std::vector<DeviceAxis> placed;
    for (int64_t slot : tensor.slot_of_dim) {
      layout.dims.push_back(slot >= 0 ? slot_axes[slot] : std::vector<DeviceAxis>{});
      placed.insert(placed.end(), layout.dims.back().begin(), layout.dims.back().end());
    }
    for (const DeviceAxis& axis : refined_.axes)
      if (!Contains(placed, axis)) layout.replicated.push_back(axis);
    return layout;
  }

  std::optional<double> InputCost(const SlotTensor& tensor, const AxisSharding& target, int64_t& steps) {
    const auto& normalized = context_.Axes(target.ToSharding(), target.rank());
    if (!normalized) return std::nullopt;
    const auto& plan = context_.Plan(ReshardProblem{tensor.dims, tensor.element_bytes, tensor.layout, *normalized, {}});
    if (!plan) return std::nullopt;
    steps += static_cast<int64_t>(plan->steps.size());
    return plan->total_cost_bytes;
  }

  bool IsResultSlot(int64_t slot) const {
    const auto& slots = p_.result.slot_of_dim;
    return std::find(slots.begin(), slots.end(), slot) != slots.end();
  }

  struct Candidate {
    SlotPlacement placement;
    double local_work = 0;
    int64_t steps = 0;
  };

  void Consider(const std::vector<int64_t>& assignment, int variant) {
    std::vector<std::vector<DeviceAxis>> slot_axes(p_.slot_count);
    for (size_t a = 0; a < assignment.size(); ++a)
      if (assignment[a] < p_.slot_count) slot_axes[assignment[a]].push_back(refined_.axes[a]);
    for (int64_t s = 0; s < p_.slot_count; ++s)
      if (slot_axes[s].size() > 1) slot_axes[s] = OrderedAxes(s, slot_axes[s], variant);

    Candidate candidate;
    SlotPlacement& placement = candidate.placement;
    std::string key;
    for (const SlotTensor& input : p_.inputs) {
      placement.inputs.push_back(LayoutFor(input, slot_axes));
      key += placement.inputs.back().ToString() + "|";
    }
    placement.result = LayoutFor(p_.result, slot_axes);
    key += placement.result.ToString();
    if (!seen_.insert(key).second) return;
    for (int64_t s = 0; s < p_.slot_count; ++s)
      if (!IsResultSlot(s)) placement.partial.insert(placement.partial.end(), slot_axes[s].begin(), slot_axes[s].end());
    std::sort(placement.partial.begin(), placement.partial.end());

    double cost = 0;
    if (p_.extra_cost) {
      std::optional<double> extra = p_.extra_cost(slot_axes);
      if (!extra) return;
      cost += *extra;
    }
    for (size_t i = 0; i < p_.inputs.size(); ++i) {
      std::optional<double> input_cost = InputCost(p_.inputs[i], placement.inputs[i], candidate.steps);
      if (!input_cost) return;
      cost += *input_cost;
    }
    const auto& result_plan = context_.Plan(ReshardProblem{p_.result.dims, p_.result.element_bytes, placement.result,
                                                           p_.result.layout, placement.partial});
    if (!result_plan) return;
    candidate.steps += static_cast<int64_t>(result_plan->steps.size());
    placement.cost_bytes = cost + result_plan->total_cost_bytes;
    candidate.local_work = 1;
    for (int64_t s = 0; s < p_.slot_count; ++s)
      candidate.local_work *= static_cast<double>(ShardSize(p_.slot_extent[s], TileCountOf(slot_axes[s])));
    placement.slot_axes = std::move(slot_axes);
    if (!best_ || Better(candidate, *best_)) best_ = std::move(candidate);
  }

  static bool Better(const Candidate& a, const Candidate& b) {
    constexpr double kTolerance = 1e-6;
    if (a.placement.cost_bytes < b.placement.cost_bytes - kTolerance) return true;
    if (a.placement.cost_bytes > b.placement.cost_bytes + kTolerance) return false;
    if (a.local_work != b.local_work) return a.local_work < b.local_work;
    return a.steps < b.steps;
  }

  SpmdContext& context_;
  const SlotProblem& p_;
  Refined refined_;
  std::vector<const SlotTensor*> tensors_;  // inputs, then the result
  std::set<std::string> seen_;
  std::optional<Candidate> best_;

 public:
  std::optional<SlotPlacement> Best() const {
    if (!best_) return std::nullopt;
    return best_->placement;
  }
};

}  // namespace

int64_t TileCountOf(const std::vector<DeviceAxis>& axes) {
  int64_t tiles = 1;
  for (const DeviceAxis& axis : axes) tiles *= axis.size;
  return tiles;
}

std::optional<SlotPlacement> ChooseSlotPlacement(SpmdContext& context, const SlotProblem& problem) {
  std::optional<Refined> refined = Refine(problem);
  if (!refined) return std::nullopt;
  SlotSearch search(context, problem, std::move(*refined));
  search.Run();
  return search.Best();
}

}  // namespace gspmd
