// `gspmd report FILE [--json] [-o OUT[.html]] [--per-device|--global]`: bytes each device sends
// by collective kind (ring model), collective counts and peak live bytes of a per-device module
// (ours or XLA's; a global program is partitioned first, which it says); -o OUT.html writes the
// HTML page.
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
  std::string out;
  std::string html;  // --html OUT: the spelling of -o OUT.html before the grammar (one release)
  ProgramKindFlags kind;
  std::string chip;
};

bool IsHtmlPath(const std::string& path) {
  auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".html") || ends_with(".htm");
}

// The lint findings of the global program in `file`, one formatted finding per entry (fixes
// judged with a small budget of compiles: the report is for reading, not for search).
std::vector<std::string> LintLines(const api::Program& global) {
  lint::LintOptions options;
  options.max_fix_evaluations = 8;
  options.search = false;  // autoshard's search is lint's own (seconds)
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
void WriteHtml(const ReportOptions& options, const std::string& html_path, const Module& per_device, const api::Program* global,
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
      if (collective.opcode() == Opcode::kCollectivePermuteStart)  // its asynchronous permute
        return simulate::EstimatePermutePairs(collective.source_target_pairs(),
                                              CollectiveBytesPerDevice(collective, input.num_devices), *topology, *chip)
            .time_s;
      return simulate::EstimateCollective(collective, *topology, *chip).time_s;
    };
  }
  if (global != nullptr)
    input.lint_findings = WithFileContext(options.file, [&] { return LintLines(source); });
  else
    input.lint_note = "Lint needs the global program: run gspmd report on that (this file is per-device).";
  if (global != nullptr && input.lint_findings.empty()) input.lint_note = "No findings.";
  WriteText(html_path, visualize::RenderHtmlReport(input));
  // None when the page itself went to stdout; on stderr beside --json, whose stdout is one JSON object.
  if (html_path != "-") std::fprintf(options.json ? stderr : stdout, "wrote %s\n", html_path.c_str());
}

void RunReport(const ReportOptions& options) {
  if (!options.html.empty() && !options.out.empty())
    GSPMD_USER_ERROR("gspmd report: error: --html OUT is the old spelling of -o OUT.html; give one of them");
  const std::string html_path = !options.html.empty() ? options.html : IsHtmlPath(options.out) ? options.out : "";
  if (!options.chip.empty() && html_path.empty())
    GSPMD_USER_ERROR("gspmd report: error: --chip ranks the HTML page's chart by estimated time, and no page is "
                     "written (expected -o OUT.html; for times in text use gspmd simulate --chip)");
  api::Program program = LoadProgramArgument(options.file).WithMesh(options.mesh, "report");
  program.SetPerDevice(options.kind.Override());
  const std::string& file = program.name();  // "<stdin>" for "-"
  std::optional<api::Partitioned> partitioned;
  // A global program has no collectives yet: it is partitioned first, and the report says so.
  if (!program.IsPerDevice()) {
    partitioned = api::Partition(program);
    PrintWarnings(file, partitioned->warnings);
    std::fprintf(stderr, "gspmd report: %s: global program%s, partitioned for %lld devices first\n", file.c_str(),
                 options.kind.global ? "" : " (detected; --per-device reads it as one device's)",
                 static_cast<long long>(partitioned->per_device.module().num_partitions()));
  }
  const api::Program& measured = partitioned ? partitioned->per_device : program;
  const CommReport report = api::Report(measured);
  if (!html_path.empty()) {
    WriteHtml(options, html_path, measured.module(), partitioned ? &partitioned->global : nullptr, program, report);
    if (!options.json) return;
  }
  // Text or JSON to -o OUT (when it is not the page) or stdout.
  const std::string text_path = html_path.empty() ? options.out : "";
  if (!options.json) {
    WriteText(text_path, FormatCommReport(report));
    return;
  }
  WriteText(text_path, CommReportToJson(report).dump(2) + "\n");
  PrintWarnings(file, report.warnings);
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Communication report of a per-device module (a global one is partitioned first): bytes sent per device by "
      "collective kind (ring model, loop bodies times their trip count), collective counts, peak live bytes; or an "
      "HTML page of it");
  command->add_option("FILE", options->file,
                      "per-device HLO text file (ours or XLA's partitioned.hlo), or a global program (HLO or .mlir), "
                      "partitioned first; - for standard input")
      ->required()
      ->type_name("FILE");
  command->add_option("-o,--out", options->out,
                      "write the report to OUT instead of stdout; OUT.html (or .htm): a self-contained HTML page "
                      "(mesh, parameter shardings, communication by layer, live memory, lint findings of a global "
                      "FILE)")
      ->type_name("OUT");
  AddHiddenOptionAlias(*command, "--html", options->html);  // the spelling of -o OUT.html before (one release)
  command->add_option("--chip", options->chip,
                      "with -o OUT.html: estimate each collective's time on this chip (a built-in name or a JSON "
                      "file, as for gspmd simulate) and rank the chart by it")
      ->type_name("CHIP");
  AddProgramKindOptions(*command, options->kind, "partitioned first (and linted for the HTML page)");
  AddHiddenFlagAlias(*command, "--partition", options->kind.global);  // the spelling of --global before
  command->add_flag("--json", options->json,
                    "print JSON: comm_bytes_per_device, collectives (count by kind), peak_bytes_per_device");
  AddMeshOption(*command, options->mesh);
  command->callback([options] { RunReport(*options); });
}

}  // namespace gspmd::tools
