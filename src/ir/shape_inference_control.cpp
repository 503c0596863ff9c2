// Shape inference for collectives, control flow (while, conditional, call, fusion), random
// numbers, host transfers (infeed, outfeed, send, recv) and the ops whose result is written.
#include <set>

#include "ir/shape_inference_util.h"

namespace gspmd::shape_rules {
namespace {

bool Written(const Instruction& instruction) { return instruction.shape().element_type() != ElementType::kInvalid; }

std::string_view ExtraAttribute(const Instruction& instruction, std::string_view name) {
  for (const auto& [key, value] : instruction.extra_attributes())
    if (key == name) return value;
  return {};
}

// Replica groups name each id at most once, only ids the module has, and (for ops that split
// or join data by group) groups of one size.
std::string CheckReplicaGroups(const Instruction& instruction, const DeviceCounts& devices, bool equal_sizes) {
  const ReplicaGroups& groups = instruction.replica_groups();
  if (groups.form() != ReplicaGroups::Form::kExplicit || groups.empty()) return "";
  std::vector<std::vector<int64_t>> expanded = groups.Groups(1);
  // The ids' kind follows XLA's group mode: replicas without a channel, global device ids
  // with use_global_device_ids, partitions for ops without that field; the mixed mode is
  // not bounded here.
  int64_t bound = 0;
  if (!instruction.channel_id.has_value()) bound = devices.replicas;
  else if (instruction.use_global_device_ids && devices.partitions > 0)
    bound = devices.partitions * std::max<int64_t>(devices.replicas, 1);  // replica_count defaults to 1
  else if (instruction.opcode() == Opcode::kAllToAll || instruction.opcode() == Opcode::kCollectiveBroadcast)
    bound = devices.partitions;
  std::set<int64_t> seen;
  for (const std::vector<int64_t>& group : expanded) {
    if (equal_sizes && group.size() != expanded[0].size())
      return StrCat(Name(instruction), " replica_groups=", groups.ToString(), " has groups of ", expanded[0].size(),
                    " and ", group.size(), " devices, expected groups of one size");
    for (int64_t id : group) {
      if (id < 0 || (bound > 0 && id >= bound))
        return StrCat(Name(instruction), " replica_groups=", groups.ToString(), " names device ", id,
                      ", expected ids from 0 to ", bound > 0 ? StrCat(bound - 1) : std::string("the device count"));
      if (!seen.insert(id).second)
        return StrCat(Name(instruction), " replica_groups=", groups.ToString(), " lists device ", id, " twice");
    }
  }
  return "";
}

std::string CheckSourceTargetPairs(const Instruction& instruction, const DeviceCounts& devices) {
  std::set<int64_t> sources, targets;
  int64_t bound = instruction.channel_id.has_value() ? devices.partitions : devices.replicas;
  for (const SourceTargetPair& pair : instruction.source_target_pairs()) {
    for (int64_t id : {pair.source, pair.target})
      if (id < 0 || (bound > 0 && id >= bound))
        return StrCat("collective-permute pair {", pair.source, ",", pair.target, "} names device ", id,
                      ", expected ids from 0 to ", bound > 0 ? StrCat(bound - 1) : std::string("the device count"));
    if (!sources.insert(pair.source).second)
      return StrCat("collective-permute source ", pair.source, " appears in two pairs, expected each source once");
    if (!targets.insert(pair.target).second)
      return StrCat("collective-permute target ", pair.target, " appears in two pairs, expected each target once");
  }
  return "";
}

Shape TupleOrSingle(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

// all-gather (grow dimension d by the group size) and reduce-scatter (shrink it).
InferredShape InferGatherOrScatter(const Instruction& instruction, const DeviceCounts& devices) {
  bool gather = instruction.opcode() == Opcode::kAllGather;
  if (instruction.dimensions.size() != 1)
    return Fail(StrCat(Name(instruction), " dimensions has ", instruction.dimensions.size(), " entries, expected one"));
  int64_t d = instruction.dimensions[0];
  std::optional<int64_t> group = CollectiveGroupSize(instruction, devices);
  std::vector<Shape> results;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (!operand.IsArray()) return Fail(OperandError(instruction, i, "an array"));
    if (d < 0 || d >= operand.rank())
      return Fail(StrCat(Name(instruction), " dimension ", d, " is out of range for ", Text(operand)));
    if (!group) continue;
    Shape result(operand.element_type(), operand.dims());
    if (gather) {
      std::optional<int64_t> size = CheckedMul(operand.dim(d), *group);
      if (!size) return Fail(StrCat(Name(instruction), " result size overflows 64 bits"));
      result.set_dim(d, *size);
    } else {
      if (*group <= 0 || operand.dim(d) % *group != 0)
        return Fail(OperandError(instruction, i, StrCat("dimension ", d, " divisible by the group size ", *group)));
      result.set_dim(d, operand.dim(d) / *group);
    }
    results.push_back(std::move(result));
  }
  if (group) return Ok(TupleOrSingle(std::move(results)));
  // The group size is unknown: the result must be a whole multiple (or fraction) of the operand.
  if (!Written(instruction)) return MustBeWritten();
  const Shape& result = instruction.shape();
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& leaf = result.IsTuple() && result.tuple_size() > 0 ? result.tuple_shape(0) : result;
  bool fits = leaf.IsArray() && leaf.rank() == operand.rank() && leaf.element_type() == operand.element_type() &&
              leaf.dim(d) > 0 && operand.dim(d) > 0 &&
              (gather ? leaf.dim(d) % operand.dim(d) == 0 : operand.dim(d) % leaf.dim(d) == 0);
  if (!fits && !(leaf.IsArray() && operand.dim(d) == 0 && leaf.dim(d) == 0))
    return Fail(StrCat(Name(instruction), " result ", Text(result), " does not ", gather ? "gather" : "scatter",
                       " dimension ", d, " of ", Text(operand), " over a group of devices"));
  return MustBeWritten();
}

// all-reduce, collective-broadcast and the tuple form of all-to-all: the operands' shapes (a
// tuple for several operands; always a tuple for all-to-all without a split dimension).
InferredShape InferAllReduceLike(const Instruction& instruction) {
  std::vector<Shape> results;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (operand.IsToken()) return Fail(OperandError(instruction, i, "an array"));
    results.push_back(operand);
  }
  if (instruction.opcode() == Opcode::kAllToAll) return Ok(Shape::Tuple(std::move(results)));
  if (instruction.opcode() == Opcode::kAllReduce) {
    const Shape* leaf = &results[0];
    while (leaf->IsTuple() && leaf->tuple_size() > 0) leaf = &leaf->tuple_shape(0);
    ElementType type = leaf->element_type();
    if (std::string error = CheckScalarReducer(instruction, *instruction.to_apply(), "to_apply", {type}, {type});
        !error.empty())
      return Fail(error);
  }
  return Ok(TupleOrSingle(std::move(results)));
}

InferredShape InferAllToAll(const Instruction& instruction, const DeviceCounts& devices) {
  if (instruction.dimensions.empty()) return InferAllReduceLike(instruction);
  if (instruction.dimensions.size() != 1 || instruction.operand_count() != 1)
    return Fail("all-to-all with dimensions= takes one operand and one split dimension");
  const Shape& operand = OperandShape(instruction, 0);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  int64_t d = instruction.dimensions[0];
  if (d < 0 || d >= operand.rank())
    return Fail(StrCat("all-to-all dimension ", d, " is out of range for ", Text(operand)));
  std::optional<int64_t> group = CollectiveGroupSize(instruction, devices);
  if (group && (*group <= 0 || operand.dim(d) % *group != 0))
    return Fail(OperandError(instruction, 0, StrCat("dimension ", d, " divisible by the group size ", *group)));
  return Ok(Shape(operand.element_type(), operand.dims()));
}

InferredShape InferWhile(const Instruction& instruction) {
  const Shape& init = OperandShape(instruction, 0);
  const Computation& condition = *instruction.while_condition();
  const Computation& body = *instruction.while_body();
  if (std::string error = CheckParametersMatch(instruction, condition, "condition", {&init}); !error.empty())
    return Fail(error);
  if (std::string error = CheckParametersMatch(instruction, body, "body", {&init}); !error.empty()) return Fail(error);
  const Shape& predicate = condition.root()->shape();
  if (!IsScalarShape(predicate) || predicate.element_type() != ElementType::kPred)
    return Fail(StrCat("condition %", condition.name(), " of while returns ", Text(predicate), ", expected pred[]"));
  if (!body.root()->shape().Compatible(init))
    return Fail(StrCat("body %", body.name(), " of while returns ", Text(body.root()->shape()), ", expected ",
                       Text(init), " (the loop state it takes)"));
  return Ok(init);
}

InferredShape InferConditional(const Instruction& instruction) {
  const Shape& index = OperandShape(instruction, 0);
  const std::vector<Computation*>& branches = instruction.called_computations();
  bool is_pred = IsScalarShape(index) && index.element_type() == ElementType::kPred;
  bool is_s32 = IsScalarShape(index) && index.element_type() == ElementType::kS32;
  if (!is_pred && !is_s32) return Fail(OperandError(instruction, 0, "a pred[] or s32[] branch index"));
  if (branches.empty() || (is_pred && branches.size() != 2))
    return Fail(StrCat("conditional has ", branches.size(), " branches, expected ", is_pred ? "2 for a pred index" : "at least 1"));
  if (instruction.operand_count() != static_cast<int64_t>(branches.size()) + 1)
    return Fail(StrCat("conditional has ", instruction.operand_count(), " operands, expected the index and one per branch (",
                       branches.size() + 1, ")"));
  for (size_t b = 0; b < branches.size(); ++b) {
    const Shape& argument = OperandShape(instruction, static_cast<int64_t>(b) + 1);
    if (std::string error = CheckParametersMatch(instruction, *branches[b], StrCat("branch ", b), {&argument});
        !error.empty())
      return Fail(error);
    if (!branches[b]->root()->shape().Compatible(branches[0]->root()->shape()))
      return Fail(StrCat("branch ", b, " %", branches[b]->name(), " returns ", Text(branches[b]->root()->shape()),
                         ", expected ", Text(branches[0]->root()->shape()), " like branch 0"));
  }
  return Ok(branches[0]->root()->shape());
}

InferredShape InferCallLike(const Instruction& instruction) {
  const Computation& callee = *instruction.called_computations().at(0);
  std::vector<const Shape*> operands;
  for (const Instruction* operand : instruction.operands()) operands.push_back(&operand->shape());
  std::string role = instruction.opcode() == Opcode::kFusion ? "calls" : "to_apply";
  if (std::string error = CheckParametersMatch(instruction, callee, role, operands); !error.empty()) return Fail(error);
  return Ok(callee.root()->shape());
}

InferredShape InferRng(const Instruction& instruction) {
  std::string_view distribution = instruction.rng_distribution();
  if (distribution != "rng_uniform" && distribution != "rng_normal")
    return Fail(StrCat("rng distribution=", distribution, ", expected rng_uniform or rng_normal"));
  if (!Written(instruction)) return MustBeWritten();
  const Shape& result = instruction.shape();
  if (!result.IsArray()) return Fail(StrCat("rng result ", Text(result), " must be an array"));
  if (distribution == "rng_normal" && !IsFloatingPoint(result.element_type()))
    return Fail(StrCat("rng_normal result ", Text(result), " must be floating point"));
  if (result.element_type() == ElementType::kPred || IsComplex(result.element_type()))
    return Fail(StrCat("rng result ", Text(result), " must be an integer or floating-point array"));
  for (int64_t i = 0; i < 2; ++i) {
    const Shape& bound = OperandShape(instruction, i);
    if (!IsScalarShape(bound) || bound.element_type() != result.element_type())
      return Fail(OperandError(instruction, i, StrCat("a ", ElementTypeName(result.element_type()), " scalar")));
  }
  return MustBeWritten();
}

InferredShape InferRngBitGenerator(const Instruction& instruction) {
  std::string_view algorithm = ExtraAttribute(instruction, "algorithm");
  if (algorithm != "rng_default" && algorithm != "rng_three_fry" && algorithm != "rng_philox")
    return Fail(StrCat("rng-bit-generator algorithm=", algorithm.empty() ? std::string_view("(none)") : algorithm,
                       ", expected rng_default, rng_three_fry or rng_philox"));
  // XLA's verifier checks neither the state's length nor that the result is a tuple: a
  // result written as the bits array alone drops the new state.
  const Shape& state = OperandShape(instruction, 0);
  if (!state.IsArray() || state.element_type() != ElementType::kU64 || state.rank() != 1 || state.dim(0) < 2)
    return Fail(OperandError(instruction, 0, "a u64 state vector of at least 2 words"));
  if (!Written(instruction)) return MustBeWritten();
  const Shape& result = instruction.shape();
  auto is_bits = [](const Shape& shape) {
    return shape.IsArray() && (IsInteger(shape.element_type()) || IsFloatingPoint(shape.element_type()));
  };
  bool with_state = result.IsTuple() && result.tuple_size() == 2 && result.tuple_shape(0).Compatible(state) &&
                    is_bits(result.tuple_shape(1));
  if (!with_state && !is_bits(result))
    return Fail(StrCat("rng-bit-generator result ", Text(result), " must be (", Text(state),
                       ", an integer or float array) or the integer or float array alone"));
  return MustBeWritten();
}

bool IsTokenTuple(const Shape& shape, int64_t size) {
  return shape.IsTuple() && shape.tuple_size() == size && shape.tuple_shape(size - 1).IsToken();
}

InferredShape InferHostTransfer(const Instruction& instruction) {
  const Shape& result = instruction.shape();
  switch (instruction.opcode()) {
    case Opcode::kInfeed:
      if (!OperandShape(instruction, 0).IsToken()) return Fail(OperandError(instruction, 0, "a token"));
      if (Written(instruction) && !IsTokenTuple(result, 2))
        return Fail(StrCat("infeed result ", Text(result), " must be (data, token[])"));
      return MustBeWritten();
    case Opcode::kOutfeed:
      if (!OperandShape(instruction, 1).IsToken()) return Fail(OperandError(instruction, 1, "a token"));
      return Ok(Shape::Token());
    case Opcode::kSend:
      if (!OperandShape(instruction, 1).IsToken()) return Fail(OperandError(instruction, 1, "a token"));
      return Ok(Shape::Tuple({OperandShape(instruction, 0), Shape(ElementType::kU32, {}), Shape::Token()}));
    case Opcode::kRecv:
      if (!OperandShape(instruction, 0).IsToken()) return Fail(OperandError(instruction, 0, "a token"));
      if (Written(instruction) && !IsTokenTuple(result, 3))
        return Fail(StrCat("recv result ", Text(result), " must be (data, u32[], token[])"));
      return MustBeWritten();
    case Opcode::kSendDone:
      if (!IsTokenTuple(OperandShape(instruction, 0), 3))
        return Fail(OperandError(instruction, 0, "the (data, u32[], token[]) of a send"));
      return Ok(Shape::Token());
    default: {  // recv-done
      const Shape& operand = OperandShape(instruction, 0);
      if (!IsTokenTuple(operand, 3)) return Fail(OperandError(instruction, 0, "the (data, u32[], token[]) of a recv"));
      return Ok(Shape::Tuple({operand.tuple_shape(0), Shape::Token()}));
    }
  }
}

// collective-permute-start / -done (XLA's asynchronous collective-permute): the start's result
// is (operand, result, u32[] contexts...), XLA writing two contexts: (f32[8], f32[8], u32[], u32[]);
// the done's is the start's element 1.
InferredShape InferAsyncPermute(const Instruction& instruction, const DeviceCounts& devices) {
  if (instruction.opcode() == Opcode::kCollectivePermuteDone) {
    const Shape& operand = OperandShape(instruction, 0);
    if (!operand.IsTuple() || operand.tuple_size() < 2)
      return Fail(OperandError(instruction, 0, "the (operand, result, u32[]...) tuple of a collective-permute-start"));
    return Ok(operand.tuple_shape(1));
  }
  if (std::string error = CheckSourceTargetPairs(instruction, devices); !error.empty()) return Fail(error);
  if (instruction.operand_count() != 1) return MustBeWritten();  // the combined form with slices
  const Shape& operand = OperandShape(instruction, 0);
  const Shape u32(ElementType::kU32, {});
  if (!Written(instruction)) return Ok(Shape::Tuple({operand, operand, u32, u32}));
  const Shape& result = instruction.shape();
  bool fits = result.IsTuple() && result.tuple_size() >= 2 && result.tuple_shape(0).Compatible(operand) &&
              result.tuple_shape(1).Compatible(operand);
  for (int64_t i = 2; fits && i < result.tuple_size(); ++i) fits = result.tuple_shape(i).Compatible(u32);
  if (!fits)
    return Fail(StrCat("collective-permute-start result ", Text(result), " must be (", Text(operand), ", ",
                       Text(operand), ") followed by u32[] contexts, as (", Text(operand), ", ", Text(operand),
                       ", u32[], u32[])"));
  return Ok(result);
}

}  // namespace

InferredShape InferCollective(const Instruction& instruction, const DeviceCounts& devices) {
  Opcode opcode = instruction.opcode();
  bool equal_sizes = opcode == Opcode::kAllGather || opcode == Opcode::kReduceScatter || opcode == Opcode::kAllToAll;
  if (opcode == Opcode::kCollectivePermute) {
    if (std::string error = CheckSourceTargetPairs(instruction, devices); !error.empty()) return Fail(error);
    if (instruction.operand_count() == 1) return Ok(OperandShape(instruction, 0));
    return MustBeWritten();  // the combined form with start indices and slice sizes
  }
  if (std::string error = CheckReplicaGroups(instruction, devices, equal_sizes); !error.empty()) return Fail(error);
  switch (opcode) {
    case Opcode::kAllGather: case Opcode::kReduceScatter: return InferGatherOrScatter(instruction, devices);
    case Opcode::kAllToAll: return InferAllToAll(instruction, devices);
    case Opcode::kAllReduce: case Opcode::kCollectiveBroadcast: return InferAllReduceLike(instruction);
    default: return MustBeWritten();  // ragged-all-to-all
  }
}

InferredShape InferControlFlow(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kWhile: return InferWhile(instruction);
    case Opcode::kConditional: return InferConditional(instruction);
    case Opcode::kCall: case Opcode::kFusion: return InferCallLike(instruction);
    default: return MustBeWritten();  // custom-call, scan
  }
}

InferredShape InferOther(const Instruction& instruction, const DeviceCounts& devices) {
  switch (instruction.opcode()) {
    case Opcode::kRng: return InferRng(instruction);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(instruction);
    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kRecv: case Opcode::kSendDone:
    case Opcode::kRecvDone:
      return InferHostTransfer(instruction);
    case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
      return InferAsyncPermute(instruction, devices);
    default:  // asynchronous halves, fft, cholesky, triangular-solve, batch-norm-*, ...: written
      return MustBeWritten();
  }
}

}  // namespace gspmd::shape_rules
