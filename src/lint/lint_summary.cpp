// What `gspmd lint` prints after the checks: findings alike but for their names grouped into
// one with its count and bytes, and one summary line (counts by kind, bytes avoidable, and the
// time per step a `plan` finding saves).
#include <algorithm>
#include <map>
#include <string>

#include "lint/lint.h"
#include "support/units.h"

namespace gspmd::lint {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// `text` with every %name written as "%": "%l3.wqkv f32[...]" -> "% f32[...]".
std::string WithoutNames(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] != '%') continue;
    while (i + 1 < text.size() && IsNameChar(text[i + 1])) ++i;
  }
  return out;
}

// Warnings of one group: same check, same message but for the names.
std::string GroupKey(const LintFinding& finding) { return finding.check + "/" + WithoutNames(finding.message); }

std::string Plural(size_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

}  // namespace

std::vector<LintFindingGroup> GroupLintFindings(const std::vector<LintFinding>& findings) {
  std::vector<LintFindingGroup> groups;
  std::map<std::string, size_t> group_of_key;
  for (size_t i = 0; i < findings.size(); ++i) {
    // Notes (asked for with --redundant) stay one per annotation: each is a line to delete.
    const std::string key = findings[i].warning ? GroupKey(findings[i]) : "note/" + std::to_string(i);
    auto [it, inserted] = group_of_key.emplace(key, groups.size());
    if (inserted) groups.emplace_back();
    LintFindingGroup& group = groups[it->second];
    group.members.push_back(i);
    group.bytes_per_device += findings[i].bytes_per_device;
  }
  std::vector<LintFindingGroup> kept;
  for (const LintFindingGroup& group : groups) {
    if (group.members.size() >= kMinGroupSize) {
      kept.push_back(group);
      continue;
    }
    for (size_t i : group.members) kept.push_back(LintFindingGroup{{i}, findings[i].bytes_per_device});
  }
  // In program order of their first member (groups were made in that order; the split-off
  // singles are put back in place).
  std::stable_sort(kept.begin(), kept.end(),
                   [](const LintFindingGroup& a, const LintFindingGroup& b) { return a.members[0] < b.members[0]; });
  return kept;
}

LintTotals CountLintFindings(const std::vector<LintFinding>& findings) {
  LintTotals totals;
  for (const LintFinding& finding : findings) {
    ++totals.by_kind[finding.check];
    if (!finding.warning) {
      ++totals.notes;
      continue;
    }
    ++totals.warnings;
    totals.avoidable_bytes_per_device += finding.bytes_per_device;
  }
  return totals;
}

std::string LintSummary(const LintReport& report) {
  if (report.findings.empty()) return "no warnings: no annotation costs more than lint can tell it should";
  const LintTotals totals = CountLintFindings(report.findings);
  std::string kinds;
  for (const auto& [kind, count] : totals.by_kind)
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
  std::string plan;  // the time a `plan` finding saves (its bytes are none)
  for (const LintFinding& finding : report.findings)
    if (finding.check == "plan")
      plan = FormatSeconds(finding.step_time_before_s - finding.step_time_after_s) +
             " per step faster with autoshard's plan, ";
  return Plural(totals.warnings, "warning", "warnings") +
         (totals.notes > 0 ? " and " + Plural(totals.notes, "note", "notes") : "") + " (by kind: " + kinds + "), " +
         plan + FormatBytes(totals.avoidable_bytes_per_device) + " per device avoidable";
}

std::string FormatGroupedLintReport(const LintReport& report) {
  std::string out;
  for (const LintFindingGroup& group : GroupLintFindings(report.findings)) {
    LintReport first;
    first.findings.push_back(report.findings[group.members[0]]);
    out += FormatLintReport(first);
    if (group.members.size() < 2) continue;
    std::string others;
    const size_t shown = std::min<size_t>(group.members.size() - 1, 4);
    for (size_t k = 1; k <= shown; ++k)
      others += (k > 1 ? ", %" : "%") + report.findings[group.members[k]].instruction;
    if (group.members.size() - 1 > shown) others += ", ...";
    out += "  and " + std::to_string(group.members.size() - 1) + " more alike (" + others + "): " +
           std::to_string(group.members.size()) + " in all, " + FormatBytes(group.bytes_per_device) +
           " per device together\n";
  }
  return out + LintSummary(report) + "\n";
}

}  // namespace gspmd::lint
