// Private helper: a mesh cut into the parts its (sub-)axis references need, as a device array.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sharding/mesh.h"
#include "sharding/tile_assignment.h"

namespace gspmd {

// Each mesh axis is cut at the boundaries of the sub-axes referenced ('b':(2)2 of a b of size
// 8 cuts it into [2, 2, 2]: pre-size 2 is the product of the parts major to it). Parts are
// numbered axis by axis, major to minor, so the mesh's device array viewed with dims = part
// sizes is a plain reshape of it.
class MeshParts {
 public:
  // Empty string on success, otherwise what is wrong with `refs` (unknown axis, sub-axis not
  // dividing its axis, sub-axes cutting each other unevenly).
  std::string Build(const Mesh& mesh, const std::vector<AxisRef>& refs);

  const std::vector<int64_t>& part_sizes() const { return part_sizes_; }
  // The parts covered by `ref`, major to minor (Build must have seen it).
  std::vector<int64_t> PartsOf(const AxisRef& ref) const;
  // The mesh's devices with dims = part_sizes().
  TileAssignment DeviceArray() const;

 private:
  const Mesh* mesh_ = nullptr;
  std::vector<std::vector<int64_t>> cut_points_;  // per axis: ascending strides, 1..size
  std::vector<int64_t> first_part_;               // per axis: index of its major-most part
  std::vector<int64_t> part_sizes_;
};

// Checks one reference against a mesh: empty string when valid, otherwise what is wrong.
std::string CheckAxisRef(const Mesh& mesh, const AxisRef& ref);

// Index of the first reference in `refs` that overlaps an earlier one, or -1.
int64_t FirstOverlappingAxisRef(const Mesh& mesh, const std::vector<AxisRef>& refs);

}  // namespace gspmd
