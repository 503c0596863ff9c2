// Windowed einsum: the dot handler's all-gather of one operand, or the reduce-scatter of its
// partial sums, turned into a while loop of partial dots over the devices of those axes (see
// dot_windowed.h). This file finds the collectives a placement asks for and decides which one,
// if any, becomes a loop (the mode, the cost check, the direction); dot_windowed_loops.cpp
// emits the loops and describes them.
#include "partitioner/handlers/dot_windowed.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "partitioner/handlers/dot_windowed_loops.h"
#include "support/diagnostic.h"

namespace gspmd {

std::vector<int64_t> FoldedRing(int64_t n) {
  std::vector<int64_t> ring;
  for (int64_t a = 0; a < n; a += 2) ring.push_back(a);
  for (int64_t a = n - 1 - n % 2; a > 0; a -= 2) ring.push_back(a);
  return ring;
}

namespace {

using windowed::GatheredWindow;
using windowed::ScatteredResult;

std::vector<DeviceAxis> Sorted(std::vector<DeviceAxis> axes) {
  std::sort(axes.begin(), axes.end());
  return axes;
}

int64_t ElementCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

// The window when operand `i` goes from its layout to the placement's by gathering the minor
// axes of one dim and nothing else (evenly, or making the dim whole); nullopt otherwise.
std::optional<GatheredWindow> FindWindow(const DotProblem& problem, const DotPlacement& placement, int64_t i) {
  const AxisSharding& source = i == 0 ? problem.lhs : problem.rhs;
  const AxisSharding& target = i == 0 ? placement.lhs : placement.rhs;
  const std::vector<int64_t>& dims = i == 0 ? problem.lhs_dims : problem.rhs_dims;
  std::optional<std::pair<AxisSharding, AxisSharding>> refined = RefineToCommonAxes(source, target);
  if (!refined) return std::nullopt;
  const AxisSharding& from = refined->first;
  const AxisSharding& to = refined->second;
  bool plain = from.unreduced.empty() && to.unreduced.empty() && Sorted(from.manual) == Sorted(to.manual);
  if (!plain || from.rank() != to.rank()) return std::nullopt;

  GatheredWindow window;
  window.operand = i;
  window.dim = -1;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dims[d] == to.dims[d]) continue;
    if (window.dim >= 0) return std::nullopt;  // more than one dim changes
    window.dim = d;
  }
  if (window.dim < 0) return std::nullopt;
  const std::vector<DeviceAxis>& before = from.dims[window.dim];
  const std::vector<DeviceAxis>& after = to.dims[window.dim];
  bool gathers_minor_axes = after.size() < before.size() && std::equal(after.begin(), after.end(), before.begin());
  if (!gathers_minor_axes) return std::nullopt;
  window.axes.assign(before.begin() + static_cast<int64_t>(after.size()), before.end());
  std::vector<DeviceAxis> now_replicated = from.replicated;
  now_replicated.insert(now_replicated.end(), window.axes.begin(), window.axes.end());
  if (Sorted(now_replicated) != Sorted(to.replicated)) return std::nullopt;

  for (const DeviceAxis& axis : window.axes) window.trips *= axis.size;
  // Uneven windows only when the gather makes the dim whole: the windows then cover a padded
  // copy of it, whose padding the loop cuts off (free, batch) or zeroes (contracting).
  bool even = dims[window.dim] % from.TileCount(window.dim) == 0;
  if (window.trips < 2 || (!even && !after.empty())) return std::nullopt;
  const DotRoles& roles = problem.roles;
  window.slot = i == 0 ? roles.lhs_slot[window.dim] : roles.rhs_slot[window.dim];
  window.paired_dim = i == 0 ? roles.RhsDimOfSlot(window.slot) : roles.LhsDimOfSlot(window.slot);
  window.held = from;
  const int64_t element_bytes = i == 0 ? problem.lhs_element_bytes : problem.rhs_element_bytes;
  window.window_bytes = ElementCount(ShardDimsOf(from.ToSharding(), dims)) * element_bytes;
  window.gathered_bytes = ElementCount(ShardDimsOf(to.ToSharding(), dims)) * element_bytes;
  return window;
}

// `window` gathered in two steps (WindowedEinsumCandidate::group): its `group` minor devices
// (the least significant digits of its axes, cutting an axis if need be) before the loop, then
// the loop round rings of the rest with windows of `group` shards. nullopt when the axes do not
// split so, the ring would be shorter than 2, or the windows are uneven.
std::optional<GatheredWindow> GroupedWindow(const DotProblem& problem, const GatheredWindow& window, int64_t group) {
  const std::vector<int64_t>& dims = window.operand == 0 ? problem.lhs_dims : problem.rhs_dims;
  if (group < 2 || dims[window.dim] % window.held.TileCount(window.dim) != 0) return std::nullopt;
  GatheredWindow grouped = window;
  std::vector<DeviceAxis>& loop = grouped.axes;
  std::vector<DeviceAxis>& inner = grouped.pre_gathered;
  int64_t left = group;
  while (left > 1) {
    if (loop.empty()) return std::nullopt;
    const DeviceAxis last = loop.back();
    if (last.size <= left) {
      if (left % last.size != 0) return std::nullopt;
      left /= last.size;
      inner.insert(inner.begin(), last);
      loop.pop_back();
    } else {
      if (last.size % left != 0) return std::nullopt;
      inner.insert(inner.begin(), DeviceAxis{last.stride, left});
      loop.back() = DeviceAxis{last.stride * left, last.size / left};
      left = 1;
    }
  }
  grouped.trips = 1;
  for (const DeviceAxis& axis : loop) grouped.trips *= axis.size;
  if (grouped.trips < 2) return std::nullopt;
  // held: the dim keeps the axes it keeps after the gather, then the loop's.
  std::vector<DeviceAxis>& held_dim = grouped.held.dims[window.dim];
  held_dim.resize(held_dim.size() - window.axes.size());
  held_dim.insert(held_dim.end(), loop.begin(), loop.end());
  // The pre-gathered pieces as few axes as they make (one all-gather over the group), and the
  // replicated axes in stride order.
  std::vector<DeviceAxis> merged;
  for (const DeviceAxis& axis : Sorted(inner)) {
    if (!merged.empty() && merged.back().stride * merged.back().size == axis.stride)
      merged.back().size *= axis.size;
    else
      merged.push_back(axis);
  }
  inner = merged;
  std::vector<DeviceAxis>& replicated = grouped.held.replicated;
  replicated.insert(replicated.end(), inner.begin(), inner.end());
  replicated = Sorted(replicated);
  const int64_t element_bytes = window.operand == 0 ? problem.lhs_element_bytes : problem.rhs_element_bytes;
  grouped.window_bytes = ElementCount(ShardDimsOf(grouped.held.ToSharding(), dims)) * element_bytes;
  return grouped;
}

bool Within(const DeviceAxis& inner, const DeviceAxis& outer) {
  return inner.stride >= outer.stride && inner.stride * inner.size <= outer.stride * outer.size;
}

std::optional<ScatteredResult> FindScatter(SpmdContext& context, const DotProblem& problem,
                                           const DotPlacement& placement, const Sharding& wanted) {
  if (placement.partial.empty() || context.kept_partial() || wanted.HasUnreduced()) return std::nullopt;
  std::optional<std::pair<AxisSharding, AxisSharding>> refined = RefineToCommonAxes(placement.out, problem.out);
  if (!refined) return std::nullopt;
  const AxisSharding& from = refined->first;
  const AxisSharding& to = refined->second;
  bool plain = from.unreduced.empty() && to.unreduced.empty() && Sorted(from.manual) == Sorted(to.manual);
  if (!plain || from.rank() != to.rank()) return std::nullopt;

  ScatteredResult scatter;
  scatter.dim = -1;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dims[d] == to.dims[d]) continue;
    if (scatter.dim >= 0) return std::nullopt;
    scatter.dim = d;
  }
  if (scatter.dim < 0) return std::nullopt;
  const std::vector<DeviceAxis>& before = from.dims[scatter.dim];
  const std::vector<DeviceAxis>& after = to.dims[scatter.dim];
  bool adds_minor_axes = before.size() < after.size() && std::equal(before.begin(), before.end(), after.begin());
  if (!adds_minor_axes) return std::nullopt;
  scatter.axes.assign(after.begin() + static_cast<int64_t>(before.size()), after.end());
  int64_t partial_devices = 1;
  for (const DeviceAxis& axis : placement.partial) partial_devices *= axis.size;
  for (const DeviceAxis& axis : scatter.axes) {
    scatter.trips *= axis.size;
    auto inside = [&](const DeviceAxis& partial) { return Within(axis, partial); };
    if (std::none_of(placement.partial.begin(), placement.partial.end(), inside)) return std::nullopt;
  }
  if (scatter.trips != partial_devices || scatter.trips < 2) return std::nullopt;  // not all of the sum
  std::vector<DeviceAxis> replicated = to.replicated;
  replicated.insert(replicated.end(), scatter.axes.begin(), scatter.axes.end());
  if (Sorted(replicated) != Sorted(from.replicated)) return std::nullopt;
  if (problem.out_dims[scatter.dim] % to.TileCount(scatter.dim) != 0) return std::nullopt;  // uneven
  scatter.bytes = ElementCount(ShardDimsOf(placement.out.ToSharding(), problem.out_dims)) * problem.out_element_bytes;
  return scatter;
}


// What the dot handler does with a dot's collectives: none becomes a loop, or the all-gather of
// one operand, or the reduce-scatter of the result.
struct WindowedChoice {
  enum class Kind { kNone, kGather, kScatter };
  Kind kind = Kind::kNone;
  int64_t operand = 0;  // kGather: the gathered operand
  bool bidirectional = false;
  bool unrolled = false;
  int64_t group = 1;    // kGather: devices all-gathered before the loop (GroupedWindow)
};

// A collective of the placement that a loop could replace, before the direction is chosen.
struct Replaceable {
  WindowedChoice::Kind kind;
  int64_t operand = 0;
  bool contracting = false;  // an all-gather over a contracting dim: partial dots are summed
  std::vector<DeviceAxis> axes;
  int64_t devices = 0;
  int64_t window_bytes = 0;      // one window (one accumulator)
  int64_t collective_bytes = 0;  // the all-gather's result, the reduce-scatter's operand
  int64_t hbm_bytes_per_window = 0;
  int64_t native_dot_hbm_bytes = 0;  // the one dot the loop replaces: its operands and result
  int64_t group = 1;                 // grouped: `devices` is the loop's ring, N / group
  std::vector<DeviceAxis> pre_gathered;
  std::vector<DeviceAxis> collective_axes;  // the replaced collective's (axes when not grouped)
};

int64_t LocalBytes(const AxisSharding& layout, const std::vector<int64_t>& dims, int64_t element_bytes) {
  return ElementCount(ShardDimsOf(layout.ToSharding(), dims)) * element_bytes;
}

// HBM bytes of one window's partial dot and its update of the result (roughly: operands read,
// partial written; a sum adds it to the accumulator on the way out, as one kernel: the
// accumulator read and written).
int64_t WindowHbmBytes(const DotProblem& problem, const DotPlacement& placement, const GatheredWindow& window,
                       bool contracting) {
  const bool lhs = window.operand == 0;
  int64_t other = lhs ? LocalBytes(placement.rhs, problem.rhs_dims, problem.rhs_element_bytes)
                      : LocalBytes(placement.lhs, problem.lhs_dims, problem.lhs_element_bytes);
  if (window.paired_dim >= 0) other /= window.trips;
  const int64_t out = LocalBytes(placement.out, problem.out_dims, problem.out_element_bytes);
  return window.window_bytes + other + (contracting ? 2 * out : out / window.trips);
}

// HBM bytes of the dot a loop replaces, run once: its local operands (the gathered one whole)
// and its local result (before a reduce-scatter).
int64_t NativeDotHbmBytes(const DotProblem& problem, const DotPlacement& placement, int64_t gathered_operand,
                          int64_t gathered_bytes) {
  const int64_t lhs = gathered_operand == 0 ? gathered_bytes : LocalBytes(placement.lhs, problem.lhs_dims, problem.lhs_element_bytes);
  const int64_t rhs = gathered_operand == 1 ? gathered_bytes : LocalBytes(placement.rhs, problem.rhs_dims, problem.rhs_element_bytes);
  return lhs + rhs + LocalBytes(placement.out, problem.out_dims, problem.out_element_bytes);
}

int64_t AccumulatorHbmBytes(const DotProblem& problem, const DotPlacement& placement, const ScatteredResult& scatter) {
  int64_t lhs = LocalBytes(placement.lhs, problem.lhs_dims, problem.lhs_element_bytes);
  int64_t rhs = LocalBytes(placement.rhs, problem.rhs_dims, problem.rhs_element_bytes);
  if (problem.roles.LhsDimOfSlot(scatter.dim) >= 0) lhs /= scatter.trips;
  if (problem.roles.RhsDimOfSlot(scatter.dim) >= 0) rhs /= scatter.trips;
  return lhs + rhs + 2 * (scatter.bytes / scatter.trips);
}

// The candidate as the cost check sees it (WindowedEinsumCandidate).
WindowedEinsumCandidate Describe(OpContext& op, const DotPlacement& placement, const Replaceable& r,
                                 bool bidirectional, bool unrolled) {
  WindowedEinsumCandidate c;
  c.dot = &op.instruction();
  c.kind = r.kind == WindowedChoice::Kind::kGather ? WindowedEinsumCandidate::Kind::kAllGather
                                                   : WindowedEinsumCandidate::Kind::kReduceScatter;
  c.bidirectional = bidirectional;
  c.devices = r.devices;
  c.collective_bytes = r.collective_bytes;
  c.native_dot_hbm_bytes = r.native_dot_hbm_bytes;
  c.collective_shared = r.kind == WindowedChoice::Kind::kGather && op.instruction().operand(r.operand)->users().size() > 1;
  if (r.kind == WindowedChoice::Kind::kGather) c.gathered_operand = op.instruction().operand(r.operand);
  // The local dot's FLOPs, the all-gathered operand's or the unscattered result's, split evenly
  // over the N windows.
  const double flops_per_window = 2 * placement.local_flops / static_cast<double>(r.devices);
  if (unrolled) {
    // Two ring steps per trip; for odd N the step left over outside the loop, without a permute
    // (the all-gather's last window has arrived, the reduce-scatter's first accumulator starts
    // there).
    c.unrolled = true;
    c.trips = r.devices / 2;
    c.window_bytes_per_trip = 2 * r.window_bytes;
    c.flops_per_trip = 2 * flops_per_window;
    c.hbm_bytes_per_trip = 2 * r.hbm_bytes_per_window;
    c.peeled_flops = static_cast<double>(r.devices % 2) * flops_per_window;
    c.extra_buffer_bytes = 2 * r.window_bytes;
  } else if (!bidirectional) {
    c.trips = r.devices;
    c.window_bytes_per_trip = r.window_bytes;
    c.flops_per_trip = flops_per_window;
    c.hbm_bytes_per_trip = r.hbm_bytes_per_window;
    c.extra_buffer_bytes = 2 * r.window_bytes;
  } else {
    c.trips = (r.devices + 1) / 2 - 1;
    c.window_bytes_per_trip = 2 * r.window_bytes;
    c.flops_per_trip = 2 * flops_per_window;
    c.hbm_bytes_per_trip = 2 * r.hbm_bytes_per_window;
    const int64_t peeled = r.devices - 2 * c.trips;  // 1, or 2 for even N
    c.peeled_flops = static_cast<double>(peeled) * flops_per_window;
    c.peeled_bytes = 2 * r.window_bytes;
    c.extra_buffer_bytes = 4 * r.window_bytes;
  }
  c.rings = windowed::RingsOverAxes(r.axes, op.spmd().num_devices());
  if (r.group > 1) {
    c.group = r.group;
    c.pre_gather_groups = GroupsOverAxes(r.pre_gathered, op.spmd().num_devices());
    c.pre_gather_bytes = r.window_bytes;
    c.collective_groups = GroupsOverAxes(r.collective_axes, op.spmd().num_devices());
  }
  return c;
}

// For one direction, whether to offer the loop unrolled, plain, or unrolled first and then
// plain (see WindowedEinsumUnroll).
std::vector<bool> Unrolled(const WindowedEinsumOptions& options, bool bidirectional) {
  if (bidirectional) return {false};
  switch (options.unroll) {
    case WindowedEinsumUnroll::kOff:
      return {false};
    case WindowedEinsumUnroll::kOn:
      return {true};
    case WindowedEinsumUnroll::kAuto:
      if (options.mode == WindowedEinsumMode::kAuto && options.cost_check) return {true, false};
      return {false};
  }
  return {false};
}

// Whether the options take `candidate`.
bool Accepted(const WindowedEinsumOptions& options, const WindowedEinsumCandidate& candidate) {
  switch (options.mode) {
    case WindowedEinsumMode::kOff:
      return false;
    case WindowedEinsumMode::kAlways:
      return true;
    case WindowedEinsumMode::kAuto:
      if (candidate.devices * candidate.group > options.max_trips) return false;
      if (options.cost_check) return options.cost_check(candidate);
      return candidate.collective_bytes >= options.threshold_bytes;
  }
  return false;
}

// The directions to offer for `r`, preferred first (see WindowedEinsumDirection).
std::vector<bool> Directions(const WindowedEinsumOptions& options, const Replaceable& r) {
  switch (options.direction) {
    case WindowedEinsumDirection::kOne:
      return {false};
    case WindowedEinsumDirection::kBoth:
      return {r.devices >= 3};
    case WindowedEinsumDirection::kAuto: {
      if (r.devices < 4) return {false};
      const bool preferred = r.kind == WindowedChoice::Kind::kScatter || r.contracting;
      if (options.mode == WindowedEinsumMode::kAuto && options.cost_check) return {preferred, !preferred};
      return {preferred};
    }
  }
  return {false};
}

// Groupings offered for a gathered window besides the plain ring (auto with a cost check only):
// 2, 4, 8, ... devices pre-gathered while the ring keeps at least 2.
constexpr int64_t kMaxGroup = 16;

WindowedChoice Decide(OpContext& op, const DotProblem& problem, const DotPlacement& placement) {
  SpmdContext& context = op.spmd();
  const WindowedEinsumOptions& options = context.windowed_einsum();
  const bool priced = options.mode == WindowedEinsumMode::kAuto && options.cost_check != nullptr;
  // Each collective with its groupings (the plain one first).
  std::vector<std::vector<Replaceable>> replaceable;
  for (int64_t i = 0; i < 2; ++i) {
    if (std::optional<GatheredWindow> window = FindWindow(problem, placement, i)) {
      const bool contracting = problem.roles.IsContractingSlot(window->slot);
      auto describe = [&](const GatheredWindow& w, int64_t group) {
        return Replaceable{WindowedChoice::Kind::kGather, i, contracting, w.axes, w.trips,
                           w.window_bytes, window->gathered_bytes,
                           WindowHbmBytes(problem, placement, w, contracting),
                           NativeDotHbmBytes(problem, placement, i, window->gathered_bytes),
                           group, w.pre_gathered, window->axes};
      };
      std::vector<Replaceable> groupings{describe(*window, 1)};
      for (int64_t group = 2; priced && group <= kMaxGroup && window->trips / group >= 2; group *= 2)
        if (std::optional<GatheredWindow> grouped = GroupedWindow(problem, *window, group))
          groupings.push_back(describe(*grouped, group));
      replaceable.push_back(std::move(groupings));
    }
  }
  if (std::optional<ScatteredResult> scatter = FindScatter(context, problem, placement, op.sharding()))
    replaceable.push_back({{WindowedChoice::Kind::kScatter, 0, false, scatter->axes, scatter->trips,
                            scatter->bytes / scatter->trips, scatter->bytes,
                            AccumulatorHbmBytes(problem, placement, *scatter),
                            NativeDotHbmBytes(problem, placement, -1, 0), 1, {}, scatter->axes}});
  // Largest collective first; on a tie the lhs, then the rhs, then the reduce-scatter.
  std::stable_sort(replaceable.begin(), replaceable.end(), [](const auto& a, const auto& b) {
    return a.front().collective_bytes > b.front().collective_bytes;
  });
  for (const std::vector<Replaceable>& groupings : replaceable) {
    const Replaceable& r = groupings.front();
    for (bool bidirectional : Directions(options, r))
      for (bool unrolled : Unrolled(options, bidirectional)) {
        // The groupings of this loop, each knowing the others (the smallest group first).
        std::vector<const Replaceable*> offered;
        std::vector<WindowedEinsumCandidate> candidates;
        for (const Replaceable& g : groupings) {
          if (g.group > 1 && bidirectional && g.devices < 4) continue;
          offered.push_back(&g);
          candidates.push_back(Describe(op, placement, g, bidirectional, unrolled));
        }
        if (candidates.size() > 1)
          for (size_t a = 0; a < candidates.size(); ++a)
            for (size_t b = 0; b < candidates.size(); ++b)
              if (a != b) {
                WindowedEinsumCandidate alternative = candidates[b];
                alternative.alternatives.clear();
                candidates[a].alternatives.push_back(std::move(alternative));
              }
        for (size_t a = 0; a < candidates.size(); ++a)
          if (Accepted(options, candidates[a]))
            return WindowedChoice{r.kind, r.operand, bidirectional, unrolled, offered[a]->group};
      }
  }
  return WindowedChoice{};
}

// Decide, once per distinct (problem, placement, partial-sum state) of the run: both entry
// points ask, and a model's repeated layers ask the cost check once.
const WindowedChoice& CachedDecision(OpContext& op, const DotProblem& problem, const DotPlacement& placement) {
  std::string key = "windowed-einsum";
  const DotRoles& roles = problem.roles;
  for (const std::vector<int64_t>* list : {&roles.lhs_batch, &roles.rhs_batch, &roles.lhs_contracting,
                                           &roles.rhs_contracting, &roles.lhs_slot, &roles.rhs_slot,
                                           &problem.lhs_dims, &problem.rhs_dims, &problem.out_dims})
    AppendKey(key, *list);
  AppendKey(key, std::vector<int64_t>{problem.lhs_element_bytes, problem.rhs_element_bytes,
                                      problem.out_element_bytes, op.spmd().kept_partial().has_value(),
                                      op.sharding().HasUnreduced()});
  for (const AxisSharding* layout : {&problem.lhs, &problem.rhs, &problem.out, &placement.lhs, &placement.rhs,
                                     &placement.out})
    AppendKey(key, *layout);
  std::vector<int64_t> partial;
  for (const DeviceAxis& axis : placement.partial) partial.insert(partial.end(), {axis.stride, axis.size});
  AppendKey(key, partial);
  return op.spmd().Decision<WindowedChoice>(key, [&] { return Decide(op, problem, placement); });
}

}  // namespace

std::optional<PartitionedValue> WindowedScatteredDot(OpContext& op, const DotProblem& problem,
                                                     const DotPlacement& placement, const PrepareDotOperand& prepare) {
  if (op.spmd().windowed_einsum().mode == WindowedEinsumMode::kOff) return std::nullopt;
  const WindowedChoice& choice = CachedDecision(op, problem, placement);
  if (choice.kind != WindowedChoice::Kind::kScatter) return std::nullopt;
  std::optional<ScatteredResult> scatter = FindScatter(op.spmd(), problem, placement, op.sharding());
  GSPMD_CHECK(scatter.has_value(), "windowed dot: the chosen reduce-scatter is gone");
  Instruction* lhs = prepare(0, placement.lhs);
  Instruction* rhs = prepare(1, placement.rhs);
  Shape local_shape = ShardShapeOf(placement.out.ToSharding(), op.instruction().shape());
  Instruction* result =
      windowed::EmitScatterLoop(op, problem.roles, *scatter, lhs, rhs, local_shape, choice.bidirectional,
                                choice.unrolled);
  return PartitionedValue{result, op.instruction().shape(), op.sharding()};
}

Instruction* WindowedLocalDot(OpContext& op, const DotProblem& problem, const DotPlacement& placement,
                              const PrepareDotOperand& prepare) {
  if (op.spmd().windowed_einsum().mode == WindowedEinsumMode::kOff) return nullptr;
  const WindowedChoice& choice = CachedDecision(op, problem, placement);
  if (choice.kind != WindowedChoice::Kind::kGather) return nullptr;
  std::optional<GatheredWindow> window = FindWindow(problem, placement, choice.operand);
  if (window.has_value() && choice.group > 1) window = GroupedWindow(problem, *window, choice.group);
  GSPMD_CHECK(window.has_value(), "windowed dot: the chosen window is gone");
  const AxisSharding& other_layout = window->operand == 0 ? placement.rhs : placement.lhs;
  Instruction* held = prepare(window->operand, window->held);
  Instruction* other = prepare(1 - window->operand, other_layout);
  Shape local_shape = ShardShapeOf(placement.out.ToSharding(), op.instruction().shape());
  return windowed::EmitGatherLoop(op, problem.roles, *window, held, other, local_shape, choice.bidirectional,
                                  choice.unrolled);
}

}  // namespace gspmd
