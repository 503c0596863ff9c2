// Sparse random annotations for the randomized propagation test: from a random program with a
// complete sharding on every instruction (tests/partitioner/random_program.h), keep a few as user
// annotations in GSPMD or Shardy form, and check afterwards that propagation kept them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "partitioner/random_program.h"
#include "sharding/sharding.h"

namespace gspmd::random_propagation {

// How the annotations are drawn (percent values are chances per case or per constraint).
struct SparseOptions {
  int64_t max_constraints = 2;             // Sharding custom-calls per program: 0..max
  int64_t random_constraint_percent = 30;  // a constraint gets a random mesh sharding
  int64_t shardy_percent = 30;             // the program is written in Shardy form
  int64_t group_percent = 25;              // the program gets a shard_as group
};

// A custom-call annotation inserted after one instruction: a Sharding constraint, or (Shardy
// form) an xla.sdy.FuncResultSharding on a result.
struct Constraint {
  std::string computation;
  std::string target;  // the annotated instruction
  std::string name;    // the custom-call's name
  std::string shape;   // the target's shape text
  Sharding sharding;
  std::vector<int64_t> open_dims;  // unspecified_dims (Shardy: dims written {?})
  bool result = false;             // xla.sdy.FuncResultSharding
};

// The annotations the sparse program keeps, to check after propagation.
struct KeptAnnotations {
  std::map<int64_t, Sharding> parameters;  // entry parameter number -> sharding
  std::optional<Sharding> root;
  std::vector<Constraint> constraints;
  bool shardy = false;  // written as Shardy exports them (xla.sdy.* attributes and custom-calls)
  // A shard_as group (xla.sdy.ShardingGroup in Shardy form) of entry values: they must end with
  // one sharding.
  std::vector<std::string> group;
};

// Picks the annotations to keep (entry parameters often, the root sometimes, 0..max Sharding
// custom-calls on inner values, some with unspecified dims, sometimes a shard_as group), strips
// every other sharding, and returns the module text, in GSPMD form (sharding=, Sharding
// custom-calls with unspecified_dims, sharding={unknown shard_as 0}) or, sometimes, in Shardy form
// (xla.sdy.sharding attributes over an xla.sdy.meshes mesh, Sharding custom-calls with open dims,
// xla.sdy.FuncResultSharding on the results, xla.sdy.ShardingGroup). The same seed gives the same
// text. `kept` receives what must survive propagation.
std::string SparseAnnotations(const random_program::RandomProgram& program, const SparseOptions& options,
                              KeptAnnotations* kept);

// "" when every kept annotation survived propagation (open dims may be refined; shard_as
// members share one sharding); else what broke. Values nothing reached may keep no sharding.
std::string CheckAnnotations(const Module& propagated, const KeptAnnotations& kept, int64_t num_devices);

}  // namespace gspmd::random_propagation
