// Sharding propagation: from a few user annotations to a sharding on every instruction they reach.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"

namespace gspmd {

struct PropagationOptions {
  // 0: take the device count from the module (num_partitions, the xla.sdy meshes, or the
  // largest device id in its shardings).
  int64_t num_partitions = 0;
  // Fill PropagationResult::origins (what --explain prints). Off by default: it keeps a
  // string-keyed entry per instruction, which the partitioning pipeline never reads.
  bool record_origins = false;
  // Whether propagation may choose the shardings of the entry parameters and of the result
  // (XLA's allow_spmd_sharding_propagation_to_parameters / _to_output): one value for all, or
  // one per parameter (or per element of a single tuple parameter) / per result element.
  //   true   propagated, as XLA does: a sharding written there is only where propagation
  //          starts, and a value that would split some dim unevenly stays replicated
  //   false  a written sharding is kept; an unwritten one stays without one (the partitioner
  //          replicates it, as XLA's does) and constrains nothing
  // Empty: the module's own allow_spmd_sharding_propagation_to_* attribute when it has one,
  // else the default: written shardings are kept and unwritten ones propagated (what JAX asks
  // for when it leaves in_shardings / out_shardings unspecified; it writes every one it is
  // given), uneven splits included (the runtime here passes uneven pieces).
  std::vector<bool> propagate_to_parameters;
  std::vector<bool> propagate_to_outputs;
};

// Where one instruction's sharding came from, for `gspmd partition --propagate-only --explain`.
struct ShardingOrigin {
  std::string source;     // the user-annotated instruction the sharding flows from ("w1")
  bool user = false;      // true when this instruction's own sharding was written by the user
  std::string rule;       // "dot backward", "elementwise forward", "while loop value", ...
};

struct PropagationResult {
  int64_t num_partitions = 0;
  // Keyed by "computation/instruction" name; one entry per instruction that got a sharding.
  // Empty unless PropagationOptions::record_origins.
  std::map<std::string, ShardingOrigin> origins;
};

// Assigns a sharding to every instruction of `module` that an annotation reaches, in place,
// keeping every user annotation (entry parameter/result shardings, Sharding custom-calls,
// xla.sdy.* attributes and custom-calls) as written. As in XLA, an instruction nothing reaches
// keeps no sharding (a tuple with some elements reached gets replicated ones for the rest);
// PartitionModule replicates it. Sets the module's num_partitions. The result is ready for
// PartitionModule. Malformed annotations are UserErrors naming the instruction.
PropagationResult PropagateShardings(Module& module, const PropagationOptions& options = {});

// "from %w1 (user) via dot backward" / "user annotation": the text --explain prints.
std::string DescribeOrigin(const ShardingOrigin& origin);

// The module in XLA's after-propagation text, each instruction followed by a comment
// /* from %w1 (user) via dot backward */ (what `--propagate-only --explain` prints). The
// comments are ignored by the parser, so the output still parses.
std::string PrintModuleWithOrigins(const Module& module, const PropagationResult& result);

}  // namespace gspmd
