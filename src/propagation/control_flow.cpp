// Leaf links through tuples, loops, branches, calls and pass-through ops, and the order in
// which propagation visits the computations control flow reaches.
#include "propagation/control_flow.h"

#include <algorithm>
#include <unordered_set>

#include "ir/known_custom_calls.h"
#include "ir/sdy_custom_calls.h"
#include "propagation/annotations.h"
#include "support/diagnostic.h"

namespace gspmd::propagation {
namespace {

void LinkAllLeaves(const Instruction* a, const Instruction* b, LinkKind kind, std::vector<LeafLink>& links) {
  int64_t count = LeafCount(a->shape());
  if (count != LeafCount(b->shape())) return;  // mismatched shapes: nothing is shared
  // A one-way link (a is the result, b its operand) offers shardings in its direction only.
  const bool a_to_b = kind != LinkKind::kForwardOnly;
  const bool b_to_a = kind != LinkKind::kBackwardOnly;
  for (int64_t leaf = 0; leaf < count; ++leaf) links.push_back({a, leaf, b, leaf, kind, a_to_b, b_to_a});
}

void LinkWhile(const Instruction& loop, std::vector<LeafLink>& links) {
  if (loop.operand_count() != 1 || loop.called_computations().size() != 2) return;
  LinkAllLeaves(&loop, loop.operand(0), LinkKind::kWhileInit, links);
  const Computation* condition = loop.while_condition();
  const Computation* body = loop.while_body();
  if (body->num_parameters() == 1) LinkAllLeaves(&loop, body->parameter(0), LinkKind::kWhileValue, links);
  if (body->root() != nullptr) LinkAllLeaves(&loop, body->root(), LinkKind::kWhileValue, links);
  if (condition->num_parameters() == 1) LinkAllLeaves(&loop, condition->parameter(0), LinkKind::kWhileValue, links);
}

void LinkConditional(const Instruction& conditional, std::vector<LeafLink>& links) {
  const std::vector<Computation*>& branches = conditional.called_computations();
  if (conditional.operand_count() != static_cast<int64_t>(branches.size()) + 1) return;
  for (size_t k = 0; k < branches.size(); ++k) {
    const Computation* branch = branches[k];
    if (branch->num_parameters() == 1) {
      LinkAllLeaves(conditional.operand(static_cast<int64_t>(k) + 1), branch->parameter(0), LinkKind::kBranchParameter,
                    links);
    }
    if (branch->root() != nullptr) LinkAllLeaves(&conditional, branch->root(), LinkKind::kBranchResult, links);
  }
}

void LinkCall(const Instruction& call, std::vector<LeafLink>& links) {
  const Computation* callee = call.to_apply();
  if (callee == nullptr || callee->num_parameters() != call.operand_count()) return;
  for (int64_t i = 0; i < call.operand_count(); ++i) {
    LinkAllLeaves(call.operand(i), callee->parameter(i), LinkKind::kCallParameter, links);
  }
  if (callee->root() != nullptr) LinkAllLeaves(&call, callee->root(), LinkKind::kCallResult, links);
}

// A Sharding annotation with unspecified dims whose only user converts to or from a manual
// region with the same unspecified dims: refining those dims on one side refines the other.
void LinkManualConversion(const Instruction& annotation, std::vector<LeafLink>& links) {
  if (annotation.custom_call_target != "Sharding" || !annotation.shape().IsArray()) return;
  if (annotation.users().size() != 1) return;
  const Instruction* user = annotation.users()[0];
  if (user->opcode() != Opcode::kCustomCall || !user->shape().IsArray() ||
      user->shape().rank() != annotation.shape().rank())
    return;
  const std::string& target = user->custom_call_target;
  if (target != "SPMDFullToShardShape" && target != "SPMDShardToFullShape") return;
  std::vector<int64_t> dims = UnspecifiedDims(annotation);
  if (dims.empty()) return;
  std::vector<int64_t> user_dims = UnspecifiedDims(*user);
  std::sort(dims.begin(), dims.end());
  std::sort(user_dims.begin(), user_dims.end());
  if (dims != user_dims) return;
  links.push_back({&annotation, 0, user, 0, LinkKind::kManualConversion});
}

void AppendComputation(const Computation* computation, std::unordered_set<const Computation*>& visited,
                       std::vector<Instruction*>& order) {
  if (!visited.insert(computation).second) return;
  for (Instruction* instruction : computation->MakePostOrder()) {
    if (CallsFlowComputations(*instruction)) {
      for (const Computation* called : instruction->called_computations()) AppendComputation(called, visited, order);
    }
    order.push_back(instruction);
  }
}

}  // namespace

int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += LeafCount(element);
  return count;
}

int64_t LeafOffset(const Shape& shape, int64_t index) {
  int64_t offset = 0;
  for (int64_t i = 0; i < index; ++i) offset += LeafCount(shape.tuple_shape(i));
  return offset;
}

const Shape& LeafShape(const Shape& shape, int64_t leaf) {
  if (!shape.IsTuple()) return shape;
  for (const Shape& element : shape.tuple_shapes()) {
    int64_t count = LeafCount(element);
    if (leaf < count) return LeafShape(element, leaf);
    leaf -= count;
  }
  GSPMD_CHECK(false, "leaf ", leaf, " is past the end of ", shape.ToString());
}

const char* LinkRuleName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kTuple: return "tuple";
    case LinkKind::kGetTupleElement: return "get-tuple-element";
    case LinkKind::kWhileInit: return "while init";
    case LinkKind::kWhileValue: return "while loop value";
    case LinkKind::kBranchParameter: return "conditional branch parameter";
    case LinkKind::kBranchResult: return "conditional branch result";
    case LinkKind::kCallParameter: return "call parameter";
    case LinkKind::kCallResult: return "call result";
    case LinkKind::kPassThrough: return "pass-through";
    case LinkKind::kForwardOnly: return "propagation barrier (forward)";
    case LinkKind::kBackwardOnly: return "propagation barrier (backward)";
    case LinkKind::kShardGroup: return "shard group";
    case LinkKind::kBarrier: return "shard barrier";
    case LinkKind::kManualConversion: return "manual conversion";
  }
  return "link";
}

bool CallsFlowComputations(const Instruction& instruction) {
  Opcode opcode = instruction.opcode();
  return opcode == Opcode::kWhile || opcode == Opcode::kConditional || opcode == Opcode::kCall;
}

bool IsShapePreservingCollective(const Instruction& instruction) {
  Opcode opcode = instruction.opcode();
  bool collective = opcode == Opcode::kAllReduce || opcode == Opcode::kCollectivePermute ||
                    opcode == Opcode::kCollectiveBroadcast;
  return collective && instruction.operand_count() == 1 && instruction.shape().IsArray() &&
         instruction.operand(0)->shape().Compatible(instruction.shape());
}

bool ComputedWhole(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kAfterAll: case Opcode::kPartitionId:
    case Opcode::kReplicaId: case Opcode::kGetDimensionSize: case Opcode::kFusion: case Opcode::kDomain:
    case Opcode::kAllGather: case Opcode::kAllToAll: case Opcode::kReduceScatter:
      return true;
    case Opcode::kAllReduce: case Opcode::kCollectivePermute: case Opcode::kCollectiveBroadcast:
      return !IsShapePreservingCollective(instruction);
    case Opcode::kCustomCall: {
      const std::string& target = instruction.custom_call_target;
      bool known = IsDriverHandled(instruction) || target == "TopK" || target == "ApproxTopK" ||
                   IsDataPassThroughCustomCall(instruction);
      return !known;
    }
    default:
      return false;
  }
}

bool IsDriverHandled(const Instruction& instruction) {
  if (IsShapePreservingCollective(instruction)) return true;
  switch (instruction.opcode()) {
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kParameter: case Opcode::kWhile:
    case Opcode::kConditional: case Opcode::kCall: case Opcode::kOptimizationBarrier:
      return true;
    case Opcode::kCustomCall: {
      const std::string& target = instruction.custom_call_target;
      return IsAnnotationCustomCall(instruction) || IsShardBarrier(instruction) ||
             target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
             target.rfind("xla.sdy.", 0) == 0;
    }
    default:
      return false;
  }
}

void AppendLinks(const Instruction& instruction, std::vector<LeafLink>& links) {
  if (IsShapePreservingCollective(instruction)) {
    links.push_back({&instruction, 0, instruction.operand(0), 0, LinkKind::kPassThrough});
    return;
  }
  switch (instruction.opcode()) {
    case Opcode::kTuple:
      for (int64_t i = 0; i < instruction.operand_count(); ++i) {
        const Instruction* operand = instruction.operand(i);
        int64_t offset = LeafOffset(instruction.shape(), i);
        for (int64_t leaf = 0; leaf < LeafCount(operand->shape()); ++leaf)
          links.push_back({&instruction, offset + leaf, operand, leaf, LinkKind::kTuple});
      }
      return;
    case Opcode::kGetTupleElement: {
      const Instruction* operand = instruction.operand(0);
      if (!operand->shape().IsTuple() || instruction.tuple_index >= operand->shape().tuple_size()) return;
      int64_t offset = LeafOffset(operand->shape(), instruction.tuple_index);
      for (int64_t leaf = 0; leaf < LeafCount(instruction.shape()); ++leaf)
        links.push_back({&instruction, leaf, operand, offset + leaf, LinkKind::kGetTupleElement});
      return;
    }
    case Opcode::kWhile:
      LinkWhile(instruction, links);
      return;
    case Opcode::kConditional:
      LinkConditional(instruction, links);
      return;
    case Opcode::kCall:
      LinkCall(instruction, links);
      return;
    case Opcode::kOptimizationBarrier:
      if (instruction.operand_count() == 1) LinkAllLeaves(&instruction, instruction.operand(0), LinkKind::kPassThrough, links);
      return;
    case Opcode::kCustomCall:
      if (SdyTargetName(instruction.custom_call_target) == "PropagationBarrier") {
        // Shardy's barrier lets shardings through in the allowed direction only (NONE: neither).
        std::string direction = instruction.FrontendAttribute("xla.sdy.allowed_direction");
        if (direction.find("FORWARD") != std::string::npos) {
          LinkAllLeaves(&instruction, instruction.operand(0), LinkKind::kForwardOnly, links);
        } else if (direction.find("BACKWARD") != std::string::npos) {
          LinkAllLeaves(&instruction, instruction.operand(0), LinkKind::kBackwardOnly, links);
        }
      } else if (IsAnnotationCustomCall(instruction)) {
        LinkAllLeaves(&instruction, instruction.operand(0), LinkKind::kPassThrough, links);
        LinkManualConversion(instruction, links);
      } else if (IsShardBarrier(instruction) && LeafCount(instruction.shape()) == LeafCount(instruction.operand(0)->shape())) {
        // A ShardBarrierTo's own sharding goes back too: it is its operand's, or the replicated
        // one it takes when a user proposes something (Driver::Backward), as in XLA.
        const bool from = IsShardBarrierFrom(instruction);
        for (int64_t leaf = 0; leaf < LeafCount(instruction.shape()); ++leaf)
          links.push_back({&instruction, leaf, instruction.operand(0), leaf, LinkKind::kBarrier, true, !from});
      }
      return;
    default:
      return;
  }
}

std::vector<Instruction*> FlowOrder(const Module& module) {
  std::vector<Instruction*> order;
  if (module.entry() == nullptr) return order;
  std::unordered_set<const Computation*> visited;
  AppendComputation(module.entry(), visited, order);
  return order;
}

}  // namespace gspmd::propagation
