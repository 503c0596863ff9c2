// What a global program costs once compiled: propagate (recording where each sharding came
// from), partition, and attribute every collective of the per-device program to the global
// instruction it was made for. Lint runs it on the program as written and on each candidate fix.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "partitioner/device_axes.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"

namespace gspmd::lint {

// Loads a fresh copy of the program (each evaluation propagates its own copy in place).
using ProgramLoader = std::function<std::unique_ptr<Module>()>;

// A change to the program's annotations: `instruction` gets `sharding` (nullopt: its
// annotation is removed and propagation chooses).
struct AnnotationEdit {
  std::string instruction;
  std::optional<Sharding> sharding;
};

// One collective of the per-device program, with the global instruction it was made for.
struct AttributedCollective {
  const Instruction* collective = nullptr;  // in `partitioned`
  std::string source;                       // global instruction name ("" when unknown)
  double bytes = 0;                         // per device, times its trip count
};

struct Evaluation {
  std::unique_ptr<Module> global;  // after propagation: every instruction has a sharding
  PropagationResult propagation;   // with origins
  PartitionResult partitioned;
  int64_t num_devices = 0;
  double comm_bytes_per_device = 0;
  int64_t peak_bytes_per_device = 0;
  std::vector<AttributedCollective> collectives;  // in program order
  // The global instruction each InstructionSource belongs to: a per-device instruction shares
  // its source with the global instruction it was made for, so this names that instruction
  // whatever the source's own name says (a StableHLO op's is its SSA name, "%13").
  std::map<const InstructionSource*, std::string> global_names;

  // The name of the global instruction `per_device` was made for ("" when unknown).
  std::string GlobalName(const Instruction& per_device) const;
};

// Loads, applies `edits`, propagates and partitions onto `devices` (0: the module's count).
// UserErrors (bad annotations) propagate to the caller.
Evaluation Evaluate(const ProgramLoader& load, const std::vector<AnnotationEdit>& edits, int64_t devices);

// Total communication bytes per device after `edits` (the figure a fix is judged by).
double CommBytesAfter(const ProgramLoader& load, const std::vector<AnnotationEdit>& edits, int64_t devices);

// The instruction named `name` in any computation of `module` (nullptr when absent).
Instruction* FindAnyInstruction(const Module& module, const std::string& name);

// The device axes of the mesh the program's shardings imply: the common refinement of the axes
// of every array sharding in `module` (so an axis every value is replicated over shows up
// too). Sorted from the largest stride (mesh axis 0, the major one) down. Empty when some
// sharding is not a product of device axes.
std::vector<DeviceAxis> ImpliedMeshAxes(const Module& module, int64_t num_devices);

// "mesh axis 1 (size 4)" for an axis of ImpliedMeshAxes.
std::string MeshAxisName(const std::vector<DeviceAxis>& mesh, const DeviceAxis& axis);

}  // namespace gspmd::lint
