// `gspmd report FILE [--json] [--html OUT.html] [--partition]`: bytes each device sends by
// collective kind (ring model), collective counts and peak live bytes of a per-device module
// (ours or XLA's; --partition: of a global program, partitioned first).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "api/gspmd.h"
#include "lint/lint.h"
#include "partitioner/sdy_attributes.h"
#include "simulate/chip_spec.h"
#include "simulate/collective_model.h"
#include "simulate/topology.h"
#include "tools/commands.h"
#include "tools/tool_util.h"
#include "visualize/html_report.h"

namespace gspmd::tools {
namespace {

struct ReportOptions {
  std::string file;
  std::string mesh;  // --mesh AXIS=N,...
  bool json = false;
  std::string html;
  bool partition = false;
  std::string chip;
};

// The lint findings of the global program in `file`, one formatted finding per entry (fixes
// judged with a small budget of compiles: the report is for reading, not for search).
std::vector<std::string> LintLines(const api::Program& global) {
  lint::LintOptions options;
  options.max_fix_evaluations = 8;
  const lint::LintReport report = api::Lint(global, options);
  std::vector<std::string> lines;
  for (const lint::LintFinding& finding : report.findings) {
    lint::LintReport one;
    one.findings.push_back(finding);
    std::string text = lint::FormatLintReport(one);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    lines.push_back(text);
  }
  return lines;
}

// `global`: the propagated global program (nullptr when FILE is per-device); `source`: FILE as
// read, which lint compiles anew.
void WriteHtml(const ReportOptions& options, const Module& per_device, const api::Program* global,
               const api::Program& source, const CommReport& report) {
  visualize::HtmlReportInput input;
  input.title = options.file;
  input.per_device = &per_device;
  input.global = global ? &global->module() : nullptr;
  input.num_devices = per_device.num_partitions();
  input.report = report;
  const std::vector<DeviceAxis> mesh = lint::ImpliedMeshAxes(global ? global->module() : per_device, input.num_devices);
  if (const std::optional<Mesh> named = NamedMeshOf(global ? global->module() : per_device)) {
    for (const Mesh::Axis& axis : named->axes)
      input.mesh_text += StrCat(input.mesh_text.empty() ? "" : ", ", "'", axis.name, "' of size ", axis.size);
  }
  const bool named_axes = !input.mesh_text.empty();
  for (size_t i = 0; i < mesh.size() && !named_axes; ++i)
    input.mesh_text += StrCat(i == 0 ? "" : ", ", "axis ", i, " of size ", mesh[i].size, " (device stride ",
                              mesh[i].stride, ")");
  std::optional<simulate::ChipSpec> chip;
  std::optional<simulate::Topology> topology;
  if (!options.chip.empty()) {
    chip = simulate::LoadChipSpec(options.chip);
    topology = WithFileContext(options.file, [&] { return simulate::Topology::Build(*chip, input.num_devices); });
    input.collective_seconds = [&](const Instruction& collective) {
      return simulate::EstimateCollective(collective, *topology, *chip).time_s;
    };
  }
  if (global != nullptr)
    input.lint_findings = WithFileContext(options.file, [&] { return LintLines(source); });
  else
    input.lint_note = "Lint needs the global program: run gspmd report --partition on it (this file is per-device).";
  if (global != nullptr && input.lint_findings.empty()) input.lint_note = "No findings.";
  WriteText(options.html, visualize::RenderHtmlReport(input));
  // None when the page itself went to stdout; on stderr beside --json, whose stdout is one JSON object.
  if (options.html != "-") std::fprintf(options.json ? stderr : stdout, "wrote %s\n", options.html.c_str());
}

void RunReport(const ReportOptions& options) {
  api::Program program = LoadProgramArgument(options.file).WithMesh(options.mesh, "report");
  const std::string& file = program.name();  // "<stdin>" for "-"
  std::optional<api::Partitioned> partitioned;
  if (options.partition) {
    if (program.IsPerDevice())
      GSPMD_USER_ERROR(file, ": error: --partition needs a global program; this one is per-device already");
    partitioned = api::Partition(program);
    PrintWarnings(file, partitioned->warnings);
  }
  // A global program has no collectives yet: its report would say it communicates nothing.
  if (!partitioned && !program.IsPerDevice())
    ThrowUserErrorAt(SourceLocation{file, 0, 0},
                     "this program is global (not partitioned), so it has no communication to report yet "
                     "(expected a per-device program: use gspmd report --partition FILE, or gspmd partition "
                     "FILE -o per_device.hlo and report that)");
  const api::Program& measured = partitioned ? partitioned->per_device : program;
  const CommReport report = api::Report(measured);
  if (!options.html.empty()) {
    WriteHtml(options, measured.module(), partitioned ? &partitioned->global : nullptr, program, report);
    if (!options.json) return;
  }
  if (!options.json) {
    WriteText("", FormatCommReport(report));
    return;
  }
  WriteText("", CommReportToJson(report).dump(2) + "\n");
  PrintWarnings(file, report.warnings);
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Communication report of a per-device module: bytes sent per device by collective kind (ring model, "
      "loop bodies times their trip count), collective counts, peak live bytes");
  command->add_option("FILE", options->file,
                      "per-device HLO text file (ours or XLA's partitioned.hlo); a global one with --partition; "
                      "- for standard input")
      ->required()
      ->type_name("FILE");
  CLI::Option* html = command->add_option("--html", options->html,
                      "write a self-contained HTML page (mesh, parameter shardings, communication by source op, "
                      "live memory, lint findings with --partition) to OUT")
      ->type_name("OUT");
  command->add_option("--chip", options->chip,
                      "with --html: estimate each collective's time on this chip (a built-in name or a JSON file, "
                      "as for gspmd simulate) and rank the chart by it")
      ->type_name("CHIP")
      ->needs(html);  // the estimates appear only on the page
  command->add_flag("--partition", options->partition,
                    "FILE is a global program: propagate and partition it first (and lint it for --html)");
  command->add_flag("--json", options->json,
                    "print JSON: comm_bytes_per_device, collectives (count by kind), peak_bytes_per_device");
  AddMeshOption(*command, options->mesh);
  command->callback([options] { RunReport(*options); });
}

}  // namespace gspmd::tools
