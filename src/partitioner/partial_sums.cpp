// Partial sums: the table of ops that run on the pieces of one, and moving device axes between
// the unreduced, manual and replicated subgroups of a sharding.
#include "partitioner/partial_sums.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/computation.h"
#include "partitioner/partial_reshard.h"
#include "propagation/sharding_algebra.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
namespace {

using Reduction = Sharding::Reduction;

std::optional<Reduction> ReductionOfReducer(BinaryReducer reducer) {
  switch (reducer) {
    case BinaryReducer::kAdd: return Reduction::kSum;
    case BinaryReducer::kMaximum: return Reduction::kMax;
    case BinaryReducer::kMinimum: return Reduction::kMin;
    case BinaryReducer::kMultiply: return Reduction::kProduct;
    case BinaryReducer::kAnd: return Reduction::kAnd;
    case BinaryReducer::kOr: return Reduction::kOr;
    default: return std::nullopt;
  }
}

// A scalar constant equal to the reduction's identity (0 for a sum, -inf for a max, ...).
bool IsIdentityConstant(const Instruction& value, Reduction reduction) {
  if (value.opcode() != Opcode::kConstant || !value.shape().IsArray() || value.shape().element_count() != 1 ||
      !value.literal().has_value())
    return false;
  const double x = value.literal()->GetAsDouble(0);
  switch (reduction) {
    case Reduction::kSum: case Reduction::kOr: return x == 0;
    case Reduction::kProduct: return x == 1;
    case Reduction::kMax: return std::isinf(x) ? x < 0 : x == std::numeric_limits<double>::lowest();
    case Reduction::kMin: return std::isinf(x) && x > 0;
    case Reduction::kAnd: return x != 0;
  }
  return false;
}

bool IsFloatConvert(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kConvert && IsFloatingPoint(instruction.shape().element_type()) &&
         IsFloatingPoint(instruction.operand(0)->shape().element_type());
}

bool NarrowingConvert(const Instruction& convert) {
  const ElementType to = convert.shape().element_type();
  const ElementType from = convert.operand(0)->shape().element_type();
  return to != from && ElementByteSize(to) <= ElementByteSize(from);
}

int64_t PartialCount(const std::vector<bool>& partial) {
  return std::count(partial.begin(), partial.end(), true);
}

// One partial operand (the linear one), the other whole (the factor).
std::optional<LinearRoles> OnePartialOneWhole(const std::vector<bool>& partial) {
  if (partial.size() != 2 || PartialCount(partial) != 1) return std::nullopt;
  const int64_t linear = partial[0] ? 0 : 1;
  return LinearRoles{{linear}, {1 - linear}};
}

LinearRoles FirstLinearRestFactor(int64_t count) {
  LinearRoles roles{{0}, {}};
  for (int64_t i = 1; i < count; ++i) roles.factor.push_back(i);
  return roles;
}

LinearRoles AllLinear(int64_t count) {
  LinearRoles roles;
  for (int64_t i = 0; i < count; ++i) roles.linear.push_back(i);
  return roles;
}

}  // namespace

std::optional<LinearRoles> LinearRolesOf(const Instruction& instruction, const std::vector<bool>& partial,
                                         Reduction reduction) {
  if (!instruction.shape().IsArray() || static_cast<int64_t>(partial.size()) != instruction.operand_count())
    return std::nullopt;
  const bool sum = reduction == Reduction::kSum;
  const int64_t count = instruction.operand_count();
  // The reduction's own op combines partial values piece by piece (max of two partial maxima,
  // product of two partial products, ...); a whole operand is masked with the identity.
  if (count == 2 && instruction.opcode() == ReductionOpcode(reduction) &&
      instruction.shape().element_type() == instruction.operand(0)->shape().element_type())
    return AllLinear(count);
  switch (instruction.opcode()) {
    case Opcode::kAdd: case Opcode::kSubtract:
      if (!sum) return std::nullopt;
      return AllLinear(count);
    case Opcode::kNegate:
      if (!sum) return std::nullopt;
      return AllLinear(count);
    case Opcode::kMultiply: case Opcode::kDot: case Opcode::kConvolution:
      if (!sum) return std::nullopt;
      return OnePartialOneWhole(partial);
    case Opcode::kDivide:
      if (!sum || partial.size() != 2 || !partial[0] || partial[1]) return std::nullopt;
      return LinearRoles{{0}, {1}};
    case Opcode::kConvert:
      if (!IsFloatConvert(instruction) || !(sum || reduction == Reduction::kMax || reduction == Reduction::kMin))
        return std::nullopt;
      // A max or min commutes with any float convert (it is monotonic). A sum carried through a
      // narrowing convert would add rounded partials in the narrow type, which one device never
      // does: it is reduced before the convert, in the wide type.
      if (sum && NarrowingConvert(instruction)) return std::nullopt;
      return AllLinear(count);
    case Opcode::kCopy: case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kTranspose:
    case Opcode::kBroadcast: case Opcode::kSlice: case Opcode::kReverse:
      return AllLinear(count);
    case Opcode::kConcatenate:
      return AllLinear(count);
    case Opcode::kDynamicSlice:
      for (int64_t i = 1; i < count; ++i)
        if (partial[i]) return std::nullopt;
      return FirstLinearRestFactor(count);
    case Opcode::kPad:
      if (count != 2 || partial[1] || !IsIdentityConstant(*instruction.operand(1), reduction)) return std::nullopt;
      return LinearRoles{{0}, {1}};
    case Opcode::kSelect:
      if (count != 3 || partial[0]) return std::nullopt;
      return LinearRoles{{1, 2}, {0}};
    case Opcode::kReduce: {
      if (count != 2 || partial[1]) return std::nullopt;
      std::optional<Reduction> reducer = ReductionOfReduce(instruction);
      if (!reducer || *reducer != reduction) return std::nullopt;
      return LinearRoles{{0}, {1}};
    }
    default:
      return std::nullopt;
  }
}

std::optional<Reduction> ReductionOfReduce(const Instruction& reduce) {
  if (reduce.opcode() != Opcode::kReduce || reduce.operand_count() != 2 || !reduce.shape().IsArray() ||
      reduce.called_computations().size() != 1)
    return std::nullopt;
  std::optional<Reduction> reducer = ReductionOfReducer(RecognizeReducer(*reduce.to_apply()));
  if (!reducer || !IsIdentityConstant(*reduce.operand(1), *reducer)) return std::nullopt;
  return reducer;
}

std::vector<DeviceAxis> JoinAdjacentAxes(std::vector<DeviceAxis> axes) {
  std::sort(axes.begin(), axes.end());
  std::vector<DeviceAxis> joined;
  for (const DeviceAxis& axis : axes) {
    if (!joined.empty() && joined.back().stride * joined.back().size == axis.stride) {
      joined.back().size *= axis.size;
    } else {
      joined.push_back(axis);
    }
  }
  return joined;
}

std::optional<Reduction> ReductionOfScatter(const Instruction& scatter) {
  if (scatter.opcode() != Opcode::kScatter || scatter.operand_count() != 3 || !scatter.shape().IsArray() ||
      scatter.shape().element_type() == ElementType::kPred || scatter.called_computations().size() != 1)
    return std::nullopt;
  if (RecognizeReducer(*scatter.to_apply()) != BinaryReducer::kAdd) return std::nullopt;
  return Reduction::kSum;
}

bool ProducesPartialSums(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kScatter) return ReductionOfScatter(instruction).has_value();
  return opcode == Opcode::kDot || opcode == Opcode::kConvolution || opcode == Opcode::kReduce;
}

namespace {

std::optional<Sharding> MoveAxesBetweenSubgroupsUncached(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                                         const std::vector<DeviceAxis>& axes,
                                                         Sharding::SubgroupType from, Sharding::SubgroupType to,
                                                         Reduction reduction);

}  // namespace

std::optional<Sharding> MoveAxesBetweenSubgroups(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                                 const std::vector<DeviceAxis>& axes, Sharding::SubgroupType from,
                                                 Sharding::SubgroupType to, Reduction reduction) {
  if (axes.empty()) return sharding;
  if (!sharding.IsTiled()) return MoveAxesBetweenSubgroupsUncached(sharding, rank, num_devices, axes, from, to, reduction);
  // The planner and the partitioner ask for the same few shardings on every layer.
  thread_local propagation::ShardingAnswerCache cache;
  if (!cache.Begin('u', sharding))
    return MoveAxesBetweenSubgroupsUncached(sharding, rank, num_devices, axes, from, to, reduction);
  cache.Append(rank);
  cache.Append(num_devices);
  cache.Append(static_cast<int64_t>(from));
  cache.Append(static_cast<int64_t>(to));
  cache.Append(static_cast<int64_t>(reduction));
  for (const DeviceAxis& axis : axes) {
    cache.Append(axis.stride);
    cache.Append(axis.size);
  }
  if (const std::optional<Sharding>* found = cache.Find()) return *found;
  std::optional<Sharding> result = MoveAxesBetweenSubgroupsUncached(sharding, rank, num_devices, axes, from, to, reduction);
  cache.Store(result);
  return result;
}

namespace {

std::optional<Sharding> MoveAxesBetweenSubgroupsUncached(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                                         const std::vector<DeviceAxis>& axes,
                                                         Sharding::SubgroupType from, Sharding::SubgroupType to,
                                                         Reduction reduction) {
  std::optional<AxisSharding> decomposed = DecomposeSharding(sharding, rank, num_devices);
  if (!decomposed) return std::nullopt;
  std::vector<int64_t> bounds;
  for (const DeviceAxis& axis : axes) {
    bounds.push_back(axis.stride);
    bounds.push_back(axis.stride * axis.size);
  }
  std::sort(bounds.begin(), bounds.end());
  AxisSharding cut = SplitAxesAt(*decomposed, bounds);
  auto list_of = [&](Sharding::SubgroupType type) -> std::vector<DeviceAxis>& {
    switch (type) {
      case Sharding::SubgroupType::kManual: return cut.manual;
      case Sharding::SubgroupType::kUnreduced: return cut.unreduced;
      case Sharding::SubgroupType::kReplicated: break;
    }
    return cut.replicated;
  };
  std::vector<DeviceAxis>& source = list_of(from);
  std::vector<DeviceAxis>& target = list_of(to);
  int64_t wanted = 1, moved = 1;
  for (const DeviceAxis& axis : axes) wanted *= axis.size;
  auto inside = [&](const DeviceAxis& piece) {
    return std::any_of(axes.begin(), axes.end(), [&](const DeviceAxis& axis) {
      return piece.stride >= axis.stride && piece.stride * piece.size <= axis.stride * axis.size;
    });
  };
  std::vector<DeviceAxis> kept;
  for (const DeviceAxis& piece : source) {
    if (!inside(piece)) {
      kept.push_back(piece);
      continue;
    }
    target.push_back(piece);
    moved *= piece.size;
  }
  if (moved != wanted) return std::nullopt;
  source = std::move(kept);
  std::sort(target.begin(), target.end());
  if (to == Sharding::SubgroupType::kUnreduced) cut.reduction = reduction;
  if (cut.unreduced.empty()) cut.reduction = Reduction::kSum;
  return cut.ToSharding();
}

}  // namespace

std::optional<Sharding> ReplicatingAxes(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                        const std::vector<DeviceAxis>& axes) {
  std::optional<AxisSharding> decomposed = DecomposeSharding(sharding, rank, num_devices);
  if (!decomposed) return std::nullopt;
  std::vector<int64_t> bounds;
  for (const DeviceAxis& axis : axes) {
    bounds.push_back(axis.stride);
    bounds.push_back(axis.stride * axis.size);
  }
  AxisSharding cut = SplitAxesAt(*decomposed, bounds);
  auto inside = [&](const DeviceAxis& piece) {
    return std::any_of(axes.begin(), axes.end(), [&](const DeviceAxis& axis) {
      return piece.stride >= axis.stride && piece.stride * piece.size <= axis.stride * axis.size;
    });
  };
  for (const auto* list : {&cut.manual, &cut.unreduced})
    if (std::any_of(list->begin(), list->end(), inside)) return std::nullopt;
  bool changed = false;
  for (auto& dim : cut.dims) {
    // A dim keeps its axes major to minor; gathering a major one moves the minor ones too.
    auto first = std::find_if(dim.begin(), dim.end(), inside);
    if (first == dim.end()) continue;
    cut.replicated.insert(cut.replicated.end(), first, dim.end());
    dim.erase(first, dim.end());
    changed = true;
  }
  if (!changed) return sharding;
  std::sort(cut.replicated.begin(), cut.replicated.end());
  return cut.ToSharding();
}

std::vector<DeviceAxis> UnreducedAxes(const Sharding& sharding, int64_t rank, int64_t num_devices) {
  if (!sharding.HasUnreduced()) return {};
  std::optional<AxisSharding> decomposed = DecomposeSharding(sharding, rank, num_devices);
  if (!decomposed) return {};
  return decomposed->unreduced;
}

}  // namespace gspmd
