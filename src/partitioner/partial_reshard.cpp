// Partial-sum reshards: unreduced axes rewritten as partial and manual axes for the planner,
// the reductions' identities, and the mask that makes a whole value partial.
#include "partitioner/partial_reshard.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "ir/element_type_dispatch.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Does `piece` lie inside `axis` (its digit range is part of the axis's)?
bool Inside(const DeviceAxis& piece, const DeviceAxis& axis) {
  return piece.stride >= axis.stride && piece.stride * piece.size <= axis.stride * axis.size;
}

bool InsideAny(const DeviceAxis& piece, const std::vector<DeviceAxis>& axes) {
  return std::any_of(axes.begin(), axes.end(), [&](const DeviceAxis& axis) { return Inside(piece, axis); });
}

void Erase(std::vector<DeviceAxis>& list, const DeviceAxis& axis) {
  auto it = std::find(list.begin(), list.end(), axis);
  if (it != list.end()) list.erase(it);
}

}  // namespace

std::optional<PartialReshard> PlanKeepingUnreducedAxes(const ReshardProblem& problem) {
  AxisSharding source = problem.source;
  AxisSharding target = problem.target;
  // The source's unreduced axes are partial sums like a dot's contracting axes.
  std::vector<DeviceAxis> partial = problem.partial_axes;
  for (const DeviceAxis& axis : source.unreduced) {
    source.replicated.push_back(axis);
    partial.push_back(axis);
  }
  source.unreduced.clear();
  std::sort(source.replicated.begin(), source.replicated.end());
  const std::vector<DeviceAxis> kept = target.unreduced;
  target.unreduced.clear();
  PartialReshard result;
  if (kept.empty()) {
    result.problem = ReshardProblem{problem.global_dims, problem.element_bytes, source, target, partial,
                                    problem.exact_sums};
    return result;
  }
  // Cut both sides (and the partial axes) at every boundary, so each kept axis is a run of
  // whole pieces.
  AxisSharding marked = source;
  for (const DeviceAxis& axis : kept) target.replicated.push_back(axis);
  std::sort(target.replicated.begin(), target.replicated.end());
  std::optional<std::pair<AxisSharding, AxisSharding>> common = RefineToCommonAxes(marked, target);
  if (!common) return std::nullopt;
  AxisSharding src = common->first, dst = common->second;
  std::vector<DeviceAxis> pieces_partial;
  for (const DeviceAxis& piece : src.replicated)
    if (InsideAny(piece, partial)) pieces_partial.push_back(piece);
  for (const DeviceAxis& piece : dst.replicated) {
    if (!InsideAny(piece, kept)) continue;
    // The kept piece must be held whole (replicated) by the source, pending or not.
    if (std::find(src.replicated.begin(), src.replicated.end(), piece) == src.replicated.end()) return std::nullopt;
    const bool pending = std::find(pieces_partial.begin(), pieces_partial.end(), piece) != pieces_partial.end();
    if (!pending) result.mask_axes.push_back(piece);
    Erase(pieces_partial, piece);
    Erase(src.replicated, piece);
    src.manual.push_back(piece);
    dst.manual.push_back(piece);
  }
  for (auto& it : {&src.manual, &dst.manual}) std::sort(it->begin(), it->end());
  dst.replicated.erase(std::remove_if(dst.replicated.begin(), dst.replicated.end(),
                                      [&](const DeviceAxis& piece) { return InsideAny(piece, kept); }),
                       dst.replicated.end());
  result.problem = ReshardProblem{problem.global_dims, problem.element_bytes, src, dst, pieces_partial,
                                  problem.exact_sums};
  return result;
}

Instruction* ReductionIdentity(HloBuilder& b, ElementType type, Sharding::Reduction reduction) {
  using R = Sharding::Reduction;
  switch (reduction) {
    case R::kSum: case R::kOr:
      return b.ScalarConstant(type, 0);
    case R::kProduct:
      return b.ScalarConstant(type, 1);
    case R::kMax: case R::kMin: case R::kAnd: {
      const bool lowest = reduction == R::kMax;
      if (IsFloatingPoint(type) && reduction != R::kAnd) {
        return b.ScalarConstant(type, lowest ? -std::numeric_limits<double>::infinity()
                                             : std::numeric_limits<double>::infinity());
      }
      Literal literal(Shape(type, {}));
      DispatchElementType(type, [&]<typename T>() {
        if constexpr (std::is_same_v<T, bool>) {
          literal.data<T>()[0] = !lowest;
        } else if constexpr (std::is_integral_v<T>) {
          literal.data<T>()[0] = reduction == R::kAnd ? static_cast<T>(~T{0})
                                 : lowest             ? std::numeric_limits<T>::min()
                                                      : std::numeric_limits<T>::max();
        }
      });
      return b.Constant(std::move(literal));
    }
  }
  return b.ScalarConstant(type, 0);
}

Opcode ReductionOpcode(Sharding::Reduction reduction) {
  switch (reduction) {
    case Sharding::Reduction::kSum: return Opcode::kAdd;
    case Sharding::Reduction::kMax: return Opcode::kMaximum;
    case Sharding::Reduction::kMin: return Opcode::kMinimum;
    case Sharding::Reduction::kProduct: return Opcode::kMultiply;
    case Sharding::Reduction::kAnd: return Opcode::kAnd;
    case Sharding::Reduction::kOr: return Opcode::kOr;
  }
  return Opcode::kAdd;
}

std::optional<Sharding::Reduction> ReductionOfOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return Sharding::Reduction::kSum;
    case Opcode::kMaximum: return Sharding::Reduction::kMax;
    case Opcode::kMinimum: return Sharding::Reduction::kMin;
    case Opcode::kMultiply: return Sharding::Reduction::kProduct;
    case Opcode::kAnd: return Sharding::Reduction::kAnd;
    case Opcode::kOr: return Sharding::Reduction::kOr;
    default: return std::nullopt;
  }
}

Instruction* MaskToOneDevicePerGroup(HloBuilder& b, SpmdContext& context, Instruction* local,
                                     const std::vector<DeviceAxis>& axes, Sharding::Reduction reduction) {
  if (axes.empty()) return local;
  const std::vector<int64_t>& dims = local->shape().dims();
  Instruction* digits = AxisOffset(b, axes, 1, context.num_devices());
  Instruction* first = b.Compare(digits, b.S32Constant(0), ComparisonDirection::kEq);
  Instruction* keep = b.BroadcastScalar(first, dims);
  Instruction* identity = b.BroadcastScalar(ReductionIdentity(b, local->shape().element_type(), reduction), dims);
  return b.Select(keep, local, identity);
}

}  // namespace gspmd
