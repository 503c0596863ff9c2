// The `plan` lint check: autoshard's search on the program without its annotations; where the
// parameter annotations it finds make the step at least 10% faster, one finding naming each.
#pragma once

#include "api/gspmd.h"

namespace gspmd::api {

// Refuses bad search options (a time limit of 0 or less, an unknown chip) as `gspmd lint`
// UserErrors, whether or not the search is on (an option given is an option read).
void CheckPlanSearchOptions(const lint::LintOptions& options);

// Runs the search on `program` (global, as lint read it) and adds the `plan` finding to `report`
// in program order, or says in report.plan_search why there is none. A search that finds no plan
// is no error: the check then reports nothing.
//   ids = s32[8192,1] parameter(0), sharding={devices=[8,1]<=[8]}
//   table = f32[1024,512] parameter(1), sharding={devices=[1,8]<=[8]}    (gathered whole)
//   e = f32[8192,512] gather(table, ids), ...
// on 8 TPU v3 cores: "warning: autoshard's search finds parameter annotations that cut the step
// time 20.1% ...: 77.7 us -> 62.1 us per step ... [plan]" at %table, with the fix
// "annotate %table with sharding={replicated} (replicate; was sharding={devices=[1,8]<=[8]})".
void AddPlanFinding(const Program& program, const lint::LintOptions& options, lint::LintReport& report);

}  // namespace gspmd::api
