// Reverse-mode differentiation at the HLO level: emits the gradient program of a scalar loss
// with respect to chosen values, for writing training steps with the builder.
#pragma once

#include <vector>

#include "builder/program_builder.h"

namespace gspmd {

// d loss / d x for each x of `wrt`, appended to `builder`'s computation (loss and wrt must be
// in it; loss a floating-point scalar). Differentiates elementwise math (add, subtract,
// multiply, divide, negate, exp, log, tanh, sqrt, rsqrt, maximum, minimum, select, convert,
// copy), broadcast, reshape, transpose, reduce (sum/max/min), dot, slice, pad, concatenate,
// dynamic-slice, dynamic-update-slice and Sharding custom-calls (the cotangent gets the same
// annotation, as JAX's transpose of with_sharding_constraint does). Only floating-point values
// carry gradients (comparisons, integer indices and tuples are constants to it), and a
// get-tuple-element is a leaf: a loop's result can be a wrt value, but no gradient flows into
// the loop (differentiate loops by hand, as the pipelined model does). Another op between a wrt
// value and the loss is a UserError naming it. Values the loss does not depend on get zeros.
std::vector<Instruction*> Gradients(ComputationBuilder& builder, Instruction* loss, const std::vector<Instruction*>& wrt);

}  // namespace gspmd
