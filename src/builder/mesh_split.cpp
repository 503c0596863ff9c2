// mesh_split: dims_mapping over a named mesh -> GSPMD tiled sharding + Sharding custom-call.
#include "builder/mesh_split.h"

#include <algorithm>
#include <set>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::string MappingText(const std::vector<int64_t>& dims_mapping) {
  std::string text = "[";
  for (size_t i = 0; i < dims_mapping.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(dims_mapping[i]);
  return text + "]";
}

void CheckMesh(const Mesh& mesh, const std::string& what) {
  std::set<std::string> names;
  int64_t count = 1;
  for (const Mesh::Axis& axis : mesh.axes) {
    if (axis.name.empty()) GSPMD_USER_ERROR(what, ": mesh ", mesh.ToString(), " has an unnamed axis");
    if (!names.insert(axis.name).second)
      GSPMD_USER_ERROR(what, ": mesh ", mesh.ToString(), " names axis '", axis.name, "' twice");
    if (axis.size < 1) GSPMD_USER_ERROR(what, ": mesh axis '", axis.name, "' has size ", axis.size, ", expected >= 1");
    count *= axis.size;
  }
  if (mesh.device_ids.empty()) return;
  if (static_cast<int64_t>(mesh.device_ids.size()) != count)
    GSPMD_USER_ERROR(what, ": mesh ", mesh.ToString(), " lists ", mesh.device_ids.size(), " device ids for ", count,
                     " positions");
  std::set<int64_t> seen;
  for (int64_t id : mesh.device_ids) {
    if (id < 0) GSPMD_USER_ERROR(what, ": mesh ", mesh.ToString(), " has a negative device id ", id);
    if (!seen.insert(id).second) GSPMD_USER_ERROR(what, ": mesh ", mesh.ToString(), " lists device ", id, " twice");
  }
}

// The mesh's device array, dims = axis sizes (compact iota form when the order is the default).
TileAssignment MeshDevices(const Mesh& mesh) {
  std::vector<int64_t> dims;
  for (const Mesh::Axis& axis : mesh.axes) dims.push_back(axis.size);
  if (mesh.device_ids.empty()) return TileAssignment::Iota(dims);
  return TileAssignment(dims, mesh.device_ids);
}

void CheckMapping(const Mesh& mesh, const std::vector<int64_t>& dims_mapping, int64_t rank, const std::string& what) {
  if (static_cast<int64_t>(dims_mapping.size()) != rank)
    GSPMD_USER_ERROR(what, ": dims_mapping ", MappingText(dims_mapping), " has ", dims_mapping.size(),
                     " entries, expected ", rank, " (one per tensor dim)");
  const int64_t mesh_rank = static_cast<int64_t>(mesh.axes.size());
  std::vector<int64_t> used_by(mesh_rank, -1);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t m = dims_mapping[d];
    if (m == kReplicated || m == kUnspecified) continue;
    if (m < 0 || m >= mesh_rank)
      GSPMD_USER_ERROR(what, ": dims_mapping ", MappingText(dims_mapping), " maps tensor dim ", d, " to mesh dim ", m,
                       ", out of range for ", mesh.ToString(), " (expected 0..", mesh_rank - 1, ", -1 to replicate or -2 "
                       "to leave open)");
    if (used_by[m] >= 0)
      GSPMD_USER_ERROR(what, ": dims_mapping ", MappingText(dims_mapping), " uses mesh dim ", m, " ('",
                       mesh.axes[m].name, "') for tensor dims ", used_by[m], " and ", d);
    used_by[m] = d;
  }
}

std::string Describe(const Instruction* x) {
  return StrCat("mesh_split of %", x->name(), " (", x->shape().ToString(false), ")");
}

}  // namespace

Mesh MakeMesh(const std::vector<std::pair<std::string, int64_t>>& axes, std::vector<int64_t> device_ids) {
  Mesh mesh;
  for (const auto& [name, size] : axes) mesh.axes.push_back({name, size});
  mesh.device_ids = std::move(device_ids);
  CheckMesh(mesh, "MakeMesh");
  // An explicit order that is the default one is kept implicit (prints compactly).
  bool iota = true;
  for (size_t i = 0; i < mesh.device_ids.size(); ++i) iota = iota && mesh.device_ids[i] == static_cast<int64_t>(i);
  if (iota) mesh.device_ids.clear();
  return mesh;
}

Sharding MeshSharding(const Mesh& mesh, const std::vector<int64_t>& dims_mapping, int64_t rank,
                      const std::string& what) {
  CheckMesh(mesh, what);
  CheckMapping(mesh, dims_mapping, rank, what);
  std::vector<std::vector<int64_t>> dim_axes;
  for (int64_t m : dims_mapping) dim_axes.push_back(m >= 0 ? std::vector<int64_t>{m} : std::vector<int64_t>{});
  return MeshShardingOverAxes(mesh, dim_axes, rank, what);
}

Sharding MeshShardingOverAxes(const Mesh& mesh, const std::vector<std::vector<int64_t>>& dim_axes, int64_t rank,
                              const std::string& what) {
  CheckMesh(mesh, what);
  if (static_cast<int64_t>(dim_axes.size()) != rank)
    GSPMD_USER_ERROR(what, ": ", dim_axes.size(), " dim entries for a value of rank ", rank, " (one per tensor dim)");
  if (mesh.axes.empty()) return Sharding::Replicated();
  const int64_t mesh_rank = static_cast<int64_t>(mesh.axes.size());
  // Mesh dims in tile order: each tensor dim's axes in tensor-dim order, then the unused ones.
  std::vector<int64_t> perm;
  std::vector<int64_t> tile_dims;
  std::vector<int64_t> used_by(mesh.axes.size(), -1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t tiles = 1;
    for (int64_t m : dim_axes[d]) {
      if (m < 0 || m >= mesh_rank)
        GSPMD_USER_ERROR(what, ": tensor dim ", d, " is split over mesh dim ", m, ", out of range for ",
                         mesh.ToString(), " (expected 0..", mesh_rank - 1, ")");
      if (used_by[m] >= 0)
        GSPMD_USER_ERROR(what, ": mesh dim ", m, " ('", mesh.axes[m].name, "') splits both tensor dims ", used_by[m],
                         " and ", d);
      used_by[m] = d;
      perm.push_back(m);
      tiles *= mesh.axes[m].size;
    }
    tile_dims.push_back(tiles);
  }
  int64_t replicated = 1;
  for (int64_t m = 0; m < mesh_rank; ++m) {
    if (used_by[m] >= 0) continue;
    perm.push_back(m);
    replicated *= mesh.axes[m].size;
  }
  tile_dims.push_back(replicated);
  TileAssignment tiles = MeshDevices(mesh).Transpose(perm).Reshape(tile_dims);
  return Sharding::PartiallyReplicated(std::move(tiles));
}

std::vector<std::vector<int64_t>> DimAxesFromSpec(const Mesh& mesh, const PartitionSpec& spec) {
  std::vector<std::vector<int64_t>> dim_axes;
  for (const std::vector<std::string>& names : spec) {
    std::vector<int64_t> axes;
    for (const std::string& name : names) {
      if (name == "?") continue;
      const int64_t index = mesh.AxisIndex(name);
      if (index < 0) GSPMD_USER_ERROR("mesh_split: no axis '", name, "' in ", mesh.ToString());
      axes.push_back(index);
    }
    dim_axes.push_back(std::move(axes));
  }
  return dim_axes;
}

std::vector<int64_t> DimsMappingFromAxes(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<int64_t> mapping;
  for (const std::string& name : axes) {
    if (name.empty()) {
      mapping.push_back(kReplicated);
    } else if (name == "?") {
      mapping.push_back(kUnspecified);
    } else {
      const int64_t index = mesh.AxisIndex(name);
      if (index < 0) GSPMD_USER_ERROR("mesh_split: no axis '", name, "' in ", mesh.ToString());
      mapping.push_back(index);
    }
  }
  return mapping;
}

Instruction* mesh_split(ComputationBuilder& builder, Instruction* value, const Mesh& mesh,
                        const std::vector<int64_t>& dims_mapping) {
  if (!value->shape().IsArray()) GSPMD_USER_ERROR(Describe(value), ": expected an array value");
  Sharding sharding = MeshSharding(mesh, dims_mapping, value->shape().rank(), Describe(value));
  std::vector<int64_t> open;
  for (size_t d = 0; d < dims_mapping.size(); ++d)
    if (dims_mapping[d] == kUnspecified) open.push_back(static_cast<int64_t>(d));
  builder.state()->num_devices = std::max(builder.state()->num_devices, mesh.num_devices());
  return builder.ShardingConstraint(value, sharding, open);
}

Instruction* mesh_split(ComputationBuilder& builder, Instruction* value, const Mesh& mesh,
                        const std::vector<std::string>& axes) {
  return mesh_split(builder, value, mesh, DimsMappingFromAxes(mesh, axes));
}

Instruction* mesh_split(ComputationBuilder& builder, Instruction* value, const Mesh& mesh, const PartitionSpec& spec) {
  if (!value->shape().IsArray()) GSPMD_USER_ERROR(Describe(value), ": expected an array value");
  Sharding sharding = MeshShardingOverAxes(mesh, DimAxesFromSpec(mesh, spec), value->shape().rank(), Describe(value));
  std::vector<int64_t> open;
  for (size_t d = 0; d < spec.size(); ++d)
    if (spec[d].size() == 1 && spec[d][0] == "?") open.push_back(static_cast<int64_t>(d));
  builder.state()->num_devices = std::max(builder.state()->num_devices, mesh.num_devices());
  return builder.ShardingConstraint(value, sharding, open);
}

Instruction* ShardParameter(Instruction* parameter, const Mesh& mesh, const PartitionSpec& spec) {
  const std::string what = StrCat("sharding of parameter %", parameter->name());
  if (parameter->opcode() != Opcode::kParameter) GSPMD_USER_ERROR(what, ": not a parameter");
  if (!parameter->shape().IsArray()) GSPMD_USER_ERROR(what, ": expected an array parameter");
  for (const auto& names : spec)
    if (names.size() == 1 && names[0] == "?")
      GSPMD_USER_ERROR(what, ": ", SpecText(spec), " leaves a dim open; parameter shardings must be complete");
  parameter->set_sharding(MeshShardingOverAxes(mesh, DimAxesFromSpec(mesh, spec), parameter->shape().rank(), what));
  return parameter;
}

Instruction* ShardParameter(Instruction* parameter, const Mesh& mesh, const std::vector<int64_t>& dims_mapping) {
  const std::string what = StrCat("sharding of parameter %", parameter->name());
  if (parameter->opcode() != Opcode::kParameter) GSPMD_USER_ERROR(what, ": not a parameter");
  if (!parameter->shape().IsArray()) GSPMD_USER_ERROR(what, ": expected an array parameter");
  if (std::find(dims_mapping.begin(), dims_mapping.end(), kUnspecified) != dims_mapping.end())
    GSPMD_USER_ERROR(what, ": dims_mapping ", MappingText(dims_mapping),
                     " leaves a dim open (-2); parameter shardings must be complete");
  parameter->set_sharding(MeshSharding(mesh, dims_mapping, parameter->shape().rank(), what));
  return parameter;
}

}  // namespace gspmd
