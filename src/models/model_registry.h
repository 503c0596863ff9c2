// Model programs by name (for a `gspmd model NAME` command and benchmarks), plus random inputs
// to run them with.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "models/model_options.h"

namespace gspmd {

// Known names: "transformer" (options.train decides forward-only or training step),
// "transformer_train" (training step), "transformer_forward" (forward only), "moe",
// "pipeline", "pipeline_reference" (the pipeline's unpipelined reference). An unknown name
// is a UserError listing the known ones.
std::unique_ptr<Module> BuildModel(const std::string& name, const ModelOptions& options);
std::vector<std::string> ModelNames();

// Deterministic pseudo-random values in [-1, 1) (integers: 0) for every entry parameter.
std::vector<Literal> RandomInputs(const Module& module, uint64_t seed = 1);

}  // namespace gspmd
