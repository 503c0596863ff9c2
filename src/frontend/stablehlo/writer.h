// Printing a Module as StableHLO MLIR text: the pretty form StableHLO prints where an op has
// one (or every op in generic form), shardings as mhlo.sharding, frontend attributes as
// mhlo.frontend_attributes, metadata as loc(...). Reading the text back (reader.h) gives a
// module that computes the same values; tests and benchmarks use it to produce StableHLO for
// any program we can build or parse.
//
//   HLO   %add = f32[4]{0} add(%x, %y)
//   MLIR  %2 = stablehlo.add %0, %1 : tensor<4xf32>
//
// Computations called as reducers, comparators, loop bodies and branches become regions;
// computations called by `call` become private functions. Opcodes without a StableHLO
// counterpart (fusion, domain, ...) are UserErrors naming the instruction.
#pragma once

#include <string>

#include "ir/module.h"

namespace gspmd {

struct StableHloWriteOptions {
  bool generic = false;     // every op in the generic form "stablehlo.add"(%a, %b) : (...) -> ...
  bool locations = true;    // metadata as loc("op_name"("file":line:1))
};

std::string PrintStableHlo(const Module& module, const StableHloWriteOptions& options = {});

}  // namespace gspmd
