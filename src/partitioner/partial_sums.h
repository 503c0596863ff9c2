// Partial sums: which ops can run on the pieces of a partial sum and give a partial sum, and
// the relabelling that lets the ordinary handlers do it.
//
// A value unreduced over device axes P (sharding {... last_tile_dims={unreduced}}) is held as
// pieces: the value is the sum (or max, ...) of the pieces of the devices along P. A linear op
// of such a value is the same reduction of the op applied to each piece, so it can run on the
// pieces and stay partial: add and subtract of two partial sums, negate, multiply or divide by
// a whole value, float converts, data movement (reshape, transpose, broadcast, slice, pad with
// the identity, concatenate, select with a whole predicate), a dot or convolution with a whole
// other operand, and a reduce with the same reduction. Everything else needs the reduced value.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/instruction.h"
#include "partitioner/device_axes.h"
#include "sharding/sharding.h"

namespace gspmd {

// How op `instruction` uses its operands when the ones marked in `partial` are partial sums
// with `reduction`: `linear` operands run as pieces (a whole one among them is made partial by
// masking), `factor` operands must be whole. nullopt when the op cannot run on pieces that way
// (not linear, or linear only for another reduction).
struct LinearRoles {
  std::vector<int64_t> linear;
  std::vector<int64_t> factor;
};
std::optional<LinearRoles> LinearRolesOf(const Instruction& instruction, const std::vector<bool>& partial,
                                         Sharding::Reduction reduction);

// The reduction of a single-operand reduce whose reducer is a known one (add, max, ...) and
// whose init value is that reduction's identity; nullopt otherwise.
std::optional<Sharding::Reduction> ReductionOfReduce(const Instruction& reduce);

// `axes` (digits of the device id) with neighbouring digits joined: (stride 1, size 2) and
// (stride 2, size 2) become (stride 1, size 4). Sorted by stride; the same set of devices'
// digits gives the same list however it was cut.
std::vector<DeviceAxis> JoinAdjacentAxes(std::vector<DeviceAxis> axes);

// The reduction of a scatter whose combiner adds (a scatter-add: the gradient of a gather);
// nullopt otherwise. Split over its updates' scatter dims, it adds into pieces of its result.
std::optional<Sharding::Reduction> ReductionOfScatter(const Instruction& scatter);

// True for the ops whose handlers produce a partial sum themselves (dot and convolution over
// split contracting dims, reduce over split dims, a scatter-add over split updates): their
// target may be unreduced directly.
bool ProducesPartialSums(const Instruction& instruction);

// `sharding` (of a rank-`rank` array over `num_devices`) with the devices of `axes` moved from
// subgroup type `from` to subgroup type `to` (e.g. unreduced -> manual). The axes must be of
// type `from` there (after cutting at their bounds); nullopt otherwise or when the sharding
// does not decompose into device axes.
std::optional<Sharding> MoveAxesBetweenSubgroups(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                                 const std::vector<DeviceAxis>& axes, Sharding::SubgroupType from,
                                                 Sharding::SubgroupType to, Sharding::Reduction reduction);

// `sharding` (of a rank-`rank` array) with every dim split over some of `axes` gathered along
// them (and along the axes minor to them in that dim), so that it replicates them; nullopt
// when they are manual or unreduced there, or it does not decompose.
std::optional<Sharding> ReplicatingAxes(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                        const std::vector<DeviceAxis>& axes);

// The unreduced axes of `sharding` (empty when it has none or does not decompose).
std::vector<DeviceAxis> UnreducedAxes(const Sharding& sharding, int64_t rank, int64_t num_devices);

}  // namespace gspmd
