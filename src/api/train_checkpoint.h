// `gspmd train --checkpoint-dir`: the training loop with the carry sharded on the devices,
// checkpointed every K steps and resumed from the newest complete checkpoint (api::TrainJob
// calls it when options.checkpoint.dir is set).
#pragma once

#include "api/gspmd.h"

namespace gspmd::api {

// Returns true (an MPI job is refused: not built yet). Errors are UserErrors.
bool TrainWithCheckpoints(const TrainJobOptions& options);

}  // namespace gspmd::api
