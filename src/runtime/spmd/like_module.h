// Run options for a per-device program taken from a "like" module (the unpartitioned or
// propagated program it came from), as `gspmd run --spmd FILE --like propagated.hlo` needs.
#pragma once

#include "ir/module.h"
#include "runtime/spmd/spmd_executor.h"

namespace gspmd {

// Options for RunSpmd(per_device, ...):
//   num_devices: the per-device module's num_partitions (replica_count for pmap-style ones);
//   parameter_shardings: each entry parameter's own sharding, else the like module's entry
//     parameter's, else replicated;
//   root_sharding: the per-device root's sharding, else the like module's root's (absent
//     when neither has one: replicated);
//   global_result_shapes: the leaves of the like module's entry root shape.
// `like` may be null (then only the per-device module is used). A like module whose entry
// has a different number of parameters or result arrays is a UserError.
SpmdRunOptions OptionsFromLikeModule(const Module& per_device, const Module* like);

}  // namespace gspmd
