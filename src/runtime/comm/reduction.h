// Elementwise reduction of raw buffers by a recognized binary op (the communicators' kernel).
#pragma once

#include <cstdint>

#include "ir/element_type.h"
#include "runtime/interp/kernels.h"

namespace gspmd {

// Whether `op` has a native kernel for `type` (and/or/xor only for integers and pred; every
// other recognized op for every array type). Callers fall back to the evaluator otherwise.
bool IsNativeReduction(BinaryReducer op, ElementType type);

// acc[i] = acc[i] op in[i] for `count` elements of `type`, with HLO semantics: integer
// arithmetic wraps, float max/min propagate NaN, f16/bf16 compute in f32 and round once per
// step, pred add/max/or = or, multiply/min/and = and. Requires IsNativeReduction(op, type).
void ReduceInto(ElementType type, BinaryReducer op, void* acc, const void* in, int64_t count);

}  // namespace gspmd
