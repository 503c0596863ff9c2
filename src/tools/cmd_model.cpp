// `gspmd model NAME|--preset NAME [--set KEY=VALUE ...] [--mesh AXIS=N,...] -o FILE.hlo`: writes
// a model's training step as HLO text carrying only the user's annotations (like JAX's
// pre.hlo); `gspmd model --list` prints every model and preset, one per line, name first.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "models/model_catalog.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct ModelCommandOptions {
  std::string name;
  std::string preset;
  std::vector<std::string> settings;
  std::string mesh;
  std::string out;
  bool list = false;
  bool keys = false;
};

// "dense_lm layers=2 d_model=32 ... mesh=x=2,y=4"
void PrintList() {
  for (const ModelEntry& model : TrainingModels()) std::printf("%s %s\n", model.name.c_str(), model.config().ToString().c_str());
  for (const ModelPreset& preset : ModelPresets())
    std::printf("%s %s\n", preset.name.c_str(), ("model=" + preset.model + " " + PresetConfig(preset).ToString()).c_str());
}

// One line per key: name, default, what it sets.
void PrintKeys(const ModelConfig& config) {
  for (const ModelKey& key : config.keys()) {
    std::string text = key.help;
    if (key.kind == ModelKey::Kind::kChoice) {
      std::string choices;
      for (const std::string& choice : key.choices) choices += (choices.empty() ? "" : "|") + choice;
      text = choices + ": " + text;
    }
    std::printf("%-20s %-10s %s\n", key.name.c_str(), config.Value(key.name).c_str(), text.c_str());
  }
  std::printf("%-20s %-10s %s\n", "--mesh", config.MeshText().c_str(), "mesh axes and their sizes");
}

void RunModelCommand(const ModelCommandOptions& options) {
  if (options.list) {
    if (!options.name.empty() || !options.preset.empty())
      GSPMD_USER_ERROR("gspmd model: error: --list takes no model name or preset");
    PrintList();
    return;
  }
  const api::ModelOptions model{options.name, options.preset, options.settings, options.mesh};
  if (options.keys) {
    PrintKeys(api::ModelConfigFor(model));
    return;
  }
  WriteText(options.out, api::Model(model).Text());
}

}  // namespace

void AddModelCommand(CLI::App& app) {
  auto options = std::make_shared<ModelCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "model",
      "Write a model's training step (params, optimizer state, batch) -> (loss, metrics, params', state') as HLO "
      "text with only the user's annotations; --list shows the models and presets");
  command->add_option("NAME", options->name, "model name (gspmd model --list)")->type_name("NAME");
  command->add_option("--preset", options->preset, "a named full-size configuration (gspmd model --list)")
      ->type_name("NAME");
  command->add_option("--set", options->settings, "override a key (repeatable; gspmd model NAME --keys)")
      ->type_name("KEY=VALUE");
  command->add_option("--mesh", options->mesh, "mesh axis sizes, e.g. x=4,y=2")->type_name("AXIS=N,...");
  command->add_option("-o,--out", options->out, "write the module to FILE instead of stdout")->type_name("FILE");
  command->add_flag("--list", options->list, "print every model and preset, one per line: name, then keys");
  command->add_flag("--keys", options->keys, "print the model's keys with their values and meaning");
  command->callback([options] { RunModelCommand(*options); });
}

}  // namespace gspmd::tools
