// Reads chip description files (JSON) into ChipSpec, checking every field with a positioned
// error; finds them by path, in $GSPMD_CHIP_PATH, or among the built-in ones.
#include "simulate/chip_spec.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "simulate/builtin_chips.h"
#include "simulate/json_positions.h"
#include "support/diagnostic.h"

namespace gspmd::simulate {
namespace {

using nlohmann::json;

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : separator) + parts[i];
  return out;
}

// Reads typed fields of a parsed description, each error naming the field and its position.
class FieldReader {
 public:
  FieldReader(const std::string& text, const std::string& origin)
      : root_(ParseJsonText(text, origin)), positions_(text), origin_(origin) {}

  const json& root() const { return root_; }

  [[noreturn]] void Fail(const std::string& pointer, const std::string& message) const {
    ThrowUserErrorAt(positions_.Find(origin_, pointer), PointerToFieldName(pointer) + ": " + message);
  }

  const json* Get(const std::string& pointer) const {
    const json::json_pointer where(pointer);
    return root_.contains(where) ? &root_.at(where) : nullptr;
  }

  const json& Require(const std::string& pointer) const {
    const json* value = Get(pointer);
    if (value == nullptr) Fail(pointer, "missing (a required field)");
    return *value;
  }

  // The object at `pointer` must hold only `known` keys (typos are errors, not ignored).
  void CheckKeys(const std::string& pointer, const std::vector<std::string>& known) const {
    const json& object = Require(pointer);
    if (!object.is_object()) Fail(pointer, "expected an object, got " + Describe(object));
    for (const auto& [key, value] : object.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      Fail(pointer + "/" + key, "unknown field '" + key + "' (expected one of: " + Join(known, ", ") + ")");
    }
  }

  std::string String(const std::string& pointer, const std::string& fallback, bool required = false) const {
    const json* value = required ? &Require(pointer) : Get(pointer);
    if (value == nullptr) return fallback;
    if (!value->is_string()) Fail(pointer, "expected a string, got " + Describe(*value));
    return value->get<std::string>();
  }

  // A number, written bare or as {"value": N, "source": "where it comes from"}.
  double Number(const std::string& pointer, double fallback, bool required, double min_value, bool min_inclusive) const {
    const json* value = required ? &Require(pointer) : Get(pointer);
    if (value == nullptr) return fallback;
    std::string value_pointer = pointer;
    if (value->is_object()) {
      CheckKeys(pointer, {"value", "source"});
      if (value->contains("source") && !value->at("source").is_string()) Fail(pointer + "/source", "expected a string");
      value_pointer = pointer + "/value";
      value = &Require(value_pointer);
    }
    if (!value->is_number()) Fail(value_pointer, "expected a number, got " + Describe(*value));
    const double number = value->get<double>();
    const bool too_small = min_inclusive ? number < min_value : number <= min_value;
    if (too_small) {
      Fail(value_pointer, StrCat("expected a number ", min_inclusive ? ">= " : "> ", min_value, ", got ", number));
    }
    return number;
  }

  double Positive(const std::string& pointer, double fallback = 0, bool required = true) const {
    return Number(pointer, fallback, required, 0, false);
  }
  double NonNegative(const std::string& pointer, double fallback = 0, bool required = false) const {
    return Number(pointer, fallback, required, 0, true);
  }
  double Fraction(const std::string& pointer) const {
    double value = Number(pointer, 1, true, 0, false);
    if (value > 1) Fail(pointer, StrCat("expected an efficiency in (0, 1], got ", value));
    return value;
  }

  int64_t PositiveInteger(const std::string& pointer, int64_t fallback, bool required) const {
    double value = Number(pointer, static_cast<double>(fallback), required, 1, true);
    if (value != static_cast<double>(static_cast<int64_t>(value))) Fail(pointer, StrCat("expected an integer, got ", value));
    return static_cast<int64_t>(value);
  }

  std::vector<int64_t> Shape(const std::string& pointer) const {
    const json& value = Require(pointer);
    if (!value.is_array() || value.empty()) Fail(pointer, "expected a non-empty array of positive integers");
    std::vector<int64_t> shape;
    for (size_t i = 0; i < value.size(); ++i) shape.push_back(PositiveInteger(pointer + "/" + std::to_string(i), 1, true));
    return shape;
  }

  static std::string Describe(const json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(value.type_name()) + " " + text;
  }

 private:
  json root_;
  JsonPositions positions_;
  std::string origin_;
};

const std::vector<std::string> kEfficiencyKinds = {"dot", "convolution", "vector", "memory"};
const std::vector<std::string> kCollectiveKinds = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                                   "collective-permute", "collective-broadcast"};
const std::vector<std::string> kPrecisions = {"DEFAULT", "HIGH", "HIGHEST"};

void ReadCompute(const FieldReader& r, ChipSpec& spec) {
  r.CheckKeys("/compute", {"matrix_flops_per_s", "vector_flops_per_s", "transcendental_cost", "f32_dot", "matrix_tile",
                           "efficiency", "op_overhead_s"});
  const json& matrix = r.Require("/compute/matrix_flops_per_s");
  if (!matrix.is_object() || matrix.empty())
    r.Fail("/compute/matrix_flops_per_s", "expected an object of compute type -> FLOP/s, e.g. {\"bf16\": 61.5e12}");
  for (const auto& [type, value] : matrix.items()) spec.matrix_flops[type] = r.Positive("/compute/matrix_flops_per_s/" + type);
  spec.vector_flops = r.Positive("/compute/vector_flops_per_s");
  spec.transcendental_cost = r.Positive("/compute/transcendental_cost", 1, false);
  spec.matrix_tile = r.PositiveInteger("/compute/matrix_tile", 1, false);
  spec.op_overhead_s = r.NonNegative("/compute/op_overhead_s");

  if (r.Get("/compute/f32_dot") != nullptr) {
    r.CheckKeys("/compute/f32_dot", kPrecisions);
    for (const std::string& precision : kPrecisions) {
      const std::string pointer = "/compute/f32_dot/" + precision;
      if (r.Get(pointer) == nullptr) r.Fail(pointer, "missing: f32_dot must give DEFAULT, HIGH and HIGHEST");
      r.CheckKeys(pointer, {"compute_type", "passes"});
      MatrixMode mode{r.String(pointer + "/compute_type", "", true), r.Positive(pointer + "/passes")};
      if (!spec.matrix_flops.count(mode.compute_type)) {
        r.Fail(pointer + "/compute_type", "'" + mode.compute_type + "' is not a key of compute.matrix_flops_per_s");
      }
      spec.f32_dot[precision] = mode;
    }
  } else {
    for (const std::string& precision : kPrecisions) spec.f32_dot[precision] = MatrixMode{"f32", 1};
  }

  if (r.Get("/compute/efficiency") != nullptr) {
    r.CheckKeys("/compute/efficiency", kEfficiencyKinds);
    for (const std::string& kind : kEfficiencyKinds)
      if (r.Get("/compute/efficiency/" + kind) != nullptr) spec.efficiency[kind] = r.Fraction("/compute/efficiency/" + kind);
  }
}

NetworkLevel ReadLevel(const FieldReader& r, const std::string& pointer) {
  r.CheckKeys(pointer, {"name", "kind", "dims", "size", "shape", "wraparound_multiple", "bandwidth_bytes_per_s", "latency_s"});
  NetworkLevel level;
  level.name = r.String(pointer + "/name", "", true);
  const std::string kind = r.String(pointer + "/kind", "", true);
  level.bandwidth = r.Positive(pointer + "/bandwidth_bytes_per_s");
  level.latency_s = r.NonNegative(pointer + "/latency_s");
  if (kind == "switch") {
    level.kind = NetworkLevel::Kind::kSwitch;
    level.max_shape = {r.PositiveInteger(pointer + "/size", 1, true)};
    level.dim_names = {level.name};
    if (r.Get(pointer + "/shape") != nullptr) r.Fail(pointer + "/shape", "a switch level has a size, not a shape");
    return level;
  }
  if (kind != "torus") r.Fail(pointer + "/kind", "expected \"switch\" or \"torus\", got \"" + kind + "\"");
  level.kind = NetworkLevel::Kind::kTorus;
  level.max_shape = r.Shape(pointer + "/shape");
  const json& dims = r.Require(pointer + "/dims");
  if (!dims.is_array() || dims.size() != level.max_shape.size())
    r.Fail(pointer + "/dims", StrCat("expected an array of ", level.max_shape.size(), " dimension names (one per entry of shape)"));
  for (size_t i = 0; i < dims.size(); ++i) level.dim_names.push_back(r.String(pointer + "/dims/" + std::to_string(i), "", true));
  const std::string wrap = pointer + "/wraparound_multiple";
  if (r.Get(wrap) == nullptr) {
    level.wraparound_multiple = level.max_shape;  // only where a slice spans the whole dimension
    return level;
  }
  const json& multiples = r.Require(wrap);
  if (!multiples.is_array() || multiples.size() != level.max_shape.size())
    r.Fail(wrap, StrCat("expected an array of ", level.max_shape.size(), " non-negative integers (0: never wraps)"));
  for (size_t i = 0; i < multiples.size(); ++i) {
    const double value = r.NonNegative(wrap + "/" + std::to_string(i), 0, true);
    if (value != static_cast<double>(static_cast<int64_t>(value))) r.Fail(wrap + "/" + std::to_string(i), "expected an integer");
    level.wraparound_multiple.push_back(static_cast<int64_t>(value));
  }
  return level;
}

void ReadNetwork(const FieldReader& r, ChipSpec& spec) {
  r.CheckKeys("/network", {"levels", "slices", "collective_efficiency", "all_to_all_message_s"});
  spec.all_to_all_message_s = r.NonNegative("/network/all_to_all_message_s");
  const json& levels = r.Require("/network/levels");
  if (!levels.is_array() || levels.empty()) r.Fail("/network/levels", "expected a non-empty array of levels, innermost first");
  std::set<std::string> dim_names;
  for (size_t i = 0; i < levels.size(); ++i) {
    const std::string pointer = "/network/levels/" + std::to_string(i);
    spec.levels.push_back(ReadLevel(r, pointer));
    for (const std::string& name : spec.levels.back().dim_names)
      if (!dim_names.insert(name).second) r.Fail(pointer, "dimension name '" + name + "' is used twice");
  }
  if (const json* slices = r.Get("/network/slices")) {
    if (!slices->is_array()) r.Fail("/network/slices", "expected an array of shapes of the outermost level");
    for (size_t i = 0; i < slices->size(); ++i) {
      const std::string pointer = "/network/slices/" + std::to_string(i);
      spec.slices.push_back(r.Shape(pointer));
      const NetworkLevel& outer = spec.levels.back();
      if (spec.slices.back().size() != outer.max_shape.size())
        r.Fail(pointer, StrCat("expected ", outer.max_shape.size(), " dims (the outermost level '", outer.name, "')"));
      for (size_t d = 0; d < outer.max_shape.size(); ++d)
        if (spec.slices.back()[d] > outer.max_shape[d]) r.Fail(pointer, "slice is larger than the level's shape");
    }
  }
  if (r.Get("/network/collective_efficiency") != nullptr) {
    r.CheckKeys("/network/collective_efficiency", kCollectiveKinds);
    for (const std::string& kind : kCollectiveKinds)
      if (r.Get("/network/collective_efficiency/" + kind) != nullptr)
        spec.collective_efficiency[kind] = r.Fraction("/network/collective_efficiency/" + kind);
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot read chip description file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool LooksLikePath(const std::string& text) {
  return text.find('/') != std::string::npos || (text.size() > 5 && text.ends_with(".json"));
}

std::vector<std::string> SearchDirectories() {
  std::vector<std::string> dirs;
  const char* env = std::getenv("GSPMD_CHIP_PATH");
  if (env == nullptr) return dirs;
  std::string text = env;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t next = text.find(':', pos);
    std::string dir = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (!dir.empty()) dirs.push_back(dir);
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return dirs;
}

}  // namespace

double ChipSpec::Efficiency(const std::string& kind) const {
  auto it = efficiency.find(kind);
  return it == efficiency.end() ? 1.0 : it->second;
}

double ChipSpec::CollectiveEfficiency(const std::string& kind) const {
  auto it = collective_efficiency.find(kind);
  return it == collective_efficiency.end() ? 1.0 : it->second;
}

ChipSpec ParseChipSpec(const std::string& text, const std::string& origin) {
  FieldReader r(text, origin);
  if (!r.root().is_object()) r.Fail("", "expected a JSON object describing a chip");
  r.CheckKeys("", {"name", "description", "references", "compute", "memory", "network"});
  ChipSpec spec;
  spec.path = origin;
  spec.name = r.String("/name", "", true);
  spec.description = r.String("/description", "");
  if (const json* references = r.Get("/references"); references != nullptr && !references->is_object())
    r.Fail("/references", "expected an object of reference name -> citation");
  ReadCompute(r, spec);
  r.CheckKeys("/memory", {"capacity_bytes", "bandwidth_bytes_per_s"});
  spec.hbm_bytes = r.PositiveInteger("/memory/capacity_bytes", 0, true);
  spec.hbm_bandwidth = r.Positive("/memory/bandwidth_bytes_per_s");
  ReadNetwork(r, spec);
  return spec;
}

ChipSpec LoadChipSpec(const std::string& name_or_path) {
  if (LooksLikePath(name_or_path)) return ParseChipSpec(ReadFile(name_or_path), name_or_path);
  for (const std::string& dir : SearchDirectories()) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / (name_or_path + ".json");
    if (std::filesystem::is_regular_file(candidate)) return ParseChipSpec(ReadFile(candidate.string()), candidate.string());
  }
  for (const auto& [name, text] : BuiltinChipTexts())
    if (name == name_or_path) return ParseChipSpec(std::string(text), "builtin:" + std::string(name) + ".json");
  std::vector<std::string> known = BuiltinChipNames();
  GSPMD_USER_ERROR("unknown chip '", name_or_path, "' (built in: ", Join(known, ", "),
                   "; or give a path to a chip description file, or a directory of NAME.json files in $GSPMD_CHIP_PATH)");
}

std::vector<std::string> BuiltinChipNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : BuiltinChipTexts()) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gspmd::simulate
