// Exact algebraic simplification of a partitioned module (see simplify.h).
#include "partitioner/simplify.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/computation.h"
#include "ir/hlo_builder.h"
#include "ir/instruction.h"
#include "ir/sdy_custom_calls.h"
#include "partitioner/slice_folds.h"

namespace gspmd {
std::optional<Literal> SplatOf(const Literal& literal) {
  const int64_t count = literal.element_count();
  if (!literal.shape().IsArray() || count == 0) return std::nullopt;
  const int64_t width = literal.byte_size() / count;
  if (width <= 0 || width * count != literal.byte_size()) return std::nullopt;
  for (int64_t i = 1; i < count; ++i)
    if (std::memcmp(literal.raw(), literal.raw() + i * width, static_cast<size_t>(width)) != 0) return std::nullopt;
  Literal scalar(Shape(literal.element_type(), {}));
  if (scalar.byte_size() != width) return std::nullopt;
  std::memcpy(scalar.raw(), literal.raw(), static_cast<size_t>(width));
  return scalar;
}

Instruction* AddSplatAfter(Computation& computation, const Instruction& like, Literal value, NameUniquer& names) {
  auto constant = std::make_unique<Instruction>(Opcode::kConstant, Shape(like.shape().element_type(), {}),
                                                names.Unique("constant"));
  constant->mutable_literal() = std::move(value);
  constant->CopySourceFrom(like);
  Instruction* scalar = computation.AddInstructionAfter(std::move(constant), &like);
  if (like.shape().rank() == 0) return scalar;
  auto broadcast = std::make_unique<Instruction>(Opcode::kBroadcast, like.shape(), names.Unique("broadcast"));
  broadcast->AppendOperand(scalar);
  broadcast->CopySourceFrom(like);
  return computation.AddInstructionAfter(std::move(broadcast), scalar);
}

Instruction* IdempotentOperand(const Instruction& instruction) {
  const Opcode op = instruction.opcode();
  if (op != Opcode::kMaximum && op != Opcode::kMinimum && op != Opcode::kAnd && op != Opcode::kOr) return nullptr;
  if (instruction.operand_count() != 2 || instruction.operand(0) != instruction.operand(1)) return nullptr;
  Instruction* x = instruction.operand(0);
  return x->shape() == instruction.shape() ? x : nullptr;
}

namespace {

// The one value every element of `instruction` has, as a scalar literal of its element type:
// a constant whose elements are bitwise equal, or a broadcast of such a value.
std::optional<Literal> SplatValue(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.element_count() == 0) return std::nullopt;
  if (instruction.opcode() == Opcode::kBroadcast) return SplatValue(*instruction.operand(0));
  if (instruction.opcode() != Opcode::kConstant || !instruction.literal().has_value()) return std::nullopt;
  const Literal& literal = *instruction.literal();
  if (!literal.shape().IsArray() || literal.element_count() != shape.element_count()) return std::nullopt;
  return SplatOf(literal);
}

// A sort along a dim of one element: every row is already in order, so it returns its
// operands (XLA's simplifier folds it; JAX's argsort of such a dim is then its iota, zeros).
bool SortOfOneElementRows(const Instruction& sort) {
  if (sort.opcode() != Opcode::kSort || sort.dimensions.size() != 1 || sort.operand_count() == 0) return false;
  const Shape& shape = sort.operand(0)->shape();
  const int64_t d = sort.dimensions[0];
  return shape.IsArray() && d >= 0 && d < shape.rank() && shape.dims()[d] == 1;
}

// Already in the form a fold makes (a scalar constant, or a broadcast of one).
bool IsCanonicalSplat(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kConstant) return instruction.shape().IsArray() && instruction.shape().rank() == 0;
  return instruction.opcode() == Opcode::kBroadcast && instruction.operand(0)->opcode() == Opcode::kConstant &&
         instruction.operand(0)->shape().rank() == 0;
}

// The reducer's opcode when it is one binary op of its two parameters.
std::optional<Opcode> ReducerOp(const Instruction& instruction) {
  if (instruction.called_computations().size() != 1) return std::nullopt;
  const Computation* reducer = instruction.called_computations()[0];
  const Instruction* root = reducer->root();
  if (reducer->num_parameters() != 2 || root == nullptr || root->operand_count() != 2) return std::nullopt;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  const bool params = a->opcode() == Opcode::kParameter && b->opcode() == Opcode::kParameter && a != b;
  return params ? std::optional<Opcode>(root->opcode()) : std::nullopt;
}

// A sum of zeros of one sign is that zero, exactly (integers, and +0 + +0 or -0 + -0).
bool IsZeroSum(const Instruction& instruction, const Literal& value) {
  return ReducerOp(instruction) == Opcode::kAdd && value.shape().rank() == 0 && value.GetAsDouble(0) == 0.0;
}

// The reducer's opcode when it is and/or/maximum/minimum of its two parameters (op(c, c) = c).
std::optional<Opcode> IdempotentReducer(const Instruction& instruction) {
  std::optional<Opcode> op = ReducerOp(instruction);
  if (op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kMaximum || op == Opcode::kMinimum) return op;
  return std::nullopt;
}

// Integer element types whose values fit an int64 exactly (u64 does not).
bool IsExactInt(ElementType type) {
  return type == ElementType::kPred || (IsInteger(type) && type != ElementType::kU64);
}

bool Compare(ComparisonDirection direction, int64_t a, int64_t b) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

// op(a, b) of two scalar literals of one integer or pred type; nullopt when not exact.
std::optional<Literal> CombineIdempotent(Opcode op, const Literal& a, const Literal& b) {
  if (a.BitwiseEquals(b)) return a;
  const ElementType type = a.element_type();
  if (!IsExactInt(type)) return std::nullopt;
  const int64_t x = a.GetAsInt64(0);
  const int64_t y = b.GetAsInt64(0);
  int64_t r = 0;
  switch (op) {
    case Opcode::kAnd: r = x & y; break;
    case Opcode::kOr: r = x | y; break;
    case Opcode::kMaximum: r = x > y ? x : y; break;
    case Opcode::kMinimum: r = x < y ? x : y; break;
    default: return std::nullopt;
  }
  Literal out(Shape(type, {}));
  out.SetFromInt64(0, r);
  return out;
}

Literal PredScalar(bool value) {
  Literal out(Shape(ElementType::kPred, {}));
  out.SetFromInt64(0, value ? 1 : 0);
  return out;
}

// Opcodes a called computation may hold for the call rules: no side effects, no collectives.
bool IsPureSimpleOp(Opcode op) {
  switch (op) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kSelect: case Opcode::kCompare:
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kConvert:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kNot: case Opcode::kXor: case Opcode::kAdd:
    case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kNegate: case Opcode::kAbs: case Opcode::kTuple: case Opcode::kGetTupleElement:
    case Opcode::kSlice: case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

class Simplifier {
 public:
  explicit Simplifier(Module& module) : module_(module) { names_.ReserveAll(module); }

  int64_t Run() {
    int64_t total = 0;
    for (int round = 0; round < 8; ++round) {
      int64_t changed = 0;
      for (const auto& computation : module_.computations()) changed += RunOn(*computation);
      total += changed;
      if (changed == 0) break;
    }
    return total;
  }

 private:
  int64_t RunOn(Computation& computation) {
    std::vector<Instruction*> order;
    order.reserve(computation.instructions().size());
    for (const auto& owned : computation.instructions()) order.push_back(owned.get());
    int64_t changed = 0;
    for (Instruction* instruction : order) {
      if (instruction->users().empty() && computation.root() != instruction) continue;
      if (Instruction* same = ExistingValue(*instruction)) {
        if (Replace(instruction, same)) ++changed;
        continue;
      }
      if (IotaMovedAcross(*instruction)) {
        auto iota = std::make_unique<Instruction>(Opcode::kIota, instruction->shape(), names_.Unique("iota"));
        iota->iota_dimension = instruction->operand(0)->iota_dimension;
        iota->CopySourceFrom(*instruction);
        if (Replace(instruction, computation.AddInstructionAfter(std::move(iota), instruction))) ++changed;
        continue;
      }
      std::optional<Literal> splat = FoldedSplat(*instruction);
      if (!splat.has_value() || IsCanonicalSplat(*instruction)) continue;
      if (Replace(instruction, AddSplatAfter(computation, *instruction, std::move(*splat), names_))) ++changed;
    }
    return changed;
  }

  // An existing value `instruction` always equals (same shape and type), or nullptr.
  static Instruction* ExistingValue(const Instruction& instruction) {
    const Shape& shape = instruction.shape();
    auto same_shape = [&](const Instruction* other) { return other->shape() == shape; };
    switch (instruction.opcode()) {
      case Opcode::kSort:  // along a dim of one element: its operand
        return SortOfOneElementRows(instruction) && instruction.operand_count() == 1 &&
                       same_shape(instruction.operand(0))
                   ? instruction.operand(0)
                   : nullptr;
      case Opcode::kGetTupleElement: {  // of a tuple: that element; of such a sort: its operand
        Instruction* tuple = instruction.operand(0);
        if (SortOfOneElementRows(*tuple) && instruction.tuple_index >= 0 &&
            instruction.tuple_index < tuple->operand_count()) {
          Instruction* operand = tuple->operand(instruction.tuple_index);
          return same_shape(operand) ? operand : nullptr;
        }
        if (tuple->opcode() != Opcode::kTuple || instruction.tuple_index < 0 ||
            instruction.tuple_index >= tuple->operand_count())
          return nullptr;
        Instruction* element = tuple->operand(instruction.tuple_index);
        return same_shape(element) ? element : nullptr;
      }
      case Opcode::kSelect: {
        Instruction* on_true = instruction.operand(1);
        Instruction* on_false = instruction.operand(2);
        if (on_true == on_false && same_shape(on_true)) return on_true;
        if (std::optional<Literal> p = SplatValue(*instruction.operand(0))) {
          Instruction* chosen = p->GetAsInt64(0) != 0 ? on_true : on_false;
          if (same_shape(chosen)) return chosen;
        }
        return nullptr;
      }
      case Opcode::kDynamicUpdateSlice: {
        Instruction* update = instruction.operand(1);
        return same_shape(update) ? update : nullptr;
      }
      case Opcode::kMaximum:
      case Opcode::kMinimum:
      case Opcode::kAnd:
      case Opcode::kOr:
        // Oracle seed 142255: the minimum of a value with itself kept a gather XLA's
        // simplifier drops.
        return IdempotentOperand(instruction);
      case Opcode::kCall:
        return CallValue(instruction);
      default:
        return nullptr;
    }
  }

  // A call whose result is one of its operands whatever the values.
  static Instruction* CallValue(const Instruction& call) {
    if (call.called_computations().size() != 1) return nullptr;
    const Computation* callee = call.called_computations()[0];
    for (const auto& owned : callee->instructions())
      if (!IsPureSimpleOp(owned->opcode())) return nullptr;
    const Instruction* root = callee->root();
    if (root == nullptr) return nullptr;
    auto operand_of = [&](const Instruction* parameter) -> Instruction* {
      if (parameter->opcode() != Opcode::kParameter) return nullptr;
      const int64_t k = parameter->parameter_number;
      return k < call.operand_count() ? call.operand(k) : nullptr;
    };
    Instruction* value = nullptr;
    if (root->opcode() == Opcode::kParameter) {
      value = operand_of(root);
    } else if (root->opcode() == Opcode::kSelect) {
      Instruction* a = operand_of(root->operand(1));
      Instruction* b = operand_of(root->operand(2));
      if (a != nullptr && a == b) value = a;
    }
    return value != nullptr && value->shape() == call.shape() ? value : nullptr;
  }

  // An all-gather or dynamic-slice of an iota that leaves its iota dim whole, or a slice that
  // cuts it from 0 with stride 1: an iota of the result's shape. An iota is the same on every
  // device, so gathering it along another dim only repeats it (oracle seed 20025: an argmax's
  // index iota, sharded with its rows and gathered back for a replicated reduce).
  static bool IotaMovedAcross(const Instruction& instruction) {
    const Opcode opcode = instruction.opcode();
    if (opcode != Opcode::kAllGather && opcode != Opcode::kSlice && opcode != Opcode::kDynamicSlice) return false;
    const Instruction& iota = *instruction.operand(0);
    if (iota.opcode() != Opcode::kIota || !iota.shape().IsArray() || !instruction.shape().IsArray() ||
        iota.shape().rank() != instruction.shape().rank() || iota.shape().element_type() != instruction.shape().element_type())
      return false;
    const int64_t d = iota.iota_dimension;
    if (d < 0 || d >= iota.shape().rank()) return false;
    if (opcode == Opcode::kSlice)  // the iota dim cut from 0 with stride 1: a shorter iota
      return instruction.slice().size() > static_cast<size_t>(d) && instruction.slice()[d].start == 0 &&
             instruction.slice()[d].stride == 1;
    // all-gather: a dim that keeps its size is not the gathered one; dynamic-slice: d whole,
    // so its start there clamps to 0.
    return iota.shape().dims()[d] == instruction.shape().dims()[d];
  }

  // Whether every device of the module is the target of one of the permute's pairs.
  bool EveryDeviceTargeted(const Instruction& permute) const {
    const int64_t devices = module_.num_partitions();
    std::vector<bool> targeted(static_cast<size_t>(std::max<int64_t>(devices, 0)), false);
    for (const SourceTargetPair& pair : permute.source_target_pairs())
      if (pair.target >= 0 && pair.target < devices) targeted[pair.target] = true;
    return devices > 0 && std::all_of(targeted.begin(), targeted.end(), [](bool t) { return t; });
  }

  // The splat value `instruction` computes, when its operands make it one.
  std::optional<Literal> FoldedSplat(const Instruction& instruction) const {
    const Shape& shape = instruction.shape();
    if (!shape.IsArray() || shape.element_count() == 0) return std::nullopt;
    const ElementType type = shape.element_type();
    auto operand_splat = [&](int64_t i) { return SplatValue(*instruction.operand(i)); };
    auto keep_type = [&](std::optional<Literal> v) -> std::optional<Literal> {
      if (v && v->element_type() == type) return v;
      return std::nullopt;
    };
    switch (instruction.opcode()) {
      case Opcode::kBroadcast:    // of a broadcast (a scalar constant's is canonical already)
        if (instruction.operand(0)->opcode() != Opcode::kBroadcast) return std::nullopt;
        return SplatValue(instruction);
      case Opcode::kReshape:
      case Opcode::kTranspose:
      case Opcode::kCopy:
      case Opcode::kSlice:
      case Opcode::kReverse:
      case Opcode::kDynamicSlice:
        return keep_type(operand_splat(0));
      case Opcode::kAllGather:
      case Opcode::kAllToAll:
        if (instruction.operand_count() != 1) return std::nullopt;
        return keep_type(operand_splat(0));
      case Opcode::kCollectivePermute: {
        // Every device receives the splat from some device, or the splat is zeros (what a
        // device no pair targets gets): oracle seed 114611, a zero index moved for 4 B.
        if (instruction.operand_count() != 1) return std::nullopt;
        std::optional<Literal> v = keep_type(operand_splat(0));
        if (!v || v->BitwiseEquals(Literal(Shape(type, {}))) || EveryDeviceTargeted(instruction)) return v;
        return std::nullopt;
      }
      case Opcode::kAllReduce:
      case Opcode::kReduceScatter: {
        if (instruction.operand_count() != 1) return std::nullopt;
        std::optional<Literal> v = keep_type(operand_splat(0));
        if (!v || !(IdempotentReducer(instruction) || IsZeroSum(instruction, *v))) return std::nullopt;
        return v;
      }
      case Opcode::kConvert: {
        // Only conversions that are exact whatever the rounding: from pred, or between
        // integer types (which wrap as two's complement).
        std::optional<Literal> v = operand_splat(0);
        if (!v || !IsExactInt(type) || !IsExactInt(v->element_type())) return std::nullopt;
        return v->Convert(type);
      }
      case Opcode::kPad:
      case Opcode::kConcatenate:
      case Opcode::kDynamicUpdateSlice: {
        // Every operand that holds data (not the start indices) is the same splat.
        const int64_t data = instruction.opcode() == Opcode::kConcatenate ? instruction.operand_count() : 2;
        std::optional<Literal> first;
        for (int64_t i = 0; i < data; ++i) {
          const Instruction* operand = instruction.operand(i);
          if (operand->shape().element_count() == 0 && instruction.opcode() == Opcode::kConcatenate) continue;
          std::optional<Literal> v = SplatValue(*operand);
          if (!v || (first && !first->BitwiseEquals(*v))) return std::nullopt;
          if (!first) first = std::move(v);
        }
        return keep_type(std::move(first));
      }
      case Opcode::kReduce: {
        if (instruction.operand_count() != 2) return std::nullopt;
        std::optional<Opcode> op = IdempotentReducer(instruction);
        std::optional<Literal> v = operand_splat(0);
        std::optional<Literal> init = SplatValue(*instruction.operand(1));
        if (!v || !init || v->element_type() != type || init->element_type() != type) return std::nullopt;
        if (IsZeroSum(instruction, *v) && v->BitwiseEquals(*init)) return v;
        if (!op) return std::nullopt;
        return CombineIdempotent(*op, *v, *init);
      }
      case Opcode::kCompare:
        return FoldedCompare(instruction);
      case Opcode::kSubtract:
      case Opcode::kXor:
        // x - x and x ^ x of integers are zeros whatever x holds (XLA's simplifier folds them;
        // oracle seed 112582: a gathered value only subtracted from itself, 112 B against 0).
        if (instruction.operand(0) != instruction.operand(1) || !IsExactInt(type)) return std::nullopt;
        return Literal(Shape(type, {}));
      case Opcode::kAnd:
      case Opcode::kOr:
      case Opcode::kMultiply:
        return AbsorbedSplat(instruction);
      case Opcode::kRemainder: {
        // An integer x % 1 (or % -1) is zeros whatever x holds (XLA's simplifier folds it;
        // oracle seed 140647: jnp.remainder by 1 of a broadcast input, gathered for 4 B).
        if (!IsExactInt(type) || type == ElementType::kPred) return std::nullopt;
        std::optional<Literal> divisor = keep_type(operand_splat(1));
        if (!divisor) return std::nullopt;
        const int64_t d = divisor->GetAsInt64(0);
        if (d != 1 && !(d == -1 && !IsUnsignedInteger(type))) return std::nullopt;
        return Literal(Shape(type, {}));
      }
      case Opcode::kDot: {
        // An integer dot with a zero operand is zeros (exact; a float one is not: 0 x inf).
        if (!IsExactInt(type)) return std::nullopt;
        for (int64_t i = 0; i < 2 && i < instruction.operand_count(); ++i) {
          std::optional<Literal> v = operand_splat(i);
          if (v && IsExactInt(v->element_type()) && v->GetAsInt64(0) == 0) return Literal(Shape(type, {}));
        }
        return std::nullopt;
      }
      case Opcode::kIota:  // along a dim of one element: all zeros
        if (instruction.iota_dimension < 0 || instruction.iota_dimension >= shape.rank() ||
            shape.dim(instruction.iota_dimension) != 1)
          return std::nullopt;
        return Literal(Shape(type, {}));
      case Opcode::kGetTupleElement:
        return ChosenSplatOfReduce(*instruction.operand(0), instruction.tuple_index, type);
      default:
        return std::nullopt;
    }
  }

  // Output k of a variadic reduce whose reducer's output k only chooses between its two
  // accumulators of k (the accumulated and the next: a select on anything, or either alone),
  // when input k and init k are the same splat: that splat (an argmin's or argmax's index over a
  // dim of one element, whose iota is all zeros, as its init is).
  static std::optional<Literal> ChosenSplatOfReduce(const Instruction& reduce, int64_t k, ElementType type) {
    if (reduce.opcode() != Opcode::kReduce || reduce.called_computations().size() != 1) return std::nullopt;
    const int64_t n = reduce.operand_count() / 2;
    if (n < 2 || 2 * n != reduce.operand_count() || k < 0 || k >= n) return std::nullopt;
    std::optional<Literal> v = SplatValue(*reduce.operand(k));
    std::optional<Literal> init = SplatValue(*reduce.operand(n + k));
    if (!v || !init || v->element_type() != type || !v->BitwiseEquals(*init)) return std::nullopt;
    const Computation* reducer = reduce.called_computations()[0];
    const Instruction* root = reducer->root();
    if (root == nullptr || root->opcode() != Opcode::kTuple || root->operand_count() != n ||
        reducer->num_parameters() != 2 * n)
      return std::nullopt;
    auto accumulator = [&](const Instruction* value) {
      return value == reducer->parameter(k) || value == reducer->parameter(n + k);
    };
    const Instruction* out = root->operand(k);
    if (accumulator(out)) return v;
    if (out->opcode() == Opcode::kSelect && accumulator(out->operand(1)) && accumulator(out->operand(2))) return v;
    return std::nullopt;
  }

  // x & 0, x * 0 and (pred or signed integers) x | all-ones, with either operand that splat:
  // that splat, whatever x holds (XLA's simplifier folds them; oracle seed 118244: a mask
  // and-ed with a self-compare that is false everywhere moved its halo and a gather, XLA
  // nothing). Integers and preds only: a float x * 0 is NaN for inf or NaN.
  static std::optional<Literal> AbsorbedSplat(const Instruction& instruction) {
    const ElementType type = instruction.shape().element_type();
    if (!IsExactInt(type) || instruction.operand_count() != 2) return std::nullopt;
    const Opcode op = instruction.opcode();
    for (int64_t i = 0; i < 2; ++i) {
      std::optional<Literal> v = SplatValue(*instruction.operand(i));
      if (!v || v->element_type() != type) continue;
      const int64_t x = v->GetAsInt64(0);
      const bool all_ones = type == ElementType::kPred ? x == 1 : !IsUnsignedInteger(type) && x == -1;
      if ((op == Opcode::kOr && all_ones) || (op != Opcode::kOr && x == 0)) return v;
    }
    return std::nullopt;
  }

  static std::optional<Literal> FoldedCompare(const Instruction& compare) {
    const Instruction* a = compare.operand(0);
    const Instruction* b = compare.operand(1);
    const ElementType type = a->shape().element_type();
    if (!IsExactInt(type) || compare.shape().element_type() != ElementType::kPred) return std::nullopt;
    const ComparisonType how = compare.comparison_type;
    const bool is_unsigned = type == ElementType::kPred || IsUnsignedInteger(type);
    if (how == ComparisonType::kFloat || how == ComparisonType::kTotalOrder) return std::nullopt;
    if ((how == ComparisonType::kSigned && is_unsigned) || (how == ComparisonType::kUnsigned && !is_unsigned))
      return std::nullopt;
    if (a == b) return PredScalar(Compare(compare.comparison_direction, 0, 0));
    std::optional<Literal> x = SplatValue(*a);
    std::optional<Literal> y = SplatValue(*b);
    if (!x || !y) return std::nullopt;
    // pred and unsigned compare as unsigned, which int64 values of these types do too.
    return PredScalar(Compare(compare.comparison_direction, x->GetAsInt64(0), y->GetAsInt64(0)));
  }


  // Every use of `old` takes `replacement`. The root's sharding (the output contract) moves
  // with it, or to a copy of it when it is a parameter or has a sharding of its own.
  bool Replace(Instruction* old, Instruction* replacement) {
    if (old == replacement) return false;
    Computation* computation = old->parent();
    if (computation->root() == old && old->sharding().has_value()) {
      if (replacement->opcode() == Opcode::kParameter || replacement->sharding().has_value()) {
        // The result keeps its own value: a copy carries the sharding.
        auto copy = std::make_unique<Instruction>(Opcode::kCopy, replacement->shape(), names_.Unique("copy"));
        copy->AppendOperand(replacement);
        copy->CopySourceFrom(*old);
        replacement = computation->AddInstructionAfter(std::move(copy), old);
      }
      replacement->set_sharding(old->sharding());
      old->set_sharding(std::nullopt);
    }
    old->ReplaceAllUsesWith(replacement);
    return true;
  }

  Module& module_;
  NameUniquer names_;
};

// Copies `call`'s computation into its caller in place of the call. Collectives get fresh
// channel ids (a computation called twice would otherwise repeat them).
void InlineCall(Instruction* call, NameUniquer& names, int64_t& next_channel) {
  Computation* caller = call->parent();
  const Computation* callee = call->called_computations()[0];
  std::unordered_map<const Instruction*, Instruction*> value;
  for (int64_t i = 0; i < callee->num_parameters(); ++i) value[callee->parameter(i)] = call->operand(i);
  const Instruction* position = call;
  for (const Instruction* original : callee->MakePostOrder()) {
    if (original->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    operands.reserve(original->operands().size());
    for (const Instruction* operand : original->operands()) operands.push_back(value.at(operand));
    std::unique_ptr<Instruction> clone = original->CloneWithNewOperands(original->shape(), operands);
    clone->set_name(names.Unique(original->name()));
    if (clone->channel_id.has_value()) clone->channel_id = next_channel++;
    // Placed before the call, in the callee's order.
    Instruction* placed = caller->AddInstructionAfter(std::move(clone), position);
    value[original] = placed;
    position = placed;
  }
  Instruction* result = value.at(callee->root());
  // The call's uses (and a root's output sharding, which a copy carries) move to the result.
  if (caller->root() == call && call->sharding().has_value()) {
    auto copy = std::make_unique<Instruction>(Opcode::kCopy, result->shape(), names.Unique("copy"));
    copy->AppendOperand(result);
    copy->set_sharding(call->sharding());
    result = caller->AddInstructionAfter(std::move(copy), position);
    call->set_sharding(std::nullopt);
  }
  call->ReplaceAllUsesWith(result);
}

}  // namespace

int64_t SimplifyPartitionedModule(Module& module) { return Simplifier(module).Run(); }

namespace {

// Inlines every call `inlinable` accepts (and that is used), in rounds until none is left (a
// callee's own calls come next round). Returns how many were inlined.
int64_t InlineCallsWhere(Module& module, const std::function<bool(const Instruction&)>& inlinable) {
  NameUniquer names;
  names.ReserveAll(module);
  int64_t next_channel = 1;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->channel_id.has_value()) next_channel = std::max(next_channel, *instruction->channel_id + 1);
  int64_t inlined = 0;
  for (int round = 0; round < 16; ++round) {
    std::vector<Instruction*> calls;
    for (const auto& computation : module.computations())
      for (const auto& instruction : computation->instructions())
        if (inlinable(*instruction) && (!instruction->users().empty() || computation->root() == instruction.get()))
          calls.push_back(instruction.get());
    if (calls.empty()) break;
    for (Instruction* call : calls) InlineCall(call, names, next_channel);
    inlined += static_cast<int64_t>(calls.size());
    for (const auto& computation : module.computations()) computation->RemoveDeadInstructions();
    module.RemoveUnusedComputations();
  }
  return inlined;
}

}  // namespace

int64_t InlinePartitionedCalls(Module& module) {
  return InlineCallsWhere(module, [](const Instruction& instruction) {
    return instruction.opcode() == Opcode::kCall && instruction.called_computations().size() == 1 &&
           instruction.frontend_attributes.empty();
  });
}

namespace {

// Whether `computation` and what it calls hold nothing but per-element math and data movement.
bool PureComputation(const Computation& computation, int depth = 0) {
  if (depth > 32) return false;
  for (const auto& instruction : computation.instructions()) {
    const Opcode opcode = instruction->opcode();
    if (opcode == Opcode::kCustomCall || opcode == Opcode::kPartitionId || opcode == Opcode::kReplicaId ||
        IsCollective(opcode) || instruction->sharding().has_value() || !instruction->frontend_attributes.empty())
      return false;
    for (const Computation* called : instruction->called_computations())
      if (!PureComputation(*called, depth + 1)) return false;
  }
  return true;
}

// A sharding annotation on a value (a constraint, or Shardy's function result): it does not
// make the call that produces the value a region of its own.
bool IsPlainShardingAnnotation(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  const std::string_view target = instruction.custom_call_target;
  return target == "Sharding" || SdyTargetName(target) == "FuncResultSharding";
}

bool InlinableBeforePropagation(const Instruction& call) {
  if (call.opcode() != Opcode::kCall || call.called_computations().size() != 1 || call.sharding().has_value() ||
      !call.frontend_attributes.empty())
    return false;
  for (const Instruction* operand : call.operands())
    if (operand->opcode() == Opcode::kCustomCall) return false;
  // A call whose result only a sharding annotation reads is an ordinary helper (oracle seed
  // 20135: a cumsum returned as a split result); other custom-call users (a manual region's
  // boundary) keep it a call.
  for (const Instruction* user : call.users())
    if (user->opcode() == Opcode::kCustomCall && !IsPlainShardingAnnotation(*user)) return false;
  return PureComputation(*call.called_computations()[0]);
}

}  // namespace

int64_t InlineCallsBeforePropagation(Module& module) {
  return InlineCallsWhere(module, InlinableBeforePropagation);
}

int64_t FoldReshapesBeforePropagation(Module& module) {
  int64_t folded = 0;
  auto plain = [](const Instruction* instruction) {
    return instruction->opcode() == Opcode::kReshape && FoldableBeforePropagation(*instruction);
  };
  for (const auto& computation : module.computations()) {
    for (Instruction* instruction : computation->MakePostOrder()) {
      if (!plain(instruction)) continue;
      // A reshape back to the shape before a reshape (reshape(reshape(x)) shaped as x), or to
      // the shape it has, is x. Other chains stay: through their middle shapes propagation
      // can find better shardings than from their ends (oracle seed 20126 lost 6.9x when
      // [8,42] -> [336] -> [8,6,7] was read as one reshape).
      const Instruction* operand = instruction->operand(0);
      Instruction* same = operand->shape() == instruction->shape() ? instruction->operand(0)
                          : plain(operand) && operand->operand(0)->shape() == instruction->shape()
                              ? operand->operand(0)
                              : nullptr;
      if (same != nullptr && instruction != computation->root()) {
        instruction->ReplaceAllUsesWith(same);
        ++folded;
      }
    }
  }
  return folded;
}

namespace {

// A top-k of k = 1 over rows of one element: the values are its operand and the indices
// zeros (XLA's simplifier folds it likewise; a gather feeding it only for its indices is then
// dead: oracle seed 40288, 20 B against XLA's 0). Its element users take those instead.
bool FoldTopKOfOneElementRows(Computation& computation, Instruction& topk, NameUniquer& names) {
  if (topk.opcode() != Opcode::kTopK || topk.operand_count() != 1 || topk.sharding().has_value() ||
      !topk.frontend_attributes.empty() || topk.k != 1 || !topk.shape().IsTuple() || topk.shape().tuple_size() != 2)
    return false;
  const Shape& operand = topk.operand(0)->shape();
  if (!operand.IsArray() || operand.rank() < 1 || operand.dims().back() != 1 || &topk == computation.root()) return false;
  for (const Instruction* user : topk.users())
    if (user->opcode() != Opcode::kGetTupleElement || user->sharding().has_value() || user->tuple_index < 0 ||
        user->tuple_index > 1)
      return false;
  const Shape& indices = topk.shape().tuple_shape(1);
  auto zero = std::make_unique<Instruction>(Opcode::kConstant, Shape(indices.element_type(), {}), names.Unique("constant"));
  zero->mutable_literal() = Literal::Scalar(indices.element_type(), 0);
  zero->CopySourceFrom(topk);
  Instruction* scalar = computation.AddInstructionAfter(std::move(zero), &topk);
  auto zeros = std::make_unique<Instruction>(Opcode::kBroadcast, indices, names.Unique("broadcast"));
  zeros->AppendOperand(scalar);
  zeros->CopySourceFrom(topk);
  Instruction* broadcast = computation.AddInstructionAfter(std::move(zeros), scalar);
  const std::vector<Instruction*> users = topk.users();
  for (Instruction* element : users) {
    Instruction* replacement = element->tuple_index == 0 ? topk.operand(0) : broadcast;
    element->ReplaceAllUsesWith(replacement);
    // A result with no sharding of its own (oracle seed 120931: the indices of a top-1 of one
    // element, returned; XLA folds them to 0 and drops the 4 B all-reduce that fed the values).
    if (element == computation.root()) computation.set_root(replacement);
  }
  return true;
}

// A variadic sort's operands that its comparator never reads and whose sorted values nobody
// uses ride along for nothing: XLA's simplifier drops them, and so the values that made them
// (oracle seed 112363: a second operand built from a split input, gathered for 60 B against
// XLA's 0). The sort is rebuilt on the rest, with a comparator of their parameters only; a
// sort left with one operand returns it as an array.
bool DropUnreadSortOperands(Computation& computation, Instruction& sort, NameUniquer& names) {
  if (sort.opcode() != Opcode::kSort || !sort.shape().IsTuple() || sort.sharding().has_value() ||
      !sort.frontend_attributes.empty() || &sort == computation.root() || sort.called_computations().size() != 1)
    return false;
  const int64_t n = sort.operand_count();
  const Computation* comparator = sort.called_computations()[0];
  if (comparator->num_parameters() != 2 * n || sort.shape().tuple_size() != n) return false;
  std::vector<bool> keep(n, false);
  for (const Instruction* user : sort.users()) {
    if (user->opcode() != Opcode::kGetTupleElement || user->sharding().has_value() || user == computation.root() ||
        user->tuple_index < 0 || user->tuple_index >= n)
      return false;
    if (!user->users().empty()) keep[user->tuple_index] = true;  // an element read by nothing is dead
  }
  std::vector<int64_t> kept;
  for (int64_t k = 0; k < n; ++k) {
    const Instruction* a = comparator->parameter(2 * k);
    const Instruction* b = comparator->parameter(2 * k + 1);
    if (a == nullptr || b == nullptr) return false;
    if (keep[k] || !a->users().empty() || !b->users().empty()) kept.push_back(k);
  }
  if (kept.empty() || static_cast<int64_t>(kept.size()) == n) return false;

  auto compare = std::make_unique<Computation>(names.Unique(comparator->name()));
  std::unordered_map<const Instruction*, Instruction*> value;
  for (size_t j = 0; j < kept.size(); ++j) {
    for (int64_t side = 0; side < 2; ++side) {
      const Instruction* old = comparator->parameter(2 * kept[j] + side);
      auto parameter = std::make_unique<Instruction>(Opcode::kParameter, old->shape(), names.Unique(old->name()));
      parameter->parameter_number = static_cast<int64_t>(2 * j) + side;
      value[old] = compare->AddInstruction(std::move(parameter));
    }
  }
  for (const Instruction* original : comparator->MakePostOrder()) {
    if (original->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : original->operands()) operands.push_back(value.at(operand));
    std::unique_ptr<Instruction> clone = original->CloneWithNewOperands(original->shape(), operands);
    clone->set_name(names.Unique(original->name()));
    value[original] = compare->AddInstruction(std::move(clone));
  }
  compare->set_root(value.at(comparator->root()));
  Computation* rebuilt = computation.parent()->AddComputationFront(std::move(compare));

  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  for (int64_t k : kept) {
    operands.push_back(sort.operand(k));
    shapes.push_back(sort.shape().tuple_shape(k));
  }
  const bool single = kept.size() == 1;
  std::unique_ptr<Instruction> clone = sort.CloneWithNewOperands(single ? shapes[0] : Shape::Tuple(shapes), operands);
  clone->set_name(names.Unique(sort.name()));
  clone->set_called_computations({rebuilt});
  Instruction* narrower = computation.AddInstructionAfter(std::move(clone), &sort);
  const std::vector<Instruction*> users = sort.users();
  for (Instruction* element : users) {
    const int64_t j = std::find(kept.begin(), kept.end(), element->tuple_index) - kept.begin();
    if (j == static_cast<int64_t>(kept.size())) continue;  // a dead element of a dropped operand
    if (single) {
      element->ReplaceAllUsesWith(narrower);
      continue;
    }
    std::unique_ptr<Instruction> moved = element->CloneWithNewOperands(element->shape(), {narrower});
    moved->tuple_index = j;
    moved->set_name(names.Unique(element->name()));
    element->ReplaceAllUsesWith(computation.AddInstructionAfter(std::move(moved), narrower));
  }
  return true;
}

}  // namespace

int64_t FoldTrivialSortsBeforePropagation(Module& module) {
  int64_t folded = 0;
  NameUniquer names;
  names.ReserveAll(module);
  // DropUnreadSortOperands adds comparators to the module: walk a copy of its list.
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  for (Computation* computation : computations) {
    for (Instruction* sort : computation->MakePostOrder()) {
      if (FoldTopKOfOneElementRows(*computation, *sort, names) || DropUnreadSortOperands(*computation, *sort, names)) {
        ++folded;
        continue;
      }
      if (!SortOfOneElementRows(*sort) || sort->sharding().has_value() || !sort->frontend_attributes.empty()) continue;
      if (!sort->shape().IsTuple()) {
        sort->ReplaceAllUsesWith(sort->operand(0));
        if (sort == computation->root()) computation->set_root(sort->operand(0));
        ++folded;
        continue;
      }
      bool all_elements = sort != computation->root();
      for (const Instruction* user : sort->users())
        all_elements &= user->opcode() == Opcode::kGetTupleElement && !user->sharding().has_value() &&
                        user->tuple_index >= 0 && user->tuple_index < sort->operand_count();
      if (!all_elements) continue;
      const std::vector<Instruction*> users = sort->users();
      for (Instruction* element : users) {
        element->ReplaceAllUsesWith(sort->operand(element->tuple_index));
        if (element == computation->root()) computation->set_root(sort->operand(element->tuple_index));
      }
      ++folded;
    }
  }
  return folded;
}

int64_t RemoveDeadCodeBeforePropagation(Module& module) {
  int64_t before = 0;
  int64_t after = 0;
  for (const auto& computation : module.computations()) before += computation->instruction_count();
  for (const auto& computation : module.computations()) computation->RemoveDeadInstructions();
  module.RemoveUnusedComputations();
  for (const auto& computation : module.computations()) after += computation->instruction_count();
  return before - after;
}

}  // namespace gspmd
