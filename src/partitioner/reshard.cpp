// Emits the HLO of a reshard plan: all-gather, all-to-all, dynamic-slice, all-reduce,
// reduce-scatter and collective-permute steps; and the full-rematerialization fallback.
#include "partitioner/reshard.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "partitioner/partial_reshard.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

int64_t Digit(int64_t device, const DeviceAxis& axis) { return (device / axis.stride) % axis.size; }

// Maximal and unknown shardings are computed on every device, like replicated ones.
Sharding Normalize(const Sharding& sharding) {
  if (sharding.IsMaximal() || sharding.IsUnknown()) return Sharding::Replicated();
  return sharding;
}

Instruction* Zero(HloBuilder& b, ElementType type) { return b.ScalarConstant(type, 0); }

// Emits a reshard plan step by step, keeping track of the per-dim tile counts.
class PlanEmitter {
 public:
  PlanEmitter(SpmdContext& context, HloBuilder& b, const ReshardPlan& plan, const Shape& global,
              Opcode reduction)
      : context_(context), b_(b), plan_(plan), global_(global), reduction_(reduction),
        axes_(&plan.axes), state_(plan.source) {}

  Instruction* Emit(Instruction* local) {
    Instruction* current = local;
    for (const ReshardStep& step : plan_.steps) current = EmitStep(step, current);
    return current;
  }

 private:
  int64_t D(int64_t dim) const { return global_.dim(dim); }
  int64_t Tiles(int64_t dim) const {
    int64_t tiles = 1;
    for (int64_t axis : state_.dims[dim]) tiles *= (*axes_)[axis].size;
    return tiles;
  }
  std::vector<DeviceAxis> AxesOf(const std::vector<int64_t>& indices) const {
    std::vector<DeviceAxis> axes;
    for (int64_t index : indices) axes.push_back((*axes_)[index]);
    return axes;
  }
  int64_t SizeOf(const std::vector<int64_t>& indices) const {
    int64_t size = 1;
    for (int64_t index : indices) size *= (*axes_)[index].size;
    return size;
  }
  // The tile index of `device` along each dim of `dims` (over `axes`), followed by the device's
  // digits outside `axes` (its manual subgroup), which a collective-permute must keep.
  static std::vector<int64_t> TileIndex(const std::vector<std::vector<int64_t>>& dims,
                                        const std::vector<DeviceAxis>& axes, int64_t device) {
    std::vector<int64_t> index;
    for (const auto& dim : dims) {
      int64_t tile = 0;
      for (int64_t axis : dim) tile = tile * axes[axis].size + Digit(device, axes[axis]);
      index.push_back(tile);
    }
    int64_t rest = device;
    for (const DeviceAxis& axis : axes) rest -= Digit(device, axis) * axis.stride;
    index.push_back(rest);
    return index;
  }

  Instruction* SliceDimTo(Instruction* current, int64_t dim, int64_t size) {
    if (current->shape().dim(dim) == size) return current;
    std::vector<int64_t> limits = current->shape().dims();
    limits[dim] = size;
    return b_.SliceToSize(current, limits);
  }
  Instruction* PadDimTo(Instruction* current, int64_t dim, int64_t size) {
    if (current->shape().dim(dim) >= size) return current;
    std::vector<int64_t> dims = current->shape().dims();
    dims[dim] = size;
    return b_.PadToSize(current, dims, Zero(b_, current->shape().element_type()));
  }

  Instruction* EmitStep(const ReshardStep& step, Instruction* current) {
    CollectiveFactory& collectives = context_.collectives();
    switch (step.kind) {
      case ReshardStep::Kind::kAllGather:
      case ReshardStep::Kind::kGatherDim: {
        int64_t n = SizeOf(step.axes);
        if (Tiles(step.dim) == n && !IsComplex(current->shape().element_type()) &&
            GatherByMaskedSum(D(step.dim), n))
          return EmitMaskedSumGather(step, current);
        current = collectives.AllGather(b_, current, step.dim,
                                        collectives.GroupsOverAxes(AxesOf(step.axes)), n);
        auto& dim_axes = state_.dims[step.dim];
        dim_axes.resize(dim_axes.size() - step.axes.size());
        if (Tiles(step.dim) == 1) current = SliceDimTo(current, step.dim, D(step.dim));
        return current;
      }
      case ReshardStep::Kind::kAllToAll:
        return EmitAllToAll(step, current);
      case ReshardStep::Kind::kDynamicSlice: {
        int64_t n = SizeOf(step.axes);
        int64_t tiles = Tiles(step.dim);
        int64_t piece = ShardSize(D(step.dim), tiles * n);
        current = PadDimTo(current, step.dim, n * piece);
        // The sliced axes' digits, the first one most significant, times the piece.
        Instruction* offset = AxisOffset(b_, AxesOf(step.axes), piece, context_.num_devices());
        std::vector<Instruction*> starts;
        Instruction* zero = b_.S32Constant(0);
        for (int64_t d = 0; d < current->shape().rank(); ++d) starts.push_back(d == step.dim ? offset : zero);
        std::vector<int64_t> sizes = current->shape().dims();
        sizes[step.dim] = piece;
        auto& dim_axes = state_.dims[step.dim];
        dim_axes.insert(dim_axes.end(), step.axes.begin(), step.axes.end());
        return b_.DynamicSlice(current, starts, sizes);
      }
      case ReshardStep::Kind::kAllReduce: {
        current = collectives.AllReduce(b_, current, collectives.GroupsOverAxes(AxesOf(step.axes)),
                                        reduction_);
        state_.partial.clear();
        return current;
      }
      case ReshardStep::Kind::kReduceScatter: {
        int64_t n = SizeOf(step.axes);
        int64_t piece = ShardSize(D(step.dim), Tiles(step.dim) * n);
        current = PadDimTo(current, step.dim, n * piece);
        current = collectives.ReduceScatter(b_, current, step.dim,
                                            collectives.GroupsOverAxes(AxesOf(step.axes)), n, reduction_);
        auto& partial = state_.partial;
        for (int64_t axis : step.axes) {
          partial.erase(std::find(partial.begin(), partial.end(), axis));
          state_.dims[step.dim].push_back(axis);
        }
        return current;
      }
      case ReshardStep::Kind::kCollectivePermute:
        return EmitPermute(step, current);
    }
    return current;
  }

  // [.., c_d at dim d, .., c_e at dim e, ..] -> [.., n*c_d, .., c_e/n, ..]
  // Makes dim step.dim whole from its pieces over all its axes by a sum: the device's piece
  // at its offset in zeros, the padding past the dim's end cut off, then one all-reduce.
  Instruction* EmitMaskedSumGather(const ReshardStep& step, Instruction* current) {
    const int64_t n = SizeOf(step.axes);
    const int64_t size = D(step.dim);
    const int64_t piece = ShardSize(size, n);
    ElementType type = current->shape().element_type();
    std::vector<int64_t> dims = current->shape().dims();
    dims[step.dim] = n * piece;
    Instruction* zeros = b_.BroadcastScalar(b_.ScalarConstant(type, ExactSumIdentity(type)), dims);
    Instruction* zero = b_.S32Constant(0);
    std::vector<Instruction*> starts(dims.size(), zero);
    starts[step.dim] = AxisOffset(b_, AxesOf(step.axes), piece, context_.num_devices());
    current = b_.DynamicUpdateSlice(zeros, SliceDimTo(PadDimTo(current, step.dim, piece), step.dim, piece), starts);
    current = SliceDimTo(current, step.dim, size);
    CollectiveFactory& collectives = context_.collectives();
    current = collectives.SumOfPieces(b_, current, collectives.GroupsOverAxes(AxesOf(step.axes)));
    state_.dims[step.dim].clear();
    return current;
  }

  Instruction* EmitAllToAll(const ReshardStep& step, Instruction* current) {
    int64_t d = step.dim, e = step.to_dim;
    int64_t n = SizeOf(step.axes);
    int64_t piece_e = ShardSize(D(e), Tiles(e) * n);
    current = PadDimTo(current, e, n * piece_e);
    std::vector<int64_t> split_dims;
    for (int64_t i = 0; i < current->shape().rank(); ++i) {
      if (i == e) {
        split_dims.push_back(n);
        split_dims.push_back(piece_e);
      } else {
        split_dims.push_back(current->shape().dim(i));
      }
    }
    current = b_.Reshape(current, split_dims);
    CollectiveFactory& collectives = context_.collectives();
    current = collectives.AllToAll(b_, current, e, collectives.GroupsOverAxes(AxesOf(step.axes)));
    // Move the chunk dim (at e) to just before dim d, then merge it into d.
    int64_t d_split = d < e ? d : d + 1;
    std::vector<int64_t> order;
    for (int64_t i = 0; i < static_cast<int64_t>(split_dims.size()); ++i)
      if (i != e) order.push_back(i);
    order.insert(std::find(order.begin(), order.end(), d_split), e);
    current = b_.Transpose(current, order);
    std::vector<int64_t> merged;
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] == e) {
        merged.push_back(current->shape().dim(i) * current->shape().dim(i + 1));
        ++i;
        continue;
      }
      merged.push_back(current->shape().dim(i));
    }
    current = b_.Reshape(current, merged);
    // The moved axes are the trailing axes of d, in order; they become the trailing axes of e.
    state_.dims[d].resize(state_.dims[d].size() - step.axes.size());
    state_.dims[e].insert(state_.dims[e].end(), step.axes.begin(), step.axes.end());
    if (Tiles(d) == 1) current = SliceDimTo(current, d, D(d));
    return current;
  }

  // Sends every device the tile it holds in `step.permuted_to` (over the plan's target axes)
  // from a device holding that tile now, itself when it can.
  Instruction* EmitPermute(const ReshardStep& step, Instruction* current) {
    int64_t devices = context_.num_devices();
    std::map<std::vector<int64_t>, std::vector<int64_t>> holders;
    for (int64_t p = 0; p < devices; ++p) holders[TileIndex(state_.dims, *axes_, p)].push_back(p);
    std::vector<std::vector<int64_t>> wanted;
    for (int64_t q = 0; q < devices; ++q) wanted.push_back(TileIndex(step.permuted_to, plan_.target_axes, q));
    std::vector<bool> used(devices, false);
    std::vector<int64_t> source_of(devices, -1);
    for (int64_t q = 0; q < devices; ++q) {
      const auto& candidates = holders[wanted[q]];
      if (std::find(candidates.begin(), candidates.end(), q) != candidates.end()) {
        source_of[q] = q;
        used[q] = true;
      }
    }
    for (int64_t q = 0; q < devices; ++q) {
      if (source_of[q] >= 0) continue;
      for (int64_t p : holders[wanted[q]]) {
        if (used[p]) continue;
        source_of[q] = p;
        used[p] = true;
        break;
      }
      GSPMD_CHECK(source_of[q] >= 0, "no source for device ", q, " in a collective-permute");
    }
    axes_ = &plan_.target_axes;
    state_ = AxisState{step.permuted_to, {}};
    bool identity = true;
    std::vector<SourceTargetPair> pairs;
    for (int64_t q = 0; q < devices; ++q) {
      pairs.push_back({source_of[q], q});
      identity = identity && source_of[q] == q;
    }
    if (identity) return current;
    return context_.collectives().CollectivePermute(b_, current, std::move(pairs));
  }

  SpmdContext& context_;
  HloBuilder& b_;
  const ReshardPlan& plan_;
  const Shape& global_;
  Opcode reduction_;
  const std::vector<DeviceAxis>* axes_;  // the axes state_ is written over
  AxisState state_;
};

// Groups of devices along tile dim `dim` of a tiled sharding: devices that share every other
// tile index, ordered by their index along `dim`.
std::vector<std::vector<int64_t>> GroupsAlongTileDim(const TileAssignment& tiles, int64_t dim) {
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int64_t>>> by_rest;
  const std::vector<int64_t>& devices = tiles.Devices();
  std::vector<int64_t> index(tiles.num_dims(), 0);
  for (int64_t linear = 0; linear < tiles.num_elements(); ++linear) {
    std::vector<int64_t> rest = index;
    rest.erase(rest.begin() + dim);
    by_rest[rest].emplace_back(index[dim], devices[linear]);
    for (int64_t j = tiles.num_dims() - 1; j >= 0; --j) {
      if (++index[j] < tiles.dim(j)) break;
      index[j] = 0;
    }
  }
  std::vector<std::vector<int64_t>> groups;
  for (auto& [rest, members] : by_rest) {
    std::sort(members.begin(), members.end());
    std::vector<int64_t> group;
    for (const auto& member : members) group.push_back(member.second);
    groups.push_back(std::move(group));
  }
  return groups;
}

// Replicates a tiled value with one all-gather per sharded dim.
Instruction* GatherAll(SpmdContext& context, HloBuilder& b, Instruction* current,
                       const Shape& global, const Sharding& sharding) {
  if (!sharding.IsTiled()) return current;
  const TileAssignment& tiles = sharding.tile_assignment();
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) {
    if (tiles.dim(d) == 1) continue;
    auto groups = GroupsAlongTileDim(tiles, d);
    current = context.collectives().AllGather(b, current, d, context.collectives().GroupsFromList(groups),
                                              tiles.dim(d));
  }
  return b.SliceToSize(current, global.dims());
}

// Slices a replicated value into `sharding`'s per-device pieces.
Instruction* SliceFromReplicated(SpmdContext& context, HloBuilder& b, Instruction* current,
                                 const Shape& global, const Sharding& sharding) {
  if (!sharding.IsTiled()) return current;
  std::vector<int64_t> shard = ShardDimsOf(sharding, global.dims());
  std::vector<int64_t> padded = global.dims();
  bool sliced = false;
  for (int64_t d = 0; d < global.rank(); ++d) {
    int64_t tiles = sharding.tile_assignment().dim(d);
    padded[d] = shard[d] * tiles;
    sliced = sliced || tiles > 1;
  }
  if (!sliced) return current;
  current = b.PadToSize(current, padded, Zero(b, global.element_type()));
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < global.rank(); ++d) starts.push_back(ShardOffset(b, context, sharding, global.dims(), d));
  return b.DynamicSlice(current, starts, shard);
}

bool SameTileCounts(const Sharding& a, const Sharding& b) {
  return a.IsTiled() && b.IsTiled() && a.tile_assignment().dims() == b.tile_assignment().dims() &&
         a.subgroup_types() == b.subgroup_types();
}

// A collective-permute between two tilings with the same tile counts and other device orders.
Instruction* PermuteTiles(SpmdContext& context, HloBuilder& b, Instruction* current,
                          const Sharding& from, const Sharding& to) {
  int64_t rank = from.TiledDataRank();
  std::map<std::vector<int64_t>, std::vector<int64_t>> holders;
  auto data_index = [&](const Sharding& sharding, int64_t device) {
    std::vector<int64_t> index = *sharding.tile_assignment().IndexOf(device);
    index.resize(rank);
    return index;
  };
  for (int64_t p = 0; p < context.num_devices(); ++p) holders[data_index(from, p)].push_back(p);
  std::vector<int64_t> source_of(context.num_devices(), -1);
  std::vector<bool> used(context.num_devices(), false);
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t q = 0; q < context.num_devices(); ++q) {
      if (source_of[q] >= 0) continue;
      for (int64_t p : holders[data_index(to, q)]) {
        if (used[p] || (pass == 0 && p != q)) continue;
        source_of[q] = p;
        used[p] = true;
        break;
      }
    }
  }
  // Right after another permutation of every device's value (a plan's last step), send from
  // where that one took its data instead: one collective-permute, not two.
  if (current->opcode() == Opcode::kCollectivePermute &&
      static_cast<int64_t>(current->source_target_pairs().size()) == context.num_devices()) {
    std::vector<int64_t> earlier(context.num_devices(), -1);
    for (const SourceTargetPair& pair : current->source_target_pairs()) earlier[pair.target] = pair.source;
    if (std::find(earlier.begin(), earlier.end(), -1) == earlier.end()) {
      for (int64_t q = 0; q < context.num_devices(); ++q) source_of[q] = earlier[source_of[q]];
      current = current->operand(0);
    }
  }
  std::vector<SourceTargetPair> pairs;
  bool identity = true;
  for (int64_t q = 0; q < context.num_devices(); ++q) {
    GSPMD_CHECK(source_of[q] >= 0, "no source tile for device ", q);
    pairs.push_back({source_of[q], q});
    identity = identity && source_of[q] == q;
  }
  if (identity) return current;
  return context.collectives().CollectivePermute(b, current, std::move(pairs));
}

bool CoversAllDevices(const Sharding& sharding, int64_t num_devices) {
  return !sharding.IsTiled() || sharding.tile_assignment().num_elements() == num_devices;
}

// The same tiling with the devices in iota order, which always decomposes into device axes.
Sharding InIotaOrder(const Sharding& sharding) {
  return Sharding::Tiled(TileAssignment::Iota(sharding.tile_assignment().dims()), sharding.subgroup_types());
}

// A tiled sharding over all devices whose device order is not a product of mesh axes, so the
// planner cannot move it; one collective-permute gives it in iota order.
bool NeedsIotaDetour(SpmdContext& context, const Sharding& sharding, int64_t rank) {
  return sharding.IsTiled() && CoversAllDevices(sharding, context.num_devices()) &&
         !context.Axes(sharding, rank).has_value() && context.Axes(InIotaOrder(sharding), rank).has_value();
}

// The same tiling in a device order whose axes refine with `other`'s (the tile dims taken as
// device-id digits in some order), so that the planner can move between them; nullopt when
// no order of the tile dims does. E.g. on 6 devices, [3,2] tiles against a [2,3] mesh.
std::optional<Sharding> OrderedToMatch(SpmdContext& context, const Sharding& sharding, int64_t rank,
                                       const AxisSharding& other) {
  if (!sharding.IsTiled() || !CoversAllDevices(sharding, context.num_devices())) return std::nullopt;
  const std::vector<int64_t>& dims = sharding.tile_assignment().dims();
  std::vector<int64_t> order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  do {
    std::vector<int64_t> digits, inverse(dims.size());
    for (size_t i = 0; i < order.size(); ++i) {
      digits.push_back(dims[order[i]]);
      inverse[order[i]] = static_cast<int64_t>(i);
    }
    Sharding candidate = Sharding::Tiled(TileAssignment::Iota(dims, digits, inverse), sharding.subgroup_types());
    const std::optional<AxisSharding>& axes = context.Axes(candidate, rank);
    if (axes && RefineToCommonAxes(*axes, other)) return candidate;
  } while (std::next_permutation(order.begin(), order.end()));
  return std::nullopt;
}

// The cuts that make each partial axis a run of whole axes of a decomposed sharding.
std::vector<int64_t> PartialBounds(const std::vector<DeviceAxis>& partial_axes) {
  std::vector<int64_t> bounds;
  for (const DeviceAxis& axis : partial_axes) {
    bounds.push_back(axis.stride);
    bounds.push_back(axis.stride * axis.size);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  return bounds;
}

// All-reduces the unreduced subgroup of `sharding` (whatever its device order): the value in
// sharding.WithoutUnreduced().
Instruction* ReduceUnreducedGroups(SpmdContext& context, HloBuilder& b, Instruction* local, const Sharding& sharding) {
  const auto& types = sharding.subgroup_types();
  const int64_t data_rank = sharding.TiledDataRank();
  for (size_t s = 0; s < types.size(); ++s) {
    if (types[s] != Sharding::SubgroupType::kUnreduced) continue;
    auto groups = GroupsAlongTileDim(sharding.tile_assignment(), data_rank + static_cast<int64_t>(s));
    local = context.collectives().AllReduce(b, local, context.collectives().GroupsFromList(groups),
                                            ReductionOpcode(sharding.partial_reduction()));
  }
  return local;
}

PartitionedValue ReshardArray(SpmdContext& context, HloBuilder& b, Instruction* local,
                              const Shape& global, const Sharding& source_in,
                              const std::vector<DeviceAxis>& partial_axes, Opcode reduction,
                              const Sharding& target_in);

// A reshard where the source or the target is a partial sum (unreduced axes): the planner
// reduces what the target does not keep pending (all-reduce, or reduce-scatter where the
// target splits those axes) and moves the rest; axes the target keeps unreduced are left
// alone. When that does not apply: reduce everything, then make the target's unreduced axes
// partial again by masking.
PartitionedValue ReshardPartial(SpmdContext& context, HloBuilder& b, Instruction* local, const Shape& global,
                                const Sharding& source, const std::vector<DeviceAxis>& partial_axes,
                                Opcode reduction, const Sharding& target, const Sharding& target_in) {
  GSPMD_CHECK(partial_axes.empty() || !source.HasUnreduced(), "a value partial twice over");
  const Sharding::Reduction pending = source.HasUnreduced()
                                          ? source.partial_reduction()
                                          : ReductionOfOpcode(reduction).value_or(Sharding::Reduction::kSum);
  const bool nothing_pending = partial_axes.empty() && !source.HasUnreduced();
  const bool same_reduction = nothing_pending || !target.HasUnreduced() || pending == target.partial_reduction();
  const int64_t rank = global.rank();
  const auto& source_axes = context.Axes(source, rank);
  const auto& target_axes = context.Axes(target, rank);
  if (source_axes && target_axes && same_reduction) {
    ReshardProblem problem{global.dims(), ElementByteSize(global.element_type()),
                           SplitAxesAt(*source_axes, PartialBounds(partial_axes)), *target_axes, partial_axes,
                           !IsComplex(global.element_type())};
    if (std::optional<PartialReshard> rewritten = PlanKeepingUnreducedAxes(problem)) {
      if (const auto& plan = context.Plan(rewritten->problem)) {
        Instruction* current =
            MaskToOneDevicePerGroup(b, context, local, rewritten->mask_axes, target.partial_reduction());
        PlanEmitter emitter(context, b, *plan, global, ReductionOpcode(pending));
        return {emitter.Emit(current), global, target_in};
      }
    }
  }
  Sharding whole_source = source.WithoutUnreduced();
  Instruction* current = source.HasUnreduced() ? ReduceUnreducedGroups(context, b, local, source) : local;
  PartitionedValue whole = ReshardArray(context, b, current, global, whole_source, partial_axes, reduction,
                                        target.WithoutUnreduced());
  if (!target.HasUnreduced()) return {whole.hlo, global, target_in};
  const auto& axes = context.Axes(target, rank);
  GSPMD_CHECK(axes.has_value(), "unreduced sharding ", target.ToString(), " is not a product of device axes");
  return {MaskToOneDevicePerGroup(b, context, whole.hlo, axes->unreduced, target.partial_reduction()), global,
          target_in};
}

PartitionedValue ReshardArray(SpmdContext& context, HloBuilder& b, Instruction* local,
                              const Shape& global, const Sharding& source_in,
                              const std::vector<DeviceAxis>& partial_axes, Opcode reduction,
                              const Sharding& target_in) {
  Sharding source = Normalize(source_in);
  Sharding target = Normalize(target_in);
  if (source.HasUnreduced() || target.HasUnreduced()) {
    if (partial_axes.empty() && source == target) return {local, global, target_in};
    return ReshardPartial(context, b, local, global, source, partial_axes, reduction, target, target_in);
  }
  if (partial_axes.empty() && source == target) return {local, global, target_in};
  int64_t rank = global.rank();
  const auto& source_axes = context.Axes(source, rank);
  const auto& target_axes = context.Axes(target, rank);
  if (source_axes && target_axes) {
    // The partial axes may be parts of one decomposed replicated axis: cut it at their bounds.
    std::vector<int64_t> partial_bounds;
    for (const DeviceAxis& axis : partial_axes) {
      partial_bounds.push_back(axis.stride);
      partial_bounds.push_back(axis.stride * axis.size);
    }
    std::sort(partial_bounds.begin(), partial_bounds.end());
    partial_bounds.erase(std::unique(partial_bounds.begin(), partial_bounds.end()), partial_bounds.end());
    ReshardProblem problem{global.dims(), ElementByteSize(global.element_type()),
                           SplitAxesAt(*source_axes, partial_bounds), *target_axes, partial_axes,
                           !IsComplex(global.element_type())};
    if (const auto& plan = context.Plan(problem)) {
      PlanEmitter emitter(context, b, *plan, global, reduction);
      return {emitter.Emit(local), global, target_in};
    }
  }
  Instruction* current = local;
  if (!partial_axes.empty()) {
    current = context.collectives().AllReduce(b, current, context.collectives().GroupsOverAxes(partial_axes),
                                              reduction);
  }
  if (SameTileCounts(source, target) && CoversAllDevices(source, context.num_devices()) &&
      CoversAllDevices(target, context.num_devices())) {
    return {PermuteTiles(context, b, current, source, target), global, target_in};
  }
  // Device orders the planner cannot relate: permute the source into an order that matches the
  // target's axes (or the target's order from one that matches the source's) around a plan;
  // into iota order when neither side decomposes into axes.
  if (target_axes && (!source_axes || !RefineToCommonAxes(*source_axes, *target_axes))) {
    if (std::optional<Sharding> ordered = OrderedToMatch(context, source, rank, *target_axes)) {
      current = PermuteTiles(context, b, current, source, *ordered);
      return ReshardArray(context, b, current, global, *ordered, {}, reduction, target_in);
    }
  }
  if (source_axes && !target_axes) {
    if (std::optional<Sharding> ordered = OrderedToMatch(context, target, rank, *source_axes)) {
      PartitionedValue planned = ReshardArray(context, b, current, global, source, {}, reduction, *ordered);
      return {PermuteTiles(context, b, planned.hlo, *ordered, target), global, target_in};
    }
  }
  if (NeedsIotaDetour(context, source, rank)) {
    Sharding ordered = InIotaOrder(source);
    current = PermuteTiles(context, b, current, source, ordered);
    return ReshardArray(context, b, current, global, ordered, {}, reduction, target_in);
  }
  if (NeedsIotaDetour(context, target, rank)) {
    Sharding ordered = InIotaOrder(target);
    PartitionedValue planned = ReshardArray(context, b, current, global, source, {}, reduction, ordered);
    return {PermuteTiles(context, b, planned.hlo, ordered, target), global, target_in};
  }
  if (!source.IsReplicated() && !source.IsManual()) {
    context.Warn(StrCat("involuntary full rematerialization of %", local->name(), ": ",
                        source.ToString(), " -> ", target.ToString()));
  }
  current = GatherAll(context, b, current, global, source);
  current = SliceFromReplicated(context, b, current, global, target);
  return {current, global, target_in};
}

}  // namespace

PartitionedValue Reshard(SpmdContext& context, HloBuilder& b, const PartitionedValue& value,
                         const Sharding& target) {
  if (value.global_shape.IsTuple()) {
    GSPMD_CHECK(target.IsTuple() || !target.IsTiled(), "tuple resharded to a tiled sharding");
    std::vector<Instruction*> elements;
    std::vector<Sharding> element_shardings;
    for (int64_t i = 0; i < value.global_shape.tuple_size(); ++i) {
      Sharding from = value.sharding.IsTuple() ? value.sharding.tuple_elements()[i] : value.sharding;
      Sharding to = target.IsTuple() ? target.tuple_elements()[i] : target;
      PartitionedValue element{b.GetTupleElement(value.hlo, i), value.global_shape.tuple_shape(i), from};
      PartitionedValue moved = Reshard(context, b, element, to);
      elements.push_back(moved.hlo);
      element_shardings.push_back(to);
    }
    bool unchanged = value.sharding == target;
    if (unchanged) return {value.hlo, value.global_shape, target};
    return {b.Tuple(elements), value.global_shape, Sharding::Tuple(element_shardings)};
  }
  if (!value.global_shape.IsArray()) return {value.hlo, value.global_shape, target};
  return ReshardArray(context, b, value.hlo, value.global_shape, value.sharding, {}, Opcode::kAdd, target);
}

PartitionedValue ResolvePartialSums(SpmdContext& context, HloBuilder& b, Instruction* local,
                                    const Shape& global_shape, const Sharding& sharding,
                                    const std::vector<DeviceAxis>& partial_axes, Opcode reduction,
                                    const Sharding& target) {
  const auto& kept = context.kept_partial();
  if (kept && target == kept->whole && ReductionOfOpcode(reduction) == kept->partial.partial_reduction())
    return ReshardArray(context, b, local, global_shape, sharding, partial_axes, reduction, kept->partial);
  return ReshardArray(context, b, local, global_shape, sharding, partial_axes, reduction, target);
}

Instruction* ShardOffset(HloBuilder& b, SpmdContext& context, const Sharding& sharding,
                         const std::vector<int64_t>& global_dims, int64_t dim) {
  if (!sharding.IsTiled() || sharding.tile_assignment().dim(dim) == 1) return b.S32Constant(0);
  std::vector<int64_t> key = global_dims;
  key.push_back(dim);
  return context.Memoized(b, "shard-offset", sharding, key, [&] {
    int64_t tiles = sharding.tile_assignment().dim(dim);
    int64_t piece = ShardSize(global_dims[dim], tiles);
    const std::optional<AxisSharding>& axes = context.Axes(sharding, static_cast<int64_t>(global_dims.size()));
    if (axes) return AxisOffset(b, axes->dims[dim], piece, context.num_devices());
    std::vector<int64_t> table(context.num_devices(), 0);
    for (int64_t p = 0; p < context.num_devices(); ++p) {
      auto index = sharding.tile_assignment().IndexOf(p);
      if (index) table[p] = (*index)[dim] * piece;
    }
    return b.TableLookup(table);
  });
}

bool HasUnevenPadding(const Sharding& sharding, const std::vector<int64_t>& global_dims) {
  if (!sharding.IsTiled()) return false;
  for (size_t d = 0; d < global_dims.size(); ++d)
    if (global_dims[d] % sharding.tile_assignment().dim(d) != 0) return true;
  return false;
}

Instruction* MaskPadding(HloBuilder& b, SpmdContext& context, Instruction* shard,
                         const Shape& global_shape, const Sharding& sharding, Instruction* pad_value) {
  if (!HasUnevenPadding(sharding, global_shape.dims())) return shard;
  std::vector<int64_t> dims = shard->shape().dims();
  std::vector<int64_t> key = dims;
  key.insert(key.end(), global_shape.dims().begin(), global_shape.dims().end());
  // The mask depends only on the shapes and the sharding: built once per computation.
  Instruction* valid = context.Memoized(b, "valid-mask", sharding, key, [&] {
    Instruction* mask = nullptr;
    for (int64_t d = 0; d < global_shape.rank(); ++d) {
      if (global_shape.dim(d) % sharding.tile_assignment().dim(d) == 0) continue;
      Instruction* iota = b.Iota(Shape(ElementType::kS32, dims), d);
      Instruction* offset = b.BroadcastScalar(ShardOffset(b, context, sharding, global_shape.dims(), d), dims);
      Instruction* position = b.Binary(Opcode::kAdd, iota, offset);
      Instruction* limit = b.BroadcastScalar(b.S32Constant(global_shape.dim(d)), dims);
      Instruction* in_range = b.Compare(position, limit, ComparisonDirection::kLt);
      mask = mask ? b.Binary(Opcode::kAnd, mask, in_range) : in_range;
    }
    return mask;
  });
  return b.Select(valid, shard, b.BroadcastScalar(pad_value, dims));
}

}  // namespace gspmd
