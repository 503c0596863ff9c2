// The reference interpreter's driver: evaluates computations in post order, frees values after
// their last use, handles control flow and pass-through ops, and dispatches the rest to kernels.
#include "runtime/interp/evaluator.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ir/instruction_error.h"
#include "ir/sdy_custom_calls.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/interp/eval_elementwise.h"
#include "runtime/interp/kernels.h"
#include "runtime/interp/random.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int32_t kExternal = -1;  // a value owned outside the frame (argument, constant)

// How one computation is evaluated: the instructions reachable from the root in post order,
// each one's operand slots (slot = position in `order`) and how many times it is used.
struct Plan {
  const Computation* computation = nullptr;
  std::vector<const Instruction*> order;
  std::vector<int32_t> operand_begin;  // operands of order[i]: operand_slots[begin[i]..begin[i+1])
  std::vector<int32_t> operand_slots;
  std::vector<int32_t> use_count;      // operand uses, +1 for the root
  std::vector<int32_t> parameter_slot;  // by parameter number; -1 when the parameter is unused
  int32_t root_slot = 0;
};

// Values of one running computation. A slot either owns its literal (owner == itself), points
// into another slot's literal (owner == that slot, which it keeps alive with one reference),
// or points at something outside the frame (owner == kExternal).
struct Frame {
  std::vector<std::optional<Literal>> owned;
  std::vector<const Literal*> value;
  std::vector<int32_t> owner;
  std::vector<int32_t> remaining;
  std::vector<const Literal*> operands;  // scratch for the instruction being evaluated

  void Reset(const Plan& plan) {
    size_t n = plan.order.size();
    if (owned.size() < n) owned.resize(n);
    value.assign(n, nullptr);
    owner.assign(n, kExternal);
    remaining.assign(plan.use_count.begin(), plan.use_count.end());
  }
  // Frees whatever is still owned (after an error, or the moved-from root).
  void Clear() {
    for (size_t slot = 0; slot < value.size(); ++slot)
      if (owner[slot] == static_cast<int32_t>(slot)) owned[slot].reset();
  }

  void Own(int32_t slot, Literal literal) {
    owned[slot].emplace(std::move(literal));
    value[slot] = &*owned[slot];
    owner[slot] = slot;
  }
  // The slot refers to `target`, which lives inside the storage of `source`'s owner.
  void Alias(int32_t slot, int32_t source, const Literal* target) {
    value[slot] = target;
    int32_t root = owner[source];
    owner[slot] = root;
    if (root != kExternal) ++remaining[root];
  }
  void Release(int32_t slot) {
    if (--remaining[slot] > 0) return;
    int32_t root = owner[slot];
    value[slot] = nullptr;
    if (root == slot) {
      owned[slot].reset();
      owner[slot] = kExternal;
    } else if (root != kExternal) {
      Release(root);
    }
  }
  // Whether the caller holding the last use of `slot` may move its value out.
  bool CanMove(int32_t slot) const {
    if (remaining[slot] != 1) return false;
    int32_t root = owner[slot];
    if (root == slot) return true;
    return root != kExternal && remaining[root] == 1;
  }
  // The value of `slot` for a consumer: moved when this is its last use, else copied.
  Literal TakeOrCopy(int32_t slot) {
    if (CanMove(slot)) return std::move(*const_cast<Literal*>(value[slot]));
    return *value[slot];
  }
};

bool IsIdentityCustomCall(std::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
         !SdyTargetName(target).empty() || target == "ShardBarrierFrom" || target == "ShardBarrierTo" ||
         target == "LayoutConstraint" || target == "MoveToHost" || target == "MoveToDevice" ||
         target == "PinToDevice" || target == "PinToDeviceSram";
}

// Opcodes whose result is their (first) operand, unchanged.
bool IsPassThrough(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
      return instruction.operand_count() >= 1;
    default:
      return false;
  }
}

Plan BuildPlan(const Computation& computation) {
  Plan plan;
  plan.computation = &computation;
  const Instruction* root = computation.root();
  if (root == nullptr) GSPMD_USER_ERROR("computation '", computation.name(), "' has no root instruction");
  std::vector<Instruction*> post_order = computation.MakePostOrder();
  int64_t max_id = 0;
  for (const Instruction* instruction : post_order) {
    GSPMD_CHECK(instruction->unique_id() >= 0, instruction->name(), " is not in a computation");
    max_id = std::max(max_id, instruction->unique_id());
  }
  // Keep only what the root needs.
  std::vector<char> live(static_cast<size_t>(max_id) + 1, 0);
  live[root->unique_id()] = 1;
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
    if (!live[(*it)->unique_id()]) continue;
    for (const Instruction* operand : (*it)->operands()) live[operand->unique_id()] = 1;
  }
  std::vector<int32_t> slot_of(static_cast<size_t>(max_id) + 1, -1);
  for (const Instruction* instruction : post_order) {
    if (!live[instruction->unique_id()]) continue;
    slot_of[instruction->unique_id()] = static_cast<int32_t>(plan.order.size());
    plan.order.push_back(instruction);
  }
  plan.use_count.assign(plan.order.size(), 0);
  plan.parameter_slot.assign(static_cast<size_t>(computation.num_parameters()), -1);
  for (size_t i = 0; i < plan.order.size(); ++i) {
    const Instruction* instruction = plan.order[i];
    plan.operand_begin.push_back(static_cast<int32_t>(plan.operand_slots.size()));
    for (const Instruction* operand : instruction->operands()) {
      int32_t slot = slot_of[operand->unique_id()];
      GSPMD_CHECK(slot >= 0 && static_cast<size_t>(slot) < i, "operand ", operand->name(), " of ",
                  instruction->name(), " is not evaluated before it");
      plan.operand_slots.push_back(slot);
      ++plan.use_count[slot];
    }
    if (instruction->opcode() == Opcode::kParameter) {
      int64_t number = instruction->parameter_number;
      GSPMD_CHECK(number >= 0 && number < computation.num_parameters(), "bad parameter number");
      plan.parameter_slot[number] = static_cast<int32_t>(i);
    }
  }
  plan.operand_begin.push_back(static_cast<int32_t>(plan.operand_slots.size()));
  plan.root_slot = slot_of[root->unique_id()];
  ++plan.use_count[plan.root_slot];
  return plan;
}

// "while evaluating it (its result, f32[8,1024], is 32.0 KiB (32768 bytes))": the context of a
// failed allocation inside an instruction (the message is located at the instruction).
std::string WhileEvaluating(const Instruction& instruction) {
  const std::optional<int64_t> bytes = instruction.shape().CheckedByteSize();
  if (!bytes) return "while evaluating it";
  return StrCat("while evaluating it (its result, ", instruction.shape().ToString(false), ", is ",
                ByteCountText(static_cast<uint64_t>(*bytes)), ")");
}

[[noreturn]] void RefuseManualRegion(const Instruction& instruction, const Literal& operand) {
  GSPMD_USER_ERROR(DescribeInstruction(instruction),
                   ": manual (shard_map) regions cannot run on one device; the operand is ",
                   operand.shape().ToString(false), " but the result is ",
                   instruction.shape().ToString(false), " (run the partitioned program instead)");
}

Literal UnsignedScalar(int64_t value) {
  Literal literal(Shape(ElementType::kU32, {}));
  literal.data<uint32_t>()[0] = static_cast<uint32_t>(value);
  return literal;
}

Literal DimensionSize(const Instruction& instruction, const Literal& operand) {
  int64_t d = instruction.dimensions.empty() ? -1 : instruction.dimensions[0];
  if (d < 0 || d >= operand.shape().rank())
    GSPMD_USER_ERROR(DescribeInstruction(instruction), ": dimension ", d, " is out of range for ",
                     operand.shape().ToString(false));
  Literal literal(Shape(ElementType::kS32, {}));
  literal.data<int32_t>()[0] = static_cast<int32_t>(operand.shape().dim(d));
  return literal;
}

// map: applies a scalar computation to the operands element by element.
Literal EvaluateMap(const Instruction& instruction, std::span<const Literal* const> operands, Evaluator& evaluator) {
  const Shape& shape = instruction.shape();
  if (instruction.called_computations().size() != 1 || !shape.IsArray())
    GSPMD_USER_ERROR(DescribeInstruction(instruction), " needs one to_apply computation and an array result");
  std::vector<Literal> scalars;
  std::vector<const Literal*> pointers;
  for (const Literal* operand : operands) {
    if (!operand->shape().IsArray() || operand->shape().dims() != shape.dims())
      GSPMD_USER_ERROR(DescribeInstruction(instruction), ": operand ", operand->shape().ToString(false),
                       " does not have the result's dimensions");
    scalars.emplace_back(Shape(operand->element_type(), {}));
  }
  for (const Literal& scalar : scalars) pointers.push_back(&scalar);
  Literal result(Shape(shape.element_type(), shape.dims()));
  int64_t result_size = ElementByteSize(shape.element_type());
  const Computation& function = *instruction.called_computations()[0];
  for (int64_t i = 0; i < result.element_count(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      int64_t size = ElementByteSize(operands[k]->element_type());
      std::memcpy(scalars[k].raw(), operands[k]->raw() + i * size, static_cast<size_t>(size));
    }
    Literal value = evaluator.Call(function, pointers);
    if (!value.shape().IsArray() || value.element_type() != shape.element_type() || value.element_count() != 1)
      GSPMD_USER_ERROR(DescribeInstruction(instruction), ": the mapped computation must return a ",
                       ElementTypeName(shape.element_type()), " scalar");
    std::memcpy(result.raw() + i * result_size, value.raw(), static_cast<size_t>(result_size));
  }
  return result;
}

}  // namespace

struct Evaluator::State {
  std::unordered_map<const Computation*, std::unique_ptr<Plan>> plans;  // lookup only
  std::vector<std::unique_ptr<Frame>> frames;  // one per call depth, reused
  size_t depth = 0;
  // Collective-permutes started and not yet done, by the communicator's handle (kept in the
  // start's value), with the start that began each.
  std::map<int64_t, const Instruction*> permutes_in_flight;
  std::unique_ptr<LocalCommunicator> single_device;  // for async permutes without a communicator

  Communicator& AsyncCommunicator(const Instruction& instruction, const DeviceContext& context) {
    if (context.communicator != nullptr) return *context.communicator;
    if (context.num_partitions > 1)
      GSPMD_USER_ERROR(DescribeInstruction(instruction), ": a collective over ", context.num_partitions,
                       " partitions needs a communicator (run the program with the SPMD runtime)");
    if (!single_device) single_device = std::make_unique<LocalCommunicator>(1);
    return *single_device;
  }

  const Plan& PlanFor(const Computation& computation) {
    auto it = plans.find(&computation);
    if (it != plans.end()) return *it->second;
    auto plan = std::make_unique<Plan>(BuildPlan(computation));
    const Plan& result = *plan;
    plans.emplace(&computation, std::move(plan));
    return result;
  }

  // Evaluates a computation. Arguments are borrowed, or (when owned_arguments is not empty)
  // moved in so that the computation may hand their parts on without copying.
  Literal Run(Evaluator& self, const Computation& computation, std::span<const Literal* const> borrowed,
              std::span<Literal> owned_arguments);

 private:
  void EvaluateInto(Evaluator& self, const Plan& plan, Frame& frame, int32_t slot,
                    std::span<const Literal* const> operands);
};

namespace {

// Restores the frame depth (and frees the frame's values) however a Run ends.
class FrameScope {
 public:
  FrameScope(std::vector<std::unique_ptr<Frame>>& frames, size_t& depth) : depth_(depth) {
    if (frames.size() <= depth) frames.push_back(std::make_unique<Frame>());
    frame_ = frames[depth].get();
    ++depth_;
  }
  ~FrameScope() {
    frame_->Clear();
    --depth_;
  }
  Frame& frame() { return *frame_; }

 private:
  size_t& depth_;
  Frame* frame_;
};

}  // namespace

Literal Evaluator::State::Run(Evaluator& self, const Computation& computation,
                              std::span<const Literal* const> borrowed, std::span<Literal> owned_arguments) {
  const Plan& plan = PlanFor(computation);
  size_t argument_count = owned_arguments.empty() ? borrowed.size() : owned_arguments.size();
  if (static_cast<int64_t>(argument_count) != computation.num_parameters()) {
    GSPMD_USER_ERROR("computation '", computation.name(), "' takes ", computation.num_parameters(),
                     " arguments but was called with ", argument_count);
  }
  FrameScope scope(frames, depth);
  Frame& frame = scope.frame();
  frame.Reset(plan);
  for (size_t p = 0; p < plan.parameter_slot.size(); ++p) {
    int32_t slot = plan.parameter_slot[p];
    if (slot < 0) continue;
    if (owned_arguments.empty()) {
      frame.value[slot] = borrowed[p];
    } else {
      frame.Own(slot, std::move(owned_arguments[p]));
    }
  }
  std::vector<const Literal*>& operands = frame.operands;
  for (size_t i = 0; i < plan.order.size(); ++i) {
    int32_t slot = static_cast<int32_t>(i);
    if (plan.order[i]->opcode() == Opcode::kParameter) continue;
    operands.clear();
    for (int32_t k = plan.operand_begin[i]; k < plan.operand_begin[i + 1]; ++k)
      operands.push_back(frame.value[plan.operand_slots[k]]);
    WithInstructionContext(*plan.order[i], [&] {
      try {
        EvaluateInto(self, plan, frame, slot, operands);
      } catch (const std::bad_alloc& failure) {
        // A kernel's scratch or a copied value (values fail in AllocateZeroed with a UserError),
        // or a UserError whose message found no memory: name the instruction either way.
        char prefix[128];
        std::snprintf(prefix, sizeof(prefix), "%%%s: ", plan.order[i]->name().c_str());
        ThrowOutOfMemory(failure, [&] { return WhileEvaluating(*plan.order[i]); }, prefix);
      }
    });
    for (int32_t k = plan.operand_begin[i]; k < plan.operand_begin[i + 1]; ++k)
      frame.Release(plan.operand_slots[k]);
  }
  return frame.TakeOrCopy(plan.root_slot);
}

void Evaluator::State::EvaluateInto(Evaluator& self, const Plan& plan, Frame& frame, int32_t slot,
                                    std::span<const Literal* const> operands) {
  const Instruction& instruction = *plan.order[slot];
  const int32_t* operand_slots = plan.operand_slots.data() + plan.operand_begin[slot];
  switch (instruction.opcode()) {
    case Opcode::kConstant:
      if (!instruction.literal().has_value())
        GSPMD_USER_ERROR("the constant's value was elided in the HLO text ('{...}'), so it cannot be evaluated "
                         "(dump the module with its large constants)");
      frame.value[slot] = &*instruction.literal();
      return;
    case Opcode::kGetTupleElement: {
      const Literal& tuple = *operands[0];
      int64_t index = instruction.tuple_index;
      if (!tuple.shape().IsTuple() || index < 0 || index >= static_cast<int64_t>(tuple.tuple_elements().size()))
        GSPMD_USER_ERROR(DescribeInstruction(instruction), ": index ", index, " is out of range for ",
                         tuple.shape().ToString(false));
      const Literal& element = tuple.tuple_elements()[index];
      if (element.shape().IsToken() && !instruction.shape().IsToken())
        GSPMD_USER_ERROR(DescribeInstruction(instruction), ": element ", index, " of ", tuple.shape().ToString(false),
                         " holds no data (the buffers of a collective-permute-start in flight are read by its "
                         "collective-permute-done only)");
      frame.Alias(slot, operand_slots[0], &element);
      return;
    }
    case Opcode::kCollectivePermuteStart: {
      if (operands.size() != 1)
        GSPMD_USER_ERROR(DescribeInstruction(instruction), ": the runtime runs collective-permute-start of one "
                         "operand, not the combined form with slices");
      Communicator& communicator = AsyncCommunicator(instruction, self.context_);
      const int64_t handle =
          StartAsyncPermute(instruction, frame.TakeOrCopy(operand_slots[0]), self.context_, communicator);
      permutes_in_flight.emplace(handle, &instruction);
      // (operand, result, u32 contexts): the buffers stay with the communicator until the done,
      // so elements 0 and 1 are tokens; the contexts hold the handle.
      std::vector<Literal> elements;
      elements.emplace_back(Shape::Token());
      elements.emplace_back(Shape::Token());
      const uint64_t bits = static_cast<uint64_t>(handle);
      elements.push_back(Literal::Scalar(ElementType::kU32, static_cast<uint32_t>(bits)));
      elements.push_back(Literal::Scalar(ElementType::kU32, static_cast<uint32_t>(bits >> 32)));
      frame.Own(slot, Literal::Tuple(std::move(elements)));
      return;
    }
    case Opcode::kCollectivePermuteDone: {
      const Literal& started = *operands[0];
      const std::vector<Literal>& elements = started.tuple_elements();
      const bool holds_handle = started.shape().IsTuple() && elements.size() == 4 && elements[0].shape().IsToken() &&
                                elements[2].element_type() == ElementType::kU32 &&
                                elements[3].element_type() == ElementType::kU32;
      const int64_t handle =
          holds_handle ? static_cast<int64_t>(static_cast<uint64_t>(elements[2].data<uint32_t>()[0]) |
                                              static_cast<uint64_t>(elements[3].data<uint32_t>()[0]) << 32)
                       : -1;
      auto it = permutes_in_flight.find(handle);
      if (it == permutes_in_flight.end())
        GSPMD_USER_ERROR(DescribeInstruction(instruction), ": its operand is not a collective-permute-start in "
                         "flight (a done runs once per start)");
      permutes_in_flight.erase(it);
      Literal result = FinishAsyncPermute(handle, self.context_, AsyncCommunicator(instruction, self.context_));
      if (!result.shape().Compatible(instruction.shape()))
        GSPMD_USER_ERROR(DescribeInstruction(instruction), " declares the shape ", instruction.shape().ToString(false),
                         " but the permute received ", result.shape().ToString(false));
      frame.Own(slot, std::move(result));
      return;
    }
    case Opcode::kTuple: {
      std::vector<Literal> elements;
      elements.reserve(operands.size());
      for (size_t k = 0; k < operands.size(); ++k) elements.push_back(frame.TakeOrCopy(operand_slots[k]));
      frame.Own(slot, Literal::Tuple(std::move(elements)));
      return;
    }
    case Opcode::kCall:
    case Opcode::kFusion: {
      if (instruction.called_computations().size() != 1)
        GSPMD_USER_ERROR(DescribeInstruction(instruction), " must call exactly one computation");
      frame.Own(slot, Run(self, *instruction.called_computations()[0], operands, {}));
      return;
    }
    case Opcode::kWhile: {
      if (instruction.called_computations().size() != 2 || operands.size() != 1)
        GSPMD_USER_ERROR(DescribeInstruction(instruction), " needs one operand, a condition and a body");
      const Computation& condition = *instruction.while_condition();
      const Computation& body = *instruction.while_body();
      Literal state = frame.TakeOrCopy(operand_slots[0]);
      while (true) {
        const Literal* state_pointer = &state;
        Literal keep_going = Run(self, condition, std::span<const Literal* const>(&state_pointer, 1), {});
        if (keep_going.element_type() != ElementType::kPred || keep_going.element_count() != 1)
          GSPMD_USER_ERROR(DescribeInstruction(instruction), ": the condition must return pred[], not ",
                           keep_going.shape().ToString(false));
        if (!keep_going.data<bool>()[0]) break;
        state = Run(self, body, {}, std::span<Literal>(&state, 1));
      }
      frame.Own(slot, std::move(state));
      return;
    }
    case Opcode::kConditional: {
      const auto& branches = instruction.called_computations();
      if (operands.empty() || branches.empty() || operands.size() != branches.size() + 1)
        GSPMD_USER_ERROR(DescribeInstruction(instruction), " needs a selector and one operand per branch");
      const Literal& selector = *operands[0];
      size_t branch = 0;
      if (selector.element_type() == ElementType::kPred) {
        if (branches.size() != 2)
          GSPMD_USER_ERROR(DescribeInstruction(instruction), ": a pred selector needs two branches");
        branch = selector.data<bool>()[0] ? 0 : 1;
      } else if (IsInteger(selector.element_type()) && selector.element_count() == 1) {
        int64_t index = selector.GetAsInt64(0);
        branch = (index < 0 || index >= static_cast<int64_t>(branches.size())) ? branches.size() - 1
                                                                                 : static_cast<size_t>(index);
      } else {
        GSPMD_USER_ERROR(DescribeInstruction(instruction), ": the selector must be pred[] or s32[], not ",
                         selector.shape().ToString(false));
      }
      frame.Own(slot, Run(self, *branches[branch], operands.subspan(branch + 1, 1), {}));
      return;
    }
    case Opcode::kCustomCall:
      if (IsIdentityCustomCall(instruction.custom_call_target)) {
        if (operands.size() == 1 && operands[0]->shape().Compatible(instruction.shape())) {
          frame.Alias(slot, operand_slots[0], operands[0]);
          return;
        }
        if (operands.size() == 1) RefuseManualRegion(instruction, *operands[0]);
        bool tuple_of_operands = instruction.shape().IsTuple() &&
                                 instruction.shape().tuple_size() == static_cast<int64_t>(operands.size());
        for (size_t k = 0; tuple_of_operands && k < operands.size(); ++k) {
          if (!operands[k]->shape().Compatible(instruction.shape().tuple_shape(k)))
            RefuseManualRegion(instruction, *operands[k]);
        }
        if (!tuple_of_operands)
          GSPMD_USER_ERROR(DescribeInstruction(instruction), ": expected a result of the operands' shapes");
        std::vector<Literal> elements;
        for (size_t k = 0; k < operands.size(); ++k) elements.push_back(frame.TakeOrCopy(operand_slots[k]));
        frame.Own(slot, Literal::Tuple(std::move(elements)));
        return;
      }
      break;
    default:
      if (IsPassThrough(instruction)) {
        frame.Alias(slot, operand_slots[0], operands[0]);
        return;
      }
      break;
  }
  Literal result = self.EvaluateInstruction(instruction, operands);
  if (!result.shape().Compatible(instruction.shape())) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction), " declares the shape ", instruction.shape().ToString(false),
                     " but its operands give ", result.shape().ToString(false));
  }
  frame.Own(slot, std::move(result));
}

Evaluator::Evaluator(const Module& module, DeviceContext context)
    : module_(module), context_(context), state_(std::make_unique<State>()) {}

Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;

Literal Evaluator::Run(std::span<const Literal> arguments) {
  const Computation* entry = module_.entry();
  if (entry == nullptr) GSPMD_USER_ERROR("module '", module_.name(), "' has no ENTRY computation");
  if (static_cast<int64_t>(arguments.size()) != entry->num_parameters()) {
    GSPMD_USER_ERROR("the entry computation '", entry->name(), "' takes ", entry->num_parameters(),
                     " arguments, got ", arguments.size());
  }
  std::vector<const Literal*> pointers;
  for (int64_t p = 0; p < entry->num_parameters(); ++p) {
    const Instruction* parameter = entry->parameter(p);
    if (parameter == nullptr) GSPMD_USER_ERROR("the entry computation has no parameter ", p);
    const Literal& argument = arguments[p];
    if (!argument.shape().Compatible(parameter->shape())) {
      GSPMD_USER_ERROR("argument ", p, " for parameter '", parameter->name(), "' has shape ",
                       argument.shape().ToString(false), " but the entry expects ",
                       parameter->shape().ToString(false));
    }
    pointers.push_back(&argument);
  }
  state_->permutes_in_flight.clear();
  // Allocations outside any instruction (frames, a result copied out of a parameter).
  Literal result = ReportingOutOfMemory(StrCat("while running the entry computation '", entry->name(), "'"),
                                        [&] { return state_->Run(*this, *entry, pointers, {}); });
  if (!state_->permutes_in_flight.empty()) {
    const Instruction& start = *state_->permutes_in_flight.begin()->second;
    ThrowInstructionError(start, StrCat("the program ended with ", state_->permutes_in_flight.size(),
                                        " collective-permute(s) in flight: no collective-permute-done finished "
                                        "this collective-permute-start"));
  }
  return result;
}

Literal Evaluator::Call(const Computation& computation, std::span<const Literal* const> arguments) {
  return state_->Run(*this, computation, arguments, {});
}

Literal Evaluator::EvaluateInstruction(const Instruction& instruction, std::span<const Literal* const> operands) {
  Opcode opcode = instruction.opcode();
  auto expect_operands = [&](size_t count) {
    if (operands.size() < count)
      GSPMD_USER_ERROR(DescribeInstruction(instruction), " expects ", count, " operands, got ", operands.size());
  };
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return EvaluateElementwise(instruction, operands);
  if (IsCollective(opcode)) return EvaluateCollective(instruction, operands, context_, *this);
  switch (opcode) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
      return EvaluateElementwise(instruction, operands);
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kCopy:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kIota:
      return EvaluateShapeOp(instruction, operands);
    case Opcode::kDot:
      expect_operands(2);
      return EvaluateDot(instruction, *operands[0], *operands[1]);
    case Opcode::kConvolution:
      expect_operands(2);
      return EvaluateConvolution(instruction, *operands[0], *operands[1]);
    case Opcode::kReduce:
      return EvaluateReduce(instruction, operands, *this);
    case Opcode::kReduceWindow:
      return EvaluateReduceWindow(instruction, operands, *this);
    case Opcode::kSelectAndScatter:
      return EvaluateSelectAndScatter(instruction, operands, *this);
    case Opcode::kGather:
      expect_operands(2);
      return EvaluateGather(instruction, *operands[0], *operands[1]);
    case Opcode::kScatter:
      return EvaluateScatter(instruction, operands, *this);
    case Opcode::kSort:
      return EvaluateSort(instruction, operands, *this);
    case Opcode::kTopK:
      expect_operands(1);
      return EvaluateTopK(instruction, *operands[0]);
    case Opcode::kPartitionId:
      return UnsignedScalar(context_.partition_id);
    case Opcode::kReplicaId:
      return UnsignedScalar(context_.replica_id);
    case Opcode::kAfterAll:
      return Literal(Shape::Token());
    case Opcode::kMap:
      return EvaluateMap(instruction, operands, *this);
    case Opcode::kGetDimensionSize:
      expect_operands(1);
      return DimensionSize(instruction, *operands[0]);
    case Opcode::kRngBitGenerator:
      expect_operands(1);
      return EvaluateRngBitGenerator(instruction, *operands[0]);
    case Opcode::kRng:
      expect_operands(2);
      return EvaluateRng(instruction, *operands[0], *operands[1], rng_counter_);
    case Opcode::kCustomCall:
      if (instruction.custom_call_target == "TopK") {
        expect_operands(1);
        return EvaluateTopK(instruction, *operands[0]);
      }
      GSPMD_USER_ERROR(DescribeInstruction(instruction), ": the interpreter does not support custom-call target \"",
                       instruction.custom_call_target, "\"");
    default:
      break;
  }
  if (IsAsyncOrHostTransfer(opcode))
    GSPMD_USER_ERROR("cannot run ", DescribeInstruction(instruction),
                     ": host transfers (infeed, outfeed, send, recv) and asynchronous ops (but "
                     "collective-permute-start and -done) are parsed, verified, printed and partitioned, but the "
                     "interpreter and runtime have nothing to transfer to");
  GSPMD_USER_ERROR("cannot run ", DescribeInstruction(instruction), ": the interpreter does not implement it");
}

Literal EvaluateModule(const Module& module, std::span<const Literal> arguments) {
  Evaluator evaluator(module);
  return evaluator.Run(arguments);
}

namespace {

void FlattenInto(Literal value, std::vector<Literal>& out) {
  if (!value.shape().IsTuple()) {
    out.push_back(std::move(value));
    return;
  }
  for (Literal& element : value.tuple_elements()) FlattenInto(std::move(element), out);
}

}  // namespace

std::vector<Literal> FlattenTuple(Literal value) {
  std::vector<Literal> leaves;
  FlattenInto(std::move(value), leaves);
  return leaves;
}

}  // namespace gspmd
