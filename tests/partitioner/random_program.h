// Random small HLO programs with random complete shardings, for the randomized differential
// test of the partitioner (random_partition_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "ir/shape.h"

namespace gspmd::random_program {

struct RandomProgramOptions {
  int64_t min_ops = 2;
  int64_t max_ops = 12;
  int64_t max_devices = 8;
  // Largest element count of any generated value (keeps the interpreter fast).
  int64_t max_elements = 768;
};

// One entry parameter: its shape and, for integer parameters, the inclusive range its random
// values are drawn from (indices get the range of the dim they index, sometimes beyond it).
struct ParameterSpec {
  Shape shape;
  int64_t low = -5;
  int64_t high = 5;
};

struct RandomProgram {
  uint64_t seed = 0;
  int64_t num_devices = 1;
  std::vector<int64_t> mesh;          // the mesh the shardings tile over, e.g. {2, 4}
  std::string text;                   // the HLO module, every instruction with a sharding
  std::vector<ParameterSpec> parameters;
  std::vector<std::string> op_kinds;  // which generators ran ("dot", "pad", ...), in order
  // Some sharding lists devices in a shuffled order (not a product of mesh axes): resharding
  // it may legitimately need full rematerialization.
  bool shuffled_devices = false;
};

// A valid module: every instruction carries a complete sharding over a random mesh of
// 1..max_devices devices. The same seed gives the same program.
RandomProgram GenerateRandomProgram(uint64_t seed, const RandomProgramOptions& options = {});

// Random arguments for the program's entry parameters (floats in [-1, 1], integers in their
// parameter's range). The same seed gives the same values.
std::vector<Literal> RandomArguments(const RandomProgram& program, uint64_t seed);

}  // namespace gspmd::random_program
