// `gspmd report --html`: one self-contained HTML page (inline CSS, SVG and script; nothing
// fetched) with the mesh, the entry parameters' shardings as tile grids, communication by layer
// (SVG bar chart; the layers as `gspmd simulate --breakdown layer` names them, largest estimated
// time first when a chip is given, else most bytes) and by source op (a sortable table), live
// memory over program order (SVG line chart, peak marked) and the lint findings.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "ir/module.h"

namespace gspmd::visualize {

struct HtmlReportInput {
  std::string title;                       // the input file
  const Module* per_device = nullptr;      // communication and memory come from it
  // The entry parameters' shardings: the global program's (when given) or the per-device
  // program's, whose shapes are shard shapes.
  const Module* global = nullptr;
  int64_t num_devices = 1;
  std::string mesh_text;                   // "[2,4]: axis 0 size 2 (device stride 4), ..." ("" unknown)
  CommReport report;                       // AnalyzeCommunication(*per_device): the page's totals
  // Seconds one execution of a collective takes (the cost model of `gspmd simulate --chip`);
  // empty: the table has no time column.
  std::function<double(const Instruction&)> collective_seconds;
  std::vector<std::string> lint_findings;  // formatted lines; empty with lint_note saying why
  std::string lint_note;
};

// The page. Figures show as every command prints them (support/units.h: KiB, MiB, GiB; ms, us);
// the totals carry their exact values in data-value attributes (#total-comm-bytes, #total-peak-bytes,
// #total-collectives, #total-comm-seconds with a chip) so a browser test can compare them with
// --json. A collective is named by its op_name, or the nearest one (as simulate attributes
// it), else by the op it was made for as the input named it ("dot %17 (line 12)" for MLIR).
std::string RenderHtmlReport(const HtmlReportInput& input);

}  // namespace gspmd::visualize
