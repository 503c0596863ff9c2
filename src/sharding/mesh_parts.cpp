// Private helper: cutting mesh axes into the parts that (sub-)axis references cover.
#include "sharding/mesh_parts.h"

#include <algorithm>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// The pre-size range [begin, end) a reference covers inside its axis of `axis_size` devices
// (pre-size: the product of the sizes of the parts major to a point of the axis).
std::pair<int64_t, int64_t> PreSizeRange(const AxisRef& ref, int64_t axis_size) {
  if (!ref.is_sub_axis()) return {1, axis_size};
  return {ref.pre_size, ref.pre_size * ref.size};
}

}  // namespace

std::string CheckAxisRef(const Mesh& mesh, const AxisRef& ref) {
  const int64_t axis = mesh.AxisIndex(ref.name);
  if (axis < 0) return StrCat("axis '", ref.name, "' is not in ", mesh.ToString());
  if (!ref.is_sub_axis()) return "";
  const int64_t axis_size = mesh.axes[axis].size;
  if (ref.pre_size < 1 || ref.size < 1) return "sub-axis pre-size and size must be positive";
  const int64_t next = ref.pre_size * ref.size;
  if (ref.size <= 1 || ref.size >= axis_size || axis_size % next != 0) {
    return StrCat("sub-axis ", ref.ToString(), " does not divide axis '", ref.name, "' of size ",
                  axis_size);
  }
  return "";
}

int64_t FirstOverlappingAxisRef(const Mesh& mesh, const std::vector<AxisRef>& refs) {
  for (size_t j = 1; j < refs.size(); ++j) {
    const int64_t axis = mesh.AxisIndex(refs[j].name);
    if (axis < 0) continue;
    const auto [jb, je] = PreSizeRange(refs[j], mesh.axes[axis].size);
    for (size_t i = 0; i < j; ++i) {
      if (refs[i].name != refs[j].name) continue;
      const auto [ib, ie] = PreSizeRange(refs[i], mesh.axes[axis].size);
      const bool overlaps = ib < je && jb < ie;
      if (overlaps) return static_cast<int64_t>(j);
    }
  }
  return -1;
}

std::string MeshParts::Build(const Mesh& mesh, const std::vector<AxisRef>& refs) {
  mesh_ = &mesh;
  const size_t num_axes = mesh.axes.size();
  cut_points_.assign(num_axes, {});
  for (size_t k = 0; k < num_axes; ++k) cut_points_[k] = {1, mesh.axes[k].size};
  for (const AxisRef& ref : refs) {
    std::string problem = CheckAxisRef(mesh, ref);
    if (!problem.empty()) return problem;
    if (!ref.is_sub_axis()) continue;
    auto& points = cut_points_[mesh.AxisIndex(ref.name)];
    points.push_back(ref.pre_size);
    points.push_back(ref.pre_size * ref.size);
  }
  first_part_.assign(num_axes, 0);
  part_sizes_.clear();
  for (size_t k = 0; k < num_axes; ++k) {
    auto& points = cut_points_[k];
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    first_part_[k] = static_cast<int64_t>(part_sizes_.size());
    for (size_t t = 0; t + 1 < points.size(); ++t) {
      if (points[t + 1] % points[t] != 0) {
        return StrCat("sub-axes of '", mesh.axes[k].name, "' cut it unevenly");
      }
      part_sizes_.push_back(points[t + 1] / points[t]);
    }
  }
  return "";
}

std::vector<int64_t> MeshParts::PartsOf(const AxisRef& ref) const {
  const int64_t axis = mesh_->AxisIndex(ref.name);
  GSPMD_CHECK(axis >= 0, "unknown axis ", ref.name);
  const auto [begin, end] = PreSizeRange(ref, mesh_->axes[axis].size);
  const auto& points = cut_points_[axis];
  std::vector<int64_t> parts;
  // Part t of the axis covers pre-sizes [points[t], points[t+1]); parts go major to minor.
  for (size_t t = 0; t + 1 < points.size(); ++t) {
    const bool inside = points[t] >= begin && points[t + 1] <= end;
    if (inside) parts.push_back(first_part_[axis] + static_cast<int64_t>(t));
  }
  return parts;
}

TileAssignment MeshParts::DeviceArray() const {
  if (mesh_->device_ids.empty()) return TileAssignment::Iota(part_sizes_);
  return TileAssignment(part_sizes_, mesh_->device_ids);
}

}  // namespace gspmd
