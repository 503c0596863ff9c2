// Regions as HLO computations. The op that owns a region decides the calling convention:
//   flat (reduce, sort, scatter, map, all_reduce, select_and_scatter, manual bodies):
//       block arguments are the parameters, the returned values the root;
//   tuple parameter (while, if, case): one tuple parameter holding the block arguments and
//       the values the region uses from enclosing regions, read with get-tuple-element.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/module_reader.h"

namespace gspmd::stablehlo {

// The returned values as one root: the value itself, or a tuple of them (none: empty tuple),
// appended to the region's body.
Instruction* RegionRoot(ModuleReader& reader, Region& region, bool always_tuple = false);

// A flat computation from `region`. Values from enclosing regions (other than constants,
// which are copied in) are errors naming the op.
Computation* FlatComputation(ModuleReader& reader, Region& region, const OpSyntax& op, std::string_view base_name,
                             bool always_tuple_root = false);

// The start of a computation whose parameter is a tuple of `shapes`: the parameter and one
// get-tuple-element per element, in `prefix`; placeholders[i] (block arguments and captures
// of `region`), when set, is replaced by element i, also among the values it returns.
// Returns the elements.
std::vector<Instruction*> UnpackTupleParameter(ModuleReader& reader, const std::vector<Shape>& shapes,
                                               const std::vector<Instruction*>& placeholders, Region& region,
                                               std::vector<std::unique_ptr<Instruction>>& prefix);

// Defines `computation` as `prefix` followed by the region's body, with `root`.
void DefineFromRegion(ModuleReader& reader, Computation* computation, std::vector<std::unique_ptr<Instruction>> prefix,
                      Region& region, Instruction* root);

// Checks the block arguments of `region` against the types the op gives them.
void CheckRegionArgs(ModuleReader& reader, const OpSyntax& op, const Region& region, const std::vector<Shape>& expected,
                     std::string_view what);
// Checks the returned values of `region` against `expected`.
void CheckRegionResults(ModuleReader& reader, const OpSyntax& op, const Region& region,
                        const std::vector<Shape>& expected, std::string_view what);

}  // namespace gspmd::stablehlo
