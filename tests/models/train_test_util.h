// Shared by the training-step model tests: build a model by name with --set / --mesh text,
// partition it as `gspmd train` does, and run chains of steps on the devices or on one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "ir/verifier.h"
#include "models/model_catalog.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/spmd/like_module.h"
#include "text/parser.h"
#include "text/printer.h"
#include "train/trainer.h"

namespace gspmd::train_test {

inline ModelConfig Config(const std::string& model, const std::vector<std::string>& settings = {},
                          const std::string& mesh = "") {
  ModelConfig config = FindTrainingModel(model).config();
  for (const std::string& setting : settings) config.SetAssignment(setting);
  if (!mesh.empty()) config.SetMesh(mesh);
  return config;
}

// The module as `gspmd model` writes it, read back (so the tests see what a user's file holds).
inline std::unique_ptr<Module> Build(const std::string& model, const std::vector<std::string>& settings = {},
                                     const std::string& mesh = "") {
  std::unique_ptr<Module> built = FindTrainingModel(model).build(Config(model, settings, mesh));
  VerifyModule(*built);
  return ParseModule(PrintModule(*built), model + ".hlo");
}

// A global step propagated and partitioned onto its num_partitions devices.
struct CompiledStep {
  std::unique_ptr<Module> propagated;
  std::unique_ptr<Module> per_device;
  SpmdRunOptions options;
};

inline CompiledStep Compile(const Module& global) {
  CompiledStep step;
  step.propagated = ParseModule(PrintModule(global), global.name() + ".hlo");
  PropagateShardings(*step.propagated);
  PartitionResult partitioned = PartitionModule(*step.propagated);
  step.per_device = ParseModule(PrintModule(*partitioned.module), global.name() + ".partitioned.hlo");
  step.options = OptionsFromLikeModule(*step.per_device, step.propagated.get());
  return step;
}

// Every step's outputs of a run of `steps` steps (seed 0, the module's own inits and task).
inline std::vector<std::vector<Literal>> Chain(const Module& global, std::unique_ptr<StepRunner> runner, int steps,
                                               TrainSettings settings = {}) {
  Trainer trainer(global, std::move(runner), std::move(settings));
  std::vector<std::vector<Literal>> outputs;
  for (int i = 0; i < steps; ++i) outputs.push_back(trainer.Step().outputs);
  return outputs;
}

// The index of the output named `metric` (gspmd.metrics), -1 when absent.
inline int MetricIndex(const Module& module, const std::string& metric) {
  const StepSignature signature = ReadStepSignature(module, "");
  for (size_t i = 0; i < signature.metrics.size(); ++i)
    if (signature.metrics[i] == metric) return static_cast<int>(i);
  return -1;
}

}  // namespace gspmd::train_test
