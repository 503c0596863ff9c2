// The dot handler: picks where the device axes go on the local dot (see dot_strategies.h),
// reshards the operands there, masks uneven contracting padding, runs the local dot and
// resolves partial sums into the dot's own sharding. An all-gather of one operand may become a
// windowed loop instead (dot_windowed.h).
#include <algorithm>

#include "partitioner/handlers/dot_strategies.h"
#include "partitioner/handlers/dot_windowed.h"
#include "partitioner/op_context.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Maximal shardings are computed on every device, like replicated ones.
Sharding AsAxisSharding(const Sharding& sharding) {
  return sharding.IsMaximal() || sharding.IsUnknown() ? Sharding::Replicated() : sharding;
}

bool IsContracting(const std::vector<int64_t>& contracting, int64_t dim) {
  return std::find(contracting.begin(), contracting.end(), dim) != contracting.end();
}

// `layout` with only its contracting dims split (the other dims' axes become replicated), for
// masking the padding of the contracting dims alone.
AxisSharding ContractingOnly(const AxisSharding& layout, const std::vector<int64_t>& contracting) {
  AxisSharding only = layout;
  for (int64_t d = 0; d < only.rank(); ++d) {
    if (IsContracting(contracting, d)) continue;
    only.replicated.insert(only.replicated.end(), only.dims[d].begin(), only.dims[d].end());
    only.dims[d].clear();
  }
  std::sort(only.replicated.begin(), only.replicated.end());
  return only;
}

bool HasUnevenContracting(const AxisSharding& layout, const std::vector<int64_t>& contracting,
                          const Shape& shape) {
  for (int64_t d : contracting)
    if (shape.dim(d) % layout.TileCount(d) != 0) return true;
  return false;
}

// Zeroes the padding of the contracting dims so that it adds nothing to the local dot.
Instruction* MaskContractingPadding(OpContext& op, Instruction* local, const Shape& global,
                                    const AxisSharding& layout, const std::vector<int64_t>& contracting) {
  if (!HasUnevenContracting(layout, contracting, global)) return local;
  HloBuilder& b = op.builder();
  Instruction* zero = b.ScalarConstant(global.element_type(), 0);
  return MaskPadding(b, op.spmd(), local, global, ContractingOnly(layout, contracting).ToSharding(), zero);
}

// Batch and contracting dims must pair up dims of the same size.
void CheckPairedSizes(const Instruction& dot, const DotRoles& roles, const Shape& lhs, const Shape& rhs) {
  auto check = [&](const std::vector<int64_t>& l, const std::vector<int64_t>& r, const char* what) {
    for (size_t i = 0; i < l.size(); ++i) {
      if (lhs.dim(l[i]) == rhs.dim(r[i])) continue;
      GSPMD_USER_ERROR("dot %", dot.name(), ": ", what, " dims lhs ", l[i], " (size ", lhs.dim(l[i]), ") and rhs ", r[i],
                       " (size ", rhs.dim(r[i]), ") must have the same size");
    }
  };
  check(roles.lhs_batch, roles.rhs_batch, "batch");
  check(roles.lhs_contracting, roles.rhs_contracting, "contracting");
}

}  // namespace

namespace {

// The chooser's problem for a dot with operands and result laid out as given; nullopt when
// a layout is not made of device axes.
std::optional<DotProblem> MakeDotProblem(SpmdContext& context, const Instruction& dot, const Shape& lhs_shape,
                                         const Shape& rhs_shape, const Sharding& lhs, const Sharding& rhs,
                                         const Sharding& out) {
  const Shape& out_shape = dot.shape();
  const auto& lhs_axes = context.Axes(AsAxisSharding(lhs), lhs_shape.rank());
  const auto& rhs_axes = context.Axes(AsAxisSharding(rhs), rhs_shape.rank());
  const auto& out_axes = context.Axes(AsAxisSharding(out), out_shape.rank());
  if (!lhs_axes || !rhs_axes || !out_axes) return std::nullopt;
  DotProblem problem;
  problem.roles = MakeDotRoles(dot.dot_dims(), lhs_shape.rank(), rhs_shape.rank());
  if (problem.roles.output_rank() != out_shape.rank())
    GSPMD_USER_ERROR("dot %", dot.name(), " has rank ", out_shape.rank(), " but its dimension numbers give rank ",
                     problem.roles.output_rank());
  CheckPairedSizes(dot, problem.roles, lhs_shape, rhs_shape);
  problem.lhs_dims = lhs_shape.dims();
  problem.rhs_dims = rhs_shape.dims();
  problem.out_dims = out_shape.dims();
  problem.lhs_element_bytes = ElementByteSize(lhs_shape.element_type());
  problem.rhs_element_bytes = ElementByteSize(rhs_shape.element_type());
  problem.out_element_bytes = ElementByteSize(out_shape.element_type());
  problem.lhs = *lhs_axes;
  problem.rhs = *rhs_axes;
  problem.out = *out_axes;
  return problem;
}

}  // namespace

std::optional<DotPlacement> DotPlacementFor(SpmdContext& context, const Instruction& dot, const Sharding& lhs,
                                            const Sharding& rhs, const Sharding& out) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2 || !dot.shape().IsArray()) return std::nullopt;
  const Shape& lhs_shape = dot.operand(0)->shape();
  const Shape& rhs_shape = dot.operand(1)->shape();
  if (!lhs_shape.IsArray() || !rhs_shape.IsArray() || lhs.IsTuple() || rhs.IsTuple() || out.IsTuple())
    return std::nullopt;
  std::optional<DotProblem> problem = MakeDotProblem(context, dot, lhs_shape, rhs_shape, lhs, rhs, out);
  if (!problem) return std::nullopt;
  return ChooseDotPlacement(context, *problem);
}

bool PartitionDot(OpContext& op) {
  const Instruction& dot = op.instruction();
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2) return false;
  if (!dot.shape().IsArray() || op.sharding().IsTuple()) return false;
  const PartitionedValue& lhs_value = op.Operand(0);
  const PartitionedValue& rhs_value = op.Operand(1);
  if (!lhs_value.global_shape.IsArray() || !rhs_value.global_shape.IsArray()) return false;
  if (lhs_value.sharding.IsTuple() || rhs_value.sharding.IsTuple()) return false;
  const Shape& lhs_shape = lhs_value.global_shape;
  const Shape& rhs_shape = rhs_value.global_shape;
  const Shape& out_shape = dot.shape();

  SpmdContext& context = op.spmd();
  // An operand made in any layout for free is read as replicated: its layout is then a choice,
  // not a source (oracle seed 121504: a dot over a split dim with a broadcast of a replicated
  // value, which propagation split along, summed 144 B where gathering the other operand is 4 B).
  auto source = [&](int64_t i, const Sharding& sharding) {
    return !sharding.IsReplicated() && op.OperandFreeInAnyLayout(i) ? Sharding::Replicated() : sharding;
  };
  std::optional<DotProblem> made = MakeDotProblem(context, dot, lhs_shape, rhs_shape, source(0, lhs_value.sharding),
                                                  source(1, rhs_value.sharding), op.sharding());
  if (!made) return false;
  const DotProblem& problem = *made;
  std::optional<DotPlacement> placement = ChooseDotPlacement(context, problem);
  if (!placement) return false;

  const DotRoles& roles = problem.roles;
  PrepareDotOperand prepare = [&](int64_t i, const AxisSharding& layout) {
    Instruction* operand = op.OperandWith(i, layout.ToSharding());
    return MaskContractingPadding(op, operand, i == 0 ? lhs_shape : rhs_shape, layout,
                                  i == 0 ? roles.lhs_contracting : roles.rhs_contracting);
  };
  Sharding local_sharding = placement->out.ToSharding();
  Instruction* local = WindowedLocalDot(op, problem, *placement, prepare);
  if (local == nullptr) {
    if (std::optional<PartitionedValue> scattered = WindowedScatteredDot(op, problem, *placement, prepare)) {
      op.SetResult(*scattered);
      return true;
    }
    local = op.Clone(ShardShapeOf(local_sharding, out_shape), {prepare(0, placement->lhs), prepare(1, placement->rhs)});
  }
  if (placement->partial.empty()) {
    op.SetResult(local, local_sharding);
    return true;
  }
  op.SetResult(ResolvePartialSums(context, op.builder(), local, out_shape, local_sharding, placement->partial,
                                  Opcode::kAdd, op.sharding()));
  return true;
}

}  // namespace gspmd
