// Removes the user's sharding annotations from a global program: what `gspmd model --set
// sharding=none` writes and what `gspmd autoshard --keep-annotations` drops.
#pragma once

#include <string>

#include "ir/module.h"

namespace gspmd {

enum class AnnotationsToRemove {
  kAll,            // parameters, the result and intermediates
  kIntermediates,  // only Sharding custom-calls and shardings inside the program: the entry's
                   // parameters and result keep theirs
};

// Clears the shardings of instructions and replaces each `custom-call(...)
// custom_call_target="Sharding"` by its operand. Manual (shard_map) regions are program
// semantics, not annotations, and stay: instructions with a manual sharding, and the Sharding
// custom-calls that feed SPMDFullToShardShape or read SPMDShardToFullShape. Returns how many
// annotations were removed.
//   %s = f32[8,4] custom-call(%x), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]}
//   %y = f32[8,4] add(%s, %s)          ->   %y = f32[8,4] add(%x, %x)
// Shardings read from StableHLO's Shardy form (the xla.sdy.sharding frontend attribute) are
// annotations too and go the same way.
int64_t RemoveShardingAnnotations(Module& module, AnnotationsToRemove what = AnnotationsToRemove::kAll);

// `frontend_attributes` text (key="value",key2=value2) without the entry named `key`.
std::string WithoutFrontendAttribute(const std::string& text, const std::string& key);

}  // namespace gspmd
