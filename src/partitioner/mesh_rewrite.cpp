// ScaleShardingMesh / ScaleModuleMesh: shardings rewritten onto a mesh with bigger axes.
#include "partitioner/mesh_rewrite.h"

#include <algorithm>

#include "partitioner/device_axes.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Row-major strides of a mesh: stride[k] = product of dims after k.
std::vector<int64_t> MeshStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t k = static_cast<int64_t>(dims.size()) - 2; k >= 0; --k) strides[k] = strides[k + 1] * dims[k + 1];
  return strides;
}

std::vector<int64_t> ScaledDims(const MeshScale& scale) {
  std::vector<int64_t> dims = scale.mesh_dims;
  for (size_t k = 0; k < dims.size(); ++k) dims[k] *= scale.factors[k];
  return dims;
}

void CheckScale(const MeshScale& scale) {
  if (scale.mesh_dims.size() != scale.factors.size())
    GSPMD_USER_ERROR("mesh scale: ", scale.mesh_dims.size(), " mesh dims but ", scale.factors.size(), " factors");
  for (size_t k = 0; k < scale.mesh_dims.size(); ++k) {
    if (scale.mesh_dims[k] < 1 || scale.factors[k] < 1)
      GSPMD_USER_ERROR("mesh scale: mesh dim ", k, " is ", scale.mesh_dims[k], " with factor ", scale.factors[k],
                       "; expected both >= 1");
  }
}

// The scaled device axes: each axis lies inside one mesh axis (after splitting at the mesh
// boundaries); the one that ends its mesh axis grows by the factor.
class AxisScaler {
 public:
  explicit AxisScaler(const MeshScale& scale)
      : scale_(scale), old_strides_(MeshStrides(scale.mesh_dims)), new_strides_(MeshStrides(ScaledDims(scale))) {}

  std::vector<int64_t> Boundaries() const {
    std::vector<int64_t> boundaries(old_strides_.rbegin(), old_strides_.rend());
    boundaries.push_back(scale_.OldDeviceCount());
    return boundaries;
  }

  DeviceAxis Scale(const DeviceAxis& axis) const {
    for (size_t k = 0; k < old_strides_.size(); ++k) {
      int64_t low = old_strides_[k], high = old_strides_[k] * scale_.mesh_dims[k];
      if (axis.stride < low || axis.stride >= high) continue;
      GSPMD_CHECK(axis.stride * axis.size <= high, "device axis crosses a mesh boundary");
      bool ends_mesh_axis = axis.stride * axis.size == high;
      int64_t size = ends_mesh_axis ? axis.size * scale_.factors[k] : axis.size;
      return DeviceAxis{new_strides_[k] * (axis.stride / low), size};
    }
    GSPMD_CHECK(false, "device axis outside the mesh");
    return axis;
  }

  std::vector<DeviceAxis> ScaleAll(const std::vector<DeviceAxis>& axes) const {
    std::vector<DeviceAxis> out;
    out.reserve(axes.size());
    for (const DeviceAxis& axis : axes) out.push_back(Scale(axis));
    return out;
  }

  // The axes of the scaled mesh that grew from size-1 mesh axes.
  std::vector<DeviceAxis> NewAxes() const {
    std::vector<DeviceAxis> axes;
    for (size_t k = 0; k < old_strides_.size(); ++k)
      if (scale_.mesh_dims[k] == 1 && scale_.factors[k] > 1) axes.push_back({new_strides_[k], scale_.factors[k]});
    return axes;
  }

  int64_t ScaleDevice(int64_t device) const {
    int64_t scaled = 0;
    for (size_t k = 0; k < old_strides_.size(); ++k) {
      int64_t coordinate = (device / old_strides_[k]) % scale_.mesh_dims[k];
      scaled += coordinate * scale_.factors[k] * new_strides_[k];
    }
    return scaled;
  }

 private:
  const MeshScale& scale_;
  std::vector<int64_t> old_strides_;
  std::vector<int64_t> new_strides_;
};

Sharding ScaleTiled(const Sharding& sharding, const AxisScaler& scaler, const MeshScale& scale) {
  std::optional<AxisSharding> axes = DecomposeSharding(sharding, sharding.TiledDataRank(), scale.OldDeviceCount());
  if (!axes)
    GSPMD_USER_ERROR("sharding ", sharding.ToString(), " is not a product of axes of the ", scale.OldDeviceCount(),
                     "-device mesh; expected an iota-like device order");
  AxisSharding split = SplitAxesAt(*axes, scaler.Boundaries());
  AxisSharding scaled;
  for (const auto& dim : split.dims) scaled.dims.push_back(scaler.ScaleAll(dim));
  scaled.replicated = scaler.ScaleAll(split.replicated);
  scaled.manual = scaler.ScaleAll(split.manual);
  // Mesh axes of size 1 that grow are new axes no sharding mentions: the value is replicated
  // over them.
  std::vector<DeviceAxis> added = scaler.NewAxes();
  scaled.replicated.insert(scaled.replicated.end(), added.begin(), added.end());
  std::sort(scaled.replicated.begin(), scaled.replicated.end());
  return scaled.ToSharding();
}

}  // namespace

int64_t MeshScale::OldDeviceCount() const {
  int64_t count = 1;
  for (int64_t d : mesh_dims) count *= d;
  return count;
}

int64_t MeshScale::NewDeviceCount() const {
  int64_t count = OldDeviceCount();
  for (int64_t f : factors) count *= f;
  return count;
}

Sharding ScaleShardingMesh(const Sharding& sharding, const MeshScale& scale) {
  CheckScale(scale);
  AxisScaler scaler(scale);
  Sharding result = sharding;
  switch (sharding.kind()) {
    case Sharding::Kind::kReplicated:
    case Sharding::Kind::kManual:
    case Sharding::Kind::kUnknown:
      return sharding;
    case Sharding::Kind::kMaximal:
      result = Sharding::Maximal(scaler.ScaleDevice(sharding.maximal_device()));
      break;
    case Sharding::Kind::kTuple: {
      std::vector<Sharding> elements;
      for (const Sharding& element : sharding.tuple_elements()) elements.push_back(ScaleShardingMesh(element, scale));
      result = Sharding::Tuple(std::move(elements));
      break;
    }
    case Sharding::Kind::kTiled:
      result = ScaleTiled(sharding, scaler, scale);
      break;
  }
  result.set_shard_group(sharding.shard_group());
  result.set_metadata(sharding.metadata());
  return result;
}

void ScaleModuleMesh(Module& module, const MeshScale& scale) {
  CheckScale(scale);
  if (module.num_partitions() != scale.OldDeviceCount())
    GSPMD_USER_ERROR("module ", module.name(), " has num_partitions=", module.num_partitions(), " but the mesh has ",
                     scale.OldDeviceCount(), " devices");
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->has_replica_groups || !instruction->source_target_pairs().empty())
        GSPMD_USER_ERROR("%", instruction->name(), " is a collective with device groups; expected a module without "
                         "collectives to rescale its mesh");
      if (!instruction->sharding()) continue;
      instruction->set_sharding(ScaleShardingMesh(*instruction->sharding(), scale));
    }
  }
  module.set_num_partitions(scale.NewDeviceCount());
}

}  // namespace gspmd
