// `gspmd parse FILE`: parses HLO text and prints it back in canonical form.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "text/parser.h"
#include "text/printer.h"
#include "tools/commands.h"

namespace gspmd::tools {

void AddParseCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand("parse", "Parse an HLO module and print it in canonical text");
  command->add_option("FILE", *file, "HLO text file")->required()->type_name("FILE");
  command->callback([file] {
    std::unique_ptr<Module> module = ParseModuleFile(*file);
    const std::string text = PrintModule(*module);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace gspmd::tools
