// api::ShowValues and what `gspmd show --summary` and `--json` print from it: per value its
// global shape, its sharding as XLA writes it, and the tiles the devices hold, without pictures.
#include <algorithm>
#include <sstream>

#include "api/gspmd.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "support/units.h"
#include "visualize/sharding_picture.h"

namespace gspmd::api {
namespace {

// One entry per array leaf of `shape` (a tuple's leaves in order, nested ones flattened), with
// the matching leaf of `sharding` (a non-tuple sharding applies to every leaf).
void AddLeaves(const std::string& role, const std::string& name, const Shape& shape, const Sharding& sharding,
               std::vector<int64_t>& leaf_path, bool is_leaf_of_tuple, int64_t devices, const Mesh* mesh,
               std::vector<ShownValue>& out) {
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      const bool split = sharding.IsTuple() && static_cast<size_t>(i) < sharding.tuple_elements().size();
      leaf_path.push_back(i);
      AddLeaves(role, name, shape.tuple_shape(i), split ? sharding.tuple_elements()[i] : sharding, leaf_path, true,
                devices, mesh, out);
      leaf_path.pop_back();
    }
    return;
  }
  ShownValue value;
  value.role = role;
  value.name = name;
  if (is_leaf_of_tuple) value.leaf = leaf_path;
  value.shape = shape;
  value.sharding = sharding;
  if (mesh != nullptr) value.spec = PartitionSpecOf(sharding, shape.rank(), *mesh).value_or("");
  const std::vector<visualize::Tile> tiles = visualize::TilesOf(shape, sharding, devices);
  value.tiles = static_cast<int64_t>(tiles.size());
  value.devices_per_tile = tiles.empty() ? 0 : static_cast<int64_t>(tiles.front().devices.size());
  value.tile_shape = Shape(shape.element_type(), tiles.empty() ? shape.dims() : tiles.front().padded_size);
  out.push_back(std::move(value));
}

std::string LeafText(const std::vector<int64_t>& leaf) {
  std::string text;
  for (int64_t index : leaf) text += StrCat(text.empty() ? "" : ".", index);
  return text;
}

std::string Plural(int64_t count, const std::string& word) {
  return StrCat(count, " ", word, count == 1 ? "" : "s");
}

}  // namespace

std::string ShownValue::Label() const {
  std::string label = role.empty() ? "" : role + " ";
  label += "%" + name;
  if (!leaf.empty()) label += "{" + LeafText(leaf) + "}";
  return label;
}

std::vector<ShownValue> ShownLeaves(const std::string& role, const Instruction& value, bool per_device,
                                    int64_t devices) {
  const Sharding sharding = value.sharding().value_or(Sharding::Replicated());
  const Shape shape = per_device ? visualize::GlobalShapeOfShard(value.shape(), sharding) : value.shape();
  std::vector<ShownValue> values;
  std::vector<int64_t> leaf_path;
  const std::optional<Mesh> named = NamedMeshOf(*value.parent()->parent());
  const Mesh* mesh = named ? &*named : nullptr;
  // A result built by a tuple lists its elements by the values they are ("result 3 %w1_new"),
  // laid out as the result's sharding says.
  const bool tuple_of_values = role == "result" && value.opcode() == Opcode::kTuple && shape.IsTuple() &&
                               static_cast<int64_t>(value.operands().size()) == shape.tuple_size();
  if (!tuple_of_values) {
    AddLeaves(role, value.name(), shape, sharding, leaf_path, false, devices, mesh, values);
    return values;
  }
  for (int64_t k = 0; k < shape.tuple_size(); ++k) {
    const bool split = sharding.IsTuple() && static_cast<size_t>(k) < sharding.tuple_elements().size();
    AddLeaves(StrCat(role, " ", k), value.operands()[k]->name(), shape.tuple_shape(k),
              split ? sharding.tuple_elements()[k] : sharding, leaf_path, false, devices, mesh, values);
  }
  return values;
}

std::string ShowSummaryText(const ShowResult& result) {
  std::vector<std::string> labels;
  size_t width = 0;
  for (const ShownValue& value : result.values) {
    labels.push_back(value.Label());
    width = std::max(width, labels.back().size());
  }
  std::ostringstream text;
  text << "mesh: " << Plural(result.devices, "device") << (result.mesh.empty() ? "" : " (" + result.mesh + ")") << "\n";
  if (result.per_device) text << "(per-device program: global shape = shard shape x tiles)\n";
  double global_bytes = 0;
  double device_bytes = 0;
  for (size_t i = 0; i < result.values.size(); ++i) {
    const ShownValue& value = result.values[i];
    global_bytes += static_cast<double>(value.shape.byte_size());
    device_bytes += static_cast<double>(value.tile_shape.byte_size());
    std::string line = labels[i];
    line.resize(width, ' ');
    line += StrCat("  ", value.shape.ToString(false), " ", value.sharding.ToString(),
                   value.spec.empty() ? "" : " " + value.spec, ": ",
                   Plural(value.tiles, "tile"), " of ", value.tile_shape.ToString(false), " per device");
    if (value.devices_per_tile > 1 && value.tiles > 1) line += StrCat(", each on ", value.devices_per_tile, " devices");
    if (value.tiles == 1 && value.devices_per_tile > 1) line += " (replicated)";
    text << line << "\n";
  }
  text << "total: " << Plural(static_cast<int64_t>(result.values.size()), "value") << ", " << FormatBytes(global_bytes)
       << " global, " << FormatBytes(device_bytes) << " per device\n";
  return text.str();
}

nlohmann::json ShowResultToJson(const ShowResult& result) {
  nlohmann::json values = nlohmann::json::array();
  for (const ShownValue& value : result.values) {
    nlohmann::json entry = {{"name", value.name},
                            {"role", value.role},
                            {"shape", value.shape.ToString(false)},
                            {"dims", value.shape.dims()},
                            {"dtype", ElementTypeName(value.shape.element_type())},
                            {"sharding", value.sharding.ToString()},
                            {"tiles", value.tiles},
                            {"tile_shape", value.tile_shape.ToString(false)},
                            {"devices_per_tile", value.devices_per_tile},
                            {"bytes_per_device", value.tile_shape.byte_size()}};
    if (!value.leaf.empty()) entry["leaf"] = value.leaf;
    if (!value.spec.empty()) entry["spec"] = value.spec;
    values.push_back(std::move(entry));
  }
  nlohmann::json json = {{"devices", result.devices}, {"per_device_program", result.per_device}};
  if (!result.mesh.empty()) json["mesh"] = result.mesh;
  json["values"] = std::move(values);
  return json;
}

}  // namespace gspmd::api
