// The `gspmd` command-line tool: parse, eval, partition, run, report, compare, model, train and
// simulate subcommands.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "support/diagnostic.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"gspmd: GSPMD sharding propagation and SPMD partitioning of HLO programs, a reference interpreter and an SPMD runtime"};
  app.name("gspmd");
  app.require_subcommand(1);
  gspmd::tools::AddParseCommand(app);
  gspmd::tools::AddEvalCommand(app);
  gspmd::tools::AddPartitionCommand(app);
  gspmd::tools::AddRunCommand(app);
  gspmd::tools::AddReportCommand(app);
  gspmd::tools::AddSimulateCommand(app);
  gspmd::tools::AddCompareCommand(app);
  gspmd::tools::AddModelCommand(app);
  gspmd::tools::AddTrainCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help prints usage and exits 0; every bad argument exits 1.
    const int code = app.exit(error);
    return code == 0 ? 0 : 1;
  } catch (const gspmd::UserError& error) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  } catch (const std::exception& error) {
    // Not the input's fault: a bug in gspmd. Still one line on stderr and a failing exit code.
    std::fflush(stdout);
    std::fprintf(stderr, "gspmd: internal error: %s\n", error.what());
    return 2;
  }
  return 0;
}
