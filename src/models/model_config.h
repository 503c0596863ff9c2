// ModelConfig: the settings of one training-step model (named keys with defaults and a mesh),
// overridden from text as `gspmd model NAME --set KEY=VALUE --mesh AXIS=N,...` gives them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sharding/mesh.h"

namespace gspmd {

// One setting of a model: an integer (>= 1 unless min says otherwise), a number, or one of a
// few words.
struct ModelKey {
  enum class Kind { kInt, kNumber, kChoice };
  std::string name;
  Kind kind = Kind::kInt;
  std::string default_value;
  std::string help;
  std::vector<std::string> choices;  // kChoice
  int64_t min = 1;                   // kInt
};

ModelKey IntKey(std::string name, int64_t default_value, std::string help, int64_t min = 1);
ModelKey NumberKey(std::string name, double default_value, std::string help);
ModelKey ChoiceKey(std::string name, std::vector<std::string> choices, std::string help);

// Values for every key of one model, plus its mesh (named axes, sizes). Keys and axes are
// fixed by the model; Set / SetMesh check names and values and throw UserErrors that list
// what is known:
//   ModelConfig c("dense_lm", keys, {{"x", 2}, {"y", 4}});
//   c.Set("layers", "4");                 c.Int("layers") == 4
//   c.SetAssignment("optimizer=adam");    c.Choice("optimizer") == "adam"
//   c.SetMesh("x=4,y=2");                 c.mesh() is mesh['x'=4,'y'=2]
class ModelConfig {
 public:
  ModelConfig(std::string model, std::vector<ModelKey> keys, std::vector<Mesh::Axis> mesh_axes);

  const std::string& model() const { return model_; }
  const std::vector<ModelKey>& keys() const { return keys_; }

  void Set(const std::string& key, const std::string& value);
  void SetAssignment(const std::string& assignment);  // "KEY=VALUE"
  // "AXIS=N,AXIS=N": every named axis must be one of the model's; unnamed ones keep their size.
  void SetMesh(const std::string& text);

  int64_t Int(const std::string& key) const;
  double Number(const std::string& key) const;
  const std::string& Choice(const std::string& key) const;
  const std::string& Value(const std::string& key) const;

  const Mesh& mesh() const { return mesh_; }
  int64_t AxisSize(const std::string& axis) const;

  // "layers=2 d_model=32 ... mesh=x=2,y=4": every key, in declaration order, then the mesh.
  std::string ToString() const;
  std::string MeshText() const;  // "x=2,y=4"

 private:
  size_t IndexOf(const std::string& key) const;
  std::string KnownKeys() const;

  std::string model_;
  std::vector<ModelKey> keys_;
  std::vector<std::string> values_;
  Mesh mesh_;
};

}  // namespace gspmd
