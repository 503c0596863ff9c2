// `gspmd eval FILE -i IN0.npy ... -o OUTDIR`: runs the reference interpreter on one device.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "runtime/interp/evaluator.h"
#include "text/parser.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct EvalOptions {
  std::string file;
  std::vector<std::string> inputs;
  std::string out_dir;
};

void RunEval(const EvalOptions& options) {
  std::unique_ptr<Module> module = ParseModuleFile(options.file);
  std::vector<Literal> inputs = ReadInputs(options.inputs);
  CheckInputShapes(*module, options.file, inputs, options.inputs);
  Literal result = WithFileContext(options.file, [&] { return EvaluateModule(*module, inputs); });
  WriteOutputs(options.out_dir, FlattenTuple(std::move(result)));
}

}  // namespace

void AddEvalCommand(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* command = app.add_subcommand(
      "eval", "Run a module with the reference interpreter; write one .npy per leaf of the result");
  command->add_option("FILE", options->file, "HLO text file")->required()->type_name("FILE");
  command->add_option("-i,--inputs", options->inputs, "one .npy file per entry parameter, in order")
      ->type_name("NPY");
  command->add_option("-o,--out", options->out_dir, "output directory (created) for out0.npy, out1.npy, ...")
      ->required()
      ->type_name("DIR");
  command->callback([options] { RunEval(*options); });
}

}  // namespace gspmd::tools
