// Run options for a per-device program: from a "like" module (the unpartitioned or propagated
// program it came from, as `gspmd run --spmd FILE --like propagated.hlo` needs), or from what
// the per-device module records about itself (entry shardings, global result shapes).
#pragma once

#include <string>
#include <vector>

#include "ir/module.h"
#include "runtime/spmd/spmd_executor.h"

namespace gspmd {

// The module frontend attribute under which PartitionModule records the global shape of the
// entry result, so that a per-device module can crop uneven outputs without a like module:
//   HloModule m, ..., frontend_attributes={gspmd.global_result_shapes="(f32[10,4], s32[3])"}
inline constexpr char kGlobalResultShapesAttribute[] = "gspmd.global_result_shapes";

// Options for RunSpmd(per_device, ...):
//   num_devices: the per-device module's num_partitions (replica_count for pmap-style ones);
//   parameter_shardings: each entry parameter's own sharding, else the like module's entry
//     parameter's, else replicated;
//   root_sharding: the per-device root's sharding, else the like module's root's (absent
//     when neither has one: replicated);
//   global_result_shapes: the leaves of the like module's entry root shape; without a like
//     module, the leaves recorded under kGlobalResultShapesAttribute (none when absent).
// `like` may be null (then only the per-device module is used). A like module whose entry
// has a different number of parameters or result arrays is a UserError, and so is a recorded
// global result shape that does not parse or has another number of leaves.
SpmdRunOptions OptionsFromLikeModule(const Module& per_device, const Module* like);

// One entry of the module's frontend_attributes={...} (quoted values unquoted; "" when
// absent). A malformed attribute list is a UserError.
std::string ModuleFrontendAttribute(const Module& module, const std::string& key);
// Sets one entry (replacing an entry of that key, keeping the others), written key="value".
void SetModuleFrontendAttribute(Module& module, const std::string& key, const std::string& value);

// The array leaves of `shape`, flattened in order, without layouts.
std::vector<Shape> LeafShapes(const Shape& shape);

}  // namespace gspmd
