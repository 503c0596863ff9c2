// What a training-step module says about itself: each entry parameter's role and init, the
// carry mapping (which output feeds which input on the next step), the metric names, and the
// synthetic task, from the frontend attributes `gspmd model` writes (models/step_attributes.h),
// from --carry, or inferred from matching trailing outputs and inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"

namespace gspmd {

struct StepInput {
  std::string name;  // the parameter's name
  std::string role;  // "param", "opt_state", "batch", or "" when the module does not say
  std::string init;  // "normal(0.02)", "zeros", "ones", "task(tokens)", or ""
  Shape shape;
};

struct CarryPair {
  int64_t output;  // leaf of the flattened result
  int64_t input;   // entry parameter
};

struct StepSignature {
  std::vector<StepInput> inputs;
  std::vector<Shape> outputs;          // leaves of the entry result
  std::vector<CarryPair> carry;
  enum class CarrySource { kModule, kFlag, kInferred } carry_source = CarrySource::kModule;
  std::vector<std::string> metrics;    // names of outputs 0..k-1
  std::string task;                    // "" when the module has none
  int64_t vocab = 0;

  // Whether every input has an init, so no -i is needed.
  bool SelfInitializing() const;
  bool IsCarried(int64_t input) const;
  std::string CarryText() const;       // "1:2,2:3"
};

// Reads the module's attributes. `carry_flag` (--carry OUT:IN,...) replaces the module's carry
// when not empty; with neither, the carry is inferred from the trailing outputs that match the
// trailing inputs in shape and sharding (none when they do not). Malformed attributes or
// flags, indices out of range, an input fed twice and pairs whose shapes (or element types)
// differ are UserErrors naming both ends.
StepSignature ReadStepSignature(const Module& module, const std::string& carry_flag);

}  // namespace gspmd
