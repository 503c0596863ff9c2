// ChipSpec: every constant of the cost model for one accelerator and its network, read from a
// chip description file (data/chips/NAME.json, or any file a user names).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gspmd::simulate {

// How a dot or convolution of one element type and precision runs on the matrix units:
// the rate of `compute_type` (a key of ChipSpec::matrix_flops), `passes` times over.
// TPU: f32 at DEFAULT is one bf16 pass, HIGHEST six (bf16_6x).
struct MatrixMode {
  std::string compute_type;
  double passes = 1;
};

// One level of the network, innermost first. A level's members are "nodes": a device for the
// innermost level, otherwise one whole member of the level below (a chip of two TPU cores, a
// node of eight GPUs). Bandwidths are per node and per direction and are shared by the
// node's devices, which all communicate at once in an SPMD program.
//   switch: every node reaches every other through a switch at `bandwidth` (NVLink, InfiniBand,
//           the two cores of a TPU v3 chip).
//   torus:  nodes on a grid of up to `max_shape` with nearest-neighbour links of `bandwidth`
//           each way, two per dimension. A dimension of a slice has wraparound links when its
//           extent is a multiple of `wraparound_multiple` for that dimension (TPU v3: 32, only
//           a whole pod axis; TPU v4: 4, any multiple of a cube; 0: never).
struct NetworkLevel {
  enum class Kind { kSwitch, kTorus };
  std::string name;
  Kind kind = Kind::kSwitch;
  std::vector<std::string> dim_names;  // one per dimension ("x", "y"); a switch has one
  std::vector<int64_t> max_shape;      // largest machine, in nodes per dimension
  std::vector<int64_t> wraparound_multiple;  // torus: per dimension (0: never)
  double bandwidth = 0;                // bytes/s per node and direction: a switch port, or one torus link
  double latency_s = 0;                // per hop (torus) or per step (switch)
};

struct ChipSpec {
  std::string name;
  std::string description;
  std::string path;  // where it was read from ("builtin:tpu-v3" for the shipped ones)

  // Compute, per device.
  std::map<std::string, double> matrix_flops;      // compute type -> FLOP/s on the matrix units
  double vector_flops = 0;                         // elementwise FLOP/s (f32)
  double transcendental_cost = 1;                  // vector FLOPs per exp/log/tanh/... element
  std::map<std::string, MatrixMode> f32_dot;       // precision (DEFAULT, HIGH, HIGHEST) -> mode
  int64_t matrix_tile = 1;                         // matrix-unit tile edge; smaller dims waste it
  std::map<std::string, double> efficiency;        // dot, convolution, vector, memory
  double op_overhead_s = 0;                        // fixed cost of each kernel launch

  // Memory, per device.
  int64_t hbm_bytes = 0;
  double hbm_bandwidth = 0;  // bytes/s

  // Network: levels innermost first; standard slice shapes of the outermost level (in its
  // nodes) from which the default topology is picked; efficiency per collective kind.
  std::vector<NetworkLevel> levels;
  std::vector<std::vector<int64_t>> slices;
  std::map<std::string, double> collective_efficiency;  // "all-reduce", "all-to-all", ...
  double all_to_all_message_s = 0;  // fixed cost of each of the n-1 pieces an all-to-all sends

  // Efficiency for `kind` (1 when the file does not name it).
  double Efficiency(const std::string& kind) const;
  double CollectiveEfficiency(const std::string& kind) const;
};

// Reads a chip description: `name_or_path` is a file path (it contains '/' or ends in
// ".json"), or a name looked up as NAME.json in the directories of $GSPMD_CHIP_PATH
// (colon-separated) and then among the chips built into gspmd (data/chips). UserError for an
// unknown name (listing the known ones) and for a malformed file (file:line:col, the field
// and what was expected).
ChipSpec LoadChipSpec(const std::string& name_or_path);

// Parses the text of a chip description; `origin` names it in errors.
ChipSpec ParseChipSpec(const std::string& text, const std::string& origin);

// Names of the built-in chips, sorted.
std::vector<std::string> BuiltinChipNames();

}  // namespace gspmd::simulate
