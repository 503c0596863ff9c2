// `gspmd eval FILE -i IN0.npy ... -o OUTDIR`: runs the reference interpreter on one device
// (programs with shard_map regions, which are per-device code, run on their devices).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "runtime/interp/evaluator.h"
#include "api/gspmd.h"
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
  const api::Program program = LoadProgramArgument(options.file);
  std::vector<Literal> inputs = ReadInputs(options.inputs);
  CheckInputShapes(program.module(), options.file, inputs, options.inputs);
  if (HasManualRegion(program.module()))
    std::fprintf(stderr, "%s: note: the program has manual (shard_map) regions; evaluating it on its devices\n",
                 options.file.c_str());
  WriteOutputs(options.out_dir, api::Eval(program, inputs));
}

}  // namespace

void AddEvalCommand(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* command = app.add_subcommand(
      "eval", "Run a module with the reference interpreter; write one .npy per leaf of the result");
  command->add_option("FILE", options->file, "HLO text file, or StableHLO (.mlir) text; - for standard input")
      ->required()
      ->type_name("FILE");
  command->add_option("-i,--inputs", options->inputs, "one .npy file per entry parameter, in order")
      ->type_name("NPY");
  command->add_option("-o,--out", options->out_dir, "output directory (created) for out0.npy, out1.npy, ...")
      ->required()
      ->type_name("DIR");
  command->callback([options] { RunEval(*options); });
}

}  // namespace gspmd::tools
