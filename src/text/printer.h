// Printing a Module, a computation or an instruction as XLA's HLO text.
#pragma once

#include <string>

#include "ir/module.h"

namespace gspmd {

// Canonical text: parsing it and printing again gives the same text.
std::string PrintModule(const Module& module);
std::string PrintComputation(const Computation& computation);
std::string PrintInstruction(const Instruction& instruction);  // one line, no indentation
// A literal as printed inside constant(...): "0.5", "{0, 1, 2}", "{ {1, 2}, {3, 4} }".
std::string PrintLiteral(const Literal& literal);

}  // namespace gspmd
