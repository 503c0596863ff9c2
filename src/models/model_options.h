// ModelOptions: sizes, meshes and modes of the builder-made model programs (src/models/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gspmd {

// One flat set of knobs shared by every model; each model reads the ones it uses.
struct ModelOptions {
  // Transformer (Megatron-style data x model parallel).
  int64_t layers = 2;
  int64_t batch = 4;
  int64_t seq = 16;
  int64_t d_model = 32;
  int64_t heads = 4;
  int64_t head_dim = 8;
  int64_t d_ff = 128;
  int64_t data_parallel = 2;   // mesh axis 'data'
  int64_t model_parallel = 4;  // mesh axis 'model'
  bool train = true;           // forward + backward + SGD update; false: forward only
  double learning_rate = 0.01;

  // GShard MoE layer (d_model is the token width).
  int64_t experts = 4;
  int64_t groups = 4;
  int64_t group_size = 8;      // tokens per group
  int64_t capacity = 4;        // slots per expert and group
  int64_t expert_hidden = 32;
  int64_t expert_parallel = 4; // mesh axis 'expert' (splits groups and experts)

  // Pipeline (d_model is the layer width).
  int64_t stages = 4;          // mesh axis 'stage'
  int64_t microbatches = 6;
  int64_t microbatch_size = 2;

  // Sets one option from text ("layers", "32"); unknown keys or bad values are UserErrors
  // listing the known keys.
  void Set(const std::string& key, const std::string& value);
  static std::vector<std::string> Keys();
};

}  // namespace gspmd
