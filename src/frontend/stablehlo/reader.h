// Reading StableHLO MLIR text (what jax.jit(f).lower(...).as_text() prints, pretty or generic
// form, with Shardy `sdy` or GSPMD `mhlo.sharding` annotations) into a Module, so that
// propagation, partitioning, the interpreter and the runtime work on it as on HLO text.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/module.h"

namespace gspmd {

// Converts a whole StableHLO module. Errors are UserErrors "FILENAME:LINE:COL: error: ..."
// saying what was expected; dynamic shapes and unsupported ops are errors that name them.
//
// What becomes what: func.func @main is the entry computation (other functions become
// computations called by `call`); regions become computations (values a region uses from
// an enclosing one are passed in); mhlo.sharding becomes the instruction's sharding,
// sdy.sharding the xla.sdy.sharding frontend attribute, sdy.mesh the module's
// xla.sdy.meshes, sdy.manual_computation the xla.sdy.GlobalToLocalShape / call /
// LocalToGlobalShape triple, loc(...) metadata; stablehlo.composite is inlined.
std::unique_ptr<Module> ParseStableHlo(std::string_view text, const std::string& filename = "<input>");

// Reads and converts a file; an unreadable file is a UserError naming it.
std::unique_ptr<Module> ParseStableHloFile(const std::string& path);

}  // namespace gspmd
