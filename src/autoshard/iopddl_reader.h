// Reads an IOPDDL contest problem (.json, or gzip-compressed .json.gz) into a StrategyProblem.
#pragma once

#include <string>

#include "autoshard/strategy_problem.h"

namespace gspmd::autoshard {

// Reads `path`; gzip input is recognised by its magic bytes, whatever the name. A file that
// cannot be read, a truncated or corrupt gzip stream, malformed JSON, a missing key or a value
// of the wrong kind, length or range is a UserError "PATH: error: ..." naming the JSON field
// (e.g. `problem.edges.costs[17] has 5 entries, expected 2 x 3 = 6`).
StrategyProblem ReadIopddlFile(const std::string& path);

// The same for JSON text already in memory; `origin` names it in errors.
StrategyProblem ParseIopddlText(const std::string& text, const std::string& origin);

}  // namespace gspmd::autoshard
