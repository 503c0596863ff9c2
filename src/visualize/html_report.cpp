// The self-contained HTML report page: inline CSS, SVG charts and a small sorting script.
#include "visualize/html_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "simulate/simulator.h"
#include "support/units.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "visualize/sharding_picture.h"

namespace gspmd::visualize {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string Fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; overflow-wrap: break-word; }
/* Nothing wider than the page: long lines wrap or scroll in their own box (1,280 px screens). */
svg { max-width: 100%; height: auto; } .wide { overflow-x: auto; } pre { overflow-x: auto; }
.lint pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.3em 0 0.8em; vertical-align: middle; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #eee; cursor: pointer; } td.name, th.name { text-align: left; }
.grid text { font-size: 11px; text-anchor: middle; dominant-baseline: middle; }
.param { display: inline-block; vertical-align: top; margin: 0 1.5em 1.5em 0; max-width: 100%; }
.param pre, .lint pre { font-size: 12px; }
.chart text { font-size: 11px; }
.live { fill: none; stroke: #b5534a; stroke-width: 1.5; } .peak { fill: #b5534a; }
)";

// Sorts a table by the clicked column (numbers by data-value), and checks on load that the
// byte column adds up to the page's total (#table-bytes-sum shows the sum it found, exact in
// its data-value).
constexpr const char* kScript = R"(
// FormatBytes of support/units.h: whole bytes, binary units, three significant digits, a value
// rounding up to the next unit moves to it, an exact tie goes to the even digit (as to_chars).
function fixed(value, decimals) {
  const scaled = value * 10 ** decimals, floor = Math.floor(scaled);
  return (scaled - floor === 0.5 && floor % 2 === 0 ? floor / 10 ** decimals : value).toFixed(decimals);
}
function humanBytes(bytes) {
  const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  const whole = Math.round(bytes), sign = whole < 0 ? '-' : '';
  let value = Math.abs(whole);
  if (value < 1024) return sign + value.toFixed(0) + ' B';
  value /= 1024;
  for (let unit = 0; ; ++unit) {
    let text = fixed(value, 2);
    if (parseFloat(text) >= 10) text = fixed(value, 1);
    if (parseFloat(text) >= 100) text = fixed(value, 0);
    if (parseFloat(text) < 1024 || unit === units.length - 1) return sign + text + ' ' + units[unit];
    value /= 1024;
  }
}
function sortTable(table, column) {
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const numeric = table.tHead.rows[0].cells[column].dataset.type === 'number';
  const down = table.dataset.sorted === String(column) ? table.dataset.order !== 'down' : true;
  rows.sort((a, b) => {
    const x = a.cells[column], y = b.cells[column];
    const r = numeric ? parseFloat(x.dataset.value) - parseFloat(y.dataset.value)
                      : x.textContent.localeCompare(y.textContent);
    return down ? -r : r;
  });
  rows.forEach(row => body.appendChild(row));
  table.dataset.sorted = String(column);
  table.dataset.order = down ? 'down' : 'up';
}
document.querySelectorAll('table.sortable').forEach(table => {
  Array.from(table.tHead.rows[0].cells).forEach((cell, i) => cell.addEventListener('click', () => sortTable(table, i)));
});
const commTable = document.getElementById('comm-table');
if (commTable) {
  let sum = 0;
  Array.from(commTable.tBodies[0].rows).forEach(row => { sum += parseFloat(row.cells[3].dataset.value); });
  const out = document.getElementById('table-bytes-sum');
  out.dataset.value = String(sum);
  out.textContent = humanBytes(sum);
}
)";

// The colour of a collective kind's bars (the chart's legend lists the kinds it shows).
const char* KindColour(const std::string& kind) {
  if (kind == "all-reduce") return "#4a7fb5";
  if (kind == "all-gather") return "#5aa469";
  if (kind == "reduce-scatter") return "#8e6bb8";
  if (kind == "all-to-all") return "#d9822b";
  if (kind == "collective-permute") return "#b5534a";
  return "#888888";
}

// The value of `key="..."` or `key=N` in metadata text ("" when absent).
std::string MetadataField(const std::string& metadata, const std::string& key) {
  const size_t at = metadata.find(key + "=");
  if (at == std::string::npos) return "";
  size_t begin = at + key.size() + 1;
  if (begin < metadata.size() && metadata[begin] == '"') {
    ++begin;
    return metadata.substr(begin, metadata.find('"', begin) - begin);
  }
  return metadata.substr(begin, metadata.find(' ', begin) - begin);
}

// Names collectives for a reader: the op they were made for, as `gspmd simulate` attributes
// them (its op_name, or the nearest one), and the layer that op belongs to.
class CollectiveNamer {
 public:
  explicit CollectiveNamer(const Module& per_device) {
    for (const auto& computation : per_device.computations())
      for (const auto& instruction : computation->instructions())
        if (instruction->source() != nullptr && !IsCollective(instruction->opcode()))
          opcode_of_source_.emplace(instruction->source(), instruction->opcode());
  }

  // The op_name without its jit(...) scope ("transpose(layer_0/mlp)/dot_general"); without
  // one near, the op the partitioner rewrote by the name the input gave it: "%dot.102 (line
  // 340)" for HLO text, "dot %17 (line 12)" for MLIR, whose value names say nothing of the op
  // ("model.py:42" instead of the line when a loc gave the op a file but no name).
  std::string SourceOf(const Instruction& collective) const {
    simulate::SimulateOptions by_op_name;
    const std::string key = simulate::BreakdownKeyOf(collective, by_op_name);
    if (!key.starts_with("(no op_name)")) return key;
    const InstructionSource* source = collective.source();
    if (source == nullptr) return "%" + collective.name();
    std::string name = source->name.starts_with("%") ? source->name : "%" + source->name;
    const auto opcode = opcode_of_source_.find(source);
    if (opcode != opcode_of_source_.end()) {
      const std::string opcode_name(OpcodeName(opcode->second));
      if (!name.starts_with("%" + opcode_name)) name = opcode_name + " " + name;
    }
    const std::string file = MetadataField(collective.metadata, "source_file");
    if (!file.empty()) return name + " (" + file + ":" + MetadataField(collective.metadata, "source_line") + ")";
    if (source->location.line > 0) return name + " (line " + std::to_string(source->location.line) + ")";
    return name;
  }

  // simulate's "layer" breakdown key ("layer_3", "transpose(head)"); SourceOf when no op_name
  // is near.
  std::string LayerOf(const Instruction& collective) const {
    simulate::SimulateOptions by_layer;
    by_layer.breakdown = "layer";
    const std::string key = simulate::BreakdownKeyOf(collective, by_layer);
    return key.starts_with("(no op_name)") ? SourceOf(collective) : key;
  }

 private:
  // Looked up only, never iterated: the order of pointers does not reach the page.
  std::map<const InstructionSource*, Opcode> opcode_of_source_;
};

struct CommRow {
  std::string source;
  std::string layer;
  std::string kind;
  double bytes = 0;
  double count = 0;
  double seconds = 0;
};

// Largest first: by estimated time when there are estimates (what the step waits for), else
// by bytes.
void SortLargestFirst(std::vector<CommRow>& rows, bool by_time) {
  std::stable_sort(rows.begin(), rows.end(), [by_time](const CommRow& a, const CommRow& b) {
    return by_time ? a.seconds > b.seconds : a.bytes > b.bytes;
  });
}

// One row per source op and collective kind, largest first.
std::vector<CommRow> CommunicationRows(const Module& per_device,
                                       const std::function<double(const Instruction&)>& seconds) {
  const CollectiveNamer namer(per_device);
  std::map<std::pair<std::string, std::string>, CommRow> rows;
  const int64_t num_devices = per_device.num_partitions();
  ForEachCollective(per_device, [&](const Instruction& collective, double times) {
    const std::string source = namer.SourceOf(collective);
    const std::string kind(OpcodeName(collective.opcode()));
    CommRow& row = rows[{source, kind}];
    if (row.source.empty()) row.layer = namer.LayerOf(collective);
    row.source = source;
    row.kind = kind;
    row.bytes += times * CollectiveBytesPerDevice(collective, num_devices);
    row.count += times;
    if (seconds) row.seconds += times * seconds(collective);
  });
  std::vector<CommRow> sorted;
  for (auto& [key, row] : rows) sorted.push_back(row);
  SortLargestFirst(sorted, static_cast<bool>(seconds));
  return sorted;
}

// Bars: one per layer and collective kind, the 25 largest, coloured by kind.
std::string CommunicationChart(const std::vector<CommRow>& rows, bool by_time) {
  std::map<std::pair<std::string, std::string>, CommRow> by_layer;
  for (const CommRow& row : rows) {
    CommRow& bar = by_layer[{row.layer, row.kind}];
    bar.layer = row.layer;
    bar.kind = row.kind;
    bar.bytes += row.bytes;
    bar.count += row.count;
    bar.seconds += row.seconds;
  }
  std::vector<CommRow> bars;
  for (auto& [key, bar] : by_layer) bars.push_back(bar);
  SortLargestFirst(bars, by_time);
  if (bars.size() > 25) bars.resize(25);
  auto value = [by_time](const CommRow& bar) { return by_time ? bar.seconds : bar.bytes; };
  const double largest = std::max(value(bars.front()), by_time ? 1e-12 : 1.0);
  std::ostringstream out;
  std::vector<std::string> kinds;
  for (const CommRow& bar : bars)
    if (std::find(kinds.begin(), kinds.end(), bar.kind) == kinds.end()) kinds.push_back(bar.kind);
  out << "<p class=\"legend\">" << (by_time ? "By estimated time" : "By bytes per device") << "; ";
  for (const std::string& kind : kinds)
    out << "<span class=\"swatch\" style=\"background:" << KindColour(kind) << "\"></span>" << kind << " ";
  out << "</p>\n";
  const int label_width = 320, bar_width = 500, text_width = 200, row_height = 18;
  out << "<svg id=\"comm-chart\" class=\"chart\" width=\"" << label_width + bar_width + text_width << "\" height=\""
      << bars.size() * row_height + 10 << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const CommRow& bar = bars[i];
    const double width = bar_width * value(bar) / largest;
    const size_t y = i * row_height + 4;
    std::string label = bar.layer;
    if (label.size() > 36) label = label.substr(0, 33) + "...";
    label += " " + bar.kind;
    const std::string figures =
        by_time ? FormatSeconds(bar.seconds) + ", " + FormatBytes(bar.bytes) : FormatBytes(bar.bytes);
    out << "<text x=\"" << label_width - 6 << "\" y=\"" << y + 12 << "\" text-anchor=\"end\">" << Escape(label)
        << "</text><rect class=\"bar\" x=\"" << label_width << "\" y=\"" << y << "\" width=\"" << Fixed(width, 1)
        << "\" height=\"" << row_height - 4 << "\" fill=\"" << KindColour(bar.kind) << "\" data-kind=\"" << bar.kind
        << "\" data-layer=\"" << Escape(bar.layer) << "\" data-bytes=\"" << Number(bar.bytes) << "\" data-seconds=\""
        << Number(bar.seconds) << "\"><title>" << Escape(bar.layer) << ", " << bar.kind << ": " << figures << " in "
        << Number(bar.count) << " collectives</title></rect><text x=\"" << Fixed(label_width + width + 4, 1)
        << "\" y=\"" << y + 12 << "\">" << figures << "</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

std::string CommunicationSection(const std::vector<CommRow>& rows, bool has_seconds) {
  std::ostringstream out;
  out << "<h2>Communication by layer and source op</h2>\n";
  if (rows.empty()) {
    out << "<p>No collectives.</p>\n";
    return out.str();
  }
  out << CommunicationChart(rows, has_seconds);
  out << "<div class=\"wide\"><table id=\"comm-table\" class=\"sortable\"><thead><tr><th class=\"name\">source op</th>"
         "<th class=\"name\">layer</th><th class=\"name\">kind</th><th data-type=\"number\">bytes per device</th>"
         "<th data-type=\"number\">count</th>" << (has_seconds ? "<th data-type=\"number\">est. time</th>" : "")
      << "</tr></thead><tbody>\n";
  for (const CommRow& row : rows) {
    out << "<tr><td class=\"name\">" << Escape(row.source) << "</td><td class=\"name\">" << Escape(row.layer)
        << "</td><td class=\"name\">" << row.kind << "</td><td data-value=\"" << Number(row.bytes) << "\">"
        << FormatBytes(row.bytes) << "</td><td data-value=\"" << Number(row.count) << "\">" << Number(row.count)
        << "</td>";
    if (has_seconds) out << "<td data-value=\"" << Number(row.seconds) << "\">" << FormatSeconds(row.seconds) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n<p>Sum of the table's bytes: <span id=\"table-bytes-sum\">(script not run)</span></p>\n";
  return out.str();
}

std::string MemorySection(const Module& per_device, int64_t peak) {
  const EntryLiveRanges ranges = LiveRangesOfEntry(per_device);
  size_t length = 1;
  for (const LiveRange& range : ranges.values) length = std::max(length, range.end + 1);
  std::vector<int64_t> delta(length + 2, 0), callee(length + 1, 0);
  for (const LiveRange& range : ranges.values) {
    delta[range.begin] += range.bytes;
    delta[range.end + 1] -= range.bytes;
    callee[range.begin] = std::max(callee[range.begin], range.callee_peak);
  }
  std::vector<int64_t> live(length, 0);
  int64_t running = 0;
  size_t peak_at = 0;
  for (size_t p = 0; p < length; ++p) {
    running += delta[p];
    live[p] = running + callee[p];
    if (live[p] > live[peak_at]) peak_at = p;
  }
  const int width = 900, height = 220, left = 70;
  const double top_value = std::max<double>(static_cast<double>(std::max(peak, live[peak_at])), 1.0);
  auto x_of = [&](size_t p) { return left + (width - left - 10) * static_cast<double>(p) / std::max<size_t>(length - 1, 1); };
  auto y_of = [&](double bytes) { return height - 20 - (height - 40) * bytes / top_value; };
  std::ostringstream points;
  const size_t step = std::max<size_t>(1, length / 1500);
  for (size_t p = 0; p < length; p += step) {
    int64_t most = live[p];  // keep each bucket's maximum so the peak survives thinning
    for (size_t q = p; q < std::min(length, p + step); ++q) most = std::max(most, live[q]);
    points << Fixed(x_of(p), 1) << "," << Fixed(y_of(static_cast<double>(most)), 1) << " ";
  }
  std::ostringstream out;
  out << "<h2>Live memory over program order</h2>\n<svg id=\"memory-chart\" class=\"chart\" width=\"" << width
      << "\" height=\"" << height << "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
      << "<line x1=\"" << left << "\" y1=\"" << height - 20 << "\" x2=\"" << width - 10 << "\" y2=\"" << height - 20
      << "\" stroke=\"#888\"/><line x1=\"" << left << "\" y1=\"20\" x2=\"" << left << "\" y2=\"" << height - 20
      << "\" stroke=\"#888\"/>\n<text x=\"" << left - 4 << "\" y=\"" << Fixed(y_of(top_value), 1)
      << "\" text-anchor=\"end\">" << FormatBytes(top_value) << "</text><text x=\"" << left - 4 << "\" y=\""
      << height - 20 << "\" text-anchor=\"end\">0</text>\n<polyline class=\"live\" points=\"" << points.str()
      << "\"/>\n<circle class=\"peak\" cx=\"" << Fixed(x_of(peak_at), 1) << "\" cy=\""
      << Fixed(y_of(static_cast<double>(live[peak_at])), 1) << "\" r=\"4\" data-bytes=\"" << live[peak_at]
      << "\"/><text x=\"" << Fixed(x_of(peak_at) + 6, 1) << "\" y=\"" << Fixed(y_of(static_cast<double>(live[peak_at])) + 4, 1)
      << "\">peak " << FormatBytes(static_cast<double>(live[peak_at])) << " at instruction " << peak_at << "</text>\n"
      << "</svg>\n";
  return out.str();
}

// A parameter's tiles as an SVG grid (rank <= 2) or its dims table (higher ranks).
std::string ParameterPicture(const Instruction& parameter, bool shard_shapes, int64_t num_devices) {
  const Sharding sharding = parameter.sharding().value_or(Sharding::Replicated());
  const Shape shape = shard_shapes ? GlobalShapeOfShard(parameter.shape(), sharding) : parameter.shape();
  const std::optional<Mesh> mesh = NamedMeshOf(*parameter.parent()->parent());  // P('data', None) beside XLA's text
  std::ostringstream out;
  out << "<div class=\"param\"><div><b>%" << Escape(parameter.name()) << "</b> " << Escape(shape.ToString(false))
      << "<br><code>" << Escape(ShardingTextWithSpec(sharding, shape.IsArray() ? shape.rank() : -1, mesh ? &*mesh : nullptr))
      << "</code></div>\n";
  const bool drawable = shape.IsArray() && shape.rank() >= 1 && shape.rank() <= 2 &&
                        (sharding.IsTiled() || sharding.IsReplicated() || sharding.IsMaximal());
  if (!drawable) {
    out << "<pre>" << Escape(DrawSharding(shape, sharding, num_devices)) << "</pre></div>\n";
    return out.str();
  }
  const std::vector<int64_t> counts = TileCounts(sharding, shape.rank());
  const int64_t rows = shape.rank() == 1 ? 1 : counts[0];
  const int64_t cols = shape.rank() == 1 ? counts[0] : counts[1];
  const std::vector<Tile> tiles = TilesOf(shape, sharding, num_devices);
  const double cell_w = std::max(28.0, 240.0 / static_cast<double>(cols));
  const double cell_h = std::max(20.0, 120.0 / static_cast<double>(rows));
  out << "<svg class=\"grid\" width=\"" << Fixed(cols * cell_w + 2, 0) << "\" height=\"" << Fixed(rows * cell_h + 2, 0)
      << "\" viewBox=\"0 0 " << Fixed(cols * cell_w + 2, 0) << " " << Fixed(rows * cell_h + 2, 0) << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
  std::map<std::vector<int64_t>, size_t> colour;
  const char* palette[] = {"#9ecae1", "#fdd0a2", "#a1d99b", "#dadaeb", "#fcbba1", "#c7e9c0", "#d9d9d9", "#fee391"};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const Tile& tile = tiles[r * cols + c];
      auto [it, inserted] = colour.emplace(tile.devices, colour.size());
      out << "<rect class=\"tile\" x=\"" << Fixed(1 + c * cell_w, 1) << "\" y=\"" << Fixed(1 + r * cell_h, 1)
          << "\" width=\"" << Fixed(cell_w, 1) << "\" height=\"" << Fixed(cell_h, 1) << "\" fill=\""
          << palette[it->second % 8] << "\" stroke=\"#555\"/>";
      if (cols <= 32 && rows <= 32)
        out << "<text x=\"" << Fixed(1 + (c + 0.5) * cell_w, 1) << "\" y=\"" << Fixed(1 + (r + 0.5) * cell_h, 1)
            << "\">" << Escape(DeviceListText(tile.devices)) << "</text>";
      out << "\n";
    }
  }
  out << "</svg></div>\n";
  return out.str();
}

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& input) {
  const Module& parameters_from = input.global ? *input.global : *input.per_device;
  int64_t collectives = 0;
  for (const auto& [kind, stats] : input.report.by_kind) collectives += stats.count;
  const bool has_seconds = static_cast<bool>(input.collective_seconds);
  const std::vector<CommRow> rows = CommunicationRows(*input.per_device, input.collective_seconds);
  double seconds = 0;
  for (const CommRow& row : rows) seconds += row.seconds;
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gspmd report: "
      << Escape(input.title) << "</title>\n<style>" << kStyle << "</style></head><body>\n<h1>gspmd report: "
      << Escape(input.title) << "</h1>\n<table id=\"totals\"><tbody>\n"
      << "<tr><td class=\"name\">devices (mesh)</td><td id=\"mesh-devices\" data-value=\"" << input.num_devices << "\">"
      << input.num_devices << (input.mesh_text.empty() ? "" : " &mdash; mesh " + Escape(input.mesh_text))
      << "</td></tr>\n"
      << "<tr><td class=\"name\">communication per device</td><td id=\"total-comm-bytes\" data-value=\""
      << Number(input.report.comm_bytes_per_device) << "\">" << FormatBytes(input.report.comm_bytes_per_device)
      << "</td></tr>\n";
  if (has_seconds)
    out << "<tr><td class=\"name\">estimated communication time (no overlap)</td><td id=\"total-comm-seconds\" "
           "data-value=\"" << Number(seconds) << "\">" << FormatSeconds(seconds) << "</td></tr>\n";
  out << "<tr><td class=\"name\">collectives executed</td><td id=\"total-collectives\" data-value=\""
      << collectives << "\">" << collectives << "</td></tr>\n"
      << "<tr><td class=\"name\">peak live memory per device</td><td id=\"total-peak-bytes\" data-value=\""
      << input.report.peak_bytes_per_device << "\">" << FormatBytes(static_cast<double>(input.report.peak_bytes_per_device))
      << "</td></tr>\n</tbody></table>\n";
  out << CommunicationSection(rows, has_seconds)
      << MemorySection(*input.per_device, input.report.peak_bytes_per_device);
  out << "<h2>Lint findings</h2>\n<div class=\"lint\" id=\"lint\">\n";
  if (input.lint_findings.empty())
    out << "<p>" << Escape(input.lint_note.empty() ? "No findings." : input.lint_note) << "</p>\n";
  for (const std::string& finding : input.lint_findings) out << "<pre class=\"finding\">" << Escape(finding) << "</pre>\n";
  out << "</div>\n";
  out << "<h2>Entry parameters</h2>\n<div id=\"parameters\">\n";
  const auto& parameters = parameters_from.entry()->parameters();
  const size_t drawn = std::min<size_t>(parameters.size(), 200);
  for (size_t i = 0; i < drawn; ++i)
    out << ParameterPicture(*parameters[i], input.global == nullptr, input.num_devices);
  if (drawn < parameters.size()) out << "<p>(" << parameters.size() - drawn << " more parameters not drawn)</p>\n";
  out << "</div>\n";
  out << "<script>" << kScript << "</script>\n</body></html>\n";
  return out.str();
}

}  // namespace gspmd::visualize
