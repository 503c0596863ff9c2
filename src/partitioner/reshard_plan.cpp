// Sets up reshard planning: writes both shardings over common device axes (cutting the axes
// that move into smaller pieces where that is affordable) and runs the search of
// reshard_search.h.
#include "partitioner/reshard_plan.h"

#include <algorithm>
#include <string>

#include "partitioner/partial_reshard.h"
#include "partitioner/reshard_search.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Problems with more axes than this after cutting the moving axes into primes are searched with
// whole axes and with fewer cuts instead: the state space grows factorially with the axis count.
constexpr int64_t kMaxAxesForPrimeCuts = 5;
// The same bound for cuts into factors that match other axes (see FactorCuts).
constexpr int64_t kMaxAxesForFactorCuts = 7;
// States the search with factor cuts may expand before the whole axes are searched instead.
constexpr int64_t kFactorCutStates = 1500;
constexpr int64_t kFactorCutBackwardStates = 40;
// Costs closer than this (bytes) are equal: sums of fractions round differently.
constexpr double kCostTolerance = 1e-6;

// The axes that are not in the same place in both shardings (outside the common prefix of a
// dim, or replicated in one only).
std::vector<DeviceAxis> MovingAxes(const AxisSharding& src, const AxisSharding& dst) {
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
  std::vector<DeviceAxis> moving;
  for (const DeviceAxis& axis : src.AllAxes())
    if (std::find(staying.begin(), staying.end(), axis) == staying.end()) moving.push_back(axis);
  return moving;
}

// Strides at which `axes` split into prime-sized pieces.
std::vector<int64_t> PrimeCuts(const std::vector<DeviceAxis>& axes) {
  std::vector<int64_t> cuts;
  for (const DeviceAxis& axis : axes) {
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

// Strides at which `axes` split off a minor or a major piece whose size is that of another
// axis or a tile count of either sharding (e.g. a 16-way axis into 4x4 when some dim is split
// 4 ways): the sub-axes a plan is likely to move on their own, far fewer than all primes.
std::vector<int64_t> FactorCuts(const std::vector<DeviceAxis>& axes, const AxisSharding& src,
                                const AxisSharding& dst) {
  std::vector<int64_t> sizes;
  for (const AxisSharding* sharding : {&src, &dst}) {
    for (const DeviceAxis& axis : sharding->AllAxes()) sizes.push_back(axis.size);
    for (int64_t d = 0; d < sharding->rank(); ++d) sizes.push_back(sharding->TileCount(d));
  }
  std::vector<int64_t> cuts;
  for (const DeviceAxis& axis : axes) {
    for (int64_t m : sizes) {
      if (m <= 1 || m >= axis.size || axis.size % m != 0) continue;
      cuts.push_back(axis.stride * m);
      cuts.push_back(axis.stride * (axis.size / m));
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

int64_t IndexOfAxis(const std::vector<DeviceAxis>& axes, const DeviceAxis& axis) {
  auto it = std::find(axes.begin(), axes.end(), axis);
  GSPMD_CHECK(it != axes.end(), "axis not in the common refinement");
  return it - axes.begin();
}

void AppendList(std::string& out, const std::vector<int64_t>& values) {
  out.push_back('{');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(values[i]);
  }
  out.push_back('}');
}

}  // namespace

std::string ReshardStep::ToString() const {
  static const char* kNames[] = {"all-gather", "gather-dim", "all-to-all", "dynamic-slice",
                                 "all-reduce", "reduce-scatter", "collective-permute"};
  std::string out = kNames[static_cast<int>(kind)];
  if (dim >= 0) out += " dim=" + std::to_string(dim);
  if (to_dim >= 0) out += " to_dim=" + std::to_string(to_dim);
  if (!axes.empty()) {
    out += " axes=";
    AppendList(out, axes);
  }
  if (kind == Kind::kCollectivePermute) {
    out += " to=[";
    for (size_t d = 0; d < permuted_to.size(); ++d) {
      if (d) out += ", ";
      AppendList(out, permuted_to[d]);
    }
    out += "]";
  }
  return out;
}

namespace {

// The axes a search over `sharding` moves (all but the manual ones), by stride.
std::vector<DeviceAxis> PlannedAxes(const AxisSharding& sharding) {
  std::vector<DeviceAxis> axes;
  for (const DeviceAxis& axis : sharding.AllAxes())
    if (std::find(sharding.manual.begin(), sharding.manual.end(), axis) == sharding.manual.end())
      axes.push_back(axis);
  return axes;
}

// `sharding` (whose last dim is the pseudo-dim of partial axes) as a state over `axes`.
AxisState StateOver(const std::vector<DeviceAxis>& axes, const AxisSharding& sharding) {
  auto to_indices = [&](const std::vector<DeviceAxis>& list) {
    std::vector<int64_t> out;
    for (const DeviceAxis& axis : list) out.push_back(IndexOfAxis(axes, axis));
    return out;
  };
  AxisState state;
  int64_t rank = sharding.rank() - 1;
  for (int64_t d = 0; d < rank; ++d) state.dims.push_back(to_indices(sharding.dims[d]));
  state.partial = to_indices(sharding.dims[rank]);
  return state;
}

// Searches from `src` to `dst` (each with the pseudo-dim of partial axes last); `same_axes`
// when both are written over the same axes.
std::optional<ReshardPlan> SearchPlan(const ReshardProblem& problem, const AxisSharding& src, const AxisSharding& dst,
                                      bool same_axes, const reshard_search::SearchLimits& limits = {}) {
  std::vector<DeviceAxis> source_axes = PlannedAxes(src);
  std::vector<DeviceAxis> target_axes = same_axes ? source_axes : PlannedAxes(dst);
  AxisState source = StateOver(source_axes, src);
  AxisState target = StateOver(target_axes, dst);
  return reshard_search::SearchPlan(problem, std::move(source_axes), std::move(source), std::move(target_axes),
                                    std::move(target), same_axes, limits);
}

// The axes a search over `sharding` moves (all but the manual ones).
int64_t PlannedAxisCount(const AxisSharding& sharding) {
  return static_cast<int64_t>(sharding.AllAxes().size() - sharding.manual.size());
}

// Bytes each device must receive at least: device 0's tile in the target minus what it holds
// already (all of it when partial sums are pending).
double LowerBound(const ReshardProblem& problem) {
  double want = 1, held = 1;
  for (size_t d = 0; d < problem.global_dims.size(); ++d) {
    int64_t there = ShardSize(problem.global_dims[d], problem.target.TileCount(static_cast<int64_t>(d)));
    int64_t here = ShardSize(problem.global_dims[d], problem.source.TileCount(static_cast<int64_t>(d)));
    want *= static_cast<double>(there);
    held *= static_cast<double>(std::min(here, there));
  }
  double bytes = static_cast<double>(problem.element_bytes);
  return bytes * (problem.partial_axes.empty() ? want - held : want);
}

// Fewer bytes (beyond rounding), then fewer steps.
bool Cheaper(const ReshardPlan& a, const ReshardPlan& b) {
  if (a.total_cost_bytes < b.total_cost_bytes - kCostTolerance) return true;
  if (a.total_cost_bytes > b.total_cost_bytes + kCostTolerance) return false;
  return a.steps.size() < b.steps.size();
}

// Cuts every axis of `sharding` into prime-sized pieces.
AxisSharding PrimeAxes(const AxisSharding& sharding) {
  return SplitAxesAt(sharding, PrimeCuts(sharding.AllAxes()));
}

// Shardings whose device-id digits do not refine each other (2x3 against 3x2 on 6 devices):
// each keeps its own axes, and a collective-permute between states of equal tile counts is the
// only way from one to the other. Their manual axes must be the same.
std::optional<ReshardPlan> PlanAcrossAxes(const ReshardProblem& problem, const AxisSharding& source,
                                          const AxisSharding& target) {
  if (source.manual != target.manual) return std::nullopt;
  AxisSharding src = source, dst = target;
  if (PlannedAxisCount(PrimeAxes(src)) <= kMaxAxesForPrimeCuts) src = PrimeAxes(src);
  if (PlannedAxisCount(PrimeAxes(dst)) <= kMaxAxesForPrimeCuts) dst = PrimeAxes(dst);
  if (src.manual != dst.manual) return std::nullopt;
  return SearchPlan(problem, src, dst, false);
}

// Consecutive all-gathers of one dim become one: the search gathers a dim's last axis per
// move, so taking two pieces off a dim (a 4-way piece of an 8-way axis cut into primes) costs
// two collectives where one over both axes sends the same bytes (XLA emits one). Each of them
// removes the dim's last axis, so the second gathers the axis just before the first's, and the
// merged step lists it first (major). Alignment of uneven dims holds for the whole if it held
// for each step.
void MergeConsecutiveGathers(ReshardPlan& plan) {
  std::vector<ReshardStep> merged;
  for (ReshardStep& step : plan.steps) {
    if (!merged.empty() && step.kind == ReshardStep::Kind::kAllGather &&
        merged.back().kind == ReshardStep::Kind::kAllGather && merged.back().dim == step.dim) {
      ReshardStep& previous = merged.back();
      step.axes.insert(step.axes.end(), previous.axes.begin(), previous.axes.end());
      previous.axes = std::move(step.axes);
      previous.cost_bytes += step.cost_bytes;
      continue;
    }
    merged.push_back(std::move(step));
  }
  plan.steps = std::move(merged);
}

std::optional<ReshardPlan> PlanWithSingleAxisGathers(const ReshardProblem& problem);

}  // namespace

std::optional<ReshardPlan> PlanReshard(const ReshardProblem& problem) {
  std::optional<ReshardPlan> plan = PlanWithSingleAxisGathers(problem);
  if (plan) MergeConsecutiveGathers(*plan);
  return plan;
}

namespace {

std::optional<ReshardPlan> PlanWithSingleAxisGathers(const ReshardProblem& problem) {
  // Partial sums (unreduced axes) on either side: the axes the target keeps pending are not
  // touched, the others are partial axes to reduce (partial_reshard.h).
  if (!problem.source.unreduced.empty() || !problem.target.unreduced.empty()) {
    std::optional<PartialReshard> rewritten = PlanKeepingUnreducedAxes(problem);
    if (!rewritten) return std::nullopt;
    return PlanWithSingleAxisGathers(rewritten->problem);
  }
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
  if (!refined) return PlanAcrossAxes(problem, source, target);
  const auto& [src, dst] = *refined;
  if (src.manual != dst.manual) return std::nullopt;
  // Axes that move are cut into prime factors, so that part of an axis can move (e.g. half of
  // a 4-way axis goes to another dim and a collective-permute fixes the device order). On big
  // meshes that gives too many axes to search (2048 devices: 11): the search then cuts them
  // only into pieces the size of other axes or tile counts, or, with still too many, keeps
  // them whole.
  std::vector<DeviceAxis> moving = MovingAxes(src, dst);
  std::vector<int64_t> cuts = PrimeCuts(moving);
  if (cuts.empty()) return SearchPlan(problem, src, dst, true);
  AxisSharding fine_src = SplitAxesAt(src, cuts), fine_dst = SplitAxesAt(dst, cuts);
  if (PlannedAxisCount(fine_src) <= kMaxAxesForPrimeCuts) return SearchPlan(problem, fine_src, fine_dst, true);
  // Whole axes can gather or slice unevenly split dims in one step where their pieces cannot:
  // both searches run, and the cheaper plan wins.
  std::optional<ReshardPlan> coarse = SearchPlan(problem, src, dst, true);
  std::vector<int64_t> factor_cuts = FactorCuts(moving, src, dst);
  bool coarse_optimal = coarse && coarse->total_cost_bytes <= LowerBound(problem) + kCostTolerance;
  if (!factor_cuts.empty() && !coarse_optimal) {
    AxisSharding factor_src = SplitAxesAt(src, factor_cuts), factor_dst = SplitAxesAt(dst, factor_cuts);
    if (PlannedAxisCount(factor_src) <= kMaxAxesForFactorCuts) {
      reshard_search::SearchLimits limits;
      limits.forward_states = kFactorCutStates;
      limits.backward_states = kFactorCutBackwardStates;
      if (coarse) limits.cost_bound = coarse->total_cost_bytes - kCostTolerance;
      std::optional<ReshardPlan> factored = SearchPlan(problem, factor_src, factor_dst, true, limits);
      if (factored && (!coarse || Cheaper(*factored, *coarse))) return factored;
    }
  }
  if (coarse) return coarse;
  return SearchPlan(problem, fine_src, fine_dst, true);
}

}  // namespace

}  // namespace gspmd
