// The loss curve of `gspmd train --plot FILE.svg`: a self-contained SVG line chart (no
// scripts, fonts or network) of one metric per step, written only when complete.
#pragma once

#include <string>
#include <vector>

namespace gspmd {

// The chart's SVG text: `values[k]` is step k + 1's value of `metric`; non-finite values
// break the line. `title` is drawn above the plot (escaped). Deterministic.
std::string LossPlotSvg(const std::string& title, const std::string& metric, const std::vector<double>& values);

// UserError unless `path` ends in .svg and its directory exists (checked before training).
void CheckPlotPath(const std::string& path);

// Writes LossPlotSvg to `path` under a temporary name, renamed when complete.
void WriteLossPlot(const std::string& path, const std::string& title, const std::string& metric,
                   const std::vector<double>& values);

}  // namespace gspmd
