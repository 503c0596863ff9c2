// The interpreter's random-number ops: rng-bit-generator (XLA's ThreeFry and Philox bits) and
// rng (uniform and normal values from Philox bits). See random.cpp for what matches XLA.
#pragma once

#include <cstdint>

#include "ir/instruction.h"
#include "ir/literal.h"

namespace gspmd {

// (new state, bits) for rng-bit-generator with its algorithm= attribute.
Literal EvaluateRngBitGenerator(const Instruction& instruction, const Literal& state);

// rng(a, b): rng_uniform in [a, b), rng_normal with mean a and deviation b. `counter` is the
// evaluator's Philox counter, advanced past the bits used.
Literal EvaluateRng(const Instruction& instruction, const Literal& a, const Literal& b, uint64_t& counter);

}  // namespace gspmd
