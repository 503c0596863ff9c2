// The sharding attributes of StableHLO text in the representation propagation reads:
//   mhlo.sharding = "{devices=[8,1]<=[8]}"          -> the instruction's sharding
//   sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]> -> frontend attribute xla.sdy.sharding
//   mhlo.frontend_attributes = {k = "v"}            -> frontend attributes k="v"
// (the same form JAX's HLO export uses, so propagation and partitioning are shared).
// Shardy texts are checked against the declared meshes and the value's shape here, so errors
// point at the attribute.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/attributes.h"
#include "frontend/stablehlo/module_reader.h"

namespace gspmd::stablehlo {

// mhlo.sharding's string, parsed and checked against `shape` ("" means replicated, as XLA
// reads it).
Sharding GspmdSharding(ModuleReader& reader, const Attr& attr, const Shape& shape);

// The text of a Shardy sharding attribute (#sdy.sharding<...> or #sdy.sharding_per_value<...>)
// after checking it: one sharding per leaf of `shape` (per_value), each fitting its leaf.
std::string SdyShardingText(ModuleReader& reader, const Attr& attr, const Shape& shape);
// "<@mesh, [{"x"}, {}]>" as written in sdy op syntax, checked for a value of `shape`;
// returns "#sdy.sharding<@mesh, ...>".
std::string SdyStrippedShardingText(ModuleReader& reader, std::string_view stripped, size_t pos, const Shape& shape);

// key="value" appended to frontend_attributes (value escaped).
void AddFrontendAttribute(Instruction& instruction, std::string_view key, std::string_view value);
// mhlo.frontend_attributes = {k = "v", ...}.
void AddFrontendAttributes(ModuleReader& reader, Instruction& instruction, const Attr& dict);
// The same dictionary as frontend_attributes text (for the module).
std::string FrontendAttributesText(ModuleReader& reader, const Attr& dict);

}  // namespace gspmd::stablehlo
