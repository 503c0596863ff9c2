// Creation of collectives, their replica groups and reducer computations.
#include "partitioner/collective_factory.h"

#include <algorithm>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// The axes of the device id space not in `axes`, filling the gaps of the mixed radix.
std::vector<DeviceAxis> ComplementAxes(std::vector<DeviceAxis> axes, int64_t num_devices) {
  std::sort(axes.begin(), axes.end());
  std::vector<DeviceAxis> complement;
  int64_t stride = 1;
  for (const DeviceAxis& axis : axes) {
    if (axis.stride > stride) complement.push_back({stride, axis.stride / stride});
    stride = axis.stride * axis.size;
  }
  if (stride < num_devices) complement.push_back({stride, num_devices / stride});
  return complement;
}

}  // namespace

ReplicaGroups CollectiveFactory::GroupsOverAxes(const std::vector<DeviceAxis>& axes) const {
  std::vector<DeviceAxis> others = ComplementAxes(axes, num_devices_);
  std::vector<DeviceAxis> all = others;
  all.insert(all.end(), axes.begin(), axes.end());
  std::vector<DeviceAxis> by_stride_desc = all;
  std::sort(by_stride_desc.begin(), by_stride_desc.end(),
            [](const DeviceAxis& a, const DeviceAxis& b) { return a.stride > b.stride; });
  std::vector<int64_t> reshape_dims, perm;
  for (const DeviceAxis& axis : by_stride_desc) reshape_dims.push_back(axis.size);
  // Rows: the other axes, most significant first; columns: `axes` in the given order.
  std::vector<DeviceAxis> listed = others;
  std::sort(listed.begin(), listed.end(), [](const DeviceAxis& a, const DeviceAxis& b) { return a.stride > b.stride; });
  listed.insert(listed.end(), axes.begin(), axes.end());
  for (const DeviceAxis& axis : listed)
    perm.push_back(std::find(by_stride_desc.begin(), by_stride_desc.end(), axis) - by_stride_desc.begin());
  int64_t group_size = 1;
  for (const DeviceAxis& axis : axes) group_size *= axis.size;
  if (reshape_dims.empty()) {
    reshape_dims = {1};
    perm = {0};
  }
  return ReplicaGroups::Iota(
      TileAssignment::Iota({num_devices_ / group_size, group_size}, reshape_dims, perm));
}

ReplicaGroups CollectiveFactory::GroupsFromList(const std::vector<std::vector<int64_t>>& groups) const {
  if (groups.empty()) return ReplicaGroups::Explicit(groups);
  int64_t rows = static_cast<int64_t>(groups.size());
  int64_t columns = static_cast<int64_t>(groups[0].size());
  std::vector<int64_t> devices;
  for (const auto& group : groups) {
    if (static_cast<int64_t>(group.size()) != columns) return ReplicaGroups::Explicit(groups);
    devices.insert(devices.end(), group.begin(), group.end());
  }
  if (rows * columns == num_devices_) {
    Sharding as_tiles = Sharding::Tiled(TileAssignment({rows, columns}, devices));
    if (auto axes = DecomposeSharding(as_tiles, 2, num_devices_)) {
      ReplicaGroups iota = GroupsOverAxes(axes->dims[1]);
      if (iota.Groups(num_devices_) == groups) return iota;
    }
  }
  return ReplicaGroups::Explicit(groups);
}

void CollectiveFactory::Stamp(Instruction* collective, bool global_device_ids) {
  collective->channel_id = next_channel_id_++;
  collective->use_global_device_ids = global_device_ids;
}

Instruction* CollectiveFactory::AllGather(HloBuilder& b, Instruction* operand, int64_t dim,
                                          const ReplicaGroups& groups, int64_t group_size) {
  std::vector<int64_t> dims = operand->shape().dims();
  dims[dim] *= group_size;
  Instruction* gather = b.AddOp(Opcode::kAllGather, Shape(operand->shape().element_type(), dims), {operand});
  gather->dimensions = {dim};
  gather->mutable_replica_groups() = groups;
  gather->has_replica_groups = true;
  Stamp(gather, true);
  return gather;
}

Instruction* CollectiveFactory::AllReduce(HloBuilder& b, Instruction* operand, const ReplicaGroups& groups,
                                          Opcode reduction) {
  Instruction* reduce = b.AddOp(Opcode::kAllReduce, operand->shape(), {operand});
  reduce->mutable_replica_groups() = groups;
  reduce->has_replica_groups = true;
  reduce->set_called_computations({Reducer(reduction, operand->shape().element_type())});
  Stamp(reduce, true);
  return reduce;
}

double ExactSumIdentity(ElementType type) { return IsFloatingPoint(type) ? -0.0 : 0.0; }

Instruction* CollectiveFactory::SumOfPieces(HloBuilder& b, Instruction* operand, const ReplicaGroups& groups) {
  return AllReduce(b, operand, groups, operand->shape().element_type() == ElementType::kPred ? Opcode::kOr : Opcode::kAdd);
}

Instruction* CollectiveFactory::ReduceScatter(HloBuilder& b, Instruction* operand, int64_t dim,
                                              const ReplicaGroups& groups, int64_t group_size,
                                              Opcode reduction) {
  std::vector<int64_t> dims = operand->shape().dims();
  GSPMD_CHECK(dims[dim] % group_size == 0, "reduce-scatter dim not divisible");
  dims[dim] /= group_size;
  Instruction* scatter =
      b.AddOp(Opcode::kReduceScatter, Shape(operand->shape().element_type(), dims), {operand});
  scatter->dimensions = {dim};
  scatter->mutable_replica_groups() = groups;
  scatter->has_replica_groups = true;
  scatter->set_called_computations({Reducer(reduction, operand->shape().element_type())});
  Stamp(scatter, true);
  return scatter;
}

Instruction* CollectiveFactory::AllToAll(HloBuilder& b, Instruction* operand, int64_t dim,
                                         const ReplicaGroups& groups) {
  Instruction* all_to_all = b.AddOp(Opcode::kAllToAll, operand->shape(), {operand});
  all_to_all->dimensions = {dim};
  all_to_all->mutable_replica_groups() = groups;
  all_to_all->has_replica_groups = true;
  Stamp(all_to_all, false);
  return all_to_all;
}

Instruction* CollectiveFactory::CollectivePermute(HloBuilder& b, Instruction* operand,
                                                  std::vector<SourceTargetPair> pairs) {
  Instruction* permute = b.AddOp(Opcode::kCollectivePermute, operand->shape(), {operand});
  permute->mutable_source_target_pairs() = std::move(pairs);
  Stamp(permute, false);
  return permute;
}

Computation* CollectiveFactory::Reducer(Opcode reduction, ElementType type) {
  auto key = std::make_pair(reduction, type);
  if (auto it = reducers_.find(key); it != reducers_.end()) return it->second;
  std::string name = names_->Unique(StrCat(OpcodeName(reduction), ".reducer.", ElementTypeName(type)));
  auto computation = std::make_unique<Computation>(name);
  Computation* raw = module_->AddComputationFront(std::move(computation));
  HloBuilder b(raw, names_);
  Instruction* x = b.Parameter(0, Shape(type, {}), "x");
  Instruction* y = b.Parameter(1, Shape(type, {}), "y");
  raw->set_root(b.Binary(reduction, x, y));
  reducers_[key] = raw;
  return raw;
}

}  // namespace gspmd
