// Text and JSON forms of a SimulationReport.
#include "simulate/simulator.h"

#include <algorithm>
#include <cstdio>

#include "support/diagnostic.h"
#include "support/units.h"

namespace gspmd::simulate {
namespace {

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string Number(double value) { return Format("%.4g", value); }

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

nlohmann::json MemoryToJson(const MemoryEstimate& memory) {
  nlohmann::json json;
  json["peak_bytes"] = memory.peak_bytes;
  json["peak_without_remat_bytes"] = memory.peak_without_remat_bytes;
  json["rematerialized"] = memory.rematerialized;
  json["recomputations"] = memory.recomputations;
  json["remat_flops"] = memory.remat_flops;
  json["remat_seconds"] = memory.remat_seconds;
  json["live_range_peak_bytes"] = memory.live_range_peak_bytes;
  json["parameter_bytes"] = memory.parameter_bytes;
  json["optimizer_state_bytes"] = memory.optimizer_state_bytes;
  json["batch_bytes"] = memory.batch_bytes;
  json["activation_bytes"] = memory.activation_bytes;
  json["aliased_outputs"] = memory.aliased_outputs;
  json["roles_from"] = memory.roles_from;
  json["capacity_bytes"] = memory.capacity_bytes;
  json["fits"] = memory.fits;
  return json;
}

}  // namespace

std::string FormatSimulationReport(const SimulationReport& r, int64_t top_entries) {
  std::string out;
  out += "chip:          " + r.chip + " (" + r.chip_path + ")\n";
  out += "topology:      " + r.topology + "\n";
  if (!r.mesh.empty()) out += "mesh:          " + r.mesh + " (collectives say which axes they run over)\n";
  out += "step time:     " + FormatSeconds(r.step_time_s) + " with compute/communication overlap, " +
         FormatSeconds(r.step_time_no_overlap_s) + " without\n";
  out += "  compute      " + FormatSeconds(r.compute_s) + " in " + Number(r.kernels) + " kernels\n";
  out += "  collectives  " + FormatSeconds(r.comm_s) + ", of which " + FormatSeconds(r.exposed_comm_s) +
         " exposed (no kernel running; step = compute + exposed)\n";
  if (!r.windowed_einsum.empty()) out += "windowed einsum: " + r.windowed_einsum + "\n";
  out += "utilization:   MFU " + FormatPercent(r.mfu) + " (" + Number(r.model_flops) +
         " model FLOPs per device over the step at the " + r.peak_compute_type + " peak of " + Number(r.peak_flops_per_s) +
         " FLOP/s); with recomputation " + FormatPercent(r.hfu) + "\n";
  out += "\nper device and step:\n";
  out += "  FLOPs            " + Number(r.matrix_flops + r.vector_flops) + " (dot/convolution " + Number(r.matrix_flops) +
         ", other " + Number(r.vector_flops) + "; transcendentals " + Number(r.transcendentals) + ")\n";
  out += "  rematerialized   " + Number(r.remat_flops) + " FLOPs\n";
  out += "  HBM traffic      " + FormatBytes(r.hbm_bytes) + " (unfused: " + FormatBytes(r.hbm_bytes_unfused) + ")\n";
  out += "  communication    " + FormatBytes(r.comm.comm_bytes_per_device) + " sent\n";

  const MemoryEstimate& m = r.memory;
  out += "\nmemory per device: peak " + FormatBytes(m.peak_bytes) + " of " + FormatBytes(m.capacity_bytes) +
         (m.fits ? ": fits" : ": DOES NOT FIT") + "\n";
  if (m.rematerialized)
    out += "  after rematerialization (" + FormatBytes(m.peak_without_remat_bytes) + " without): " +
           std::to_string(m.recomputations) + " values recomputed, " + Number(m.remat_flops) + " FLOPs, " +
           FormatSeconds(m.remat_seconds) + "\n";
  out += "  parameters " + FormatBytes(m.parameter_bytes) + ", optimizer state " +
         FormatBytes(m.optimizer_state_bytes) + ", batch " + FormatBytes(m.batch_bytes) +
         ", activations " + FormatBytes(m.activation_bytes) + " (roles from " + m.roles_from + "; " +
         std::to_string(m.aliased_outputs) + " outputs written in place)\n";

  out += "\ncommunication by kind (time, and of it exposed: while no kernel ran):\n";
  if (r.comm_by_kind.empty()) out += "  (none)\n";
  for (const auto& [kind, totals] : r.comm_by_kind)
    out += "  " + Pad(kind, 22) + "count " + Pad(Number(totals.count), 8) + "bytes " + Pad(FormatBytes(totals.bytes), 11) +
           "time " + Pad(FormatSeconds(totals.time_s), 11) + "exposed " + FormatSeconds(totals.exposed_s) + "\n";
  if (!r.comm_by_kind.empty())
    out += "  " + Pad("total", 22) + Pad("", 14) + Pad("", 17) + "time " + Pad(FormatSeconds(r.comm_s), 11) + "exposed " +
           FormatSeconds(r.exposed_comm_s) + "\n";

  if (!r.collectives.empty()) {
    std::vector<const CollectiveLine*> lines;
    for (const CollectiveLine& line : r.collectives) lines.push_back(&line);
    std::stable_sort(lines.begin(), lines.end(), [](const CollectiveLine* a, const CollectiveLine* b) {
      return a->estimate.time_s * a->executions > b->estimate.time_s * b->executions;
    });
    out += StrCat("\ncollectives (", std::min<int64_t>(top_entries, lines.size()), " of ", lines.size(),
                  ", by time per step; per execution: bytes sent, algorithm, links, time, exposed):\n");
    for (size_t i = 0; i < lines.size() && static_cast<int64_t>(i) < top_entries; ++i) {
      const CollectiveLine& line = *lines[i];
      out += "  %" + Pad(line.name, 20) + " " + Pad(line.kind, 19) + " x" + Pad(Number(line.executions), 6) +
             Pad(FormatBytes(line.estimate.bytes), 10) + " " + line.estimate.algorithm + ", " + line.estimate.links +
             ", " + FormatSeconds(line.estimate.time_s) + " (" + FormatSeconds(line.exposed_s) + " exposed)" +
             (line.axes.empty() ? "" : ", over " + line.axes) + "\n";
    }
  }

  out += StrCat("\nbreakdown (", std::min<int64_t>(top_entries, r.breakdown.size()), " of ", r.breakdown.size(),
                " entries, by time without overlap):\n");
  out += "  " + Pad("compute", 11) + Pad("collectives", 13) + Pad("FLOPs", 11) + Pad("HBM", 11) + "source\n";
  for (size_t i = 0; i < r.breakdown.size() && static_cast<int64_t>(i) < top_entries; ++i) {
    const BreakdownEntry& e = r.breakdown[i];
    out += "  " + Pad(FormatSeconds(e.compute_s), 11) + Pad(FormatSeconds(e.comm_s), 13) +
           Pad(Number(e.matrix_flops + e.vector_flops), 11) + Pad(FormatBytes(e.hbm_bytes), 11) + e.key + "\n";
  }
  for (const std::string& warning : r.warnings) out += "warning: " + warning + "\n";
  return out;
}

nlohmann::json SimulationReportToJson(const SimulationReport& r) {
  nlohmann::json json;
  json["chip"] = r.chip;
  json["chip_file"] = r.chip_path;
  json["topology"] = r.topology;
  json["devices"] = r.devices;
  json["step_time_s"] = r.step_time_s;
  json["step_time_no_overlap_s"] = r.step_time_no_overlap_s;
  json["compute_time_s"] = r.compute_s;
  json["comm_time_s"] = r.comm_s;
  json["exposed_comm_time_s"] = r.exposed_comm_s;
  json["mfu"] = r.mfu;
  if (!r.windowed_einsum.empty()) json["windowed_einsum"] = r.windowed_einsum;
  json["hfu"] = r.hfu;
  json["peak_flops_per_s"] = r.peak_flops_per_s;
  json["peak_compute_type"] = r.peak_compute_type;
  json["flops_per_device"] = r.matrix_flops + r.vector_flops;
  json["matrix_flops_per_device"] = r.matrix_flops;
  json["vector_flops_per_device"] = r.vector_flops;
  json["transcendentals_per_device"] = r.transcendentals;
  json["model_flops_per_device"] = r.model_flops;
  json["remat_flops_per_device"] = r.remat_flops;
  json["hbm_bytes_per_device"] = r.hbm_bytes;
  json["hbm_bytes_unfused_per_device"] = r.hbm_bytes_unfused;
  json["kernels"] = r.kernels;

  // `gspmd report`'s figures, as it prints them.
  json["comm_bytes_per_device"] = r.comm.comm_bytes_per_device;
  nlohmann::json counts = nlohmann::json::object(), bytes = nlohmann::json::object(), times = nlohmann::json::object(),
                 exposed = nlohmann::json::object();
  for (const auto& [kind, stats] : r.comm.by_kind) {
    counts[kind] = stats.count;
    bytes[kind] = stats.bytes;
  }
  for (const auto& [kind, totals] : r.comm_by_kind) {
    times[kind] = totals.time_s;
    exposed[kind] = totals.exposed_s;
  }
  if (!r.mesh.empty()) json["mesh"] = r.mesh;
  json["collectives"] = counts;
  json["comm_bytes_by_kind"] = bytes;
  json["comm_time_by_kind"] = times;
  json["exposed_comm_time_by_kind"] = exposed;
  nlohmann::json ops = nlohmann::json::array();
  for (const CollectiveLine& line : r.collectives) {
    nlohmann::json op;
    op["name"] = line.name;
    op["kind"] = line.kind;
    op["source"] = line.source;
    op["executions"] = line.executions;
    op["bytes"] = line.estimate.bytes;
    op["group_size"] = line.estimate.group_size;
    op["algorithm"] = line.estimate.algorithm;
    op["links"] = line.estimate.links;
    op["bandwidth_time_s"] = line.estimate.bandwidth_s;
    op["latency_time_s"] = line.estimate.latency_s;
    op["time_s"] = line.estimate.time_s;
    op["exposed_time_s"] = line.exposed_s;
    if (!line.axes.empty()) op["axes"] = line.axes;
    ops.push_back(op);
  }
  json["collective_ops"] = ops;

  json["peak_bytes_per_device"] = r.memory.peak_bytes;
  json["fits_memory"] = r.memory.fits;
  json["memory"] = MemoryToJson(r.memory);

  nlohmann::json breakdown = nlohmann::json::array();
  for (const BreakdownEntry& e : r.breakdown) {
    nlohmann::json entry;
    entry["source"] = e.key;
    entry["compute_s"] = e.compute_s;
    entry["comm_s"] = e.comm_s;
    entry["matrix_flops"] = e.matrix_flops;
    entry["vector_flops"] = e.vector_flops;
    entry["hbm_bytes"] = e.hbm_bytes;
    entry["comm_bytes"] = e.comm_bytes;
    entry["kernels"] = e.kernels;
    entry["collectives"] = e.collectives;
    breakdown.push_back(entry);
  }
  json["breakdown"] = breakdown;
  json["warnings"] = r.warnings;
  return json;
}

}  // namespace gspmd::simulate
