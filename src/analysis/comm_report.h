// Communication and memory report of a per-device program: bytes each device sends, by
// collective kind, collective counts, and peak live bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
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
// statically (WhileTripCount); otherwise once, with a warning.
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

// Bytes one execution of `collective` sends from one device (the ring model above).
double CollectiveBytesPerDevice(const Instruction& collective, int64_t num_devices);

// Peak bytes live at once when the module runs in program order on one device: values live
// from definition to last use, entry parameters for the whole program, tuples and
// get-tuple-element alias their operands, called computations add their own peak.
int64_t PeakLiveBytes(const Module& module);

// PeakLiveBytes with the values for which `shares_buffer` is true keeping no bytes of their
// own (an output written into the buffer of the input it aliases), and what is live at the
// peak: the entry's values (program order) and the peak of the computation called there.
using BufferSharing = std::function<bool(const Instruction&)>;
struct LivePeak {
  int64_t bytes = 0;
  std::vector<const Instruction*> live;
  int64_t callee_bytes = 0;
};
LivePeak EntryLivePeak(const Module& module, const BufferSharing& shares_buffer);

std::string FormatCommReport(const CommReport& report);
nlohmann::json CommReportToJson(const CommReport& report);

}  // namespace gspmd
