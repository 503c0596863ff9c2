// LossPlotSvg: axes with round tick values, the curve as a polyline per finite run, a marker
// on the last point. Written by hand: a dozen SVG elements need no charting library.
#include "train/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/output_files.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr double kWidth = 640, kHeight = 360;
constexpr double kLeft = 64, kRight = 20, kTop = 40, kBottom = 48;

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::string Coordinate(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

std::string Escape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '<') escaped += "&lt;";
    else if (c == '>') escaped += "&gt;";
    else if (c == '&') escaped += "&amp;";
    else if (c == '"') escaped += "&quot;";
    else escaped += c;
  }
  return escaped;
}

// A round step (1, 2 or 5 times a power of ten) giving about `count` ticks over `span`.
double TickStep(double span, int count) {
  const double raw = span / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0})
    if (factor * power >= raw) return factor * power;
  return 10 * power;
}

}  // namespace

std::string LossPlotSvg(const std::string& title, const std::string& metric, const std::vector<double>& values) {
  double low = INFINITY, high = -INFINITY;
  for (double v : values)
    if (std::isfinite(v)) low = std::min(low, v), high = std::max(high, v);
  if (!(low <= high)) low = 0, high = 1;
  if (high - low < 1e-12 * std::max(1.0, std::abs(high))) low -= 0.5, high += 0.5;
  const double y_step = TickStep(high - low, 5);
  low = std::floor(low / y_step) * y_step;
  high = std::ceil(high / y_step) * y_step;
  const int64_t steps = std::max<int64_t>(static_cast<int64_t>(values.size()), 1);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](double step) { return kLeft + (steps == 1 ? plot_w / 2 : (step - 1) / (steps - 1) * plot_w); };
  auto y_of = [&](double v) { return kTop + (high - v) / (high - low) * plot_h; };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Number(kWidth) + "\" height=\"" +
                    Number(kHeight) + "\" viewBox=\"0 0 " + Number(kWidth) + " " + Number(kHeight) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + Number(kWidth / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" + Escape(title) +
         "</text>\n";
  // Horizontal grid lines with value labels.
  for (double v = low; v <= high + y_step / 2; v += y_step) {
    const double rounded = std::abs(v) < y_step * 1e-9 ? 0 : v;
    const std::string y = Coordinate(y_of(rounded));
    svg += "<line x1=\"" + Coordinate(kLeft) + "\" y1=\"" + y + "\" x2=\"" + Coordinate(kWidth - kRight) + "\" y2=\"" +
           y + "\" stroke=\"#dddddd\"/>\n";
    svg += "<text x=\"" + Coordinate(kLeft - 6) + "\" y=\"" + y + "\" text-anchor=\"end\" dominant-baseline=\"middle\">" +
           Number(rounded) + "</text>\n";
  }
  // Step ticks.
  const double x_step = std::max(1.0, TickStep(static_cast<double>(std::max<int64_t>(steps - 1, 1)), 8));
  for (double s = 1; s <= steps; s += x_step) {
    const std::string x = Coordinate(x_of(s));
    svg += "<line x1=\"" + x + "\" y1=\"" + Coordinate(kTop + plot_h) + "\" x2=\"" + x + "\" y2=\"" +
           Coordinate(kTop + plot_h + 4) + "\" stroke=\"black\"/>\n";
    svg += "<text x=\"" + x + "\" y=\"" + Coordinate(kTop + plot_h + 18) + "\" text-anchor=\"middle\">" + Number(s) +
           "</text>\n";
  }
  svg += "<rect x=\"" + Coordinate(kLeft) + "\" y=\"" + Coordinate(kTop) + "\" width=\"" + Coordinate(plot_w) +
         "\" height=\"" + Coordinate(plot_h) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += "<text x=\"" + Number(kLeft + plot_w / 2) + "\" y=\"" + Number(kHeight - 10) +
         "\" text-anchor=\"middle\">step</text>\n";
  svg += "<text x=\"14\" y=\"" + Number(kTop + plot_h / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         Number(kTop + plot_h / 2) + ")\">" + Escape(metric) + "</text>\n";
  // The curve: one polyline per run of finite values.
  std::string points;
  auto flush = [&] {
    if (!points.empty())
      svg += "<polyline class=\"curve\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" + points +
             "\"/>\n";
    points.clear();
  };
  for (size_t k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k])) {
      flush();
      continue;
    }
    if (!points.empty()) points += ' ';
    points += Coordinate(x_of(static_cast<double>(k + 1))) + "," + Coordinate(y_of(values[k]));
  }
  flush();
  if (!values.empty() && std::isfinite(values.back())) {
    const std::string x = Coordinate(x_of(static_cast<double>(values.size())));
    const std::string y = Coordinate(y_of(values.back()));
    svg += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"3\" fill=\"#1f77b4\"><title>step " +
           Number(static_cast<double>(values.size())) + ": " + Escape(metric) + " " + Number(values.back()) +
           "</title></circle>\n";
  }
  svg += "</svg>\n";
  return svg;
}

void CheckPlotPath(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.size() < 4 || path.substr(path.size() - 4) != ".svg")
    GSPMD_USER_ERROR("gspmd train: error: --plot ", path, ": expected a file name ending in .svg");
  const fs::path parent = fs::path(path).parent_path();
  std::error_code error;
  if (!parent.empty() && !fs::is_directory(parent, error))
    GSPMD_USER_ERROR("gspmd train: error: --plot ", path, ": the directory ", parent.string(), " does not exist");
  if (fs::is_directory(path, error)) GSPMD_USER_ERROR("gspmd train: error: --plot ", path, " is a directory");
}

void WriteLossPlot(const std::string& path, const std::string& title, const std::string& metric,
                   const std::vector<double>& values) {
  PendingFiles files;
  const std::string temporary = files.Add(path);
  {
    std::ofstream out(temporary, std::ios::binary);
    out << LossPlotSvg(title, metric, values);
    out.close();
    if (!out) GSPMD_USER_ERROR("gspmd train: error: cannot write --plot ", path);
  }
  files.Commit();
}

}  // namespace gspmd
