// ModelConfig: checked text overrides of a model's keys and mesh.
#include "models/model_config.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::string NumberText(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

bool ParseInt(const std::string& text, int64_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool ParseNumber(const std::string& text, double& value) {
  if (text.empty()) return false;
  try {
    size_t used = 0;
    value = std::stod(text, &used);
    return used == text.size() && std::isfinite(value);
  } catch (const std::exception&) {
    return false;
  }
}

std::string Join(const std::vector<std::string>& words, const char* separator) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : separator) + word;
  return text;
}

}  // namespace

ModelKey IntKey(std::string name, int64_t default_value, std::string help, int64_t min) {
  ModelKey key;
  key.name = std::move(name);
  key.kind = ModelKey::Kind::kInt;
  key.default_value = std::to_string(default_value);
  key.help = std::move(help);
  key.min = min;
  return key;
}

ModelKey NumberKey(std::string name, double default_value, std::string help) {
  ModelKey key;
  key.name = std::move(name);
  key.kind = ModelKey::Kind::kNumber;
  key.default_value = NumberText(default_value);
  key.help = std::move(help);
  return key;
}

ModelKey ChoiceKey(std::string name, std::vector<std::string> choices, std::string help) {
  ModelKey key;
  key.name = std::move(name);
  key.kind = ModelKey::Kind::kChoice;
  key.default_value = choices.at(0);
  key.help = std::move(help);
  key.choices = std::move(choices);
  return key;
}

ModelConfig::ModelConfig(std::string model, std::vector<ModelKey> keys, std::vector<Mesh::Axis> mesh_axes)
    : model_(std::move(model)), keys_(std::move(keys)) {
  for (const ModelKey& key : keys_) values_.push_back(key.default_value);
  mesh_.axes = std::move(mesh_axes);
}

size_t ModelConfig::IndexOf(const std::string& key) const {
  for (size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i].name == key) return i;
  GSPMD_USER_ERROR("model ", model_, " has no key '", key, "' (known: ", KnownKeys(), ")");
}

std::string ModelConfig::KnownKeys() const {
  std::vector<std::string> names;
  for (const ModelKey& key : keys_) names.push_back(key.name);
  return Join(names, ", ");
}

void ModelConfig::Set(const std::string& key, const std::string& value) {
  const size_t index = IndexOf(key);
  const ModelKey& spec = keys_[index];
  switch (spec.kind) {
    case ModelKey::Kind::kInt: {
      int64_t parsed = 0;
      if (!ParseInt(value, parsed) || parsed < spec.min)
        GSPMD_USER_ERROR("model ", model_, ": ", key, "=", value, ": expected an integer >= ", spec.min);
      values_[index] = std::to_string(parsed);
      return;
    }
    case ModelKey::Kind::kNumber: {
      double parsed = 0;
      if (!ParseNumber(value, parsed))
        GSPMD_USER_ERROR("model ", model_, ": ", key, "=", value, ": expected a number");
      values_[index] = NumberText(parsed);
      return;
    }
    case ModelKey::Kind::kChoice:
      for (const std::string& choice : spec.choices) {
        if (choice != value) continue;
        values_[index] = value;
        return;
      }
      GSPMD_USER_ERROR("model ", model_, ": ", key, "=", value, ": expected one of ", Join(spec.choices, ", "));
  }
}

void ModelConfig::SetAssignment(const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    GSPMD_USER_ERROR("model ", model_, ": --set '", assignment, "': expected KEY=VALUE (keys: ", KnownKeys(), ")");
  Set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

void ModelConfig::SetMesh(const std::string& text) {
  std::vector<std::string> names;
  for (const Mesh::Axis& axis : mesh_.axes) names.push_back(axis.name);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      GSPMD_USER_ERROR("model ", model_, ": --mesh '", text, "': expected AXIS=N,... over the axes ", Join(names, ", "));
    const std::string name = item.substr(0, eq);
    int64_t size = 0;
    if (!ParseInt(item.substr(eq + 1), size) || size < 1)
      GSPMD_USER_ERROR("model ", model_, ": --mesh ", item, ": expected a positive axis size");
    bool found = false;
    for (Mesh::Axis& axis : mesh_.axes) {
      if (axis.name != name) continue;
      axis.size = size;
      found = true;
    }
    if (!found)
      GSPMD_USER_ERROR("model ", model_, ": --mesh names axis '", name, "', but its mesh has the axes ",
                       Join(names, ", "));
    pos = comma + 1;
  }
}

const std::string& ModelConfig::Value(const std::string& key) const { return values_[IndexOf(key)]; }

int64_t ModelConfig::Int(const std::string& key) const {
  const size_t index = IndexOf(key);
  GSPMD_CHECK(keys_[index].kind == ModelKey::Kind::kInt, "model key ", key, " is not an integer");
  int64_t value = 0;
  GSPMD_CHECK(ParseInt(values_[index], value), "model key ", key, " holds ", values_[index]);
  return value;
}

double ModelConfig::Number(const std::string& key) const {
  const size_t index = IndexOf(key);
  GSPMD_CHECK(keys_[index].kind == ModelKey::Kind::kNumber, "model key ", key, " is not a number");
  double value = 0;
  GSPMD_CHECK(ParseNumber(values_[index], value), "model key ", key, " holds ", values_[index]);
  return value;
}

const std::string& ModelConfig::Choice(const std::string& key) const {
  const size_t index = IndexOf(key);
  GSPMD_CHECK(keys_[index].kind == ModelKey::Kind::kChoice, "model key ", key, " is not a choice");
  return values_[index];
}

int64_t ModelConfig::AxisSize(const std::string& axis) const {
  for (const Mesh::Axis& a : mesh_.axes)
    if (a.name == axis) return a.size;
  GSPMD_CHECK(false, "model ", model_, " has no mesh axis ", axis);
  return 0;
}

std::string ModelConfig::MeshText() const {
  std::vector<std::string> items;
  for (const Mesh::Axis& axis : mesh_.axes) items.push_back(axis.name + "=" + std::to_string(axis.size));
  return Join(items, ",");
}

std::string ModelConfig::ToString() const {
  std::string text;
  for (size_t i = 0; i < keys_.size(); ++i) text += keys_[i].name + "=" + values_[i] + " ";
  return text + "mesh=" + MeshText();
}

}  // namespace gspmd
