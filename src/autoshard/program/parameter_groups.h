// The decisions of a program-level autoshard search: entry parameters grouped by the role they
// play (identical layers share one decision), and the PartitionSpecs each group may take.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder/mesh_split.h"
#include "ir/module.h"
#include "sharding/mesh.h"

namespace gspmd::autoshard {

// Entry parameters that play the same role: the same shape, element type and name once layer
// numbers are taken out ("l3.w1" and "l7.w1" -> "l#.w1"), and the same uses (opcodes, operand
// positions, shapes, a dot's dims). One decision covers all of them.
//   l0.w1 f32[32,64], l1.w1 f32[32,64]   ->  group "l0.w1 x2"
struct ParameterGroup {
  std::string label;                 // the first parameter's name, and "xN" for N > 1
  std::vector<int64_t> parameters;   // parameter numbers, ascending
  std::vector<int64_t> dims;
  int64_t bytes = 0;                 // of all its parameters together
  std::string role;                  // the gspmd.role attribute (param, opt_state, batch) or ""
  // Optimizer state of a weight ("adam_m.l0.w1" of "l0.w1", same dims): the group of that
  // weight, whose decision it follows unless the search finds better (weight-update sharding).
  int leader = -1;
};

// Groups of the entry parameters in `searched` (parameter numbers), in order of first
// parameter. Deterministic: the same module gives the same groups.
std::vector<ParameterGroup> GroupParameters(const Module& module, const std::vector<int64_t>& searched);

// Every way to place the mesh's axes on `dims`: each axis on one dim or on none, a dim's axes
// in mesh order, every split even. The first candidate is the replicated one ({} per dim).
//   dims [8,6], mesh x=2,y=4  ->  [], [x], [_,x], [y], [x,y]...(with [_,y] dropped: 6 % 4 != 0)
std::vector<PartitionSpec> CandidateSpecs(const std::vector<int64_t>& dims, const Mesh& mesh);

}  // namespace gspmd::autoshard
