// `gspmd parse FILE [-o OUT]`: parses HLO text (or converts StableHLO .mlir) and prints it in canonical HLO form.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "text/printer.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {

void AddParseCommand(CLI::App& app) {
  struct ParseOptions {
    std::string file;
    std::string out;
  };
  auto options = std::make_shared<ParseOptions>();
  CLI::App* command = app.add_subcommand("parse", "Parse an HLO module (or convert a StableHLO .mlir module) and print it as canonical HLO text");
  command->add_option("FILE", options->file, "HLO text file, or StableHLO (.mlir) text; - for standard input")
      ->required()
      ->type_name("FILE");
  command->add_option("-o,--out", options->out, "write the module to OUT instead of stdout (- for stdout)")
      ->type_name("OUT");
  command->callback([options] {
    std::unique_ptr<Module> module = LoadProgram(options->file);
    WriteText(options->out, PrintModule(*module));
  });
}

}  // namespace gspmd::tools
