// `gspmd show FILE [--value NAME ...] [--summary] [--json] [--color auto|always|never] [-o OUT]`:
// draws how values are laid out over the devices (tile grids for 1-D/2-D arrays, a dims table
// above that), or lists them one line each (--summary) or as JSON.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct ShowOptions {
  std::string file;
  std::string mesh;  // --mesh AXIS=N,...
  std::vector<std::string> values;
  std::string color = "auto";
  std::string out;
  std::string devices;
  bool summary = false;
  ProgramKindFlags kind;
  bool json = false;
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

void RunShow(const ShowOptions& options) {
  if (options.color != "auto" && options.color != "always" && options.color != "never")
    GSPMD_USER_ERROR("gspmd show: error: --color '", options.color, "' is not one of auto, always, never");
  api::ShowOptions show;
  show.devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "show");
  show.values = options.values;
  show.color = UseColour(options.color, options.out);
  if (options.json && options.summary)
    GSPMD_USER_ERROR("gspmd show: error: --json and --summary both choose the output; give at most one");
  const api::Program program =
      LoadProgramOfKind(options.file, options.kind, "show", /*stated_kind=*/true).WithMesh(options.mesh, "show");
  if (options.json) {
    WriteText(options.out, api::ShowResultToJson(api::ShowValues(program, show)).dump(2) + "\n");
    return;
  }
  show.summary = options.summary;
  WriteText(options.out, api::Show(program, show));
}

}  // namespace

void AddShowCommand(CLI::App& app) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* command = app.add_subcommand(
      "show",
      "Draw how values are laid out over the devices: tile grids labelled with device ids for 1-D and 2-D "
      "arrays, a table of dims for higher ranks (propagates a global program first)");
  command
      ->add_option("FILE", options->file,
                   "HLO text (global or per-device) or StableHLO (.mlir) text; - for standard input")
      ->required()
      ->type_name("FILE");
  command->add_option("--value", options->values, "instruction to draw (repeatable; default: entry parameters "
                                                  "and the result)")
      ->type_name("NAME");
  command->add_flag("--summary", options->summary,
                    "one line per value (shape, sharding, tiles per device) and a total, instead of pictures "
                    "(show draws at most 40 pictures without --value)");
  command->add_flag("--json", options->json,
                    "print JSON: devices and per value its name, shape, sharding (XLA's text) and tiles");
  AddProgramKindOptions(*command, options->kind, "propagated first");
  command->add_option("--color", options->color, "colour the tiles: auto (a terminal without NO_COLOR), always, never")
      ->type_name("WHEN")
      ->excludes("--json")
      ->excludes("--summary");  // neither draws tiles: the colour would be ignored
  command->add_option("--devices", options->devices, "number of partitions (default: from the module)")->type_name("N");
  command->add_option("-o,--out", options->out, "write the pictures to OUT instead of stdout (- for stdout)")
      ->type_name("OUT");
  AddMeshOption(*command, options->mesh);
  command->callback([options] { RunShow(*options); });
}

}  // namespace gspmd::tools
