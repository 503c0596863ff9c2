// ReplicaGroups: explicit, iota and mesh-axes forms, expansion to groups, text.
#include "sharding/replica_groups.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "sharding/mesh_parts.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::vector<std::vector<int64_t>> RowsOf(const TileAssignment& array) {
  GSPMD_CHECK(array.num_dims() == 2, "replica group array must be rank 2, got ", array.ToString());
  const int64_t rows = array.dim(0);
  const int64_t cols = array.dim(1);
  const std::vector<int64_t>& devices = array.Devices();
  std::vector<std::vector<int64_t>> groups(rows);
  for (int64_t r = 0; r < rows; ++r) {
    groups[r].assign(devices.begin() + r * cols, devices.begin() + (r + 1) * cols);
  }
  return groups;
}

}  // namespace

ReplicaGroups ReplicaGroups::Explicit(std::vector<std::vector<int64_t>> groups) {
  ReplicaGroups result;
  result.form_ = Form::kExplicit;
  result.explicit_groups_ = std::move(groups);
  return result;
}

ReplicaGroups ReplicaGroups::Iota(TileAssignment groups_array) {
  GSPMD_CHECK(groups_array.num_dims() == 2, "iota replica groups must be rank 2, got ",
              groups_array.ToString());
  ReplicaGroups result;
  result.form_ = Form::kIota;
  result.iota_ = std::move(groups_array);
  return result;
}

ReplicaGroups ReplicaGroups::FromMesh(Mesh mesh, std::vector<AxisRef> axes) {
  ReplicaGroups result;
  result.form_ = Form::kMesh;
  result.mesh_ = std::move(mesh);
  result.mesh_axes_ = std::move(axes);
  return result;
}

std::vector<std::vector<int64_t>> ReplicaGroups::Groups(int64_t num_devices) const {
  switch (form_) {
    case Form::kExplicit: {
      if (!explicit_groups_.empty()) return explicit_groups_;
      std::vector<int64_t> all(num_devices);
      std::iota(all.begin(), all.end(), 0);
      return {std::move(all)};
    }
    case Form::kIota:
      return RowsOf(iota_);
    case Form::kMesh:
      break;
  }
  // Mesh form: the listed axes (in the listed order) become the minor dims, the other parts
  // of the mesh stay major in mesh order; rows are the groups.
  MeshParts parts;
  const std::string problem = parts.Build(mesh_, mesh_axes_);
  GSPMD_CHECK(problem.empty(), "invalid mesh replica groups ", ToString(), ": ", problem);
  const std::vector<int64_t>& sizes = parts.part_sizes();
  std::vector<bool> grouped(sizes.size(), false);
  std::vector<int64_t> minor;
  int64_t group_size = 1;
  for (const AxisRef& ref : mesh_axes_) {
    for (int64_t part : parts.PartsOf(ref)) {
      minor.push_back(part);
      grouped[part] = true;
      group_size *= sizes[part];
    }
  }
  std::vector<int64_t> order;
  int64_t num_groups = 1;
  for (size_t part = 0; part < sizes.size(); ++part) {
    if (grouped[part]) continue;
    order.push_back(static_cast<int64_t>(part));
    num_groups *= sizes[part];
  }
  order.insert(order.end(), minor.begin(), minor.end());
  return RowsOf(parts.DeviceArray().Transpose(order).Reshape({num_groups, group_size}));
}

std::string ReplicaGroups::ToString() const {
  std::ostringstream out;
  switch (form_) {
    case Form::kExplicit:
      out << '{';
      for (size_t g = 0; g < explicit_groups_.size(); ++g) {
        if (g > 0) out << ',';
        out << '{';
        for (size_t i = 0; i < explicit_groups_[g].size(); ++i) {
          if (i > 0) out << ',';
          out << explicit_groups_[g][i];
        }
        out << '}';
      }
      out << '}';
      break;
    case Form::kIota:
      out << iota_.ToString();
      break;
    case Form::kMesh:
      out << mesh_.ToString() << " {";
      for (size_t i = 0; i < mesh_axes_.size(); ++i) {
        if (i > 0) out << ',';
        out << mesh_axes_[i].ToString();
      }
      out << '}';
      break;
  }
  return out.str();
}

bool ReplicaGroups::operator==(const ReplicaGroups& other) const {
  if (empty() || other.empty()) return empty() == other.empty();
  if (form_ == other.form_) {
    switch (form_) {
      case Form::kExplicit:
        return explicit_groups_ == other.explicit_groups_;
      case Form::kIota:
        if (iota_ == other.iota_) return true;
        break;
      case Form::kMesh:
        if (mesh_ == other.mesh_ && mesh_axes_ == other.mesh_axes_) return true;
        break;
    }
  }
  // Different spellings: compare the expanded groups (no form here depends on the count).
  return Groups(0) == other.Groups(0);
}

}  // namespace gspmd
