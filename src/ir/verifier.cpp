// The verifier: operand counts, called computations, result shapes (shape_inference.h),
// shardings against shapes, and module structure (roots, call depth).
#include "ir/verifier.h"

#include <algorithm>
#include <unordered_map>

#include "ir/instruction_error.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// How many operands an opcode takes: [min, max] (max -1: unbounded), and a parity rule for
// the variadic reductions.
struct Arity {
  int64_t min = 0;
  int64_t max = -1;
  enum class Parity { kAny, kEven, kOdd } parity = Parity::kAny;
};

Arity Exactly(int64_t n) { return Arity{n, n}; }
Arity AtLeast(int64_t n) { return Arity{n, -1}; }

Arity OperandArity(Opcode opcode) {
  if (IsElementwiseUnary(opcode)) return Exactly(1);
  if (IsElementwiseBinary(opcode)) return Exactly(2);
  switch (opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota: case Opcode::kPartitionId:
    case Opcode::kReplicaId: case Opcode::kRngGetAndUpdateState:
      return Exactly(0);
    case Opcode::kConvert: case Opcode::kBitcast: case Opcode::kBitcastConvert: case Opcode::kBroadcast:
    case Opcode::kCopy: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kReverse: case Opcode::kSlice:
    case Opcode::kGetTupleElement: case Opcode::kReducePrecision: case Opcode::kGetDimensionSize: case Opcode::kTopK:
    case Opcode::kWhile: case Opcode::kOptimizationBarrier: case Opcode::kDomain: case Opcode::kRngBitGenerator:
    case Opcode::kReal: case Opcode::kImag: case Opcode::kInfeed: case Opcode::kRecv: case Opcode::kSendDone:
    case Opcode::kRecvDone: case Opcode::kCopyStart: case Opcode::kCopyDone: case Opcode::kFft:
    case Opcode::kCholesky: case Opcode::kAllGatherDone: case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
      return Exactly(1);
    case Opcode::kCompare: case Opcode::kPad: case Opcode::kAddDependency: case Opcode::kGather:
    case Opcode::kConvolution: case Opcode::kRng: case Opcode::kStochasticConvert: case Opcode::kComplex:
    case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kTriangularSolve: case Opcode::kSetDimensionSize:
      return Exactly(2);
    case Opcode::kDot:
      return Arity{2, 4};  // lhs, rhs and (sparse dots) one metadata operand per sparse side
    case Opcode::kSelect: case Opcode::kClamp: case Opcode::kSelectAndScatter: case Opcode::kBatchNormTraining:
    case Opcode::kRaggedDot:
      return Exactly(3);
    case Opcode::kScaledDot:
      return Exactly(4);
    case Opcode::kBatchNormInference: case Opcode::kBatchNormGrad:
      return Exactly(5);
    case Opcode::kAllGather: case Opcode::kAllReduce: case Opcode::kAllToAll: case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute: case Opcode::kConcatenate:
    case Opcode::kSort: case Opcode::kMap: case Opcode::kConditional: case Opcode::kDynamicSlice:
    case Opcode::kAllGatherStart: case Opcode::kAllReduceStart: case Opcode::kCollectivePermuteStart:
    case Opcode::kDynamicReshape: case Opcode::kRaggedAllToAll: case Opcode::kScan:
      return AtLeast(1);
    case Opcode::kDynamicUpdateSlice:
      return AtLeast(2);
    case Opcode::kReduce: case Opcode::kReduceWindow:
      return Arity{2, -1, Arity::Parity::kEven};
    case Opcode::kScatter:
      return Arity{3, -1, Arity::Parity::kOdd};
    default:  // tuple, call, custom-call, fusion, after-all, async-start
      return AtLeast(0);
  }
}

std::string Plural(int64_t n, std::string_view word) { return StrCat(n, " ", word, n == 1 ? "" : "s"); }

// Every shape an instruction touches has a size that fits 64 bits (so element counts and byte
// sizes computed downstream cannot overflow).
std::string CheckSizes(const Instruction& instruction) {
  for (int64_t i = 0; i < instruction.operand_count(); ++i)
    if (!instruction.operand(i)->shape().CheckedByteSize())
      return StrCat("operand ", i, " (%", instruction.operand(i)->name(), ") is ",
                    instruction.operand(i)->shape().ToString(false), ", more bytes than a 64-bit size can count");
  if (!instruction.shape().CheckedByteSize())
    return StrCat("result ", instruction.shape().ToString(false), " has more bytes than a 64-bit size can count");
  return "";
}

std::string CheckLeafSharding(const Sharding& sharding, const Shape& shape, int64_t num_partitions) {
  // A token holds no data, so XLA takes any sharding on one: an outfeed's is often the tuple
  // sharding of the data it sends (plus one for the token), or the data's tiled sharding.
  if (shape.IsToken()) return "";
  if (sharding.IsTuple())
    return StrCat("a tuple sharding with ", sharding.tuple_elements().size(),
                  " elements cannot describe the non-tuple shape ", shape.ToString(false));
  if (num_partitions > 0) {
    if (sharding.IsMaximal() && (sharding.maximal_device() < 0 || sharding.maximal_device() >= num_partitions))
      return StrCat("sharding uses device ", sharding.maximal_device(), ", expected device ids from 0 to ",
                    num_partitions - 1, " (num_partitions=", num_partitions, ")");
    if (sharding.IsTiled() && sharding.RequiredDeviceCount() > num_partitions)
      return StrCat("sharding uses device ", sharding.RequiredDeviceCount() - 1, ", expected device ids from 0 to ",
                    num_partitions - 1, " (num_partitions=", num_partitions, ")");
  }
  if (sharding.IsTiled() && shape.IsArray() && sharding.TiledDataRank() != shape.rank())
    return StrCat("sharding tiles ", Plural(sharding.TiledDataRank(), "dimension"), ", expected ", shape.rank(),
                  " (the rank of ", shape.ToString(false), ")");
  if (sharding.IsTiled() && !shape.IsArray())
    return StrCat("a tiled sharding cannot describe ", shape.ToString(false));
  return "";
}

}  // namespace

std::string CheckOperandCount(const Instruction& instruction) {
  Arity arity = OperandArity(instruction.opcode());
  int64_t n = instruction.operand_count();
  std::string_view name = OpcodeName(instruction.opcode());
  if (arity.min == arity.max && n != arity.min) return StrCat(name, " expects ", Plural(arity.min, "operand"), ", got ", n);
  if (n < arity.min) return StrCat(name, " expects at least ", Plural(arity.min, "operand"), ", got ", n);
  if (arity.max >= 0 && n > arity.max) return StrCat(name, " expects at most ", Plural(arity.max, "operand"), ", got ", n);
  if (arity.parity == Arity::Parity::kEven && n % 2 != 0)
    return StrCat(name, " expects an even number of operands (inputs then init values), got ", n);
  if (arity.parity == Arity::Parity::kOdd && n % 2 != 1)
    return StrCat(name, " expects an odd number of operands (inputs, indices, updates), got ", n);
  return "";
}

std::string CheckCalledComputations(const Instruction& instruction) {
  for (const Computation* computation : instruction.called_computations())
    if (computation == nullptr || computation->root() == nullptr)
      return StrCat(OpcodeName(instruction.opcode()), " calls a computation without a root instruction");
  int64_t expected = -1;
  switch (instruction.opcode()) {
    case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kMap: case Opcode::kSort: case Opcode::kCall:
    case Opcode::kAllReduce: case Opcode::kReduceScatter: case Opcode::kScatter: case Opcode::kFusion:
    case Opcode::kAllReduceStart: case Opcode::kScan:
      expected = 1;
      break;
    case Opcode::kWhile: case Opcode::kSelectAndScatter:
      expected = 2;
      break;
    case Opcode::kConditional:
      if (instruction.called_computations().empty()) return "conditional expects at least one branch computation";
      return "";
    default:
      return "";
  }
  int64_t n = static_cast<int64_t>(instruction.called_computations().size());
  if (n == expected) return "";
  if (instruction.opcode() == Opcode::kWhile) return "while expects condition= and body= computations";
  if (instruction.opcode() == Opcode::kSelectAndScatter) return "select-and-scatter expects select= and scatter= computations";
  if (instruction.opcode() == Opcode::kFusion) return "fusion expects a calls= computation";
  return StrCat(OpcodeName(instruction.opcode()), " expects a to_apply= computation");
}

// A collective-permute-done finishes the value of a collective-permute-start: the start itself,
// or (a loop that carries it from one trip to the next, as XLA's pipeliner makes) a
// get-tuple-element or parameter holding it.
std::string CheckAsyncDoneOperand(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCollectivePermuteDone) return "";
  const Instruction& operand = *instruction.operand(0);
  switch (operand.opcode()) {
    case Opcode::kCollectivePermuteStart: case Opcode::kGetTupleElement: case Opcode::kParameter:
      return "";
    default:
      return StrCat("collective-permute-done's operand %", operand.name(), " is a ", OpcodeName(operand.opcode()),
                    ", expected the collective-permute-start it finishes");
  }
}

std::string CheckInstruction(const Instruction& instruction, const DeviceCounts& devices) {
  if (std::string error = CheckSizes(instruction); !error.empty()) return error;
  if (std::string error = CheckAsyncDoneOperand(instruction); !error.empty()) return error;
  return CheckResultShape(instruction, devices);
}

std::string CheckSharding(const Sharding& sharding, const Shape& shape, int64_t num_partitions) {
  // Iterative over the tuple structure (shapes nest as deeply as the parser allows).
  struct Item {
    const Sharding* sharding;
    const Shape* shape;
  };
  std::vector<Item> stack = {{&sharding, &shape}};
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    if (!item.shape->IsTuple()) {
      if (std::string error = CheckLeafSharding(*item.sharding, *item.shape, num_partitions); !error.empty()) return error;
      continue;
    }
    if (!item.sharding->IsTuple()) {  // one sharding for every leaf
      for (const Shape& element : item.shape->tuple_shapes()) stack.push_back({item.sharding, &element});
      continue;
    }
    const std::vector<Sharding>& elements = item.sharding->tuple_elements();
    if (static_cast<int64_t>(elements.size()) != item.shape->tuple_size())
      return StrCat("tuple sharding has ", Plural(static_cast<int64_t>(elements.size()), "element"), ", expected ",
                    item.shape->tuple_size(), " (one per element of ", item.shape->ToString(false), ")");
    for (size_t i = 0; i < elements.size(); ++i) stack.push_back({&elements[i], &item.shape->tuple_shape(static_cast<int64_t>(i))});
  }
  return "";
}

void VerifyModuleStructure(const Module& module) {
  // Depth of computation calls, from the callees up (computations are defined before their
  // callers, so one pass in module order sees every callee first).
  std::unordered_map<const Computation*, int64_t> depth;  // lookup only
  for (const auto& computation : module.computations()) {
    if (computation->root() == nullptr)
      GSPMD_USER_ERROR("computation %", computation->name(), " has no root instruction");
    int64_t deepest = 0;
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        auto it = depth.find(callee);
        int64_t callee_depth = it == depth.end() ? 0 : it->second;
        deepest = std::max(deepest, callee_depth + 1);
        if (deepest > kMaxCallDepth)
          ThrowInstructionError(*instruction, StrCat("computations call each other ", deepest,
                                                     " levels deep here, expected at most ", kMaxCallDepth));
      }
    }
    depth[computation.get()] = deepest;
  }
}

void VerifyModule(const Module& module) {
  int64_t num_partitions = module.Attribute("num_partitions").empty() ? 0 : module.num_partitions();
  DeviceCounts devices{num_partitions, module.Attribute("replica_count").empty() ? 0 : module.replica_count()};
  VerifyModuleStructure(module);
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      std::string error = CheckOperandCount(*instruction);
      if (error.empty()) error = CheckCalledComputations(*instruction);
      if (error.empty()) error = CheckInstruction(*instruction, devices);
      if (error.empty() && instruction->sharding())
        error = CheckSharding(*instruction->sharding(), instruction->shape(), num_partitions);
      if (!error.empty()) ThrowInstructionError(*instruction, StrCat("in computation %", computation->name(), ": ", error));
    }
  }
}

}  // namespace gspmd
