// Parsing XLA's HLO text into a Module.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/module.h"

namespace gspmd {

// Parses a whole HLO module as XLA prints it (and as JAX dumps it). Errors are UserErrors
// whose message starts "FILENAME:LINE:COL: error: " and says what was expected.
std::unique_ptr<Module> ParseModule(std::string_view text, const std::string& filename = "<input>");

// Reads and parses a file; an unreadable file is a UserError naming it.
std::unique_ptr<Module> ParseModuleFile(const std::string& path);

}  // namespace gspmd
