// `gspmd report --html`: one self-contained HTML page (inline CSS, SVG and script; nothing
// fetched) with the mesh, the entry parameters' shardings as tile grids, communication grouped
// by source op (SVG bar chart and a sortable table), live memory over program order (SVG line
// chart, peak marked) and the lint findings.
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

// The page. Its totals carry their exact values in data-value attributes (#total-comm-bytes,
// #total-peak-bytes, #total-collectives) so a browser test can compare them with --json.
std::string RenderHtmlReport(const HtmlReportInput& input);

// The op a collective was made for, from its op_name metadata without the leading
// "jit(...)/" scope ("jvp(bqhk,hkd->bqd)/dot_general"); "" when it has none.
std::string SourceOpOf(const Instruction& instruction);

}  // namespace gspmd::visualize
