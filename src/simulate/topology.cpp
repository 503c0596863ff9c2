// Builds a slice of a chip's network and places partitions on it (see topology.h).
#include "simulate/topology.h"

#include <algorithm>
#include <map>

#include "support/diagnostic.h"

namespace gspmd::simulate {
namespace {

int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += (i == 0 ? "" : "x") + std::to_string(shape[i]);
  return out;
}

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    size_t next = text.find(separator, pos);
    parts.push_back(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) return parts;
    pos = next + 1;
  }
}

std::vector<int64_t> ParseShape(const std::string& text, const NetworkLevel& outer) {
  const std::string expected = StrCat("expected ", outer.max_shape.size(), " positive integers joined by 'x' (the shape of '",
                                      outer.name, "', at most ", ShapeString(outer.max_shape), ")");
  std::vector<int64_t> shape;
  for (const std::string& part : SplitList(text, 'x')) {
    if (part.empty() || part.size() > 9 || !std::all_of(part.begin(), part.end(), ::isdigit) || std::stoll(part) < 1)
      GSPMD_USER_ERROR("--topology '", text, "': ", expected);
    shape.push_back(std::stoll(part));
  }
  if (shape.size() != outer.max_shape.size()) GSPMD_USER_ERROR("--topology '", text, "': ", expected);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > outer.max_shape[d])
      GSPMD_USER_ERROR("--topology '", text, "': dimension ", d, " is ", shape[d], " but '", outer.name, "' has at most ",
                       outer.max_shape[d], " (", ShapeString(outer.max_shape), ")");
  return shape;
}

// The smallest standard slice (or node count) that holds `partitions`.
std::vector<int64_t> DefaultShape(const ChipSpec& chip, int64_t partitions, int64_t inner_devices) {
  const NetworkLevel& outer = chip.levels.back();
  if (chip.slices.empty()) {
    if (outer.kind == NetworkLevel::Kind::kSwitch) {
      const int64_t nodes = (partitions + inner_devices - 1) / inner_devices;
      if (nodes > outer.max_shape[0])
        GSPMD_USER_ERROR("the program has ", partitions, " partitions but ", chip.name, " has at most ",
                         outer.max_shape[0] * inner_devices, " devices (", outer.max_shape[0], " ", outer.name, " nodes of ",
                         inner_devices, ")");
      return {nodes};
    }
    if (Product(outer.max_shape) * inner_devices < partitions)
      GSPMD_USER_ERROR("the program has ", partitions, " partitions but ", chip.name, " has at most ",
                       Product(outer.max_shape) * inner_devices, " devices");
    return outer.max_shape;
  }
  std::vector<std::vector<int64_t>> slices = chip.slices;
  std::stable_sort(slices.begin(), slices.end(),
                   [](const auto& a, const auto& b) { return Product(a) < Product(b); });
  for (const auto& slice : slices)
    if (Product(slice) * inner_devices >= partitions) return slice;
  GSPMD_USER_ERROR("the program has ", partitions, " partitions but the largest ", chip.name, " slice (",
                   ShapeString(slices.back()), ") has ", Product(slices.back()) * inner_devices, " devices");
}

}  // namespace

Topology Topology::Build(const ChipSpec& chip, int64_t num_partitions, const std::string& shape_text,
                         const std::string& placement_text) {
  GSPMD_CHECK(!chip.levels.empty(), "chip ", chip.name, " has no network levels");
  GSPMD_CHECK(num_partitions >= 1, "partitions ", num_partitions);
  Topology topology;
  topology.levels_ = chip.levels;
  topology.chip_name_ = chip.name;
  topology.num_partitions_ = num_partitions;

  int64_t inner_devices = 1;
  for (size_t l = 0; l + 1 < chip.levels.size(); ++l) inner_devices *= Product(chip.levels[l].max_shape);
  const std::vector<int64_t> outer_shape =
      shape_text.empty() ? DefaultShape(chip, num_partitions, inner_devices) : ParseShape(shape_text, chip.levels.back());
  topology.slice_devices_ = inner_devices * Product(outer_shape);
  if (num_partitions > topology.slice_devices_)
    GSPMD_USER_ERROR("the program has ", num_partitions, " partitions but the ", chip.name, " topology ",
                     ShapeString(outer_shape), " has only ", topology.slice_devices_, " devices (", inner_devices,
                     " per ", chip.levels.back().name, " node x ", Product(outer_shape), " nodes)");

  for (size_t l = 0; l < chip.levels.size(); ++l) {
    const NetworkLevel& level = chip.levels[l];
    const bool outermost = l + 1 == chip.levels.size();
    for (size_t d = 0; d < level.max_shape.size(); ++d) {
      PhysicalDim dim;
      dim.name = level.dim_names[d];
      dim.level = static_cast<int64_t>(l);
      dim.torus = level.kind == NetworkLevel::Kind::kTorus;
      dim.extent = outermost ? outer_shape[d] : level.max_shape[d];
      const int64_t multiple = dim.torus ? level.wraparound_multiple[d] : 0;
      dim.wraps = dim.torus && multiple > 0 && dim.extent > 2 && dim.extent % multiple == 0;
      topology.dims_.push_back(dim);
    }
  }

  // Placement: the order in which partition-id digits walk the dims.
  std::vector<int64_t> order;
  if (placement_text.empty()) {
    for (size_t d = 0; d < topology.dims_.size(); ++d) order.push_back(static_cast<int64_t>(d));
  } else {
    for (const std::string& name : SplitList(placement_text, ',')) {
      auto it = std::find_if(topology.dims_.begin(), topology.dims_.end(), [&](const PhysicalDim& dim) { return dim.name == name; });
      const bool repeated = it != topology.dims_.end() &&
                            std::find(order.begin(), order.end(), it - topology.dims_.begin()) != order.end();
      if (it == topology.dims_.end() || repeated) {
        std::vector<std::string> names;
        for (const PhysicalDim& dim : topology.dims_) names.push_back(dim.name);
        GSPMD_USER_ERROR("--placement '", placement_text, "': expected every dimension of ", chip.name, " once, fastest first (",
                         [&] { std::string s; for (size_t i = 0; i < names.size(); ++i) s += (i ? "," : "") + names[i]; return s; }(),
                         "), got '", name, "'", repeated ? " twice" : "");
      }
      order.push_back(it - topology.dims_.begin());
    }
    if (order.size() != topology.dims_.size())
      GSPMD_USER_ERROR("--placement '", placement_text, "': names ", order.size(), " of the ", topology.dims_.size(),
                       " dimensions of ", chip.name, "; name all of them");
  }
  for (int64_t d : order) topology.placement_.push_back(topology.dims_[d].name);

  const size_t rank = topology.dims_.size();
  topology.coordinates_.assign(num_partitions * rank, 0);
  for (int64_t p = 0; p < num_partitions; ++p) {
    int64_t rest = p;
    for (int64_t d : order) {
      topology.coordinates_[p * rank + d] = rest % topology.dims_[d].extent;
      rest /= topology.dims_[d].extent;
    }
  }

  // Partitions per node of each level: a node of level l holds the devices of levels below l.
  for (size_t l = 0; l < chip.levels.size(); ++l) {
    std::map<std::vector<int64_t>, int64_t> per_node;
    int64_t most = 1;
    for (int64_t p = 0; p < num_partitions; ++p) {
      std::vector<int64_t> node;
      for (size_t d = 0; d < rank; ++d)
        if (topology.dims_[d].level >= static_cast<int64_t>(l)) node.push_back(topology.coordinates_[p * rank + d]);
      most = std::max(most, ++per_node[node]);
    }
    topology.sharing_.push_back(most);
  }
  return topology;
}

double Topology::LinkBandwidth(int64_t dim) const {
  const PhysicalDim& physical = dims_.at(dim);
  return levels_.at(physical.level).bandwidth / static_cast<double>(Sharing(physical.level));
}

std::string Topology::ShapeText() const {
  std::vector<int64_t> shape;
  for (const PhysicalDim& dim : dims_)
    if (dim.level + 1 == static_cast<int64_t>(levels_.size())) shape.push_back(dim.extent);
  return ShapeString(shape);
}

std::string Topology::Describe() const {
  std::string out = chip_name_ + ": ";
  for (size_t l = 0; l < levels_.size(); ++l) {
    std::vector<int64_t> shape;
    bool any_wraps = false, all_wrap = true;
    for (const PhysicalDim& dim : dims_) {
      if (dim.level != static_cast<int64_t>(l)) continue;
      shape.push_back(dim.extent);
      any_wraps = any_wraps || dim.wraps;
      all_wrap = all_wrap && dim.wraps;
    }
    out += (l == 0 ? "" : " x ") + levels_[l].name + " " + ShapeString(shape);
    if (levels_[l].kind == NetworkLevel::Kind::kSwitch) out += " (switch)";
    else out += all_wrap ? " (torus)" : any_wraps ? " (torus on some dims)" : " (mesh, no wraparound)";
  }
  out += StrCat(", ", num_partitions_, " of ", slice_devices_, " devices, placement ");
  for (size_t i = 0; i < placement_.size(); ++i) out += (i == 0 ? "" : ",") + placement_[i];
  return out;
}

}  // namespace gspmd::simulate
