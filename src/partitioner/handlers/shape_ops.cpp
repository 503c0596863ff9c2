// Shape-op dispatch (PartitionShapeOp) and the sharding/table helpers the shape-op handlers share.
#include "partitioner/handlers/shape_ops.h"

#include <algorithm>
#include <map>

#include "support/diagnostic.h"

namespace gspmd {
namespace shape_ops {

Sharding RemapSharding(const Sharding& sharding, const std::vector<int64_t>& source_dim_of) {
  if (!sharding.IsTiled()) return sharding;
  const TileAssignment& tiles = sharding.tile_assignment();
  int64_t data_rank = sharding.TiledDataRank();
  std::vector<bool> mapped(data_rank, false);
  std::vector<int64_t> perm, new_dims;
  for (int64_t source : source_dim_of) {
    if (source < 0) {
      new_dims.push_back(1);
      continue;
    }
    GSPMD_CHECK(source < data_rank && !mapped[source], "bad dim map for sharding ", sharding.ToString());
    mapped[source] = true;
    perm.push_back(source);
    new_dims.push_back(tiles.dim(source));
  }
  int64_t replicated = 1;
  for (int64_t d = 0; d < data_rank; ++d) {
    if (mapped[d]) continue;
    perm.push_back(d);
    replicated *= tiles.dim(d);
  }
  std::vector<Sharding::SubgroupType> types;
  const auto& subgroups = sharding.subgroup_types();
  for (size_t s = 0; s < subgroups.size(); ++s) {
    if (subgroups[s] != Sharding::SubgroupType::kManual) continue;
    perm.push_back(data_rank + static_cast<int64_t>(s));
    new_dims.push_back(tiles.dim(data_rank + static_cast<int64_t>(s)));
    types.push_back(Sharding::SubgroupType::kManual);
  }
  for (size_t s = 0; s < subgroups.size(); ++s) {
    if (subgroups[s] != Sharding::SubgroupType::kReplicated) continue;
    perm.push_back(data_rank + static_cast<int64_t>(s));
    replicated *= tiles.dim(data_rank + static_cast<int64_t>(s));
  }
  bool any_data_tiles = std::any_of(new_dims.begin(), new_dims.begin() + source_dim_of.size(),
                                    [](int64_t n) { return n > 1; });
  if (!any_data_tiles && types.empty()) return Sharding::Replicated();
  if (replicated > 1) {
    new_dims.push_back(replicated);
    types.push_back(Sharding::SubgroupType::kReplicated);
  }
  if (new_dims.empty()) new_dims.push_back(1);
  TileAssignment result = tiles.Transpose(perm).Reshape(new_dims);
  if (replicated > 1) result = result.SortedAlongLastDim();
  return Sharding::Tiled(std::move(result), std::move(types));
}

Sharding LocalTarget(const Sharding& sharding) {
  if (sharding.IsMaximal() || sharding.IsUnknown()) return Sharding::Replicated();
  return sharding;
}

Sharding ReplicateDims(const Sharding& sharding, int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> map(rank);
  for (int64_t d = 0; d < rank; ++d) map[d] = d;
  for (int64_t d : dims) map[d] = -1;
  return RemapSharding(sharding, map);
}

int64_t TileCountOf(const Sharding& sharding, int64_t dim) {
  if (!sharding.IsTiled()) return 1;
  return sharding.tile_assignment().dim(dim);
}

Instruction* LookupOrConstant(HloBuilder& b, const std::vector<int64_t>& table) {
  GSPMD_CHECK(!table.empty(), "empty table");
  bool uniform = std::all_of(table.begin(), table.end(), [&](int64_t v) { return v == table[0]; });
  if (uniform) return b.S32Constant(table[0]);
  return b.TableLookup(table);
}

Instruction* SliceAlongDim(HloBuilder& b, Instruction* operand, int64_t dim, const std::vector<int64_t>& starts,
                      int64_t size) {
  const Shape& shape = operand->shape();
  bool uniform = std::all_of(starts.begin(), starts.end(), [&](int64_t v) { return v == starts[0]; });
  if (uniform) {
    if (starts[0] == 0 && size == shape.dim(dim)) return operand;
    std::vector<gspmd::SliceDim> slice;
    for (int64_t d = 0; d < shape.rank(); ++d)
      slice.push_back(d == dim ? gspmd::SliceDim{starts[0], starts[0] + size, 1} : gspmd::SliceDim{0, shape.dim(d), 1});
    return b.Slice(operand, std::move(slice));
  }
  Instruction* zero = b.S32Constant(0);
  std::vector<Instruction*> offsets(shape.rank(), zero);
  offsets[dim] = b.TableLookup(starts);
  std::vector<int64_t> sizes = shape.dims();
  sizes[dim] = size;
  return b.DynamicSlice(operand, offsets, sizes);
}

std::optional<double> ReshardCost(SpmdContext& context, const Shape& shape, const Sharding& from,
                                  const Sharding& to) {
  if (from == to) return 0.0;
  if (!from.IsTiled() && !from.IsReplicated()) return std::nullopt;
  if (!to.IsTiled() && !to.IsReplicated()) return std::nullopt;
  const auto& from_axes = context.Axes(from, shape.rank());
  const auto& to_axes = context.Axes(to, shape.rank());
  if (!from_axes || !to_axes) return std::nullopt;
  ReshardProblem problem{shape.dims(), ElementByteSize(shape.element_type()), *from_axes, *to_axes, {}};
  const auto& plan = context.Plan(problem);
  if (!plan) return std::nullopt;
  return plan->total_cost_bytes;
}

double SlabBytes(const Sharding& sharding, const Shape& shape, int64_t dim) {
  std::vector<int64_t> dims = ShardDimsOf(sharding, shape.dims());
  double bytes = static_cast<double>(ElementByteSize(shape.element_type()));
  for (size_t d = 0; d < dims.size(); ++d)
    if (static_cast<int64_t>(d) != dim) bytes *= static_cast<double>(dims[d]);
  return bytes;
}

DimLines LinesAlongDim(const Sharding& sharding, int64_t dim, int64_t num_devices) {
  DimLines out;
  out.tile_of_device.assign(num_devices, 0);
  if (!sharding.IsTiled()) {
    for (int64_t p = 0; p < num_devices; ++p) out.lines.push_back({p});
    return out;
  }
  const TileAssignment& tiles = sharding.tile_assignment();
  out.tiles = tiles.dim(dim);
  std::map<std::vector<int64_t>, std::vector<int64_t>> by_rest;
  std::vector<int64_t> index(tiles.num_dims(), 0);
  for (int64_t linear = 0; linear < tiles.num_elements(); ++linear) {
    std::vector<int64_t> rest = index;
    rest.erase(rest.begin() + dim);
    auto& line = by_rest[rest];
    if (line.empty()) line.assign(out.tiles, -1);
    int64_t device = tiles.DeviceAtLinear(linear);
    line[index[dim]] = device;
    if (device < num_devices) out.tile_of_device[device] = index[dim];
    for (int64_t j = tiles.num_dims() - 1; j >= 0; --j) {
      if (++index[j] < tiles.dim(j)) break;
      index[j] = 0;
    }
  }
  for (auto& [rest, line] : by_rest) out.lines.push_back(std::move(line));
  return out;
}

std::vector<std::vector<int64_t>> GroupsAcrossDims(const Sharding& sharding, const std::vector<int64_t>& dims) {
  GSPMD_CHECK(sharding.IsTiled(), "groups across dims of a non-tiled sharding");
  const TileAssignment& tiles = sharding.tile_assignment();
  std::map<std::vector<int64_t>, std::vector<int64_t>> by_rest;
  std::vector<int64_t> index(tiles.num_dims(), 0);
  for (int64_t linear = 0; linear < tiles.num_elements(); ++linear) {
    std::vector<int64_t> rest = index;
    for (int64_t d : dims) rest[d] = 0;
    by_rest[rest].push_back(tiles.DeviceAtLinear(linear));
    for (int64_t j = tiles.num_dims() - 1; j >= 0; --j) {
      if (++index[j] < tiles.dim(j)) break;
      index[j] = 0;
    }
  }
  std::vector<std::vector<int64_t>> groups;
  for (auto& [rest, group] : by_rest) {
    std::sort(group.begin(), group.end());
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

}  // namespace shape_ops

bool PartitionShapeOp(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (!instruction.shape().IsArray() || op.sharding().IsTuple()) return false;
  switch (instruction.opcode()) {
    case Opcode::kBroadcast: return shape_ops::PartitionBroadcast(op);
    case Opcode::kIota: return shape_ops::PartitionIota(op);
    case Opcode::kTranspose: return shape_ops::PartitionTranspose(op);
    case Opcode::kReverse: return shape_ops::PartitionReverse(op);
    case Opcode::kReshape: return shape_ops::PartitionReshape(op);
    case Opcode::kSlice: return shape_ops::PartitionSlice(op);
    case Opcode::kPad: return shape_ops::PartitionPad(op);
    case Opcode::kConcatenate: return shape_ops::PartitionConcatenate(op);
    case Opcode::kDynamicSlice: return shape_ops::PartitionDynamicSlice(op);
    case Opcode::kDynamicUpdateSlice: return shape_ops::PartitionDynamicUpdateSlice(op);
    default: return false;
  }
}

}  // namespace gspmd
