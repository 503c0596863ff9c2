// Propagation rule dispatch: routes each opcode to its rule family and assigns rule priorities.
#include "propagation/op_rules.h"

#include <algorithm>

#include "ir/known_custom_calls.h"
#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation {
namespace {

bool IsTopKCustomCall(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall &&
         (instruction.custom_call_target == "TopK" || instruction.custom_call_target == "ApproxTopK");
}


bool IsAllManual(const Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (!sharding.IsTuple() || sharding.tuple_elements().empty()) return false;
  for (const Sharding& element : sharding.tuple_elements())
    if (!element.IsManual()) return false;
  return true;
}

// Manual values stay manual through ordinary ops (inside shard_map bodies): custom-calls,
// which convert between manual and global views, are the driver's.
bool PropagatesManual(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kCustomCall)
    return IsTopKCustomCall(instruction) || IsDataPassThroughCustomCall(instruction);
  switch (instruction.opcode()) {
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kWhile:
    case Opcode::kConditional: case Opcode::kCall: case Opcode::kParameter:
    case Opcode::kOptimizationBarrier:
      return false;
    default:
      return instruction.shape().IsArray() || instruction.opcode() == Opcode::kReduce ||
             instruction.opcode() == Opcode::kSort ||
             instruction.opcode() == Opcode::kReduceWindow ||
             instruction.opcode() == Opcode::kTopK || IsTopKCustomCall(instruction);
  }
}

Sharding ManualFor(const Shape& shape) {
  if (!shape.IsTuple()) return Sharding::Manual();
  return Sharding::Tuple(std::vector<Sharding>(shape.tuple_size(), Sharding::Manual()));
}

// Does `sharding` describe a value of `shape` (tile rank, tuple arity)?
bool FitsShape(const Sharding& sharding, const Shape& shape) {
  if (sharding.IsTuple()) {
    if (!shape.IsTuple() || shape.tuple_size() != static_cast<int64_t>(sharding.tuple_elements().size()))
      return false;
    for (int64_t i = 0; i < shape.tuple_size(); ++i)
      if (!FitsShape(sharding.tuple_elements()[i], shape.tuple_shape(i))) return false;
    return true;
  }
  if (!sharding.IsTiled()) return true;
  return shape.IsArray() && sharding.TiledDataRank() == shape.rank();
}

// Drops proposals that do not fit the value they are for, and the metadata copied from
// whatever sharding they came from.
std::optional<Proposal> Checked(std::optional<Proposal> proposal, const Shape& shape) {
  if (!proposal || !FitsShape(proposal->sharding, shape)) return std::nullopt;
  proposal->sharding.set_metadata("");
  return proposal;
}

std::optional<Proposal> InferResultShardingUnchecked(const Instruction& instruction,
                                                     const std::vector<const Sharding*>& operands,
                                                     const ShardingLookup& lookup) {
  using namespace rules;
  if (PropagatesManual(instruction)) {
    for (const Sharding* s : operands) {
      if (s != nullptr && IsAllManual(*s))
        return Proposal{ManualFor(instruction.shape()), RuleName{"manual", RuleName::Direction::kForward}};
    }
  }
  if (IsElementwiseLike(instruction)) return ElementwiseForward(instruction, operands, lookup);
  if (IsTopKCustomCall(instruction)) return TopKForward(instruction, operands, lookup);
  if (IsDataPassThroughCustomCall(instruction)) return PassThroughCustomCallForward(instruction, operands, lookup);
  switch (instruction.opcode()) {
    case Opcode::kDot: return DotForward(instruction, operands, lookup);
    case Opcode::kConvolution: return ConvolutionForward(instruction, operands, lookup);
    case Opcode::kReduce: return ReduceForward(instruction, operands, lookup);
    case Opcode::kReduceWindow: return ReduceWindowForward(instruction, operands, lookup);
    case Opcode::kSelectAndScatter: return SelectAndScatterForward(instruction, operands, lookup);
    case Opcode::kBroadcast: return BroadcastForward(instruction, operands, lookup);
    case Opcode::kReshape: case Opcode::kBitcast:
      return ReshapeForward(instruction, operands, lookup);
    case Opcode::kTranspose: return TransposeForward(instruction, operands, lookup);
    case Opcode::kReverse: return ReverseForward(instruction, operands, lookup);
    case Opcode::kSlice: return SliceForward(instruction, operands, lookup);
    case Opcode::kPad: return PadForward(instruction, operands, lookup);
    case Opcode::kConcatenate: return ConcatenateForward(instruction, operands, lookup);
    case Opcode::kDynamicSlice: return DynamicSliceForward(instruction, operands, lookup);
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSliceForward(instruction, operands, lookup);
    case Opcode::kIota: return IotaForward(instruction, operands, lookup);
    case Opcode::kGather: return GatherForward(instruction, operands, lookup);
    case Opcode::kScatter: return ScatterForward(instruction, operands, lookup);
    case Opcode::kSort: return SortForward(instruction, operands, lookup);
    case Opcode::kTopK: return TopKForward(instruction, operands, lookup);
    default: return std::nullopt;
  }
}

std::optional<Proposal> InferOperandShardingUnchecked(const Instruction& user, int64_t operand_index,
                                                      const Sharding& user_sharding,
                                                      const std::vector<const Sharding*>& operands,
                                                      const ShardingLookup& lookup) {
  using namespace rules;
  if (user_sharding.IsUnknown()) return std::nullopt;
  const int64_t i = operand_index;
  const Sharding& s = user_sharding;
  if (PropagatesManual(user) && IsAllManual(s) && operand_index < user.operand_count() &&
      user.operand(operand_index)->shape().IsArray()) {
    return Proposal{Sharding::Manual(), RuleName{"manual", RuleName::Direction::kBackward}};
  }
  if (IsElementwiseLike(user)) return ElementwiseBackward(user, i, s, operands, lookup);
  if (IsTopKCustomCall(user)) return TopKBackward(user, i, s, operands, lookup);
  if (IsDataPassThroughCustomCall(user)) return PassThroughCustomCallBackward(user, i, s, operands, lookup);
  switch (user.opcode()) {
    case Opcode::kDot: return DotBackward(user, i, s, operands, lookup);
    case Opcode::kConvolution: return ConvolutionBackward(user, i, s, operands, lookup);
    case Opcode::kReduce: return ReduceBackward(user, i, s, operands, lookup);
    case Opcode::kReduceWindow: return ReduceWindowBackward(user, i, s, operands, lookup);
    case Opcode::kSelectAndScatter: return SelectAndScatterBackward(user, i, s, operands, lookup);
    case Opcode::kBroadcast: return BroadcastBackward(user, i, s, operands, lookup);
    case Opcode::kReshape: case Opcode::kBitcast:
      return ReshapeBackward(user, i, s, operands, lookup);
    case Opcode::kTranspose: return TransposeBackward(user, i, s, operands, lookup);
    case Opcode::kReverse: return ReverseBackward(user, i, s, operands, lookup);
    case Opcode::kSlice: return SliceBackward(user, i, s, operands, lookup);
    case Opcode::kPad: return PadBackward(user, i, s, operands, lookup);
    case Opcode::kConcatenate: return ConcatenateBackward(user, i, s, operands, lookup);
    case Opcode::kDynamicSlice: return DynamicSliceBackward(user, i, s, operands, lookup);
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSliceBackward(user, i, s, operands, lookup);
    case Opcode::kIota: return std::nullopt;
    case Opcode::kGather: return GatherBackward(user, i, s, operands, lookup);
    case Opcode::kScatter: return ScatterBackward(user, i, s, operands, lookup);
    case Opcode::kSort: return SortBackward(user, i, s, operands, lookup);
    case Opcode::kTopK: return TopKBackward(user, i, s, operands, lookup);
    default: return std::nullopt;
  }
}

// Operand shardings that do not fit their operand's shape count as unknown.
std::vector<const Sharding*> FittingOperands(const Instruction& instruction,
                                            const std::vector<const Sharding*>& operands) {
  std::vector<const Sharding*> fitting(instruction.operand_count(), nullptr);
  for (int64_t i = 0; i < instruction.operand_count() && i < static_cast<int64_t>(operands.size()); ++i) {
    const Sharding* s = operands[i];
    if (s != nullptr && FitsShape(*s, instruction.operand(i)->shape())) fitting[i] = s;
  }
  return fitting;
}

}  // namespace

bool IsElementwiseLike(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return true;
  switch (opcode) {
    case Opcode::kCompare: case Opcode::kSelect: case Opcode::kClamp: case Opcode::kConvert:
    case Opcode::kBitcastConvert: case Opcode::kReducePrecision: case Opcode::kMap:
    case Opcode::kStochasticConvert: case Opcode::kCopy: case Opcode::kAddDependency:
      return true;
    default:
      return false;
  }
}

std::optional<Proposal> InferResultSharding(const Instruction& instruction,
                                            const std::vector<const Sharding*>& operands,
                                            const ShardingLookup& lookup) {
  return Checked(InferResultShardingUnchecked(instruction, FittingOperands(instruction, operands), lookup),
                 instruction.shape());
}

std::optional<Proposal> InferOperandSharding(const Instruction& user, int64_t operand_index,
                                             const Sharding& user_sharding,
                                             const std::vector<const Sharding*>& operands,
                                             const ShardingLookup& lookup) {
  if (operand_index < 0 || operand_index >= user.operand_count()) return std::nullopt;
  if (!FitsShape(user_sharding, user.shape())) return std::nullopt;
  return Checked(InferOperandShardingUnchecked(user, operand_index, user_sharding,
                                               FittingOperands(user, operands), lookup),
                 user.operand(operand_index)->shape());
}

std::string RuleName::ToString() const {
  switch (direction) {
    case Direction::kForward: return std::string(base) + " forward";
    case Direction::kBackward: return std::string(base) + " backward";
    case Direction::kNone: break;
  }
  return base;
}

// XLA's aggressiveness levels: pass-through ops first (0); everything else that needs dim
// bookkeeping next (1), including concatenate and the dynamic slices' backward direction;
// broadcast last (backward 2, forward 3), so that a broadcast follows its users rather than
// spreading an operand's tiling into new dims.
int RulePriority(const Instruction& instruction, bool forward) {
  if (IsElementwiseLike(instruction)) return 0;
  switch (instruction.opcode()) {
    case Opcode::kTranspose: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kWhile:
    case Opcode::kCall: case Opcode::kOptimizationBarrier: case Opcode::kParameter:
      return 0;
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
      return forward ? 0 : 1;
    case Opcode::kCustomCall:
      // XLA lets custom-calls take part only from its second aggressiveness level on.
      return IsTopKCustomCall(instruction) || IsDataPassThroughCustomCall(instruction) ? 1 : 0;
    case Opcode::kBroadcast:
      return forward ? 3 : 2;
    default:
      return 1;
  }
}

namespace rules {

Proposal Named(Sharding sharding, const char* rule, bool forward) {
  return Proposal{std::move(sharding),
                  RuleName{rule, forward ? RuleName::Direction::kForward : RuleName::Direction::kBackward}};
}

bool IsArray(const Instruction& instruction) { return instruction.shape().IsArray(); }

bool IsUsable(const Sharding& sharding) { return !sharding.IsTuple() && !sharding.IsUnknown(); }

std::vector<const Sharding*> Known(const Operands& operands, const std::vector<int64_t>& indices) {
  std::vector<const Sharding*> known;
  if (indices.empty()) {
    for (const Sharding* s : operands)
      if (s != nullptr && !s->IsUnknown()) known.push_back(s);
    return known;
  }
  for (int64_t i : indices) {
    if (i >= static_cast<int64_t>(operands.size())) continue;
    const Sharding* s = operands[i];
    if (s != nullptr && !s->IsUnknown()) known.push_back(s);
  }
  return known;
}

std::optional<Sharding> MergeAll(const std::vector<Sharding>& candidates, const Shape& shape) {
  if (candidates.empty()) return std::nullopt;
  // The most specific first (stable: earlier candidates win ties).
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i)
    if (IsMoreSpecific(candidates[i], candidates[best])) best = i;
  Sharding merged = candidates[best];
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i == best) continue;
    if (std::optional<Sharding> m = MergeShardings(merged, candidates[i], shape)) merged = *m;
  }
  return merged;
}

}  // namespace rules
}  // namespace gspmd::propagation
