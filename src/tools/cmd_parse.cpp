// `gspmd parse FILE`: parses HLO text (or converts StableHLO .mlir) and prints it in canonical HLO form.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "text/printer.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {

void AddParseCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand("parse", "Parse an HLO module (or convert a StableHLO .mlir module) and print it as canonical HLO text");
  command->add_option("FILE", *file, "HLO text file, or StableHLO (.mlir) text; - for standard input")
      ->required()
      ->type_name("FILE");
  command->callback([file] {
    std::unique_ptr<Module> module = LoadProgram(*file);
    const std::string text = PrintModule(*module);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace gspmd::tools
