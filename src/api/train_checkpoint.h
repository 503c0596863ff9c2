// `gspmd train --checkpoint-dir`: the training loop with the carry sharded on the devices (threads or MPI),
// checkpointed every K steps and resumed from the newest complete checkpoint (api::TrainJob
// calls it when options.checkpoint.dir is set).
#pragma once

#include "api/gspmd.h"

namespace gspmd::api {

// Errors are UserErrors; returns false when an MPI job failed after its ranks said why.
bool TrainWithCheckpoints(const TrainJobOptions& options);

}  // namespace gspmd::api
