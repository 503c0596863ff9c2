// api::Report, api::Show, api::Lint and api::Simulate: what a program costs and how its values
// are laid out, read from the compiled program.
#include <algorithm>
#include <sstream>

#include "api/error_kinds.h"
#include "api/file_context.h"
#include "api/gspmd.h"
#include "api/lint_plan.h"
#include "api/pipeline.h"
#include "api/windowed_auto.h"
#include "io/npy.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "simulate/chip_spec.h"
#include "simulate/topology.h"
#include "support/units.h"
#include "visualize/sharding_picture.h"

namespace gspmd::api {
namespace {

const Instruction* FindValue(const Module& module, std::string name, const std::string& file) {
  if (!name.empty() && name[0] == '%') name = name.substr(1);
  if (const Instruction* found = module.entry()->FindInstruction(name)) return found;
  for (const auto& computation : module.computations())
    if (const Instruction* found = computation->FindInstruction(name)) return found;
  std::string parameters;
  for (const Instruction* parameter : module.entry()->parameters())
    parameters += (parameters.empty() ? "%" : ", %") + parameter->name();
  GSPMD_USER_ERROR(file, ": error: --value: no instruction named %", name, " (entry parameters: ",
                   parameters.empty() ? "none" : parameters, ")");
}

std::string DrawValue(const std::string& heading, const Instruction& value, bool per_device, int64_t devices,
                      const visualize::PictureOptions& picture) {
  const Sharding sharding = value.sharding().value_or(Sharding::Replicated());
  const Shape shape = per_device ? visualize::GlobalShapeOfShard(value.shape(), sharding) : value.shape();
  std::ostringstream out;
  const std::optional<Mesh> mesh = NamedMeshOf(*value.parent()->parent());
  const int64_t rank = shape.IsArray() ? shape.rank() : -1;
  out << heading << "%" << value.name() << " " << shape.ToString(false) << " "
      << ShardingTextWithSpec(sharding, rank, mesh ? &*mesh : nullptr) << "\n";
  if (per_device) out << "  (per-device program: global shape = shard shape x tiles)\n";
  out << visualize::DrawSharding(shape, sharding, devices, picture);
  return out.str();
}

std::optional<ElementType> ParseComputeType(const std::string& text, const char* flag) {
  if (text.empty()) return std::nullopt;
  std::optional<ElementType> type = ParseDtypeName(text);  // bf16 or JAX's bfloat16, ...
  if (!type || !IsFloatingPoint(*type))
    GSPMD_USER_ERROR("gspmd simulate: error: ", flag, " '", text,
                     "' is not a floating-point type (expected bf16, f16, f32 or f64)");
  return type;
}

}  // namespace

CommReport Report(const Program& per_device) {
  return WithFileContext(per_device.name(), [&] { return AnalyzeCommunication(per_device.module()); });
}

namespace {

// The program Show draws (propagated when it is global and not fully sharded) and the devices
// its shardings cover.
struct ShownProgram {
  Program program;
  bool per_device = false;
  int64_t devices = 0;
};

ShownProgram PrepareShow(const Program& program, const ShowOptions& options) {
  ShownProgram shown{program, program.IsPerDevice(), program.module().num_partitions()};
  if (options.devices > 0) CheckDevicesMatchModule(program.module(), program.name(), options.devices);
  if (!shown.per_device && program.NeedsPropagation()) {
    Propagated propagated = api::Propagate(program, PropagateOptions{options.devices, false, {}});
    shown.devices = propagated.result.num_partitions;
    shown.program = std::move(propagated.program);
  }
  if (options.devices > 0) shown.devices = options.devices;
  for (const auto& computation : shown.program.module().computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->sharding())
        shown.devices = std::max(shown.devices, instruction->sharding()->RequiredDeviceCount());
  return shown;
}

}  // namespace

ShowResult ShowValues(const Program& program, const ShowOptions& options) {
  const ShownProgram shown = PrepareShow(program, options);
  const Module& module = shown.program.module();
  ShowResult result{shown.devices, shown.per_device, {}};
  if (const std::optional<Mesh> named = NamedMeshOf(module)) result.mesh = MeshFlagText(*named);
  auto add = [&](const std::string& role, const Instruction& value) {
    for (ShownValue& leaf : ShownLeaves(role, value, shown.per_device, shown.devices))
      result.values.push_back(std::move(leaf));
  };
  if (!options.values.empty()) {
    for (const std::string& name : options.values) add("", *FindValue(module, name, program.name()));
    return result;
  }
  for (const Instruction* parameter : module.entry()->parameters())
    add("parameter " + std::to_string(parameter->parameter_number), *parameter);
  add("result", *module.entry()->root());
  return result;
}

std::string Show(const Program& program, const ShowOptions& options) {
  if (options.summary) return ShowSummaryText(ShowValues(program, options));
  const ShownProgram shown = PrepareShow(program, options);
  const bool per_device = shown.per_device;
  const int64_t devices = shown.devices;
  const Module& module = shown.program.module();

  visualize::PictureOptions picture;
  picture.color = options.color;
  std::ostringstream text;
  text << "mesh: " << devices << " device" << (devices == 1 ? "" : "s");
  if (const std::optional<Mesh> named = NamedMeshOf(module)) text << " (" << MeshFlagText(*named) << ")";
  text << "\n";
  if (!options.values.empty()) {
    for (const std::string& name : options.values)
      text << "\n" << DrawValue("", *FindValue(module, name, program.name()), per_device, devices, picture);
    return text.str();
  }
  const auto& parameters = module.entry()->parameters();
  const int64_t total = static_cast<int64_t>(parameters.size()) + 1;  // and the result
  const int64_t drawn = options.max_pictures > 0 ? std::min(total, options.max_pictures) : total;
  for (int64_t i = 0; i < drawn && i < static_cast<int64_t>(parameters.size()); ++i)
    text << "\n" << DrawValue("parameter " + std::to_string(parameters[i]->parameter_number) + ": ", *parameters[i],
                              per_device, devices, picture);
  if (drawn == total) {
    text << "\n" << DrawValue("result: ", *module.entry()->root(), per_device, devices, picture);
    return text.str();
  }
  text << "\n... " << total - drawn << " more value" << (total - drawn == 1 ? "" : "s")
       << "; use --value NAME or --summary\n";
  return text.str();
}

lint::LintReport Lint(const Program& program, const lint::LintOptions& options) {
  if (program.IsPerDevice())
    GSPMD_USER_ERROR(program.name(), ": error: lint needs the global program (pre.hlo or propagated.hlo); this one "
                     "is per-device already (it has collectives or partition-id)");
  if (options.devices > 0) CheckDevicesMatchModule(program.module(), program.name(), options.devices);
  // Each compile (the program as written, then each candidate fix) propagates its own copy.
  lint::ProgramLoader load = [&program]() { return program.CopyModule(); };
  lint::LintOptions lint_options = options;
  lint_options.stablehlo_input = program.format() == Format::kStableHlo;
  CheckPlanSearchOptions(lint_options);
  lint::LintReport report = WithFileContext(program.name(), [&] {
    return WithErrorKind(UserErrorKind::kSharding, [&] { return lint::LintProgram(load, lint_options); });
  });
  AddPlanFinding(program, lint_options, report);
  return report;
}

simulate::SimulationReport Simulate(Program program, const SimulateOptions& options) {
  if (options.breakdown != "op_name" && options.breakdown != "layer" && options.breakdown != "opcode")
    GSPMD_USER_ERROR("gspmd simulate: error: --breakdown '", options.breakdown, "' (expected op_name, layer or opcode)");
  simulate::ChipSpec chip = simulate::LoadChipSpec(options.chip);
  if (options.memory_capacity_bytes > 0) chip.hbm_bytes = options.memory_capacity_bytes;
  const std::optional<ElementType> compute_type = ParseComputeType(options.compute_type, "--compute-type");
  const std::optional<ElementType> mixed_precision = ParseComputeType(options.mixed_precision, "--mixed-precision");
  if (compute_type && mixed_precision)
    GSPMD_USER_ERROR("gspmd simulate: error: --compute-type and --mixed-precision both re-type the program; give at most one");

  const bool partitioned = options.per_device.value_or(program.IsPerDevice());
  const std::string name = program.name();
  simulate::SimulateOptions simulate_options;
  simulate_options.breakdown = options.breakdown;
  simulate_options.breakdown_depth = options.breakdown_depth;
  simulate_options.rematerialize = options.rematerialize;
  auto run = [&](Module& per_device) {
    if (compute_type) simulate::RetypeFloatMath(per_device, *compute_type);
    if (mixed_precision) simulate::RetypeFloatMathKeepingState(per_device, *mixed_precision);
    return WithFileContext(name, [&] {
      const simulate::Topology topology =
          simulate::Topology::Build(chip, per_device.num_partitions(), options.topology, options.placement);
      return simulate::Simulate(per_device, chip, topology, simulate_options);
    });
  };
  if (partitioned) {
    if (options.devices > 0) CheckDevicesMatchModule(program.module(), name, options.devices);
    std::unique_ptr<Module> per_device = std::move(program).TakeModule();
    if (options.devices > 0) per_device->set_num_partitions(options.devices);
    return run(*per_device);
  }
  if (ParseWindowedEinsum(options.windowed_einsum).mode != WindowedEinsumMode::kAuto) {
    Partitioned compiled = Partition(std::move(program), PartitionOptions{options.devices, {}, options.windowed_einsum, {}, ""});
    return run(*std::move(compiled.per_device).TakeModule());
  }
  return ChooseWindowedLoops(std::move(program), options, {}, chip, compute_type ? compute_type : mixed_precision, run).report;
}

}  // namespace gspmd::api
