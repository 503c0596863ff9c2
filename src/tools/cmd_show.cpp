// `gspmd show FILE [--value NAME ...] [--color auto|always|never] [-o OUT]`: draws how values
// are laid out over the devices (tile grids for 1-D/2-D arrays, a dims table above that).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ir/opcode.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/partition_pipeline.h"
#include "tools/tool_util.h"
#include "visualize/sharding_picture.h"

namespace gspmd::tools {
namespace {

struct ShowOptions {
  std::string file;
  std::vector<std::string> values;
  std::string color = "auto";
  std::string out;
  std::string devices;
};

bool UseColour(const std::string& mode, const std::string& out) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (!out.empty()) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string(term) == "dumb") return false;
  return isatty(STDOUT_FILENO) == 1;
}

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
  out << heading << "%" << value.name() << " " << shape.ToString(false) << " " << sharding.ToString() << "\n";
  if (per_device) out << "  (per-device program: global shape = shard shape x tiles)\n";
  out << visualize::DrawSharding(shape, sharding, devices, picture);
  return out.str();
}

void RunShow(const ShowOptions& options) {
  if (options.color != "auto" && options.color != "always" && options.color != "never")
    GSPMD_USER_ERROR("gspmd show: error: --color '", options.color, "' is not one of auto, always, never");
  const int64_t requested = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "show");
  std::unique_ptr<Module> module = LoadProgram(options.file);
  const bool per_device = IsPerDeviceProgram(*module);
  int64_t devices = module->num_partitions();
  if (requested > 0) CheckDevicesMatchModule(*module, options.file, requested);
  if (!per_device && NeedsPropagation(*module))
    devices = Propagate(*module, options.file, requested).num_partitions;
  if (requested > 0) devices = requested;
  for (const auto& computation : module->computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->sharding()) devices = std::max(devices, instruction->sharding()->RequiredDeviceCount());

  visualize::PictureOptions picture;
  picture.color = UseColour(options.color, options.out);
  std::ostringstream text;
  text << "mesh: " << devices << " device" << (devices == 1 ? "" : "s") << "\n";
  if (!options.values.empty()) {
    for (const std::string& name : options.values) {
      const Instruction* value = FindValue(*module, name, options.file);
      text << "\n" << DrawValue("", *value, per_device, devices, picture);
    }
  } else {
    for (const Instruction* parameter : module->entry()->parameters())
      text << "\n" << DrawValue("parameter " + std::to_string(parameter->parameter_number) + ": ", *parameter,
                                per_device, devices, picture);
    text << "\n" << DrawValue("result: ", *module->entry()->root(), per_device, devices, picture);
  }
  WriteText(options.out, text.str());
}

}  // namespace

void AddShowCommand(CLI::App& app) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* command = app.add_subcommand(
      "show",
      "Draw how values are laid out over the devices: tile grids labelled with device ids for 1-D and 2-D "
      "arrays, a table of dims for higher ranks (propagates a global program first)");
  command->add_option("FILE", options->file, "HLO text (global or per-device) or StableHLO (.mlir) text")
      ->required()
      ->type_name("FILE");
  command->add_option("--value", options->values, "instruction to draw (repeatable; default: entry parameters "
                                                  "and the result)")
      ->type_name("NAME");
  command->add_option("--color", options->color, "colour the tiles: auto (a terminal without NO_COLOR), always, never")
      ->type_name("WHEN");
  command->add_option("--devices", options->devices, "number of partitions (default: from the module)")->type_name("N");
  command->add_option("-o,--out", options->out, "write the pictures to OUT instead of stdout")->type_name("OUT");
  command->callback([options] { RunShow(*options); });
}

}  // namespace gspmd::tools
