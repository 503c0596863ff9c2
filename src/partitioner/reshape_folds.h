// Broadcasts reshaped the long way, folded into one broadcast before sharding propagation, as XLA's simplifier folds them.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace gspmd {

// Replaces each reshape of the global program that reshapes a broadcast (directly or through
// other reshapes) and keeps every dim of the broadcast's operand whole (each maps to one dim of
// the result, of the same size) by a broadcast of that operand straight to the reshape's
// shape, before sharding propagation. XLA's simplifier merges reshape chains and folds a
// reshape of a broadcast that leaves its operand's dims unmodified into the broadcast. Exact:
// every element is the same operand element. Through the middle shapes, a flatten of the
// operand's dim with a broadcast dim, propagation could not keep the operand's split (oracle
// seed 118081: x[2], split, broadcast to [24,2], flattened and reshaped to [4,6,2] for a dot
// contracting x's dim, was gathered for 48 B more than XLA). An operand's dims of size 1 are
// reshaped away first. Reshapes and broadcasts carrying a sharding or frontend attributes
// stay, and so does a computation's root. Returns how many were folded.
int64_t FoldReshapedBroadcastsBeforePropagation(Module& module);

}  // namespace gspmd
