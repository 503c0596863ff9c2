// Simulate: the estimated step of a per-device program on a chip and topology: FLOPs, HBM
// traffic, communication per collective, peak memory, step time with and without
// compute/communication overlap, utilization, and where the time goes by source op.
//
// Time of one kernel (kernel_plan.h) = overhead + the largest of
//   matrix:  FLOPs x passes / (rate of its compute type x efficiency x tile use)
//   vector:  (FLOPs + transcendentals x transcendental_cost) / (vector rate x efficiency)
//   memory:  bytes read and written / (HBM bandwidth x efficiency)
// where tile use is the fraction of the matrix unit's k x n tiles that the dot's dims fill.
// Collectives cost what collective_model.h says. Without overlap the step is the sum of both;
// with overlap kernels and collectives run on two in-order streams, each starting when its
// stream is free and its operands are ready (control flow waits for both and runs its
// computations the same way; loop bodies count trip-count times, so a windowed einsum's
// permute overlaps the partial dot of its own trip and each trip pays its latency). The part
// of each collective during which no kernel runs is its exposed time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/comm_report.h"
#include "ir/module.h"
#include "simulate/chip_spec.h"
#include "simulate/collective_model.h"
#include "simulate/memory_model.h"
#include "simulate/topology.h"

namespace gspmd::simulate {

struct SimulateOptions {
  // How the breakdown groups instructions: "op_name" (the op_name metadata without its
  // leading jit(...) component, cut to `breakdown_depth` components when > 0), "layer" (the
  // first layer-like token of the op_name: layer_3, layer3, block_2, l3, stage_1, also inside
  // transpose(...) and jvp(...); else its first component) or "opcode".
  std::string breakdown = "op_name";
  int64_t breakdown_depth = 0;
  // Estimate XLA's rematerialization when the program does not fit (memory_model.h); its
  // recomputation then adds to the compute time and the FLOPs.
  bool rematerialize = true;
};

// One collective instruction of the program, per execution, and how often a step runs it.
struct CollectiveLine {
  std::string name;
  std::string kind;
  std::string source;   // its breakdown key
  double executions = 1;
  CollectiveEstimate estimate;
  double exposed_s = 0;  // of estimate.time_s, per execution: not overlapped by compute
  std::string axes;     // the named mesh axes its groups run over ("'model'"), "" unknown
};

struct KindTotals {
  double count = 0;
  double bytes = 0;
  double time_s = 0;
  double exposed_s = 0;  // of time_s: while no kernel ran (the overlap schedule)
};

struct BreakdownEntry {
  std::string key;
  double compute_s = 0;  // kernel time, no overlap
  double comm_s = 0;     // collective time, no overlap
  double matrix_flops = 0;
  double vector_flops = 0;
  double hbm_bytes = 0;
  double comm_bytes = 0;
  double kernels = 0;
  double collectives = 0;
};

struct SimulationReport {
  std::string chip;
  std::string chip_path;
  std::string topology;
  std::string mesh;  // the program's named mesh axes ("data=2,model=4"), "" when it names none
  int64_t devices = 0;

  // Per device and step.
  double matrix_flops = 0;       // dot and convolution
  double vector_flops = 0;       // everything else
  double transcendentals = 0;
  double remat_flops = 0;        // part of matrix + vector FLOPs spent recomputing (marked or estimated)
  double model_flops = 0;        // matrix FLOPs that are not rematerialization
  double hbm_bytes = 0;          // with the kernel (fusion) estimate
  double hbm_bytes_unfused = 0;  // every instruction reading its operands and writing its result
  double kernels = 0;

  CommReport comm;                          // `gspmd report`'s figures, unchanged
  std::map<std::string, KindTotals> comm_by_kind;
  std::vector<CollectiveLine> collectives;  // program order (loop bodies after their loop)

  double compute_s = 0;  // sum of kernel times, rematerialization included
  double comm_s = 0;     // sum of collective times
  double exposed_comm_s = 0;  // of comm_s: while no kernel ran; step_time_s = compute_s + exposed_comm_s
  double step_time_no_overlap_s = 0;
  double step_time_s = 0;  // with overlap

  std::string peak_compute_type;  // the matrix compute type most FLOPs ran at
  double peak_flops_per_s = 0;
  double mfu = 0;  // model_flops / (step_time_s x peak_flops_per_s)
  double hfu = 0;  // matrix_flops (recomputation included) / (step_time_s x peak_flops_per_s)

  MemoryEstimate memory;
  // How `--windowed-einsum auto` decided from the chip's model, when it did ("" otherwise):
  // the loops kept and the step time with and without them.
  std::string windowed_einsum;
  std::vector<BreakdownEntry> breakdown;  // by compute + comm time, largest first
  std::vector<std::string> warnings;
};

SimulationReport Simulate(const Module& per_device, const ChipSpec& chip, const Topology& topology,
                          const SimulateOptions& options = {});

// Re-types every floating-point array of the module (shapes of instructions and parameters)
// to `type`, so that estimates see e.g. bf16 math without other changes. Literals keep their
// values: the module is for estimation only afterwards.
void RetypeFloatMath(Module& module, ElementType type);

// Mixed precision, as large models train: the same re-typing, except for the entry's parameters
// and for what the entry computes from them and the dots' results on the way to its outputs
// without passing through another dot or convolution (the weight update and the optimizer
// state, gradient collectives, the loss), which keep their types. Activations, the forward
// and backward math and the dots themselves run in `type`.
void RetypeFloatMathKeepingState(Module& module, ElementType type);

// The op_name of an instruction's metadata ("" when none).
std::string OpNameOf(const Instruction& instruction);

// The op_name of `instruction`, or, for what passes add without one (the partitioner's
// reshards), of the nearest instruction it reads or feeds that has one ("" when none within
// four steps).
std::string NearestOpNameOf(const Instruction& instruction);

// The breakdown entry `options.breakdown` charges `instruction` to, from NearestOpNameOf
// ("layer_3", "transpose(head)", "(no op_name) all-reduce"); `gspmd report --html` labels its
// collectives the same way.
std::string BreakdownKeyOf(const Instruction& instruction, const SimulateOptions& options);

std::string FormatSimulationReport(const SimulationReport& report, int64_t top_entries = 15);
nlohmann::json SimulationReportToJson(const SimulationReport& report);

}  // namespace gspmd::simulate
