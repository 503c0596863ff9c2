// `gspmd lint FILE [--json] [--werror] [--redundant] [--no-search]`: annotations of a global
// program that cost more than they should, as FILE:LINE:COL: warning: ... with a fix and what it
// saves (alike ones grouped), then one summary line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "api/gspmd.h"
#include "lint/lint.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct LintCommandOptions {
  std::string file;
  std::string mesh;  // --mesh AXIS=N,...
  std::string devices;
  bool json = false;
  bool werror = false;
  double padding_percent = 10;
  double large_mib = 1;
  bool redundant = false;
  std::string out;
  bool global = false;
  bool no_search = false;
  double time_limit = 10;
  std::string chip = "tpu-v3";
  int64_t max_evaluations = 0;
};

void RunLint(const LintCommandOptions& options) {
  if (options.padding_percent < 0 || options.padding_percent > 100)
    GSPMD_USER_ERROR("gspmd lint: error: --padding-threshold ", options.padding_percent,
                     " is not a percentage between 0 and 100");
  if (options.large_mib < 0) GSPMD_USER_ERROR("gspmd lint: error: --large ", options.large_mib, " MiB is negative");
  lint::LintOptions lint_options;
  lint_options.devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "lint");
  lint_options.padding_threshold = options.padding_percent / 100;
  lint_options.large_bytes = static_cast<int64_t>(options.large_mib * 1024 * 1024);
  lint_options.redundant = options.redundant;
  lint_options.search = !options.no_search;
  lint_options.time_limit_s = options.time_limit;
  lint_options.chip = options.chip;
  if (options.max_evaluations < 0)
    GSPMD_USER_ERROR("gspmd lint: error: --max-evaluations ", options.max_evaluations, " is negative");
  lint_options.max_evaluations = options.max_evaluations;
  const lint::LintReport report = api::Lint(LoadGlobalProgram(options.file, options.global).WithMesh(options.mesh, "lint"), lint_options);
  WriteText(options.out, options.json ? lint::LintReportToJson(report).dump(2) + "\n" : lint::FormatGroupedLintReport(report));
  const bool has_warnings = std::any_of(report.findings.begin(), report.findings.end(),
                                        [](const lint::LintFinding& finding) { return finding.warning; });
  if (options.werror && has_warnings)
    GSPMD_USER_ERROR(options.file, ": error: lint found warnings and --werror was given");
}

}  // namespace

void AddLintCommand(CLI::App& app) {
  auto options = std::make_shared<LintCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "lint",
      "Find sharding annotations that cost more than they should (conflicts, full rematerialization, uneven "
      "padding, large replicated values, unused mesh axes), each with a fix and what it saves; and, from "
      "autoshard's search, parameter annotations that make the step at least 10% faster (check 'plan')");
  command
      ->add_option("FILE", options->file,
                   "global HLO text (pre.hlo / propagated.hlo) or StableHLO (.mlir); - for standard input")
      ->required()
      ->type_name("FILE");
  command->add_flag("--json", options->json, "print the findings as JSON");
  command->add_flag("--werror", options->werror, "exit with code 1 when there are warnings");
  command->add_option("--devices", options->devices, "number of partitions (default: from the module)")->type_name("N");
  command->add_option("--padding-threshold", options->padding_percent,
                      "report uneven splits whose padding exceeds this percentage of the value (default 10)")
      ->type_name("PERCENT");
  command->add_option("--large", options->large_mib,
                      "report replicated values above this many MiB per device (default 1)")
      ->type_name("MIB");
  command->add_flag("--redundant", options->redundant,
                    "also note annotations that propagation would produce anyway");
  command->add_flag("--no-search", options->no_search,
                    "skip the 'plan' check (autoshard's search for annotations that make the step >= 10% faster)");
  command->add_option("--time-limit", options->time_limit,
                      "the 'plan' check's search budget in wall-clock seconds (default 10)")
      ->type_name("SECONDS");
  command->add_option("--chip", options->chip,
                      "the chip the 'plan' check prices step times on, as gspmd simulate (default tpu-v3)")
      ->type_name("NAME");
  command->add_option("--max-evaluations", options->max_evaluations,
                      "the 'plan' check: plans the search prices per mesh (default: no limit; fixes its result)")
      ->type_name("N");
  AddGlobalOverride(*command, options->global);
  command->add_option("-o,--out", options->out, "write the findings (text or --json) to OUT instead of stdout")
      ->type_name("OUT");
  AddMeshOption(*command, options->mesh);
  command->callback([options] { RunLint(*options); });
}

}  // namespace gspmd::tools
