// Communication and memory report of a per-device program: bytes each device sends, by
// collective kind, collective counts, and peak live bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/module.h"

namespace gspmd {

// Bytes a device sends for one collective, on the ring model (n = replica group size, B =
// bytes of the named buffer):
//   all-reduce 2(n-1)/n * B(operand)      all-gather (n-1)/n * B(result)
//   all-to-all (n-1)/n * B(result)        reduce-scatter (n-1)/n * B(operand)
//   collective-permute B(operand)         collective-broadcast (n-1)/n * B(operand)
// Collectives inside while bodies count once per iteration when the trip count is known
// statically (WhileTripCount); otherwise once, with a warning. Of a conditional's branches,
// one runs: the one that sends the most bytes counts.
struct CollectiveStats {
  int64_t count = 0;
  double bytes = 0;
};

struct CommReport {
  double comm_bytes_per_device = 0;
  std::map<std::string, CollectiveStats> by_kind;  // keyed by opcode name: deterministic order
  int64_t peak_bytes_per_device = 0;
  std::vector<std::string> warnings;
};

CommReport AnalyzeCommunication(const Module& module);

// Calls visit(collective, times) for every collective reachable from the entry (through while,
// call and the costliest branch of each conditional), `times` being how often it runs (while
// bodies: their static trip count). An asynchronous collective-permute is visited once, at its collective-permute-start.
// Returns the warnings about unknown trip counts, as AnalyzeCommunication does.
std::vector<std::string> ForEachCollective(const Module& module,
                                           const std::function<void(const Instruction&, double)>& visit);

// Bytes one execution of `collective` sends from one device (the ring model above).
double CollectiveBytesPerDevice(const Instruction& collective, int64_t num_devices);

// The kind a collective is counted under: its opcode's name, "collective-permute" for a
// collective-permute-start.
std::string_view CollectiveKindName(const Instruction& collective);

// Peak bytes live at once when the module runs in program order on one device: values live
// from definition to last use, entry parameters for the whole program, tuples and
// get-tuple-element alias their operands, called computations add their own peak.
int64_t PeakLiveBytes(const Module& module);

// The entry computation's values as PeakLiveBytes sees them, in program order: each keeps
// `bytes` of its own (0 for tuples, get-tuple-element, bitcasts, ...) live from its position
// `begin` through `end` (its last use; the program's length for the root and the parameters),
// and the computations it calls add `callee_peak` at its position. PeakLiveBytes is the
// largest sum over positions p of the bytes of values with begin <= p <= end, plus p's
// callee_peak.
struct LiveRange {
  const Instruction* value = nullptr;
  int64_t bytes = 0;
  size_t begin = 0;
  size_t end = 0;
  int64_t callee_peak = 0;
};
struct EntryLiveRanges {
  std::vector<LiveRange> values;
};
EntryLiveRanges LiveRangesOfEntry(const Module& module);

// The text of `gspmd report`: the JSON keys with figures in binary units ("comm_bytes_per_device:
// 36.3 KiB"); CommReportToJson keeps the exact ones.
std::string FormatCommReport(const CommReport& report);
nlohmann::json CommReportToJson(const CommReport& report);

}  // namespace gspmd
