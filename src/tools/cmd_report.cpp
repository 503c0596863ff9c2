// `gspmd report FILE [--json]`: bytes each device sends by collective kind (ring model),
// collective counts and peak live bytes of a per-device module (ours or XLA's).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "analysis/comm_report.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct ReportOptions {
  std::string file;
  bool json = false;
};

void RunReport(const ReportOptions& options) {
  std::unique_ptr<Module> module = LoadProgram(options.file);
  const CommReport report = WithFileContext(options.file, [&] { return AnalyzeCommunication(*module); });
  if (!options.json) {
    WriteText("", FormatCommReport(report));
    return;
  }
  WriteText("", CommReportToJson(report).dump(2) + "\n");
  std::fflush(stdout);
  for (const std::string& warning : report.warnings)
    std::fprintf(stderr, "%s: warning: %s\n", options.file.c_str(), warning.c_str());
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Communication report of a per-device module: bytes sent per device by collective kind (ring model, "
      "loop bodies times their trip count), collective counts, peak live bytes");
  command->add_option("FILE", options->file, "per-device HLO text file (ours or XLA's partitioned.hlo)")
      ->required()
      ->type_name("FILE");
  command->add_flag("--json", options->json,
                    "print JSON: comm_bytes_per_device, collectives (count by kind), peak_bytes_per_device");
  command->callback([options] { RunReport(*options); });
}

}  // namespace gspmd::tools
