// api::Eval, api::Run and api::CheckInputs: a program run on arrays in memory, on one device
// (the reference interpreter) or on simulated devices (threads of this process).
#include "api/error_kinds.h"
#include "api/file_context.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"

namespace gspmd::api {

void CheckInputs(const Program& program, const std::vector<Literal>& inputs,
                 const std::vector<std::string>& input_names) {
  const Module& module = program.module();
  GSPMD_CHECK(module.entry() != nullptr, "parsed module has no entry computation");
  const int64_t expected = module.entry()->num_parameters();
  if (static_cast<int64_t>(inputs.size()) != expected)
    ThrowUserErrorAt(SourceLocation{program.name(), 0, 0},
                     StrCat("the entry computation '", module.entry()->name(), "' takes ", expected,
                            " parameter(s) but ", inputs.size(), " input(s) were given (expected ", expected,
                            " arrays, one per parameter in order)"));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Instruction* parameter = module.entry()->parameter(static_cast<int64_t>(i));
    const Shape& shape = parameter->shape();
    if (!shape.IsArray())
      ThrowUserErrorAt(SourceLocation{program.name(), 0, 0},
                       StrCat("parameter ", i, " (%", parameter->name(), ") has shape ", shape.ToString(false),
                              ", which one array cannot hold (expected array parameters only)"));
    if (inputs[i].shape().Compatible(shape)) continue;
    const std::string input = i < input_names.size() ? input_names[i] : StrCat("input ", i);
    ThrowUserErrorAt(SourceLocation{input, 0, 0},
                     StrCat("input holds ", inputs[i].shape().ToString(false), " but parameter ", i, " (%",
                            parameter->name(), ") of ", program.name(), " expects ", shape.ToString(false)));
  }
}

std::vector<Literal> Eval(const Program& program, const std::vector<Literal>& inputs) {
  CheckInputs(program, inputs);
  if (HasManualRegion(program.module())) {
    // shard_map bodies are per-device code: their meaning is what every device computes, so the
    // program runs on its devices.
    return Run(program, inputs);
  }
  return FlattenTuple(WithFileContext(program.name(), [&] { return EvaluateModule(program.module(), inputs); }));
}

std::vector<Literal> Run(const Program& program, const std::vector<Literal>& inputs, const RunOptions& options) {
  const std::string& name = program.name();
  if (program.IsPerDevice()) {
    const Module& per_device = program.module();
    if (options.devices > 0) CheckDevicesMatchModule(per_device, name, options.devices);
    SpmdRunOptions run_options = WithFileContext(options.like ? options.like->name() : name, [&] {
      return OptionsFromLikeModule(per_device, options.like ? &options.like->module() : nullptr);
    });
    if (options.devices > 0) run_options.num_devices = options.devices;
    return WithFileContext(name, [&] { return RunSpmd(per_device, inputs, run_options); });
  }
  CheckInputs(program, inputs);
  Partitioned partitioned = Partition(program, PartitionOptions{options.devices, options.boundary, options.windowed_einsum, {}, ""});
  const Module& per_device = partitioned.per_device.module();
  SpmdRunOptions run_options =
      WithFileContext(name, [&] { return OptionsFromLikeModule(per_device, &partitioned.global.module()); });
  run_options.num_devices = partitioned.num_devices;
  return WithFileContext(name, [&] { return RunSpmd(per_device, inputs, run_options); });
}

}  // namespace gspmd::api
