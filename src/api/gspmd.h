// The library's one public entry: load a program, annotate, propagate, partition, report, lint,
// show, simulate, evaluate and run it; write a model's training step and train it. Options go in
// structs, results come back as values, and bad input is a located, typed UserError
// (support/diagnostic.h). The CLI's subcommands and the Python package are thin layers over
// these functions.
//
//   gspmd::api::Program program = gspmd::api::Program::Load("pre.hlo");
//   gspmd::api::Partitioned p = gspmd::api::Partition(program, {.devices = 8});
//   gspmd::CommReport report = gspmd::api::Report(p.per_device);
//   std::vector<gspmd::Literal> out = gspmd::api::Run(program, inputs, {.devices = 8});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm_report.h"
#include "autoshard/program/plan_search.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "lint/lint.h"
#include "models/model_config.h"
#include "partitioner/windowed_einsum_options.h"
#include "propagation/propagation.h"
#include "sharding/mesh.h"
#include "simulate/simulator.h"
#include "support/diagnostic.h"
#include "train/trainer.h"

namespace gspmd::api {

// How a program's text is written.
enum class Format {
  kAuto,       // ".mlir", or text that starts like MLIR (`module @...`), is StableHLO; the rest HLO text
  kHlo,        // XLA's HLO text
  kStableHlo,  // StableHLO MLIR text (with Shardy or mhlo.sharding annotations)
};

// One program (global or per-device) and the name errors about it use. Cheap to copy: copies
// share the module, which no pass changes in place: a pass given a copy works on a fresh module
// of its own (read again from the text), one given the last holder (std::move) takes its module.
class Program {
 public:
  // Reads a file (Format::kAuto decides by its name and first line). Errors name FILE:LINE:COL.
  static Program Load(const std::string& path, Format format = Format::kAuto);
  // Parses text; `name` stands for the file in error messages and in kAuto's choice.
  static Program FromText(std::string text, const std::string& name = "<text>", Format format = Format::kAuto);
  // Takes a module built in memory (the builder, a model, a pass).
  static Program FromModule(std::unique_ptr<Module> module, const std::string& name = "<module>");

  const Module& module() const;
  const std::string& name() const;
  // The module as XLA's HLO text.
  std::string Text() const;
  // A module the caller may change: a fresh copy, or this program's own when it is an rvalue
  // that no other Program shares (the program is then empty).
  std::unique_ptr<Module> CopyModule() const;
  std::unique_ptr<Module> TakeModule() &&;
  // A per-device (partitioned) program: the partitioner's output, or one with collectives or
  // partition-id outside manual regions; or what SetPerDevice said.
  bool IsPerDevice() const;
  // Overrides the detection (the CLI's --per-device / --global): true per-device, false global,
  // nullopt detect. Kept by copies of this Program, not by programs derived from it.
  void SetPerDevice(std::optional<bool> per_device) { per_device_ = per_device; }
  // Whether some instruction still lacks a sharding (propagation would choose it).
  bool NeedsPropagation() const;
  // The language it was written in (kHlo for FromModule): lint writes its fixes in it.
  Format format() const;
  // This program with its mesh axes named (--mesh AXIS=N,... for HLO text, which has no
  // sdy.mesh), so show, lint, simulate, report and --explain print PartitionSpecs; "" leaves
  // it as it is. `command` names the CLI command in errors: a malformed mesh, one whose device
  // count is not the program's or one other than its own sdy mesh are UserErrors.
  Program WithMesh(const std::string& mesh, const std::string& command) const;

 private:
  struct State;
  explicit Program(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
  std::optional<bool> per_device_;
};

// Whether propagation may choose the shardings of the entry parameters / the result:
// "" (the default: keep written ones, propagate unwritten ones), "true", "false", or one value
// per parameter / result element ("true,false").
struct BoundaryOptions {
  std::string to_parameters;
  std::string to_outputs;
};

struct PropagateOptions {
  int64_t devices = 0;   // 0: from the module
  bool explain = false;  // record where each sharding came from
  BoundaryOptions boundary;
};

struct Propagated {
  Program program;  // every instruction sharded
  PropagationResult result;
  // HLO text; with `explain` each instruction carries /* from %w (user) via dot backward */.
  std::string Text(bool explain) const;
};

// Assigns a sharding to every instruction of a global program.
Propagated Propagate(Program program, const PropagateOptions& options = {});

// Which all-gathers before dots (reduce-scatters after them) become windowed loops (collective
// matmul): "auto" (with a chip, as `simulate`, `autoshard` and PartitionOptions::chip have: the
// loops that make the simulated step faster; without one, a collective of at least 1 GiB per
// device over at most 64 devices), "off" or "always".
inline constexpr const char* kWindowedEinsumDefault = "auto";

struct PartitionOptions {
  int64_t devices = 0;  // 0: num_partitions, else derived from the shardings
  BoundaryOptions boundary;
  std::string windowed_einsum = kWindowedEinsumDefault;
  // auto: decides each loop by this check (e.g. simulate::ChipWindowedCostCheck, a chip's
  // model) instead of the size threshold.
  WindowedEinsumCostCheck windowed_cost_check;
  // auto, without a check: the loops `gspmd simulate --chip CHIP` keeps (its default topology),
  // chosen by simulating the step with and without them (api/windowed_auto.h).
  std::string chip;
};

struct Partitioned {
  Program global;      // after propagation
  Program per_device;  // the SPMD program, num_partitions set
  int64_t num_devices = 0;
  std::vector<std::string> warnings;  // "involuntary full rematerialization of %x ..."
  std::string windowed_einsum;        // with PartitionOptions::chip: what auto tried and kept
};

// Propagates (where needed) and partitions a global program into one per-device program.
// A per-device program is refused (it would be partitioned twice).
Partitioned Partition(Program program, const PartitionOptions& options = {});

// Bytes sent per device by collective kind (ring model), collective counts, peak live bytes of
// a per-device program.
CommReport Report(const Program& per_device);

struct ShowOptions {
  std::vector<std::string> values;  // instruction names; empty: the entry parameters and result
  int64_t devices = 0;
  bool color = false;
  bool summary = false;       // one line per value (ShowSummaryText) instead of pictures
  int64_t max_pictures = 40;  // without `values`: draw this many, then say how many more (0: all)
};
// Tile grids (1-D/2-D) or dims tables of how values are laid out over the devices; a global
// program is propagated first. Without `values`, a program with more than max_pictures entry
// parameters and result ends after that many with "... M more values; use --value NAME or
// --summary".
std::string Show(const Program& program, const ShowOptions& options = {});

// One array that `gspmd show` lists: an entry parameter, the result, or a value asked for by
// name; a tuple is listed leaf by leaf (`leaf` is the index path, empty for an array value).
//   parameter 0 %a  f32[8,16] {devices=[2,4]<=[8]}: 8 tiles of f32[4,4] per device
struct ShownValue {
  std::string role;  // "parameter 0", "result", "result 3" (element 3 of a tuple instruction at the
                     // root, named by the value it holds), or "" for a value named by `values`
  std::string name;  // the instruction, without '%'
  std::vector<int64_t> leaf;
  Shape shape;       // global
  Sharding sharding = Sharding::Replicated();
  int64_t tiles = 1;             // distinct pieces the value is cut into
  int64_t devices_per_tile = 1;  // devices holding each (replication)
  Shape tile_shape;              // what one device holds (padded)
  std::string spec;              // its PartitionSpec ("P('data', None)") when the mesh names its axes, else ""
  std::string Label() const;     // "parameter 0 %a", "result 1 %w_new", "result %t{1}"
};
struct ShowResult {
  int64_t devices = 0;
  bool per_device = false;  // the program was per-device: shapes are shard shape x tiles
  std::vector<ShownValue> values;
  std::string mesh;  // the program's named mesh axes ("data=2,model=4"), "" when it names none
};
// What Show draws, as data (all values: no cap).
ShowResult ShowValues(const Program& program, const ShowOptions& options = {});
// The leaves of one instruction as ShowValues lists them.
std::vector<ShownValue> ShownLeaves(const std::string& role, const Instruction& value, bool per_device,
                                    int64_t devices);
// "mesh: 8 devices", one aligned line per value, then "total: 6 values, 2.50 KiB global, 320 B per
// device".
std::string ShowSummaryText(const ShowResult& result);
// {"devices", "per_device_program", "values": [{"name", "role", "shape", "dims", "dtype",
// "sharding" (XLA's text), "tiles", "tile_shape", "devices_per_tile", "bytes_per_device",
// "leaf" (tuple leaves only)}]}.
nlohmann::json ShowResultToJson(const ShowResult& result);

// Lint findings of a global program (lint::LintOptions: thresholds, device count, budget).
lint::LintReport Lint(const Program& program, const lint::LintOptions& options = {});

struct SimulateOptions {
  std::string chip = "tpu-v3";  // a built-in name, NAME.json in $GSPMD_CHIP_PATH, or a path
  std::string topology;         // e.g. "8x8"; "": the smallest standard slice
  std::string placement;        // e.g. "core,x,y"
  int64_t devices = 0;
  std::string compute_type;     // re-type the float math (e.g. "bf16")
  std::string mixed_precision;  // re-type the math but keep parameters and state
  std::string breakdown = "op_name";  // op_name, layer or opcode
  int64_t breakdown_depth = 0;
  bool rematerialize = true;
  int64_t memory_capacity_bytes = 0;  // per device; 0: the chip's HBM
  std::string windowed_einsum = kWindowedEinsumDefault;  // how a global program is partitioned
  // auto: which loops to keep is searched by simulating the step with and without each kind of
  // loop (up to windowed_search_steps programs, 0: only all the loops the per-dot price keeps,
  // and each collective kind alone); see api/windowed_auto.h.
  int64_t windowed_search_steps = 16;
  // Whether the program is per-device: nullopt decides by Program::IsPerDevice.
  std::optional<bool> per_device;
};
// One step of the program on a chip and cluster; a global program is partitioned first.
simulate::SimulationReport Simulate(Program program, const SimulateOptions& options = {});

// Evaluates a global program on one device with the reference interpreter: one array per entry
// parameter in, the leaves of the result out. A program with manual (shard_map) regions runs on
// its devices instead (one device cannot run per-device code alone).
std::vector<Literal> Eval(const Program& program, const std::vector<Literal>& inputs);

struct RunOptions {
  int64_t devices = 0;  // 0: num_partitions, else derived from the shardings
  BoundaryOptions boundary;
  // For a per-device program: the global program it came from, supplying the parameter and
  // root shardings and global shapes it lacks (XLA's propagated.hlo for its partitioned.hlo).
  const Program* like = nullptr;
  std::string windowed_einsum = kWindowedEinsumDefault;  // how a global program is partitioned
};
// Runs on simulated devices (threads of this process): global arrays in, global arrays out.
// A global program is partitioned first; a per-device one runs as it is.
std::vector<Literal> Run(const Program& program, const std::vector<Literal>& inputs, const RunOptions& options = {});

// The MPI backend of the CLI's jobs (RunJob, TrainJob): the devices are spread over the ranks
// of an MPI job started by `mpirun -np R`, `devices_per_rank` of them per rank as threads; a
// failing, killed or stuck rank ends the whole job with a message naming it.
struct MpiOptions {
  int64_t devices_per_rank = 1;
  double collective_timeout_s = 300;  // a collective that waits longer ends the job
};

// `gspmd run` as one call: FILE (a global program, propagated and partitioned first, or with
// `spmd` a per-device one) runs on devices with global inputs read from files (.npy or shard
// indexes; each device reads only its shards) and its results written to `out_dir` (global
// out<i>.npy, or with `sharded_output` each distinct shard once plus a shard index), one line
// per file on stdout. The devices are threads of this process, or with `mpi` the ranks of an
// MPI job. Returns false when an MPI job failed after its ranks said why (the caller exits 1).
struct RunJobOptions {
  std::string file;
  // Whether FILE is a per-device program: nullopt detects it (Program::IsPerDevice) and says so
  // on stderr when it is.
  std::optional<bool> per_device;
  std::string like;  // for a per-device FILE: the global program it came from
  int64_t devices = 0;
  std::vector<std::string> inputs;
  std::string out_dir;
  BoundaryOptions boundary;
  bool sharded_output = false;
  bool report_memory = false;     // each process's peak resident memory on stderr
  std::optional<MpiOptions> mpi;  // nullopt: threads of this process
  // Also evaluate the global program (FILE, or `like` for a per-device FILE) on one device with
  // the interpreter and compare every output (CompareLiterals with rtol/atol); a difference is
  // a UserError naming the output.
  bool check = false;
  double rtol = 1e-4;
  double atol = 1e-6;
  std::string windowed_einsum = kWindowedEinsumDefault;  // how a global FILE is partitioned
};
bool RunJob(const RunJobOptions& options);

// Each input must have its entry parameter's shape and element type (UserError naming the
// input, the parameter and both shapes). `input_names` (optional) name the inputs in messages.
void CheckInputs(const Program& program, const std::vector<Literal>& inputs,
                 const std::vector<std::string>& input_names = {});

// Writes `text` to the file `path` (UserError of kind kResource naming the path and the reason
// when it cannot be written).
void WriteTextFile(const std::string& path, const std::string& text);

// How one entry parameter is split over a named mesh, in JAX's vocabulary (PartitionSpec):
// one entry per leading dim, listing the mesh axes that dim is tiled over, major first (an
// empty entry is JAX's None: the dim stays whole); dims past the end are not split. Mesh axes
// no dim uses replicate the parameter (last_tile_dim_replicate), as JAX does.
//   {.name = "w", .dims = {{}, {"model"}}}     f32[16,32] -> devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate
struct ParameterSpec {
  std::optional<int64_t> index;  // the parameter number, or
  std::string name;              // its name (with or without '%')
  std::vector<std::vector<std::string>> dims;
};
// The program with the given parameters' shardings set (any they had is replaced) and
// num_partitions set to the mesh's device count; mesh devices are in iota order. Unknown
// parameters or axes, an axis used twice and more dims than the parameter has are UserErrors
// of kind kSharding naming the parameter.
Program Annotate(const Program& program, const std::vector<ParameterSpec>& specs, const Mesh& mesh);

// A model's training step (models/model_catalog.h), carrying only the user's annotations.
struct ModelOptions {
  std::string name;                   // a model (dense_lm, gshard_moe, pipelined_lm) or
  std::string preset;                 // a preset (gshard-128e-12l, ...): exactly one of them
  std::vector<std::string> settings;  // "KEY=VALUE", applied in order
  std::string mesh;                   // "AXIS=N,..."; "": the model's or the preset's
};
// The configuration the options describe (unknown names, keys and values are UserErrors that
// list the known ones).
ModelConfig ModelConfigFor(const ModelOptions& options);
Program Model(const ModelOptions& options);

// Training: a step compiled once and run again and again on simulated devices (threads), its
// carried outputs fed back as the next step's inputs (train/trainer.h).
struct TrainOptions {
  std::string carry;                     // "OUT:IN,..." ("": the module's, else inferred)
  std::string data_dir;                  // batches DIR/<input>.npy ("": the module's task)
  std::vector<Literal> inputs;           // the first step's inputs (empty: the module's inits)
  std::vector<std::string> input_names;  // name the inputs in messages (optional)
  bool check = false;                    // run every step on one device too and compare
  double rtol = 1e-4;
  double atol = 1e-6;
  uint64_t seed = 0;
};

// Sharded checkpoints of a training run: DIR/step-N/ holds one zarr v2 array per carried value
// (chunks = shards, each written once by the lowest device holding it) and checkpoint.json
// (checkpoint/checkpoint_store.h); a checkpoint appears only when complete.
struct CheckpointOptions {
  std::string dir;        // "": no checkpoints
  int64_t every = 0;      // also after every K-th step (0: only after the last step)
  int64_t keep = 0;       // keep the newest N complete checkpoints (0: all)
  bool resume = false;    // continue from the newest complete checkpoint in dir (none: from step 0)
  bool fallback = false;  // with resume: past a corrupt checkpoint to the previous one, saying so
};

// `gspmd train` as one call: FILE's step compiled once and run `steps` times, each step shown
// as `progress` says (auto: a bar on a terminal, else a line per step; bar; lines; quiet), then
// the last outputs saved to `save` and the loss plotted to `plot` (SVG) when asked. On threads
// (api::Training), or with `mpi` over the ranks of an MPI job that keep their shards of the
// carry between steps (nothing is gathered, except that with `train.check` the ranks assemble
// each step's outputs on rank 0, which checks them against one device). Returns false when an
// MPI job failed after its ranks said why (the caller exits 1).
struct TrainJobOptions {
  std::string file;
  int64_t steps = 1;
  std::vector<std::string> inputs;  // .npy files of the first step's inputs (none: the module's inits)
  int64_t devices = 0;              // 0: num_partitions
  TrainOptions train;               // carry, data, check, tolerances, seed (inputs: read from `inputs`)
  // The last step's outputs, one .npy per output named after the parameter it updates or its
  // metric (out<i> otherwise), and index.json mapping each file to its output
  // (train/saved_outputs.h); one line "saved N arrays to DIR" unless progress is quiet.
  std::string save;
  std::string plot;
  std::string progress = "auto";
  // Print the run as one JSON object on stdout at the end (per step: loss, metrics, seconds;
  // devices, totals, the check, what was saved) instead of the header and progress.
  bool json = false;
  std::optional<MpiOptions> mpi;    // nullopt: threads of this process
  // With checkpoint.dir: the carry stays sharded on the devices (threads backend) and is
  // checkpointed; --steps is the total, counting the steps a resumed checkpoint had done.
  CheckpointOptions checkpoint;
  std::string windowed_einsum = kWindowedEinsumDefault;  // how the step is partitioned
};
bool TrainJob(const TrainJobOptions& options);

// `gspmd checkpoint ls|verify DIR`: DIR's complete checkpoints, newest first (DIR may also be
// one step-N directory), with, when `verify`, the first problem of each ("" = every file is
// there with its size and checksum). Crash leftovers (.tmp-step-N) are listed as incomplete.
struct CheckpointSummary {
  std::string path;
  int64_t step = 0;
  int64_t bytes = 0;       // of the arrays' files
  int64_t arrays = 0;
  int64_t num_devices = 0;
  std::string mesh;        // "x=2,y=4" or ""
  std::string model;       // the model and its config, or the program's file
  std::string problem;     // verify: "" or "FILE: what is wrong"; unreadable metadata always
  bool incomplete = false; // a .tmp-step-N directory a crash left (never loaded)
};
std::vector<CheckpointSummary> DescribeCheckpoints(const std::string& dir, bool verify);

class Training {
 public:
  // Propagates and partitions the step for `devices` (0: num_partitions) once.
  explicit Training(const Program& step, int64_t devices = 0,
                    const std::string& windowed_einsum = kWindowedEinsumDefault);
  ~Training();
  Training(Training&&) noexcept;
  Training& operator=(Training&&) noexcept;

  // The partitioner's warnings, the device count and the per-device program.
  const std::vector<std::string>& warnings() const;
  int64_t num_devices() const;
  const Program& per_device() const;
  const Program& step() const;
  // Takes the first inputs, carry, batches and check settings (UserError when they do not fit
  // the step). Called once, before Step.
  void Start(TrainOptions options);
  const StepSignature& signature() const;
  // The outputs shown per step: the step's metric names, or "loss" for a float scalar output 0.
  std::vector<std::string> metric_names() const;
  int64_t tokens_per_step() const;
  // Runs the next step. With `check`, a result that differs from one device has `mismatch`
  // set; MismatchError says so.
  StepResult Step();
  UserError MismatchError(const StepResult& result) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// What Train tells its callback after each step.
struct TrainedStep {
  int64_t step = 0;                        // 0-based
  std::vector<std::string> metric_names;   // as Training::metric_names
  std::vector<double> metrics;             // their values this step
  double seconds = 0;                      // the sharded run
  double check_seconds = 0;                // the one-device run (check)
};
// Runs `steps` steps (>= 1) and returns the last step's outputs; a checked step that differs
// from one device is a UserError. The callback runs after each step.
std::vector<Literal> Train(const Program& step, int64_t steps, TrainOptions options, int64_t devices = 0,
                           const std::function<void(const TrainedStep&)>& on_step = nullptr);

// Autoshard: a sharding plan the user did not write. Searches the mesh (every factorization of
// the device count into 1 to 3 axes, or the one given) and one PartitionSpec per group of entry
// parameters that play the same role (identical layers share a decision), each plan
// partitioned and simulated as `gspmd simulate` would (autoshard/program/).
struct AutoshardOptions {
  std::string chip = "tpu-v3";
  int64_t devices = 0;              // 0: the program's num_partitions
  std::string mesh;                 // "AXIS=N,..."; "": search the mesh
  int64_t memory_budget_bytes = 0;  // per device; 0: the chip's HBM
  std::string keep = "all";         // the input's annotations kept as constraints: all|boundary|none
  double time_limit_s = 60;         // the best plan found by then is returned
  int64_t max_evaluations = 0;      // plans compiled and simulated per mesh; 0: no limit
  std::string compute_type;         // as SimulateOptions
  std::string mixed_precision;
  std::string windowed_einsum = kWindowedEinsumDefault;  // how every plan is partitioned (as SimulateOptions)
};

// One group's decision, in JAX's vocabulary and XLA's.
struct AutoshardGroupPlan {
  std::string label;                 // "l#.w1 x2"
  std::vector<std::string> parameters;
  std::string spec;                  // "P(None, 'y')", or "(propagated)" when left unannotated
  std::string sharding;              // "{devices=[1,4,2]<=[8] last_tile_dim_replicate}", or ""
  int64_t bytes = 0;                 // global, of all its parameters
};

// The alternatives weighed for one group the last time the search visited it.
struct AutoshardDecision {
  std::string group;
  std::string chosen;
  std::vector<std::pair<std::string, autoshard::PlanCost>> alternatives;  // spec, cost
};

struct AutoshardMeshResult {
  std::string mesh;  // "x=8,y=16"
  autoshard::PlanCost cost;
  int64_t evaluations = 0;
  bool stopped_early = false;
};

// A model's standard recipe, priced on one mesh (when the input is a `gspmd model` step).
struct AutoshardRecipe {
  std::string name;  // "sharding=2d opt_state_sharding=weight"
  std::string mesh;
  autoshard::PlanCost cost;
};

struct AutoshardResult {
  // The input with the chosen annotations, num_partitions set: PartitionSpecs on parameters,
  // plus a recipe's annotations of intermediates when the plan refines a recipe.
  Program program;
  std::string origin{};  // "search", or "recipe NAME, refined" / "recipe NAME"; ", remat=layer" added
  // Recomputation, for a model step: "layer" (the written step recomputes each layer in the
  // backward pass), "none" (it keeps activations; XLA rematerializes where memory runs out), or
  // "" when the input is not a `gspmd model` step (the simulator's estimate alone).
  std::string remat{};
  std::string mesh{};
  int64_t devices = 0;
  int64_t memory_budget_bytes = 0;
  autoshard::PlanCost cost{};
  std::optional<autoshard::PlanCost> input_cost{};  // the input's own annotations, when it has any
  std::vector<AutoshardMeshResult> meshes{};        // every mesh searched, in search order
  std::vector<AutoshardRecipe> recipes{};           // every standard recipe priced
  std::vector<AutoshardGroupPlan> plan{};
  std::vector<AutoshardDecision> decisions{};       // for the chosen mesh
  double solve_time_s = 0;
  // Matrix FLOPs of the whole step / (devices x peak FLOP/s): no plan can be faster.
  std::optional<double> lower_bound_s{};
  int64_t evaluations = 0;
  bool stopped_early = false;
};
AutoshardResult Autoshard(const Program& program, const AutoshardOptions& options = {});
// One object with mesh, step_time_s, mfu, peak_bytes_per_device, fits_memory, solve_time_s,
// lower_bound_s (null when unknown), the meshes, recipes and plan; with `explain` the
// decisions and their alternatives too.
nlohmann::json AutoshardResultToJson(const AutoshardResult& result, bool explain);

}  // namespace gspmd::api
