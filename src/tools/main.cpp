// The `gspmd` command-line tool: parse, eval, partition, run, report, show, lint, compare, model, train and
// simulate subcommands.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>

#include "gspmd_version.h"  // generated at build time by cmake/git_revision.cmake
#include "support/allocation.h"
#include "support/diagnostic.h"
#include "tools/cli_errors.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"gspmd: GSPMD sharding propagation and SPMD partitioning of HLO programs, a reference interpreter and an SPMD runtime"};
  app.name("gspmd");
  app.require_subcommand(1);
  app.set_version_flag("--version", "gspmd " GSPMD_VERSION " (git " GSPMD_GIT_REVISION ")",
                       "print the version and the git revision this gspmd was built from, and exit");
  gspmd::tools::AddParseCommand(app);
  gspmd::tools::AddEvalCommand(app);
  gspmd::tools::AddPartitionCommand(app);
  gspmd::tools::AddRunCommand(app);
  gspmd::tools::AddReportCommand(app);
  gspmd::tools::AddSimulateCommand(app);
  gspmd::tools::AddShowCommand(app);
  gspmd::tools::AddLintCommand(app);
  gspmd::tools::AddCompareCommand(app);
  gspmd::tools::AddModelCommand(app);
  gspmd::tools::AddTrainCommand(app);
  gspmd::tools::AddAutoshardCommand(app);
  gspmd::tools::AddCheckpointCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& done) {
    // --help and --version print on stdout and exit 0.
    return app.exit(done);
  } catch (const CLI::RuntimeError& failed) {
    // A command that has said why it fails on stdout (compare's FAIL line): only the exit code.
    return failed.get_exit_code();
  } catch (const CLI::ParseError& error) {
    // Every bad argument: one `error: <where>: <what>` line naming the word, exit 1.
    std::fflush(stdout);
    std::fputs(gspmd::tools::DescribeParseError(app, error).c_str(), stderr);
    return 1;
  } catch (const gspmd::UserError& error) {
    // "FILE:LINE:COL: error: ..." as it is; a message that says no place gets the command's.
    std::fflush(stdout);
    std::fputs(gspmd::tools::DescribeUserError(app, error.what()).c_str(), stderr);
    return 1;
  } catch (const std::bad_alloc& error) {
    // Memory ran out where nothing closer said so (an OutOfMemory's text has the bytes).
    std::fflush(stdout);
    std::fprintf(stderr, "gspmd: error: %s\n",
                 dynamic_cast<const gspmd::OutOfMemory*>(&error) != nullptr ? error.what() : "out of memory");
    return 1;
  } catch (const std::exception& error) {
    // Not the input's fault: a bug in gspmd. Still one line on stderr and a failing exit code.
    std::fflush(stdout);
    std::fprintf(stderr, "gspmd: internal error: %s\n", error.what());
    return 2;
  }
  return 0;
}
