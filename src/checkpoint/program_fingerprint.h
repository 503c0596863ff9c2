// The fingerprint a checkpoint records of the program that wrote it: a hash of the step's
// computation without what says how it is laid out (shardings, num_partitions, the model's
// config line with its mesh), so the same model written for another mesh resumes from it and
// a different model is refused.
#pragma once

#include <string>

#include "ir/module.h"

namespace gspmd {

// The module's text with `, sharding={...}`, `num_partitions=N` and `gspmd.config="..."`
// removed (what the fingerprint hashes; tests print it).
std::string LayoutFreeText(const Module& module);
// FNV-1a 64 of LayoutFreeText, as 16 hex digits.
std::string ProgramFingerprint(const Module& module);

}  // namespace gspmd
