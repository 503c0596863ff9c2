// Manual regions: ops already written per device are cloned as they are; values enter and
// leave the region through agreeing full/local shardings.
#include "partitioner/manual.h"

#include <algorithm>
#include <map>

#include "ir/instruction_error.h"
#include "partitioner/computation_partitioner.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool IsUserCollective(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllReduce: case Opcode::kAllGather: case Opcode::kReduceScatter:
    case Opcode::kAllToAll: case Opcode::kCollectivePermute: case Opcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

// Ops whose called computations are partitioned with the op (control_flow.cpp).
bool PartitionsCalledComputations(Opcode opcode) {
  return opcode == Opcode::kWhile || opcode == Opcode::kConditional || opcode == Opcode::kCall;
}

Sharding ReplicatedFor(const Shape& shape) {
  if (!shape.IsTuple()) return Sharding::Replicated();
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(ReplicatedFor(element));
  return Sharding::Tuple(std::move(elements));
}

// Which manual group `device` belongs to under `local`: devices of one group hold pieces
// of the same local value. {manual}: every device is its own group.
int64_t ManualGroupOf(const Sharding& local, int64_t device) {
  if (local.IsManual()) return device;
  if (!local.IsTiled()) return 0;
  std::optional<std::vector<int64_t>> index = local.tile_assignment().IndexOf(device);
  if (!index) return -1;
  int64_t group = 0;
  int64_t data_rank = local.TiledDataRank();
  const auto& types = local.subgroup_types();
  for (size_t s = 0; s < types.size(); ++s) {
    if (types[s] != Sharding::SubgroupType::kManual) continue;
    int64_t dim = data_rank + static_cast<int64_t>(s);
    group = group * local.tile_assignment().dim(dim) + (*index)[dim];
  }
  return group;
}

bool CoversDevices(const Sharding& sharding, int64_t num_devices) {
  if (sharding.IsTuple()) return false;
  return !sharding.IsTiled() || sharding.tile_assignment().num_elements() == num_devices;
}

// The layout in which every device holds its manual group's whole (local) value: the
// sharding's manual axes kept, its data dims gathered.
Sharding WholeLocalValue(SpmdContext& context, const Sharding& sharding, const Shape& shape) {
  if (shape.IsTuple()) {
    if (IsFullyManual(sharding)) return sharding;
    return ReplicatedFor(shape);
  }
  if (IsFullyManual(sharding) || !HasManualAxes(sharding) || !shape.IsArray()) {
    return IsFullyManual(sharding) ? sharding : Sharding::Replicated();
  }
  const auto& axes = context.Axes(sharding, shape.rank());
  if (!axes) return Sharding::Replicated();
  AxisSharding whole = *axes;
  for (auto& dim : whole.dims) {
    whole.replicated.insert(whole.replicated.end(), dim.begin(), dim.end());
    dim.clear();
  }
  std::sort(whole.replicated.begin(), whole.replicated.end());
  return whole.ToSharding();
}

// Splits every manual axis into prime-sized digits, so any divisor of the manual device
// count can be taken as a run of them.
AxisSharding SplitManualAxesIntoPrimes(const AxisSharding& axes) {
  std::vector<int64_t> boundaries;
  for (const DeviceAxis& axis : axes.manual) {
    int64_t rest = axis.size, bound = axis.stride;
    for (int64_t factor = 2; rest > 1; ++factor) {
      while (rest % factor == 0) {
        rest /= factor;
        bound *= factor;
        if (rest > 1) boundaries.push_back(bound);
      }
    }
  }
  std::sort(boundaries.begin(), boundaries.end());
  return SplitAxesAt(axes, boundaries);
}

// A partially manual op written by the user (a collective over manual axes): runs on each
// device's piece of the free axes, with the dims it gathers/scatters kept whole.
// A partially manual all-reduce may only combine devices that differ in their manual index
// alone (one tile of the data, as XLA checks): e.g. under {devices=[2,1,2]0,2,1,3
// last_tile_dims={manual}} groups {0,2},{1,3} are fine and {0,1},{2,3} are an error.
void CheckAllReduceStaysInManualSubgroups(const Instruction& instruction, const Sharding& sharding,
                                          int64_t num_devices) {
  // No groups written: XLA checks nothing either.
  if (instruction.opcode() != Opcode::kAllReduce || !sharding.IsTiled() || instruction.replica_groups().empty()) return;
  const TileAssignment& tiles = sharding.tile_assignment();
  const int64_t data_rank = sharding.TiledDataRank();
  const auto& types = sharding.subgroup_types();
  auto tile_of = [&](int64_t device) -> std::optional<std::vector<int64_t>> {
    std::optional<std::vector<int64_t>> index = tiles.IndexOf(device);
    if (!index) return std::nullopt;
    std::vector<int64_t> tile;
    for (size_t d = 0; d < index->size(); ++d) {
      bool manual = static_cast<int64_t>(d) >= data_rank &&
                    types[d - static_cast<size_t>(data_rank)] == Sharding::SubgroupType::kManual;
      if (!manual) tile.push_back((*index)[d]);
    }
    return tile;
  };
  for (const std::vector<int64_t>& group : instruction.replica_groups().Groups(num_devices)) {
    if (group.empty()) continue;
    std::optional<std::vector<int64_t>> first = tile_of(group[0]);
    for (int64_t device : group) {
      if (tile_of(device) == first) continue;
      ThrowInstructionError(instruction, StrCat("all-reduce combines devices ", group[0], " and ", device,
                                                ", which belong to different manual subgroups of ",
                                                sharding.ToString(), ": expected each replica group to hold ",
                                                "devices of one manual subgroup"));
    }
  }
}

bool PartitionManualSubgroupCollective(OpContext& op) {
  const Instruction& instruction = op.instruction();
  CheckAllReduceStaysInManualSubgroups(instruction, op.sharding(), op.spmd().num_devices());
  if (instruction.operand_count() != 1 || !instruction.shape().IsArray()) return false;
  int64_t rank = instruction.shape().rank();
  const auto& axes = op.spmd().Axes(op.sharding(), rank);
  if (!axes) return false;
  AxisSharding sharding = *axes;
  Opcode opcode = instruction.opcode();
  bool works_on_a_dim = opcode == Opcode::kAllGather || opcode == Opcode::kReduceScatter ||
                        opcode == Opcode::kAllToAll;
  if (works_on_a_dim) {
    for (int64_t dim : instruction.dimensions) {
      if (dim < 0 || dim >= rank) return false;
      auto& moved = sharding.dims[dim];
      sharding.replicated.insert(sharding.replicated.end(), moved.begin(), moved.end());
      moved.clear();
    }
    std::sort(sharding.replicated.begin(), sharding.replicated.end());
  }
  Sharding target = sharding.ToSharding();
  Instruction* operand = op.OperandWith(0, target);
  op.SetResult(op.Clone(ShardShapeOf(target, instruction.shape()), {operand}), target);
  return true;
}

}  // namespace

bool IsFullyManual(const Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (sharding.IsTuple()) {
    const auto& elements = sharding.tuple_elements();
    return !elements.empty() && std::all_of(elements.begin(), elements.end(), IsFullyManual);
  }
  if (!sharding.IsTiled() || !HasManualAxes(sharding)) return false;
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d)
    if (sharding.tile_assignment().dim(d) != 1) return false;
  return true;
}

bool HasManualAxes(const Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (!sharding.IsTiled()) return false;
  const auto& types = sharding.subgroup_types();
  return std::find(types.begin(), types.end(), Sharding::SubgroupType::kManual) != types.end();
}

bool ManualPiecesAgree(const Sharding& full, const Shape& global_shape, const Sharding& local,
                       const Shape& local_shape, int64_t num_devices) {
  if (!global_shape.IsArray() || !local_shape.IsArray()) return false;
  if (global_shape.rank() != local_shape.rank()) return false;
  if (!CoversDevices(full, num_devices) || !CoversDevices(local, num_devices)) return false;
  if (HasManualAxes(full)) return false;
  if (full.IsTiled() && full.TiledDataRank() != global_shape.rank()) return false;
  if (local.IsTiled() && local.TiledDataRank() != local_shape.rank()) return false;
  int64_t rank = global_shape.rank();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t l = local_shape.dim(d), g = global_shape.dim(d);
    if (l == 0 ? g != 0 : g % l != 0) return false;
  }
  std::map<int64_t, std::vector<int64_t>> block_of_group;
  for (int64_t device = 0; device < num_devices; ++device) {
    Sharding::ShardRegion full_region = full.RegionForDevice(global_shape, device);
    Sharding::ShardRegion local_region = local.RegionForDevice(local_shape, device);
    if (full_region.padded_sizes != local_region.padded_sizes) return false;
    std::vector<int64_t> block(rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t l = local_shape.dim(d);
      if (l == 0) continue;
      block[d] = full_region.offsets[d] / l;
      if (full_region.offsets[d] % l != local_region.offsets[d]) return false;
    }
    auto [it, inserted] = block_of_group.emplace(ManualGroupOf(local, device), block);
    if (!inserted && it->second != block) return false;
  }
  return true;
}

std::optional<Sharding> FullShardingAgreeingWith(SpmdContext& context, const Sharding& local,
                                                 const Shape& local_shape, const Shape& global_shape,
                                                 const Sharding& preferred) {
  int64_t n = context.num_devices();
  if (ManualPiecesAgree(preferred, global_shape, local, local_shape, n)) return preferred;
  if (!local_shape.IsArray() || !global_shape.IsArray() || local_shape.rank() != global_shape.rank())
    return std::nullopt;
  int64_t rank = local_shape.rank();
  const auto& decomposed = context.Axes(local, rank);
  if (!decomposed) return std::nullopt;
  AxisSharding axes = SplitManualAxesIntoPrimes(*decomposed);
  std::vector<DeviceAxis> remaining(axes.manual.rbegin(), axes.manual.rend());  // major first
  AxisSharding full;
  full.dims.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t l = local_shape.dim(d), g = global_shape.dim(d);
    if (l == 0 ? g != 0 : g % l != 0) return std::nullopt;
    int64_t need = l == 0 ? 1 : g / l;
    std::vector<DeviceAxis> chosen;
    for (auto it = remaining.begin(); it != remaining.end() && need > 1;) {
      if (need % it->size != 0) {
        ++it;
        continue;
      }
      need /= it->size;
      chosen.push_back(*it);
      it = remaining.erase(it);
    }
    if (need != 1) return std::nullopt;
    full.dims[d] = chosen;
    full.dims[d].insert(full.dims[d].end(), axes.dims[d].begin(), axes.dims[d].end());
  }
  full.replicated = axes.replicated;
  full.replicated.insert(full.replicated.end(), remaining.begin(), remaining.end());
  std::sort(full.replicated.begin(), full.replicated.end());
  Sharding derived = full.ToSharding();
  if (!ManualPiecesAgree(derived, global_shape, local, local_shape, n)) return std::nullopt;
  return derived;
}

Instruction* EnterManualRegion(OpContext& op, int64_t operand, const Sharding& preferred,
                               const Sharding& local, const Shape& local_shape) {
  const Instruction& instruction = op.instruction();
  const Shape& global_shape = instruction.operand(operand)->shape();
  SpmdContext& context = op.spmd();
  // The requested layout says which piece each device's body gets (its collectives and
  // partition-id, and the layout the results leave in, depend on it), so it comes first even
  // when the operand as it is has pieces of the same shape elsewhere; then the operand as it is
  // (it costs nothing); then a derived layout.
  std::optional<Sharding> full;
  const Sharding& current = op.Operand(operand).sharding;
  if (ManualPiecesAgree(preferred, global_shape, local, local_shape, context.num_devices())) full = preferred;
  if (!full && ManualPiecesAgree(current, global_shape, local, local_shape, context.num_devices())) full = current;
  if (!full) full = FullShardingAgreeingWith(context, local, local_shape, global_shape, preferred);
  if (!full) {
    GSPMD_USER_ERROR("%", instruction.name(), ": the local shape ", local_shape.ToString(), " under ",
                     local.ToString(), " is not a per-device piece of operand ", operand, " of shape ",
                     global_shape.ToString(), " under any sharding (tried ", preferred.ToString(), ")");
  }
  PartitionedValue value = op.OperandValueWith(operand, *full);
  Instruction* piece = value.hlo;
  if (HasUnevenPadding(*full, global_shape.dims())) {
    piece = MaskPadding(op.builder(), context, piece, global_shape, *full,
                        op.builder().ScalarConstant(global_shape.element_type(), 0));
  }
  return op.builder().Copy(piece);
}

PartitionedValue LeaveManualRegion(OpContext& op, const PartitionedValue& local, const Shape& global_shape,
                                   const Sharding& wanted) {
  const Instruction& instruction = op.instruction();
  Sharding local_sharding = HasManualAxes(local.sharding) ? local.sharding : Sharding::Manual();
  std::optional<Sharding> full =
      FullShardingAgreeingWith(op.spmd(), local_sharding, local.global_shape, global_shape, wanted);
  if (!full) {
    GSPMD_USER_ERROR("%", instruction.name(), ": the local value ", local.global_shape.ToString(), " under ",
                     local_sharding.ToString(), " is not a per-device piece of the result ",
                     global_shape.ToString(), " under ", wanted.ToString());
  }
  return PartitionedValue{op.builder().Copy(local.hlo), global_shape, *full};
}

bool PartitionManual(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (PartitionsCalledComputations(instruction.opcode())) return false;
  const Sharding& sharding = op.sharding();
  if (!IsFullyManual(sharding)) {
    bool partially_manual = HasManualAxes(sharding) && !sharding.IsTuple();
    if (partially_manual && IsUserCollective(instruction.opcode())) return PartitionManualSubgroupCollective(op);
    return false;
  }
  // Already per-device: the op is kept as written (user collectives keep their groups).
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const PartitionedValue& value = op.Operand(i);
    operands.push_back(op.OperandWith(i, WholeLocalValue(op.spmd(), value.sharding, value.global_shape)));
  }
  op.SetResult(op.Clone(instruction.shape(), operands), sharding);
  return true;
}

}  // namespace gspmd
