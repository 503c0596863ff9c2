// Reshape: dims are grouped into runs with equal element counts (a run of operand dims that
// merges/splits into a run of result dims). Within a run, a sharding survives a local reshape
// when its device axes, read major to minor over the run's flattened index, tile it as a
// contiguous prefix (fully split dims, then one evenly split dim, then unsplit dims) on both
// sides. The handler picks the cheaper of keeping the operand's axes or adopting the
// result's, dropping (replicating) only the axes that cannot survive, then reshapes locally;
// or, when only the major dim of each run is split, moves the run's flattened blocks with a
// window exchange (uneven splits and merges).
#include <algorithm>
#include <numeric>

#include "partitioner/device_axes.h"
#include "partitioner/handlers/window_exchange.h"
#include "partitioner/reshard_plan.h"

namespace gspmd::shape_ops {
namespace {

// A run of operand dims [operand_begin, operand_end) holding the same elements as the result
// dims [result_begin, result_end).
struct DimGroup {
  int64_t operand_begin = 0, operand_end = 0;
  int64_t result_begin = 0, result_end = 0;
};

// Size-1 dims at a group boundary form groups of their own (with nothing on the other side).
std::optional<std::vector<DimGroup>> GroupDims(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  std::vector<DimGroup> groups;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    DimGroup group{static_cast<int64_t>(i), static_cast<int64_t>(i), static_cast<int64_t>(j),
                   static_cast<int64_t>(j)};
    if (i < from.size() && from[i] == 1) {
      group.operand_end = static_cast<int64_t>(++i);
    } else if (j < to.size() && to[j] == 1) {
      group.result_end = static_cast<int64_t>(++j);
    } else {
      if (i >= from.size() || j >= to.size()) return std::nullopt;
      int64_t left = from[i++], right = to[j++];
      while (left != right) {
        if (left < right) {
          if (i >= from.size()) return std::nullopt;
          left *= from[i++];
        } else {
          if (j >= to.size()) return std::nullopt;
          right *= to[j++];
        }
      }
      group.operand_end = static_cast<int64_t>(i);
      group.result_end = static_cast<int64_t>(j);
    }
    groups.push_back(group);
  }
  return groups;
}

int64_t Product(const std::vector<DeviceAxis>& axes) {
  int64_t product = 1;
  for (const DeviceAxis& axis : axes) product *= axis.size;
  return product;
}

// The major `size`-part and the minor rest of an axis.
DeviceAxis MajorPart(const DeviceAxis& axis, int64_t size) { return {axis.stride * (axis.size / size), size}; }
DeviceAxis MinorPart(const DeviceAxis& axis, int64_t size) { return {axis.stride, axis.size / size}; }

// The axes of dims [begin, end) read over their flattened index, major first, as far as they
// tile it contiguously: fully split dims, then one evenly split dim, then unsplit dims.
std::vector<DeviceAxis> MergeAxes(const AxisSharding& sharding, const std::vector<int64_t>& dims, int64_t begin,
                                  int64_t end) {
  std::vector<DeviceAxis> flat;
  for (int64_t d = begin; d < end; ++d) {
    int64_t tiles = sharding.TileCount(d);
    if (tiles == dims[d]) {
      flat.insert(flat.end(), sharding.dims[d].begin(), sharding.dims[d].end());
      continue;
    }
    if (tiles < dims[d] && dims[d] % tiles == 0)
      flat.insert(flat.end(), sharding.dims[d].begin(), sharding.dims[d].end());
    break;
  }
  return flat;
}

// Distributes flattened axes over dims [begin, end) (major first), splitting an axis across a
// dim boundary when the sizes allow; stops at the first axis that does not fit. Returns the
// per-dim axes and the prefix of `flat` (as split) that was placed.
struct SplitResult {
  std::vector<std::vector<DeviceAxis>> dims;
  std::vector<DeviceAxis> placed;
};

SplitResult SplitAxes(const std::vector<DeviceAxis>& flat, const std::vector<int64_t>& sizes, int64_t begin,
                      int64_t end) {
  SplitResult out;
  out.dims.resize(end - begin);
  int64_t d = begin;
  int64_t room = d < end ? sizes[d] : 1;
  auto advance = [&]() {
    while (d < end && room == 1) {
      ++d;
      room = d < end ? sizes[d] : 1;
    }
  };
  for (const DeviceAxis& original : flat) {
    DeviceAxis axis = original;
    while (true) {
      advance();
      if (d >= end) return out;
      if (room % axis.size == 0) {
        out.dims[d - begin].push_back(axis);
        out.placed.push_back(axis);
        room /= axis.size;
        break;
      }
      int64_t common = std::gcd(room, axis.size);
      if (common == 1) return out;
      // The major part fills what is left of this dim; the minor part must go on to the next.
      out.dims[d - begin].push_back(MajorPart(axis, common));
      out.placed.push_back(MajorPart(axis, common));
      axis = MinorPart(axis, common);
      if (room != common) return out;
      room = 1;
    }
  }
  return out;
}

// Per-device local dims of `sharding` over `dims`, or nullopt when some split dim is uneven.
bool EvenlySplit(const AxisSharding& sharding, const std::vector<int64_t>& dims, int64_t begin, int64_t end) {
  for (int64_t d = begin; d < end; ++d)
    if (dims[d] % sharding.TileCount(d) != 0) return false;
  return true;
}

// One way to reshape locally: the operand's layout and the result's layout it produces.
struct Candidate {
  AxisSharding operand;
  AxisSharding result;
};

void SortAxes(std::vector<DeviceAxis>& axes) { std::sort(axes.begin(), axes.end()); }

// Builds the candidate whose axes come from `driver` (a sharding of the operand when
// `from_operand`, else of the result): per group, its axes that survive on both sides.
std::optional<Candidate> BuildCandidate(const AxisSharding& driver, bool from_operand,
                                        const std::vector<int64_t>& operand_dims,
                                        const std::vector<int64_t>& result_dims,
                                        const std::vector<DimGroup>& groups) {
  const std::vector<int64_t>& own_dims = from_operand ? operand_dims : result_dims;
  const std::vector<int64_t>& other_dims = from_operand ? result_dims : operand_dims;
  AxisSharding own, other;
  own.dims.resize(own_dims.size());
  other.dims.resize(other_dims.size());
  own.manual = other.manual = driver.manual;
  std::vector<DeviceAxis> kept;
  for (const DimGroup& group : groups) {
    int64_t own_begin = from_operand ? group.operand_begin : group.result_begin;
    int64_t own_end = from_operand ? group.operand_end : group.result_end;
    int64_t other_begin = from_operand ? group.result_begin : group.operand_begin;
    int64_t other_end = from_operand ? group.result_end : group.operand_end;
    bool one_to_one = own_end - own_begin == 1 && other_end - other_begin == 1;
    if (one_to_one) {  // same size on both sides: any split survives, uneven ones too
      own.dims[own_begin] = other.dims[other_begin] = driver.dims[own_begin];
      kept.insert(kept.end(), driver.dims[own_begin].begin(), driver.dims[own_begin].end());
      continue;
    }
    // Alternate between the sides until the placed axes agree (each pass can only shorten
    // or split them further).
    std::vector<DeviceAxis> flat = MergeAxes(driver, own_dims, own_begin, own_end);
    SplitResult on_other = SplitAxes(flat, other_dims, other_begin, other_end);
    SplitResult on_own = SplitAxes(on_other.placed, own_dims, own_begin, own_end);
    for (int pass = 0; pass < 8 && on_own.placed != on_other.placed; ++pass) {
      on_other = SplitAxes(on_own.placed, other_dims, other_begin, other_end);
      on_own = SplitAxes(on_other.placed, own_dims, own_begin, own_end);
    }
    if (on_own.placed != on_other.placed) return std::nullopt;
    for (int64_t d = own_begin; d < own_end; ++d) own.dims[d] = on_own.dims[d - own_begin];
    for (int64_t d = other_begin; d < other_end; ++d) other.dims[d] = on_other.dims[d - other_begin];
    kept.insert(kept.end(), on_own.placed.begin(), on_own.placed.end());
    if (!EvenlySplit(own, own_dims, own_begin, own_end) || !EvenlySplit(other, other_dims, other_begin, other_end))
      return std::nullopt;
  }
  // Every other digit of the device id is replicated on both sides.
  int64_t num_devices = Product(driver.AllAxes());
  std::vector<int64_t> boundaries;
  for (const DeviceAxis& axis : kept) {
    boundaries.push_back(axis.stride);
    boundaries.push_back(axis.stride * axis.size);
  }
  AxisSharding refined = SplitAxesAt(driver, boundaries);
  std::vector<DeviceAxis> rest;
  for (const DeviceAxis& axis : refined.AllAxes()) {
    bool used = std::find(kept.begin(), kept.end(), axis) != kept.end() ||
                std::find(driver.manual.begin(), driver.manual.end(), axis) != driver.manual.end();
    if (!used) rest.push_back(axis);
  }
  if (Product(kept) * Product(rest) * Product(driver.manual) != num_devices) return std::nullopt;
  own.replicated = other.replicated = rest;
  SortAxes(own.replicated);
  SortAxes(other.replicated);
  if (from_operand) return Candidate{own, other};
  return Candidate{other, own};
}

}  // namespace

namespace {

// `sharding` with every device d renamed to names[d].
Sharding Relabel(const Sharding& sharding, const std::vector<int64_t>& names) {
  if (!sharding.IsTiled()) return sharding;
  std::vector<int64_t> devices = sharding.tile_assignment().Devices();
  for (int64_t& device : devices) device = names.at(device);
  return Sharding::Tiled(TileAssignment(sharding.tile_assignment().dims(), std::move(devices)),
                         sharding.subgroup_types());
}

struct ReshapeLayouts {
  Sharding operand;
  Sharding result;
  double cost = 0;  // bytes of resharding the operand to `operand` and `result` to the target
};

// The cheapest pair of layouts (operand, result) between which the reshape is local, for an
// operand laid out as `current` and a result wanted as `target` (decomposable into axes).
std::optional<ReshapeLayouts> ChooseLayouts(SpmdContext& context, const Shape& operand_shape,
                                            const Shape& result_shape, const std::vector<DimGroup>& groups,
                                            const Sharding& current, const Sharding& target) {
  const auto& target_axes = context.Axes(target, result_shape.rank());
  if (!target_axes) return std::nullopt;
  std::vector<Candidate> candidates;
  if (auto from_result = BuildCandidate(*target_axes, false, operand_shape.dims(), result_shape.dims(), groups))
    candidates.push_back(*from_result);
  if (current.IsTiled() || current.IsReplicated()) {
    const auto& current_axes = context.Axes(current, operand_shape.rank());
    if (current_axes && current_axes->manual == target_axes->manual) {
      if (auto from_operand = BuildCandidate(*current_axes, true, operand_shape.dims(), result_shape.dims(), groups))
        candidates.push_back(*from_operand);
    }
  }
  std::optional<ReshapeLayouts> best;
  for (const Candidate& candidate : candidates) {
    ReshapeLayouts layouts{candidate.operand.ToSharding(), candidate.result.ToSharding()};
    auto before = ReshardCost(context, operand_shape, current, layouts.operand);
    auto after = ReshardCost(context, result_shape, layouts.result, target);
    layouts.cost = (before ? *before : 1e30) + (after ? *after : 1e30);
    if (!best || layouts.cost < best->cost) best = layouts;
  }
  return best;
}

// Reshaping blocks: when only the major dim of each group is split on the operand, every
// device holds a contiguous block of the group's flattened index; splitting the group's major
// result dim the same way is another block layout of that index, reached by a window exchange
// (a halo exchange when the blocks nearly line up, nothing when they do). This covers uneven
// merges and splits that no axis layout keeps local.
struct BlockPlan {
  Sharding result;                        // the operand's tiles on each group's first result dim
  std::vector<int64_t> flat_operand;      // per-device dims with every group flattened
  std::vector<WindowExchange> exchanges;  // one per group whose blocks move
  double cost = 0;
};

std::optional<BlockPlan> PlanBlocks(SpmdContext& context, const Shape& operand_shape, const Shape& result_shape,
                                    const std::vector<DimGroup>& groups, const Sharding& current,
                                    const Sharding& target) {
  if (!current.IsTiled()) return std::nullopt;
  const TileAssignment& tiles = current.tile_assignment();
  const std::vector<int64_t>& in = operand_shape.dims();
  const std::vector<int64_t>& out = result_shape.dims();
  std::vector<int64_t> result_tiles(out.size(), 1);
  BlockPlan plan;
  double element_bytes = static_cast<double>(ElementByteSize(operand_shape.element_type()));
  std::vector<double> slab_elements;
  for (size_t g = 0; g < groups.size(); ++g) {
    const DimGroup& group = groups[g];
    int64_t split = group.operand_begin < group.operand_end ? tiles.dim(group.operand_begin) : 1;
    for (int64_t d = group.operand_begin + 1; d < group.operand_end; ++d)
      if (tiles.dim(d) != 1) return std::nullopt;
    if (group.result_begin == group.result_end || group.operand_begin == group.operand_end) {
      if (split != 1) return std::nullopt;
      plan.flat_operand.push_back(1);
      continue;
    }
    result_tiles[group.result_begin] = split;
    int64_t inner_in = 1, inner_out = 1;
    for (int64_t d = group.operand_begin + 1; d < group.operand_end; ++d) inner_in *= in[d];
    for (int64_t d = group.result_begin + 1; d < group.result_end; ++d) inner_out *= out[d];
    int64_t major_in = in[group.operand_begin], major_out = out[group.result_begin];
    int64_t rows_in = ShardSize(major_in, split), rows_out = ShardSize(major_out, split);
    plan.flat_operand.push_back(rows_in * inner_in);
    bool one_to_one = group.operand_end - group.operand_begin == 1 && group.result_end - group.result_begin == 1;
    if (split == 1 || one_to_one) continue;
    WindowExchange x;
    x.dim = static_cast<int64_t>(g);
    x.lines = LinesAlongDim(current, group.operand_begin, context.num_devices());
    SourceSegment segment;
    segment.length = rows_in * inner_in;
    x.window_length = rows_out * inner_out;
    int64_t total = major_in * inner_in;
    for (int64_t t = 0; t < split; ++t) {
      int64_t first = std::min(t * rows_in * inner_in, total);
      segment.global_start.push_back(t * rows_in * inner_in);
      segment.real_begin.push_back(first);
      segment.real_end.push_back(std::max(first, std::min((t + 1) * rows_in, major_in) * inner_in));
      int64_t begin = std::min(t * rows_out * inner_out, total);
      x.window_start.push_back(t * rows_out * inner_out);
      x.needed_begin.push_back(begin);
      x.needed_end.push_back(std::max(begin, std::min((t + 1) * rows_out, major_out) * inner_out));
    }
    x.segments.push_back(segment);
    plan.exchanges.push_back(std::move(x));
  }
  for (const WindowExchange& x : plan.exchanges) {
    double slab = element_bytes;
    for (size_t h = 0; h < plan.flat_operand.size(); ++h)
      if (static_cast<int64_t>(h) != x.dim) slab *= static_cast<double>(plan.flat_operand[h]);
    plan.cost += slab * static_cast<double>(ExchangeElementsSent(x));
  }
  std::vector<int64_t> tile_dims = result_tiles;
  for (int64_t d = current.TiledDataRank(); d < tiles.num_dims(); ++d) tile_dims.push_back(tiles.dim(d));
  plan.result = Sharding::Tiled(tiles.Reshape(tile_dims), current.subgroup_types());
  auto after = ReshardCost(context, result_shape, plan.result, target);
  if (!after) return std::nullopt;
  plan.cost += *after;
  return plan;
}

Instruction* EmitBlocks(OpContext& op, const BlockPlan& plan) {
  HloBuilder& b = op.builder();
  Instruction* value = op.Operand(0).hlo;
  if (value->shape().dims() != plan.flat_operand) value = b.Reshape(value, plan.flat_operand);
  for (const WindowExchange& x : plan.exchanges) value = ExchangeWindows(op.spmd(), b, value, x);
  std::vector<int64_t> local = ShardDimsOf(plan.result, op.instruction().shape().dims());
  if (value->shape().dims() != local) value = b.Reshape(value, local);
  return value;
}

int64_t ElementCount(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
}

}  // namespace

namespace {

// How a reshape from an operand laid out as `current` reaches a result wanted as `target`
// (tiled): the cheaper of its axis layouts and its block plan, if either exists.
struct ReshapePlan {
  std::optional<ReshapeLayouts> layouts;
  std::optional<BlockPlan> blocks;
  bool UseBlocks() const { return blocks && (!layouts || blocks->cost < layouts->cost); }
  std::optional<double> Cost() const {
    if (UseBlocks()) return blocks->cost;
    if (layouts) return layouts->cost;
    return std::nullopt;
  }
};

std::optional<ReshapePlan> PlanReshape(SpmdContext& context, const Shape& operand_shape, const Shape& result_shape,
                                       const Sharding& current, const Sharding& target) {
  if (result_shape.element_count() == 0) return std::nullopt;
  auto groups = GroupDims(operand_shape.dims(), result_shape.dims());
  if (!groups) return std::nullopt;
  ReshapePlan plan;
  if (context.Axes(target, result_shape.rank())) {
    plan.layouts = ChooseLayouts(context, operand_shape, result_shape, *groups, current, target);
  } else {
    // A device order that is not a product of digit axes (a mirrored one, say): rename the
    // devices so that the target is in iota order, choose there, and rename back.
    const std::vector<int64_t>& order = target.tile_assignment().Devices();
    std::vector<int64_t> to_iota(context.num_devices(), -1), from_iota(context.num_devices(), -1);
    for (size_t i = 0; i < order.size(); ++i) {
      to_iota.at(order[i]) = static_cast<int64_t>(i);
      from_iota.at(i) = order[i];
    }
    if (std::find(to_iota.begin(), to_iota.end(), -1) != to_iota.end()) return std::nullopt;
    plan.layouts = ChooseLayouts(context, operand_shape, result_shape, *groups, Relabel(current, to_iota),
                                 Relabel(target, to_iota));
    if (plan.layouts) {
      plan.layouts->operand = Relabel(plan.layouts->operand, from_iota);
      plan.layouts->result = Relabel(plan.layouts->result, from_iota);
    }
  }
  plan.blocks = PlanBlocks(context, operand_shape, result_shape, *groups, current, target);
  if (plan.layouts && !plan.UseBlocks() &&
      ElementCount(ShardDimsOf(plan.layouts->operand, operand_shape.dims())) !=
          ElementCount(ShardDimsOf(plan.layouts->result, result_shape.dims())))
    return std::nullopt;  // the layouts would not give every device a piece of one size
  if (!plan.layouts && !plan.blocks) return std::nullopt;
  return plan;
}

}  // namespace

std::optional<double> ReshapeCost(SpmdContext& context, const Shape& operand_shape, const Shape& result_shape,
                                  const Sharding& current, const Sharding& target) {
  if (!target.IsTiled()) return std::nullopt;
  std::optional<ReshapePlan> plan = PlanReshape(context, operand_shape, result_shape, current, target);
  return plan ? plan->Cost() : std::nullopt;
}

bool PartitionReshape(OpContext& op, bool fresh_operand) {
  const Instruction& instruction = op.instruction();
  Sharding target = op.sharding();
  if (target.IsMaximal() || target.IsUnknown()) target = Sharding::Replicated();
  const Shape& result_shape = instruction.shape();
  const Shape& operand_shape = instruction.operand(0)->shape();
  if (!target.IsTiled()) {
    Instruction* operand = op.OperandWith(0, target);
    op.SetResult(op.Clone(result_shape, {operand}), target);
    return true;
  }
  std::optional<ReshapePlan> plan = PlanReshape(op.spmd(), operand_shape, result_shape, op.Operand(0).sharding, target);
  if (!plan) return false;
  if (plan->UseBlocks()) {
    op.SetResult(EmitBlocks(op, *plan->blocks), plan->blocks->result);
    return true;
  }
  Instruction* operand = fresh_operand ? Reshard(op.spmd(), op.builder(), op.Operand(0), plan->layouts->operand).hlo
                                       : op.OperandWith(0, plan->layouts->operand);
  op.SetResult(op.Clone(ShardShapeOf(plan->layouts->result, result_shape), {operand}), plan->layouts->result);
  return true;
}

}  // namespace gspmd::shape_ops
