// PartitionSpecs: their text, the --mesh flag's text, and the spec that gives an XLA sharding.
#include "sharding/partition_spec.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool IsIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool ParsePositive(const std::string& text, int64_t& value) {
  if (text.empty() || text.size() > 18) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value > 0;
}

// The sharding's data tile (row-major over the tensor dims) of each device; empty when the
// sharding is not a tiled layout over exactly `num_devices` devices 0..num_devices-1.
std::vector<int64_t> DataTileOfDevice(const Sharding& sharding, int64_t rank, int64_t num_devices) {
  std::vector<int64_t> tile_of(num_devices, -1);
  if (sharding.IsReplicated()) {
    std::fill(tile_of.begin(), tile_of.end(), 0);
    return tile_of;
  }
  const TileAssignment& tiles = sharding.tile_assignment();
  if (tiles.num_elements() != num_devices) return {};
  int64_t data_tiles = 1;
  for (int64_t d = 0; d < rank; ++d) data_tiles *= tiles.dim(d);
  const int64_t replicas = num_devices / data_tiles;
  for (int64_t linear = 0; linear < num_devices; ++linear) {
    const int64_t device = tiles.DeviceAtLinear(linear);
    if (device < 0 || device >= num_devices || tile_of[device] >= 0) return {};
    tile_of[device] = linear / replicas;  // the subgroup dims are minor to the data dims
  }
  return tile_of;
}

// Whether the tiles of `assignment` (mesh axes per dim) put every device where `target` does.
bool Matches(const Mesh& mesh, const std::vector<std::vector<int64_t>>& assignment, const std::vector<int64_t>& counts,
             const std::vector<int64_t>& target) {
  const int64_t num_devices = mesh.num_devices();
  const size_t num_axes = mesh.axes.size();
  std::vector<int64_t> coords(num_axes, 0);
  for (int64_t position = 0; position < num_devices; ++position) {
    int64_t rest = position;
    for (size_t a = num_axes; a-- > 0;) {
      coords[a] = rest % mesh.axes[a].size;
      rest /= mesh.axes[a].size;
    }
    int64_t tile = 0;
    for (size_t d = 0; d < assignment.size(); ++d) {
      int64_t index = 0;
      for (int64_t axis : assignment[d]) index = index * mesh.axes[axis].size + coords[axis];
      tile = tile * counts[d] + index;
    }
    if (target[mesh.DeviceAtLinear(position)] != tile) return false;
  }
  return true;
}

}  // namespace

std::string SpecText(const PartitionSpec& spec) {
  std::string text = "P(";
  for (size_t d = 0; d < spec.size(); ++d) {
    if (d > 0) text += ", ";
    if (spec[d].empty()) {
      text += "None";
      continue;
    }
    if (spec[d].size() > 1) text += "(";
    for (size_t i = 0; i < spec[d].size(); ++i) text += (i > 0 ? ", '" : "'") + spec[d][i] + "'";
    if (spec[d].size() > 1) text += ")";
  }
  return text + ")";
}

Mesh ParseMeshFlag(const std::string& text, const std::string& what) {
  const std::string example = "expected AXIS=N,... with positive sizes (e.g. data=2,model=4)";
  if (text.empty()) GSPMD_USER_ERROR(what, " is empty: ", example);
  Mesh mesh;
  size_t pos = 0;
  int item_number = 0;
  while (pos <= text.size()) {
    ++item_number;
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, std::min(eq, item.size()));
    int64_t size = 0;
    if (eq == std::string::npos || !IsIdentifier(name) || !ParsePositive(item.substr(eq + 1), size))
      GSPMD_USER_ERROR(what, " '", text, "': item ", item_number, " '", item, "' (at column ", pos + 1, "): ",
                       example);
    if (mesh.AxisIndex(name) >= 0) GSPMD_USER_ERROR(what, " '", text, "' names axis '", name, "' twice");
    mesh.axes.push_back({name, size});
    pos = comma + 1;
  }
  return mesh;
}

std::string MeshFlagText(const Mesh& mesh) {
  std::string out;
  for (const Mesh::Axis& axis : mesh.axes) out += StrCat(out.empty() ? "" : ",", axis.name, "=", axis.size);
  return out;
}

std::optional<PartitionSpec> PartitionSpecAxesOf(const Sharding& sharding, int64_t rank, const Mesh& mesh) {
  if (mesh.axes.empty() || rank < 0) return std::nullopt;
  const bool replicated = sharding.IsReplicated();
  if (!replicated && !sharding.IsTiled()) return std::nullopt;
  if (!replicated) {
    if (sharding.TiledDataRank() != rank) return std::nullopt;
    for (Sharding::SubgroupType type : sharding.subgroup_types())
      if (type != Sharding::SubgroupType::kReplicated) return std::nullopt;
  }
  const int64_t num_devices = mesh.num_devices();
  const std::vector<int64_t> target = DataTileOfDevice(sharding, rank, num_devices);
  if (target.empty()) return std::nullopt;
  std::vector<int64_t> counts(rank, 1);
  if (!replicated)
    for (int64_t d = 0; d < rank; ++d) counts[d] = sharding.tile_assignment().dim(d);

  // Depth-first over the dims: each dim takes an ordered list of unused axes (size > 1) whose
  // sizes multiply to its tile count; the first full assignment whose tiles match wins.
  const size_t num_axes = mesh.axes.size();
  std::vector<bool> used(num_axes, false);
  std::vector<std::vector<int64_t>> assignment(rank);
  std::function<bool(int64_t, int64_t)> place = [&](int64_t dim, int64_t product) -> bool {
    if (dim == rank) return Matches(mesh, assignment, counts, target);
    if (product == counts[dim]) return place(dim + 1, 1);
    for (size_t axis = 0; axis < num_axes; ++axis) {
      const int64_t size = mesh.axes[axis].size;
      if (used[axis] || size < 2 || counts[dim] % (product * size) != 0) continue;
      used[axis] = true;
      assignment[dim].push_back(static_cast<int64_t>(axis));
      if (place(dim, product * size)) return true;
      assignment[dim].pop_back();
      used[axis] = false;
    }
    return false;
  };
  if (!place(0, 1)) return std::nullopt;
  PartitionSpec spec(rank);
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t axis : assignment[d]) spec[d].push_back(mesh.axes[axis].name);
  return spec;
}

std::optional<std::string> PartitionSpecOf(const Sharding& sharding, int64_t rank, const Mesh& mesh) {
  std::optional<PartitionSpec> spec = PartitionSpecAxesOf(sharding, rank, mesh);
  if (!spec) return std::nullopt;
  return SpecText(*spec);
}

std::optional<std::string> MeshAxesOfGroups(const std::vector<std::vector<int64_t>>& groups, const Mesh& mesh) {
  const int64_t num_devices = mesh.num_devices();
  const size_t num_axes = mesh.axes.size();
  if (groups.empty() || num_axes == 0) return std::nullopt;
  std::vector<int64_t> position_of(num_devices, -1);
  for (int64_t position = 0; position < num_devices; ++position) {
    const int64_t device = mesh.DeviceAtLinear(position);
    if (device < 0 || device >= num_devices) return std::nullopt;
    position_of[device] = position;
  }
  auto coords_of = [&](int64_t device) {
    std::vector<int64_t> coords(num_axes);
    int64_t rest = position_of[device];
    for (size_t a = num_axes; a-- > 0;) {
      coords[a] = rest % mesh.axes[a].size;
      rest /= mesh.axes[a].size;
    }
    return coords;
  };
  std::vector<bool> varies;
  int64_t covered = 0;
  for (const std::vector<int64_t>& group : groups) {
    for (int64_t device : group)
      if (device < 0 || device >= num_devices || position_of[device] < 0) return std::nullopt;
    if (group.empty()) return std::nullopt;
    const std::vector<int64_t> first = coords_of(group[0]);
    std::vector<bool> group_varies(num_axes, false);
    for (int64_t device : group) {
      const std::vector<int64_t> coords = coords_of(device);
      for (size_t a = 0; a < num_axes; ++a) group_varies[a] = group_varies[a] || coords[a] != first[a];
    }
    if (varies.empty()) varies = group_varies;
    if (group_varies != varies) return std::nullopt;
    int64_t product = 1;
    for (size_t a = 0; a < num_axes; ++a)
      if (varies[a]) product *= mesh.axes[a].size;
    if (product != static_cast<int64_t>(group.size())) return std::nullopt;
    covered += product;
  }
  std::vector<std::string> names;
  for (size_t a = 0; a < num_axes; ++a)
    if (varies[a]) names.push_back("'" + mesh.axes[a].name + "'");
  if (names.empty() || covered != num_devices) return std::nullopt;
  if (names.size() == 1) return names[0];
  std::string text = "(";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text + ")";
}

std::string ShardingTextWithSpec(const Sharding& sharding, int64_t rank, const Mesh* mesh) {
  std::string text = sharding.ToString();
  if (mesh == nullptr || rank < 0) return text;
  if (std::optional<std::string> spec = PartitionSpecOf(sharding, rank, *mesh)) text += " " + *spec;
  return text;
}

}  // namespace gspmd
