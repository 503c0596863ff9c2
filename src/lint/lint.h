// `gspmd lint`: annotations of a global program that cost more than they should, each with
// where it is (FILE:LINE:COL of the instruction), the annotation responsible, what it costs in
// bytes per device, and a concrete fix with what the program costs once it is applied.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint/program_evaluation.h"
#include "support/diagnostic.h"

namespace gspmd::lint {

struct LintOptions {
  int64_t devices = 0;                  // 0: the module's device count
  double padding_threshold = 0.10;      // uneven splits: report padding above this share of the bytes
  int64_t large_bytes = 1 << 20;        // replicated values: report above this many bytes per device
  bool redundant = false;               // also report annotations propagation would produce anyway
  size_t max_fix_evaluations = 48;      // compiles spent on judging candidate fixes
  // The program was written in StableHLO: fixes read as PartitionSpecs (P('data', None)) when
  // its mesh names its axes; else as XLA's sharding={...}.
  bool stablehlo_input = false;
  // The `plan` check (api::Lint runs it; LintProgram does not): autoshard's search on the
  // program without its annotations, on its device count and named mesh, priced on `chip`.
  bool search = true;
  std::string chip = "tpu-v3";
  double time_limit_s = 10;        // the search's budget in seconds (> 0)
  int64_t max_evaluations = 0;     // plans the search prices per mesh; 0: no limit (tests fix it)
  double plan_threshold = 0.90;    // report a plan whose step time is at most this share of the user's
};

// The checks, by their name in the output and in --json.
//   conflict       an annotated value resharded right away (another annotation or its users
//                  want it laid out otherwise); bytes: communication per device
//   full-remat     a value gathered to replicated and sliced again; bytes: communication
//   uneven-padding an uneven split whose padding exceeds the threshold; bytes: padding memory
//   replicated     a large value replicated over a mesh axis it could be split over; bytes: memory
//   unused-axis    a mesh axis no value is split over; bytes: memory held twice or more
//   redundant      an annotation propagation would produce anyway (a note, off by default)
//   plan           autoshard finds parameter annotations that make the step at least 10% faster;
//                  bytes: 0 (what it saves is time: step_time_before_s/after_s, `changes`)

// One parameter annotation the `plan` fix changes: what the user's program gives the
// parameter now (their annotation, or propagation's choice when they wrote none) and the new one.
struct LintPlanChange {
  SourceLocation location;
  std::string parameter;   // without '%'
  int64_t parameter_number = 0;
  bool annotated = false;  // the user wrote its current sharding
  std::string before_sharding, before_spec;  // XLA text; PartitionSpec when the mesh names its axes
  std::string after_sharding, after_spec;
  bool replicate = false;  // the new plan replicates an input the user split
};

struct LintFinding {
  SourceLocation location;
  std::string check;
  bool warning = true;       // false: a note
  std::string instruction;   // the global instruction the finding is about
  std::string annotation;    // the annotated instruction responsible ("" when none)
  std::string message;       // without location and severity
  double bytes_per_device = 0;
  std::string fix;           // "" when no fix was found
  // The fix's effect, measured by compiling the program with it: the finding's own bytes and
  // the communication of the whole program, before and after.
  double fix_bytes_per_device = 0;
  double comm_before = 0;
  double comm_after = 0;
  std::string fix_instruction;  // the instruction the fix annotates, and with what
  std::string fix_sharding;
  std::string fix_spec;  // the fix as a PartitionSpec ("P('data', None)") when the mesh names its axes
  // `plan` only: every parameter annotation to change, and the step time (simulated on the
  // lint options' chip) of the program as written and with the changes applied.
  std::vector<LintPlanChange> changes;
  double step_time_before_s = 0;
  double step_time_after_s = 0;
};

// What became of the `plan` check's search: "off" (not asked for), "found" (a `plan` finding),
// "none" (no plan at least 10% faster), "failed" (the search found no plan); message says more.
struct LintPlanSearch {
  std::string status = "off";
  std::string message;
  double step_time_before_s = 0;  // when priced (found, none)
  double step_time_after_s = 0;
};

struct LintReport {
  std::vector<LintFinding> findings;  // in program order, then by check
  double comm_bytes_per_device = 0;
  int64_t peak_bytes_per_device = 0;
  int64_t num_devices = 0;
  LintPlanSearch plan_search;
};

// Runs every check on the program `load` returns. Errors in the program are UserErrors.
LintReport LintProgram(const ProgramLoader& load, const LintOptions& options);

// "FILE:LINE:COL: warning: MESSAGE [check]\n  fix: ...\n" per finding.
std::string FormatLintReport(const LintReport& report);
// What `gspmd lint` prints: the findings grouped (below), then the summary line.
std::string FormatGroupedLintReport(const LintReport& report);
// {"num_devices", "comm_bytes_per_device", "peak_bytes_per_device", "findings" (every one, in
// program order; a `plan` finding adds step_time_s_before/after and "changes"), "groups" (indices
// into findings), "summary" (LintSummary's counts and line), "plan_search" (status, message)}.
nlohmann::json LintReportToJson(const LintReport& report);

// Warnings that say the same but for the instructions they name (the same weight in each of
// many layers): the first is shown, the rest counted. Groups of fewer than kMinGroupSize, and
// notes, are one group per finding.
constexpr size_t kMinGroupSize = 3;
struct LintFindingGroup {
  std::vector<size_t> members;  // indices into LintReport::findings, in program order
  double bytes_per_device = 0;  // the members' bytes together
};
std::vector<LintFindingGroup> GroupLintFindings(const std::vector<LintFinding>& findings);

// The counts the summary line and --json's "summary" give.
struct LintTotals {
  size_t warnings = 0;
  size_t notes = 0;
  std::map<std::string, size_t> by_kind;   // check -> findings, notes included
  double avoidable_bytes_per_device = 0;   // the warnings' bytes together
};
LintTotals CountLintFindings(const std::vector<LintFinding>& findings);

// "63 warnings (by kind: conflict 13, replicated 50), 1.20 GiB per device avoidable":
// avoidable is the warnings' bytes together (communication and memory; a value replicated over an
// unused axis counts under both checks). "no warnings: ..." for a clean program.
std::string LintSummary(const LintReport& report);

}  // namespace gspmd::lint
