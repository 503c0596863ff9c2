// ReplicaGroups: the device groups of a collective, in XLA's three text forms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sharding/mesh.h"
#include "sharding/tile_assignment.h"

namespace gspmd {

// The groups of partitions a collective runs over (with use_global_device_ids=true these are
// partition ids). Forms, each printed back as written:
//   explicit  {{0,1},{2,3}}               ({} means one group of all devices)
//   iota      [2,4]<=[8]   [4,2]<=[2,4]T(1,0)   (rows of the iota array are the groups)
//   mesh      mesh['a'=2,'b'=4] {'a'}     (devices that differ only along the listed axes
//                                          form a group; sub-axes 'b':(2)2 allowed)
class ReplicaGroups {
 public:
  enum class Form { kExplicit, kIota, kMesh };

  ReplicaGroups() = default;  // explicit, empty: all devices in one group
  static ReplicaGroups Explicit(std::vector<std::vector<int64_t>> groups);
  static ReplicaGroups Iota(TileAssignment groups_array);  // rank-2: [num_groups, group_size]
  static ReplicaGroups FromMesh(Mesh mesh, std::vector<AxisRef> axes);

  Form form() const { return form_; }
  bool empty() const { return form_ == Form::kExplicit && explicit_groups_.empty(); }

  // The groups, expanded. An empty explicit list expands to one group {0..num_devices-1}.
  std::vector<std::vector<int64_t>> Groups(int64_t num_devices) const;

  const TileAssignment& iota() const { return iota_; }
  const Mesh& mesh() const { return mesh_; }
  const std::vector<AxisRef>& mesh_axes() const { return mesh_axes_; }

  // Text as written: "{{0,1},{2,3}}", "[2,4]<=[8]", "mesh['a'=2,'b'=4] {'a'}".
  std::string ToString() const;
  bool operator==(const ReplicaGroups& other) const;

 private:
  Form form_ = Form::kExplicit;
  std::vector<std::vector<int64_t>> explicit_groups_;
  TileAssignment iota_;
  Mesh mesh_;
  std::vector<AxisRef> mesh_axes_;
};

}  // namespace gspmd
