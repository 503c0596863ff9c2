// Partitioner tests through the whole compile pipeline (api::PartitionGlobal: the folds before propagation, propagation, partitioning).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "api/pipeline.h"
#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {

// Propagates and partitions a global program as `gspmd partition` does (with
// `--propagate-to-outputs to_outputs`).
inline Partitioned PartitionThroughPipeline(const std::string& hlo, int64_t devices, const std::string& to_outputs = "") {
  std::unique_ptr<Module> module = ParseModule(hlo);
  api::CompileOptions options;
  options.requested_devices = devices;
  options.boundary.to_outputs = to_outputs;
  api::CompiledPartition compiled = api::PartitionGlobal(*module, "global.hlo", options);
  Partitioned p;
  p.original = ParseModule(hlo);
  p.text = PrintModule(*compiled.partitioned.module);
  p.module = ParseModule(p.text);
  return p;
}

// PartitionThroughPipeline, then expects a per-device program without collectives that
// computes the same numbers.
inline void ExpectNoCommunicationWhenPartitioned(const std::string& hlo, int64_t devices,
                                                 const std::string& to_outputs = "") {
  Partitioned p = PartitionThroughPipeline(hlo, devices, to_outputs);
  ExpectStructure(*p.module, p.text, {.collectives = 0});
  ExpectSameNumbers(p);
}

}  // namespace gspmd::partition_test
