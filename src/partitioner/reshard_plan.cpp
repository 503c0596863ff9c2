// Dijkstra search over axis states for the cheapest reshard (bytes sent per device).
#include "partitioner/reshard_plan.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kMaxExploredStates = 20000;

struct SearchNode {
  AxisState state;
  double cost = 0;
  int64_t step_count = 0;
  int64_t parent = -1;  // index into the node list
  ReshardStep step;     // the step that led here from the parent
};

// Everything the search needs about the problem, with axes as indices.
class Planner {
 public:
  Planner(const ReshardProblem& problem, std::vector<DeviceAxis> axes, const AxisState& target)
      : problem_(problem), axes_(std::move(axes)), target_(target) {}

  int64_t AxisSize(int64_t axis) const { return axes_[axis].size; }

  int64_t TileCount(const AxisState& state, int64_t dim) const {
    int64_t count = 1;
    for (int64_t axis : state.dims[dim]) count *= AxisSize(axis);
    return count;
  }

  int64_t DimSize(int64_t dim) const { return problem_.global_dims[dim]; }

  // Per-device bytes with dim `dim` overridden to `override_size` elements (if >= 0).
  double Bytes(const AxisState& state, int64_t dim = -1, int64_t override_size = -1) const {
    double bytes = static_cast<double>(problem_.element_bytes);
    for (int64_t d = 0; d < static_cast<int64_t>(state.dims.size()); ++d) {
      int64_t size = d == dim ? override_size : ShardSize(DimSize(d), TileCount(state, d));
      bytes *= static_cast<double>(size);
    }
    return bytes;
  }

  // Can dim `dim` (split `tiles` ways) be split `n` ways more by slicing locally?
  bool SliceAligned(int64_t dim, int64_t tiles, int64_t n) const {
    if (tiles == 1) return true;
    return ShardSize(DimSize(dim), tiles) == n * ShardSize(DimSize(dim), tiles * n);
  }
  // Does gathering n of the `tiles` pieces of dim `dim` give the standard layout?
  bool GatherAligned(int64_t dim, int64_t tiles, int64_t n) const {
    if (tiles / n == 1) return true;
    return ShardSize(DimSize(dim), tiles / n) == n * ShardSize(DimSize(dim), tiles);
  }

  std::vector<std::pair<AxisState, ReshardStep>> Successors(const AxisState& state) const;
  bool SameTileCounts(const AxisState& a, const AxisState& b) const {
    for (size_t d = 0; d < a.dims.size(); ++d)
      if (TileCount(a, d) != TileCount(b, d)) return false;
    return true;
  }
  std::vector<int64_t> Replicated(const AxisState& state) const {
    std::vector<bool> used(axes_.size(), false);
    for (const auto& dim : state.dims)
      for (int64_t axis : dim) used[axis] = true;
    for (int64_t axis : state.partial) used[axis] = true;
    std::vector<int64_t> replicated;
    for (size_t a = 0; a < axes_.size(); ++a)
      if (!used[a]) replicated.push_back(static_cast<int64_t>(a));
    return replicated;
  }

 private:
  const ReshardProblem& problem_;
  std::vector<DeviceAxis> axes_;
  const AxisState& target_;
};

std::vector<std::pair<AxisState, ReshardStep>> Planner::Successors(const AxisState& state) const {
  std::vector<std::pair<AxisState, ReshardStep>> out;
  int64_t rank = static_cast<int64_t>(state.dims.size());
  double bytes = Bytes(state);

  if (!state.partial.empty()) {
    int64_t n = 1;
    for (int64_t axis : state.partial) n *= AxisSize(axis);
    AxisState next = state;
    next.partial.clear();
    ReshardStep step{ReshardStep::Kind::kAllReduce, -1, -1, state.partial};
    step.cost_bytes = 2.0 * (n - 1) / n * bytes;
    out.emplace_back(next, step);
    for (size_t i = 0; i < state.partial.size(); ++i) {
      int64_t axis = state.partial[i];
      int64_t size = AxisSize(axis);
      for (int64_t d = 0; d < rank; ++d) {
        int64_t tiles = TileCount(state, d);
        if (!SliceAligned(d, tiles, size)) continue;
        AxisState scattered = state;
        scattered.partial.erase(scattered.partial.begin() + i);
        scattered.dims[d].push_back(axis);
        ReshardStep rs{ReshardStep::Kind::kReduceScatter, d, -1, {axis}};
        int64_t padded = size * ShardSize(DimSize(d), tiles * size);
        rs.cost_bytes = static_cast<double>(size - 1) / size * Bytes(state, d, padded);
        out.emplace_back(scattered, rs);
      }
    }
    // All partial axes at once onto one dim (one collective instead of one per axis).
    if (state.partial.size() > 1) {
      std::vector<int64_t> order = state.partial;
      std::sort(order.begin(), order.end());
      bool all_orders = order.size() <= 3;
      do {
        for (int64_t d = 0; d < rank; ++d) {
          int64_t tiles = TileCount(state, d);
          if (!SliceAligned(d, tiles, n)) continue;
          AxisState scattered = state;
          scattered.partial.clear();
          scattered.dims[d].insert(scattered.dims[d].end(), order.begin(), order.end());
          ReshardStep rs{ReshardStep::Kind::kReduceScatter, d, -1, order};
          int64_t padded = n * ShardSize(DimSize(d), tiles * n);
          rs.cost_bytes = static_cast<double>(n - 1) / n * Bytes(state, d, padded);
          out.emplace_back(scattered, rs);
        }
      } while (all_orders && std::next_permutation(order.begin(), order.end()));
    }
  }

  for (int64_t d = 0; d < rank; ++d) {
    if (state.dims[d].empty()) continue;
    int64_t tiles = TileCount(state, d);
    int64_t axis = state.dims[d].back();
    int64_t n = AxisSize(axis);
    int64_t gathered_size = n * ShardSize(DimSize(d), tiles);
    if (GatherAligned(d, tiles, n)) {
      AxisState next = state;
      next.dims[d].pop_back();
      ReshardStep step{ReshardStep::Kind::kAllGather, d, -1, {axis}};
      step.cost_bytes = static_cast<double>(n - 1) / n * Bytes(state, d, gathered_size);
      out.emplace_back(next, step);
    }
    if (state.dims[d].size() > 1) {
      AxisState next = state;
      next.dims[d].clear();
      ReshardStep step{ReshardStep::Kind::kGatherDim, d, -1, state.dims[d]};
      int64_t full = tiles * ShardSize(DimSize(d), tiles);
      step.cost_bytes = static_cast<double>(tiles - 1) / tiles * Bytes(state, d, full);
      out.emplace_back(next, step);
    }
    if (!GatherAligned(d, tiles, n)) continue;
    for (int64_t e = 0; e < rank; ++e) {
      if (e == d) continue;
      int64_t tiles_e = TileCount(state, e);
      if (!SliceAligned(e, tiles_e, n)) continue;
      AxisState next = state;
      next.dims[d].pop_back();
      next.dims[e].push_back(axis);
      ReshardStep step{ReshardStep::Kind::kAllToAll, d, e, {axis}};
      AxisState after = next;
      double result_bytes = Bytes(after, d, gathered_size);
      step.cost_bytes = static_cast<double>(n - 1) / n * result_bytes;
      out.emplace_back(next, step);
    }
  }

  // Several trailing axes of a dim moved to another dim in one all-to-all (keeps their order,
  // which moving them one by one would reverse).
  for (int64_t d = 0; d < rank; ++d) {
    int64_t count = static_cast<int64_t>(state.dims[d].size());
    for (int64_t k = 2; k <= count; ++k) {
      std::vector<int64_t> moved(state.dims[d].end() - k, state.dims[d].end());
      int64_t n = 1;
      for (int64_t axis : moved) n *= AxisSize(axis);
      int64_t tiles = TileCount(state, d);
      if (!GatherAligned(d, tiles, n)) continue;
      int64_t gathered_size = n * ShardSize(DimSize(d), tiles);
      for (int64_t e = 0; e < rank; ++e) {
        if (e == d || !SliceAligned(e, TileCount(state, e), n)) continue;
        AxisState next = state;
        next.dims[d].resize(count - k);
        next.dims[e].insert(next.dims[e].end(), moved.begin(), moved.end());
        ReshardStep step{ReshardStep::Kind::kAllToAll, d, e, moved};
        step.cost_bytes = static_cast<double>(n - 1) / n * Bytes(next, d, gathered_size);
        out.emplace_back(next, step);
      }
    }
  }

  for (int64_t axis : Replicated(state)) {
    int64_t n = AxisSize(axis);
    for (int64_t d = 0; d < rank; ++d) {
      if (!SliceAligned(d, TileCount(state, d), n)) continue;
      AxisState next = state;
      next.dims[d].push_back(axis);
      out.emplace_back(next, ReshardStep{ReshardStep::Kind::kDynamicSlice, d, -1, {axis}});
    }
  }
  // The next several target axes of a dim sliced at once, when they are all replicated here
  // (an uneven dim may allow slicing n ways in one step but not in smaller steps).
  std::vector<int64_t> replicated = Replicated(state);
  for (int64_t d = 0; d < rank; ++d) {
    const std::vector<int64_t>& have = state.dims[d];
    const std::vector<int64_t>& want = target_.dims[d];
    if (have.size() + 2 > want.size() || !std::equal(have.begin(), have.end(), want.begin())) continue;
    int64_t tiles = TileCount(state, d);
    int64_t n = 1;
    for (size_t i = have.size(); i < want.size(); ++i) {
      if (std::find(replicated.begin(), replicated.end(), want[i]) == replicated.end()) break;
      n *= AxisSize(want[i]);
      if (i == have.size() || !SliceAligned(d, tiles, n)) continue;
      AxisState next = state;
      next.dims[d].assign(want.begin(), want.begin() + i + 1);
      std::vector<int64_t> sliced(want.begin() + have.size(), want.begin() + i + 1);
      out.emplace_back(next, ReshardStep{ReshardStep::Kind::kDynamicSlice, d, -1, sliced});
    }
  }
  return out;
}

// A total order on states for the visited map.
std::vector<int64_t> StateKey(const AxisState& state) {
  std::vector<int64_t> key;
  for (const auto& dim : state.dims) {
    key.push_back(-1);
    key.insert(key.end(), dim.begin(), dim.end());
  }
  key.push_back(-2);
  std::vector<int64_t> partial = state.partial;
  std::sort(partial.begin(), partial.end());
  key.insert(key.end(), partial.begin(), partial.end());
  return key;
}

// Strides at which the axes that are not in the same place in both shardings (outside the
// common prefix of a dim) split into prime-sized pieces.
std::vector<int64_t> PrimeCutsOfMovingAxes(const AxisSharding& src, const AxisSharding& dst) {
  std::vector<DeviceAxis> staying;
  for (size_t d = 0; d < src.dims.size(); ++d) {
    for (size_t i = 0; i < src.dims[d].size() && i < dst.dims[d].size(); ++i) {
      if (!(src.dims[d][i] == dst.dims[d][i])) break;
      staying.push_back(src.dims[d][i]);
    }
  }
  for (const DeviceAxis& axis : src.replicated)
    if (std::find(dst.replicated.begin(), dst.replicated.end(), axis) != dst.replicated.end())
      staying.push_back(axis);
  std::vector<int64_t> cuts;
  for (const DeviceAxis& axis : src.AllAxes()) {
    if (std::find(staying.begin(), staying.end(), axis) != staying.end()) continue;
    int64_t rest = axis.size, stride = axis.stride;
    for (int64_t p = 2; p * p <= rest; ++p) {
      while (rest % p == 0 && rest > p) {
        stride *= p;
        rest /= p;
        cuts.push_back(stride);
      }
    }
  }
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

int64_t IndexOfAxis(const std::vector<DeviceAxis>& axes, const DeviceAxis& axis) {
  auto it = std::find(axes.begin(), axes.end(), axis);
  GSPMD_CHECK(it != axes.end(), "axis not in the common refinement");
  return it - axes.begin();
}

}  // namespace

std::string ReshardStep::ToString() const {
  static const char* kNames[] = {"all-gather", "gather-dim", "all-to-all", "dynamic-slice",
                                 "all-reduce", "reduce-scatter", "collective-permute"};
  std::string out = kNames[static_cast<int>(kind)];
  if (dim >= 0) out += " dim=" + std::to_string(dim);
  if (to_dim >= 0) out += " to_dim=" + std::to_string(to_dim);
  if (!axes.empty()) {
    out += " axes={";
    for (size_t i = 0; i < axes.size(); ++i) out += (i ? "," : "") + std::to_string(axes[i]);
    out += "}";
  }
  return out;
}

std::optional<ReshardPlan> PlanReshard(const ReshardProblem& problem) {
  int64_t rank = static_cast<int64_t>(problem.global_dims.size());
  GSPMD_CHECK(problem.source.rank() == rank && problem.target.rank() == rank, "rank mismatch");
  // Put the partial axes in an extra pseudo-dim so they are refined with the rest.
  AxisSharding source = problem.source;
  for (const DeviceAxis& axis : problem.partial_axes) {
    auto it = std::find(source.replicated.begin(), source.replicated.end(), axis);
    GSPMD_CHECK(it != source.replicated.end(), "partial axis is not a replicated axis");
    source.replicated.erase(it);
  }
  source.dims.push_back(problem.partial_axes);
  AxisSharding target = problem.target;
  target.dims.push_back({});
  auto refined = RefineToCommonAxes(source, target);
  if (!refined) return std::nullopt;
  auto [src, dst] = *refined;
  // Axes that move are cut into prime factors, so that part of an axis can move (e.g. half of
  // a 4-way axis goes to another dim and a collective-permute fixes the device order).
  std::vector<int64_t> cuts = PrimeCutsOfMovingAxes(src, dst);
  if (!cuts.empty()) {
    src = SplitAxesAt(src, cuts);
    dst = SplitAxesAt(dst, cuts);
  }
  if (src.manual != dst.manual) return std::nullopt;

  ReshardPlan plan;
  for (const DeviceAxis& axis : src.AllAxes())
    if (std::find(src.manual.begin(), src.manual.end(), axis) == src.manual.end())
      plan.axes.push_back(axis);
  auto to_indices = [&](const std::vector<DeviceAxis>& axes) {
    std::vector<int64_t> out;
    for (const DeviceAxis& axis : axes) out.push_back(IndexOfAxis(plan.axes, axis));
    return out;
  };
  for (int64_t d = 0; d < rank; ++d) {
    plan.source.dims.push_back(to_indices(src.dims[d]));
    plan.target.dims.push_back(to_indices(dst.dims[d]));
  }
  plan.source.partial = to_indices(src.dims[rank]);

  Planner planner(problem, plan.axes, plan.target);
  std::vector<SearchNode> nodes;
  std::map<std::vector<int64_t>, double> best_cost;
  using QueueEntry = std::tuple<double, int64_t, int64_t>;  // cost, steps, node index
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>> queue;
  nodes.push_back({plan.source, 0, 0, -1, {}});
  best_cost[StateKey(plan.source)] = 0;
  queue.emplace(0.0, 0, 0);
  int64_t goal = -1;
  int64_t explored = 0;
  while (!queue.empty() && explored < kMaxExploredStates) {
    auto [cost, steps, index] = queue.top();
    queue.pop();
    const AxisState state = nodes[index].state;
    if (best_cost[StateKey(state)] < cost) continue;
    ++explored;
    if (state == plan.target) {
      goal = index;
      break;
    }
    auto push = [&](AxisState next, ReshardStep step) {
      double next_cost = cost + step.cost_bytes;
      std::vector<int64_t> key = StateKey(next);
      auto it = best_cost.find(key);
      if (it != best_cost.end() && it->second <= next_cost) return;
      best_cost[key] = next_cost;
      nodes.push_back({std::move(next), next_cost, steps + 1, index, std::move(step)});
      queue.emplace(next_cost, steps + 1, static_cast<int64_t>(nodes.size()) - 1);
    };
    if (state.partial.empty() && planner.SameTileCounts(state, plan.target)) {
      ReshardStep permute{ReshardStep::Kind::kCollectivePermute};
      permute.cost_bytes = planner.Bytes(state);
      push(plan.target, permute);
    }
    for (auto& [next, step] : planner.Successors(state)) push(std::move(next), std::move(step));
  }
  if (goal < 0) return std::nullopt;
  for (int64_t i = goal; nodes[i].parent >= 0; i = nodes[i].parent) plan.steps.push_back(nodes[i].step);
  std::reverse(plan.steps.begin(), plan.steps.end());
  plan.total_cost_bytes = nodes[goal].cost;
  return plan;
}

}  // namespace gspmd
