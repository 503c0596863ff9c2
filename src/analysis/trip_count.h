// Static trip counts of while loops (for communication and cost reports).
#pragma once

#include <cstdint>
#include <optional>

#include "ir/instruction.h"

namespace gspmd {

// The number of times a while loop's body runs, when it can be read off the program:
//   - backend_config={"known_trip_count":{"n":"5"}}, or
//   - an induction variable: tuple element i starts at a constant, the body adds a constant
//     step to it, and the condition compares it with a constant (LT, LE, GT, GE, NE).
// nullopt when the count is not known statically.
std::optional<int64_t> WhileTripCount(const Instruction& while_instruction);

}  // namespace gspmd
