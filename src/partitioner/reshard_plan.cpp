// Dijkstra search over axis states for the cheapest reshard (bytes sent per device).
#include "partitioner/reshard_plan.h"

#include <algorithm>
#include <queue>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kMaxExploredStates = 20000;
// Problems with more axes than this (after cutting moving axes into primes) are first searched
// with whole axes: the state space grows factorially with the axis count.
constexpr int64_t kMaxAxesForPrimeCuts = 5;

// A search state packed into bytes: each dim's axes (major first) followed by kDimEnd, then
// the partial axes in the order they arose. Lists of axes are packed the same way (one byte
// per axis). Small states fit std::string's inline buffer, so generating a successor
// allocates nothing.
constexpr char kDimEnd = static_cast<char>(0xff);
using Packed = std::string;

int64_t AxisAt(std::string_view packed, size_t i) { return static_cast<unsigned char>(packed[i]); }

Packed PackAxes(const std::vector<int64_t>& axes) {
  Packed out;
  for (int64_t axis : axes) out.push_back(static_cast<char>(axis));
  return out;
}

std::vector<int64_t> UnpackAxes(std::string_view packed) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < packed.size(); ++i) axes.push_back(AxisAt(packed, i));
  return axes;
}

Packed Pack(const AxisState& state) {
  Packed packed;
  for (const auto& dim : state.dims) {
    packed += PackAxes(dim);
    packed.push_back(kDimEnd);
  }
  return packed + PackAxes(state.partial);
}

// The visited-map identity of a state: partial axes are a set.
Packed StateKey(const Packed& packed) {
  size_t partial_begin = packed.rfind(kDimEnd) + 1;  // 0 for rank 0 (npos + 1)
  if (packed.size() - partial_begin <= 1) return packed;
  Packed key = packed;
  std::sort(key.begin() + static_cast<std::ptrdiff_t>(partial_begin), key.end());
  return key;
}

// A packed state being expanded, with its dim boundaries and tile counts.
struct Expanded {
  std::string_view packed;
  std::vector<size_t> begin;  // begin[d]: first byte of dim d; begin[rank]: first partial byte
  std::vector<int64_t> tiles;

  size_t End(int64_t d) const { return begin[d + 1] - 1; }
  int64_t Count(int64_t d) const { return static_cast<int64_t>(End(d) - begin[d]); }
  std::string_view Dim(int64_t d) const { return packed.substr(begin[d], End(d) - begin[d]); }
  int64_t Last(int64_t d) const { return AxisAt(packed, End(d) - 1); }
  std::string_view Partial() const { return packed.substr(begin.back()); }
};

// A successor as an edit of the expanded state: dim cut_dim keeps its first cut_keep axes,
// `add` is appended to dim add_dim, and the partial axes become `partial` if replace_partial.
struct Edit {
  int64_t cut_dim = -1;
  int64_t cut_keep = 0;
  int64_t add_dim = -1;
  std::string_view add;
  bool replace_partial = false;
  std::string_view partial;
};

Packed Apply(const Expanded& x, const Edit& edit) {
  Packed out;
  out.reserve(x.packed.size() + edit.add.size());
  int64_t rank = static_cast<int64_t>(x.tiles.size());
  for (int64_t d = 0; d < rank; ++d) {
    std::string_view axes = x.Dim(d);
    if (d == edit.cut_dim) axes = axes.substr(0, static_cast<size_t>(edit.cut_keep));
    out.append(axes);
    if (d == edit.add_dim) out.append(edit.add);
    out.push_back(kDimEnd);
  }
  out.append(edit.replace_partial ? edit.partial : x.Partial());
  return out;
}

// A step of the search: a ReshardStep with its axes packed (no allocation).
struct Move {
  ReshardStep::Kind kind;
  int64_t dim = -1;
  int64_t to_dim = -1;
  Packed axes;
  double cost_bytes = 0;

  ReshardStep ToStep() const {
    ReshardStep step{kind, dim, to_dim, UnpackAxes(axes)};
    step.cost_bytes = cost_bytes;
    return step;
  }
};

struct Successor {
  Packed state;
  Move move;
};

struct SearchNode {
  Packed state;
  double cost = 0;
  int64_t step_count = 0;
  int64_t parent = -1;  // index into the node list
  Move move;            // the step that led here from the parent
};

// Everything the search needs about the problem, with axes as indices.
class Planner {
 public:
  Planner(const ReshardProblem& problem, std::vector<DeviceAxis> axes, const AxisState& target)
      : problem_(problem), axes_(std::move(axes)), target_(target) {
    for (const auto& dim : target.dims) target_tiles_.push_back(TileCountOf(PackAxes(dim)));
  }

  int64_t AxisSize(int64_t axis) const { return axes_[axis].size; }
  int64_t DimSize(int64_t dim) const { return problem_.global_dims[dim]; }
  int64_t Rank() const { return static_cast<int64_t>(problem_.global_dims.size()); }

  int64_t TileCountOf(std::string_view axes) const {
    int64_t count = 1;
    for (size_t i = 0; i < axes.size(); ++i) count *= AxisSize(AxisAt(axes, i));
    return count;
  }

  // Fills `x` (reusing its buffers) with the boundaries and tile counts of `packed`.
  void Expand(std::string_view packed, Expanded& x) const {
    x.packed = packed;
    x.begin.clear();
    x.tiles.clear();
    size_t i = 0;
    for (int64_t d = 0; d < Rank(); ++d) {
      x.begin.push_back(i);
      int64_t count = 1;
      for (; packed[i] != kDimEnd; ++i) count *= AxisSize(AxisAt(packed, i));
      x.tiles.push_back(count);
      ++i;
    }
    x.begin.push_back(i);
  }

  // Per-device bytes for tile counts `tiles`, with dim `dim` overridden to `override_size`
  // elements (if >= 0) and dim `scaled_dim` split `scale` times more.
  double DeviceBytes(const std::vector<int64_t>& tiles, int64_t dim = -1, int64_t override_size = -1,
                     int64_t scaled_dim = -1, int64_t scale = 1) const {
    double bytes = static_cast<double>(problem_.element_bytes);
    for (int64_t d = 0; d < Rank(); ++d) {
      int64_t t = d == scaled_dim ? tiles[d] * scale : tiles[d];
      int64_t size = d == dim ? override_size : ShardSize(DimSize(d), t);
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

  bool HasTargetTileCounts(const Expanded& x) const { return x.tiles == target_tiles_; }

  // Axes neither splitting a dim nor partial, packed.
  Packed Replicated(const Expanded& x) const {
    std::vector<bool> used(axes_.size(), false);
    for (size_t i = 0; i < x.packed.size(); ++i)
      if (x.packed[i] != kDimEnd) used[AxisAt(x.packed, i)] = true;
    Packed replicated;
    for (size_t a = 0; a < axes_.size(); ++a)
      if (!used[a]) replicated.push_back(static_cast<char>(a));
    return replicated;
  }

  // Appends the states one collective (or local slice) away from `x` to `out`.
  void Successors(const Expanded& x, std::vector<Successor>& out) const;

 private:
  void PartialSuccessors(const Expanded& x, std::vector<Successor>& out) const;
  void Add(std::vector<Successor>& out, const Expanded& x, const Edit& edit, ReshardStep::Kind kind, int64_t dim,
           int64_t to_dim, std::string_view axes, double cost) const {
    out.push_back({Apply(x, edit), Move{kind, dim, to_dim, Packed(axes), cost}});
  }

  const ReshardProblem& problem_;
  std::vector<DeviceAxis> axes_;
  const AxisState& target_;
  std::vector<int64_t> target_tiles_;
};

void Planner::PartialSuccessors(const Expanded& x, std::vector<Successor>& out) const {
  using Kind = ReshardStep::Kind;
  int64_t rank = Rank();
  std::string_view partial = x.Partial();
  double bytes = DeviceBytes(x.tiles);
  int64_t n = TileCountOf(partial);
  {
    Edit edit;
    edit.replace_partial = true;
    Add(out, x, edit, Kind::kAllReduce, -1, -1, partial, 2.0 * (n - 1) / n * bytes);
  }
  for (size_t i = 0; i < partial.size(); ++i) {
    std::string_view axis = partial.substr(i, 1);
    int64_t size = AxisSize(AxisAt(axis, 0));
    Packed rest(partial);
    rest.erase(i, 1);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t tiles = x.tiles[d];
      if (!SliceAligned(d, tiles, size)) continue;
      Edit edit;
      edit.add_dim = d;
      edit.add = axis;
      edit.replace_partial = true;
      edit.partial = rest;
      int64_t padded = size * ShardSize(DimSize(d), tiles * size);
      Add(out, x, edit, Kind::kReduceScatter, d, -1, axis,
          static_cast<double>(size - 1) / size * DeviceBytes(x.tiles, d, padded));
    }
  }
  // All partial axes at once onto one dim (one collective instead of one per axis).
  if (partial.size() <= 1) return;
  Packed order(partial);
  std::sort(order.begin(), order.end(),
            [](char a, char b) { return static_cast<unsigned char>(a) < static_cast<unsigned char>(b); });
  bool all_orders = order.size() <= 3;
  auto less = [](char a, char b) { return static_cast<unsigned char>(a) < static_cast<unsigned char>(b); };
  do {
    for (int64_t d = 0; d < rank; ++d) {
      int64_t tiles = x.tiles[d];
      if (!SliceAligned(d, tiles, n)) continue;
      Edit edit;
      edit.add_dim = d;
      edit.add = order;
      edit.replace_partial = true;
      int64_t padded = n * ShardSize(DimSize(d), tiles * n);
      Add(out, x, edit, Kind::kReduceScatter, d, -1, order,
          static_cast<double>(n - 1) / n * DeviceBytes(x.tiles, d, padded));
    }
  } while (all_orders && std::next_permutation(order.begin(), order.end(), less));
}

void Planner::Successors(const Expanded& x, std::vector<Successor>& out) const {
  using Kind = ReshardStep::Kind;
  int64_t rank = Rank();
  if (!x.Partial().empty()) PartialSuccessors(x, out);

  for (int64_t d = 0; d < rank; ++d) {
    int64_t count = x.Count(d);
    if (count == 0) continue;
    int64_t tiles = x.tiles[d];
    std::string_view last = x.Dim(d).substr(static_cast<size_t>(count - 1));
    int64_t n = AxisSize(x.Last(d));
    int64_t gathered_size = n * ShardSize(DimSize(d), tiles);
    if (GatherAligned(d, tiles, n)) {
      Edit edit;
      edit.cut_dim = d;
      edit.cut_keep = count - 1;
      Add(out, x, edit, Kind::kAllGather, d, -1, last,
          static_cast<double>(n - 1) / n * DeviceBytes(x.tiles, d, gathered_size));
    }
    if (count > 1) {
      Edit edit;
      edit.cut_dim = d;
      edit.cut_keep = 0;
      int64_t full = tiles * ShardSize(DimSize(d), tiles);
      Add(out, x, edit, Kind::kGatherDim, d, -1, x.Dim(d),
          static_cast<double>(tiles - 1) / tiles * DeviceBytes(x.tiles, d, full));
    }
    if (!GatherAligned(d, tiles, n)) continue;
    for (int64_t e = 0; e < rank; ++e) {
      if (e == d || !SliceAligned(e, x.tiles[e], n)) continue;
      Edit edit;
      edit.cut_dim = d;
      edit.cut_keep = count - 1;
      edit.add_dim = e;
      edit.add = last;
      Add(out, x, edit, Kind::kAllToAll, d, e, last,
          static_cast<double>(n - 1) / n * DeviceBytes(x.tiles, d, gathered_size, e, n));
    }
  }

  // Several trailing axes of a dim moved to another dim in one all-to-all (keeps their order,
  // which moving them one by one would reverse).
  for (int64_t d = 0; d < rank; ++d) {
    int64_t count = x.Count(d);
    for (int64_t k = 2; k <= count; ++k) {
      std::string_view moved = x.Dim(d).substr(static_cast<size_t>(count - k));
      int64_t n = TileCountOf(moved);
      int64_t tiles = x.tiles[d];
      if (!GatherAligned(d, tiles, n)) continue;
      int64_t gathered_size = n * ShardSize(DimSize(d), tiles);
      for (int64_t e = 0; e < rank; ++e) {
        if (e == d || !SliceAligned(e, x.tiles[e], n)) continue;
        Edit edit;
        edit.cut_dim = d;
        edit.cut_keep = count - k;
        edit.add_dim = e;
        edit.add = moved;
        Add(out, x, edit, Kind::kAllToAll, d, e, moved,
            static_cast<double>(n - 1) / n * DeviceBytes(x.tiles, d, gathered_size, e, n));
      }
    }
  }

  Packed replicated = Replicated(x);
  for (size_t r = 0; r < replicated.size(); ++r) {
    std::string_view axis = std::string_view(replicated).substr(r, 1);
    int64_t n = AxisSize(AxisAt(axis, 0));
    for (int64_t d = 0; d < rank; ++d) {
      if (!SliceAligned(d, x.tiles[d], n)) continue;
      Edit edit;
      edit.add_dim = d;
      edit.add = axis;
      Add(out, x, edit, Kind::kDynamicSlice, d, -1, axis, 0);
    }
  }
  // The next several target axes of a dim sliced at once, when they are all replicated here
  // (an uneven dim may allow slicing n ways in one step but not in smaller steps).
  for (int64_t d = 0; d < rank; ++d) {
    std::string_view have = x.Dim(d);
    const std::vector<int64_t>& want = target_.dims[d];
    if (have.size() + 2 > want.size()) continue;
    bool is_prefix = true;
    for (size_t i = 0; i < have.size(); ++i) is_prefix = is_prefix && AxisAt(have, i) == want[i];
    if (!is_prefix) continue;
    int64_t tiles = x.tiles[d];
    int64_t n = 1;
    Packed sliced;
    for (size_t i = have.size(); i < want.size(); ++i) {
      if (replicated.find(static_cast<char>(want[i])) == Packed::npos) break;
      n *= AxisSize(want[i]);
      sliced.push_back(static_cast<char>(want[i]));
      if (i == have.size() || !SliceAligned(d, tiles, n)) continue;
      Edit edit;
      edit.add_dim = d;
      edit.add = sliced;
      Add(out, x, edit, Kind::kDynamicSlice, d, -1, sliced, 0);
    }
  }
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

namespace {

// Dijkstra over axis states, with `src` and `dst` written over the same axes (the last dim
// of each is the pseudo-dim of partial axes). nullopt when no plan is found within
// kMaxExploredStates states.
std::optional<ReshardPlan> SearchPlan(const ReshardProblem& problem, const AxisSharding& src,
                                      const AxisSharding& dst) {
  int64_t rank = static_cast<int64_t>(problem.global_dims.size());
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
  GSPMD_CHECK(plan.axes.size() < 255, "too many device axes to plan over: ", plan.axes.size());
  Planner planner(problem, plan.axes, plan.target);
  const Packed target = Pack(plan.target);
  std::vector<SearchNode> nodes;
  std::unordered_map<Packed, double> best_cost;
  best_cost.reserve(1024);
  using QueueEntry = std::tuple<double, int64_t, int64_t>;  // cost, steps, node index
  std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>> queue;
  nodes.push_back({Pack(plan.source), 0, 0, -1, Move{ReshardStep::Kind::kAllGather, -1, -1, {}, 0}});  // no move
  best_cost[StateKey(nodes[0].state)] = 0;
  queue.emplace(0.0, 0, 0);
  int64_t goal = -1;
  int64_t explored = 0;
  std::vector<Successor> successors;
  successors.reserve(64);
  Expanded x;
  while (!queue.empty() && explored < kMaxExploredStates) {
    auto [cost, steps, index] = queue.top();
    queue.pop();
    const Packed state = nodes[index].state;
    if (best_cost.find(StateKey(state))->second < cost) continue;
    ++explored;
    if (state == target) {
      goal = index;
      break;
    }
    auto push = [&](Packed next, Move move) {
      double next_cost = cost + move.cost_bytes;
      auto [it, inserted] = best_cost.try_emplace(StateKey(next), next_cost);
      if (!inserted) {
        if (it->second <= next_cost) return;
        it->second = next_cost;
      }
      nodes.push_back({std::move(next), next_cost, steps + 1, index, std::move(move)});
      queue.emplace(next_cost, steps + 1, static_cast<int64_t>(nodes.size()) - 1);
    };
    planner.Expand(state, x);
    if (x.Partial().empty() && planner.HasTargetTileCounts(x))
      push(target, Move{ReshardStep::Kind::kCollectivePermute, -1, -1, {}, planner.DeviceBytes(x.tiles)});
    successors.clear();
    planner.Successors(x, successors);
    for (Successor& next : successors) push(std::move(next.state), std::move(next.move));
  }
  if (goal < 0) return std::nullopt;
  for (int64_t i = goal; nodes[i].parent >= 0; i = nodes[i].parent) plan.steps.push_back(nodes[i].move.ToStep());
  std::reverse(plan.steps.begin(), plan.steps.end());
  plan.total_cost_bytes = nodes[goal].cost;
  return plan;
}

// The axes a search over `sharding` moves (all but the manual ones).
int64_t PlannedAxisCount(const AxisSharding& sharding) {
  return static_cast<int64_t>(sharding.AllAxes().size() - sharding.manual.size());
}

}  // namespace

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
  const auto& [src, dst] = *refined;
  if (src.manual != dst.manual) return std::nullopt;
  // Axes that move are cut into prime factors, so that part of an axis can move (e.g. half of
  // a 4-way axis goes to another dim and a collective-permute fixes the device order). On big
  // meshes that gives too many axes to search (2048 devices: 11), so the search then keeps the
  // axes whole, and cuts them only if no plan exists without.
  std::vector<int64_t> cuts = PrimeCutsOfMovingAxes(src, dst);
  if (cuts.empty()) return SearchPlan(problem, src, dst);
  AxisSharding fine_src = SplitAxesAt(src, cuts), fine_dst = SplitAxesAt(dst, cuts);
  if (PlannedAxisCount(fine_src) <= kMaxAxesForPrimeCuts) return SearchPlan(problem, fine_src, fine_dst);
  std::optional<ReshardPlan> coarse = SearchPlan(problem, src, dst);
  if (coarse) return coarse;
  return SearchPlan(problem, fine_src, fine_dst);
}

}  // namespace gspmd
