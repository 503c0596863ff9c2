// Tuple shardings between their two forms: XLA's text writes one sharding per leaf of the
// tuple shape (flat); the IR nests them like the shape, so that element i of a tuple sharding
// is the sharding of get-tuple-element index=i.
//   shape ((f32[4], f32[4]), s32[])   text {{replicated}, {maximal device=0}, {replicated}}
//   IR    Tuple{Tuple{replicated, maximal 0}, replicated}
#pragma once

#include <optional>

#include "ir/shape.h"
#include "sharding/sharding.h"

namespace gspmd {

// The leaves of a (possibly nested) tuple sharding as one flat tuple; other shardings as is.
Sharding FlattenTupleSharding(const Sharding& sharding);

// A tuple sharding nested to follow `shape` (any nesting of its input is flattened first).
// nullopt when its leaves do not number the shape's leaves. A non-tuple sharding, or any
// sharding of a non-tuple shape, is returned unchanged (the verifier judges it).
std::optional<Sharding> NestTupleSharding(const Sharding& sharding, const Shape& shape);

// The number of array/token leaves of a shape (1 for a non-tuple).
int64_t CountShapeLeaves(const Shape& shape);

}  // namespace gspmd
