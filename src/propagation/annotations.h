// Reading the user's sharding annotations for propagation: sharding= attributes, Sharding
// custom-calls (with unspecified_dims), Shardy's xla.sdy.* attributes and custom-calls, manual
// (shard_map) regions and shard_as/shard_like groups.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/module.h"
#include "partitioner/device_axes.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"

namespace gspmd::propagation {

// One annotated instruction: its sharding is the user's and is never replaced; only the dims
// listed in `open_dims` (Sharding custom-call unspecified_dims, Shardy "?" dims) may be refined.
struct UserAnnotation {
  Sharding sharding;            // without any shard group; tuple-shaped values get a tuple sharding
  std::vector<int64_t> open_dims;
  bool written = true;          // false when derived (xla.sdy attributes): written back at the end
  // Set when the annotation belongs to another instruction: the operand of a Sharding
  // custom-call takes the constraint as its own, as XLA does.
  const Instruction* from = nullptr;
  // Shardy priorities of an array annotation's dims ({"x"}p1: 1; unwritten: 0, the highest).
  // Empty when every dim has priority 0.
  std::vector<int64_t> dim_priorities{};

  // The annotation while propagation runs user priority `round` (Shardy: priorities propagate
  // in rounds, lower numbers first): dims of later rounds are not sharded yet and not open,
  // and are never sharded by propagation meanwhile. The annotation itself when no dim waits.
  UserAnnotation ForRound(int64_t round) const;
};

// A shard_map body: every value in it is manual over `manual` device axes; the other axes
// may still split its dims.
struct ManualContext {
  std::vector<DeviceAxis> manual;  // empty with fully_manual: {manual}
  bool fully_manual = true;
  int64_t num_devices = 0;
  std::string source;              // the instruction entering the region (for --explain)
  // The sharding of a rank-`rank` value that is manual over the manual axes and replicated
  // over the others.
  Sharding Template(int64_t rank) const;
  // Does `sharding` have exactly this context's manual axes?
  bool Accepts(const Sharding& sharding, int64_t rank) const;
};

// A proposal the annotations make for a neighbouring value once, before propagation (e.g. a
// shard_map's in_shardings for the operands of xla.sdy.GlobalToLocalShape).
struct SeedProposal {
  const Instruction* instruction = nullptr;
  int64_t leaf = 0;
  Sharding sharding;
  const Instruction* from = nullptr;  // the annotation that makes the proposal
  std::string rule;
};

// Values whose shardings are tied: shard_as (and xla.sdy.ShardingGroup) members end with one
// sharding; shard_like members exchange proposals.
struct ShardGroupMembers {
  bool same_sharding = true;
  std::vector<const Instruction*> members;
};

struct Annotations {
  std::unordered_map<const Instruction*, UserAnnotation> fixed;
  // shard_as / shard_like groups and xla.sdy.ShardingGroup groups (ordered by kind and id).
  std::vector<ShardGroupMembers> groups;
  std::vector<SeedProposal> seeds;
  // Computations that are manual regions (shard_map bodies and what they call).
  std::unordered_map<const Computation*, ManualContext> manual_computations;
  // Device count implied by the meshes and shardings (0 when nothing says).
  int64_t required_devices = 0;
  // The distinct user priorities of the annotations' dims, ascending; empty when all are 0
  // (then propagation runs once, as without priorities).
  std::vector<int64_t> priority_rounds;
};

// Reads every annotation of `module`. `num_devices` is the device count propagation works
// with (0 when not known yet: manual contexts are then built for the largest count seen).
// Malformed annotations are UserErrors naming the instruction.
Annotations ReadAnnotations(const Module& module, int64_t num_devices);

// The device count the module's shardings and meshes need (0 when none says).
int64_t RequiredDeviceCount(const Module& module);

// The dims of a Sharding custom-call's backend_config "unspecified_dims=[1,2]" (empty when
// absent).
std::vector<int64_t> UnspecifiedDims(const Instruction& instruction);

// Per value described by a Shardy sharding text (#sdy.sharding / #sdy.sharding_per_value):
// the dims written open ("?").
std::vector<std::vector<int64_t>> SdyOpenDims(const std::string& text);
// Per value: each dim's priority ({"x"}p2 -> 2, 0 when unwritten).
std::vector<std::vector<int64_t>> SdyDimPriorities(const std::string& text);

// True for custom-calls that only annotate their single operand (Sharding, xla.sdy.Sharding,
// xla.sdy.FuncResultSharding, xla.sdy.PropagationBarrier, ...).
bool IsAnnotationCustomCall(const Instruction& instruction);

}  // namespace gspmd::propagation
