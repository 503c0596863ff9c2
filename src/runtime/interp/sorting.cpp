// Sort (several operands permuted together along one dimension by a comparator computation)
// and top-k (the topk op and the TopK custom-call). A comparator that compares one key derived
// from each side (the value itself, or e.g. JAX's total-order key) sorts by keys computed
// once per element (sort_keys.h); any other is called per pair.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernel_call.h"
#include "runtime/interp/kernel_comparator.h"
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"
#include "runtime/interp/sort_keys.h"

namespace gspmd {
using namespace kernel;
namespace {

// The 1-d slices of an array along one dim: Count() slices of Length() elements, slice s
// starting at Base(s) with element stride Stride().
class Slices {
 public:
  Slices(const std::vector<int64_t>& dims, int64_t dim) {
    std::vector<int64_t> strides = RowMajorStrides(dims);
    length_ = dims[dim];
    stride_ = strides[dim];
    inner_ = stride_;
    count_ = length_ == 0 ? 0 : Product(dims) / length_;
  }
  int64_t Count() const { return count_; }
  int64_t Length() const { return length_; }
  int64_t Stride() const { return stride_; }
  // Slices are numbered outer-major: s = outer * inner + inner_offset.
  int64_t Base(int64_t s) const { return (s / inner_) * inner_ * length_ + s % inner_; }

 private:
  int64_t length_ = 0, stride_ = 1, inner_ = 1, count_ = 0;
};

// a < b as the sort sees it: the comparator's order where it is a strict weak order, and NaNs
// (which compare false both ways under LT/GT) after every number.
template <typename T>
bool KeyLess(T a, T b, bool descending, bool total_order) {
  ComparisonDirection direction = descending ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  if constexpr (kIsHalfFloat<T> || std::is_floating_point_v<T>) {
    if (total_order) return CompareValues(a, b, direction, true);
    double x = static_cast<double>(Widen(a)), y = static_cast<double>(Widen(b));
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return descending ? x > y : x < y;
  } else {
    return CompareWith(a, b, direction);
  }
}

// The key of every element of `operand` under `order` (the element itself without a key
// function).
template <typename T>
using KeyStorage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;  // pred keys as bytes

template <typename T>
std::vector<KeyStorage<T>> ComputeKeys(const Literal& operand, const KeyedOrder& order) {
  int64_t n = operand.element_count();
  std::vector<KeyStorage<T>> keys(static_cast<size_t>(n));
  if (!order.key) {
    std::memcpy(keys.data(), operand.raw(), static_cast<size_t>(n) * sizeof(T));
    return keys;
  }
  std::vector<ScalarRegister> registers = order.key->MakeRegisters();
  int64_t size = ElementByteSize(operand.element_type());
  ScalarRegister& input = registers[static_cast<size_t>(order.key->parameter_register(0))];
  const ScalarRegister& output = registers[static_cast<size_t>(order.key->result_register(0))];
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(input.bytes, operand.raw() + i * size, static_cast<size_t>(size));
    order.key->Run(registers.data());
    std::memcpy(&keys[static_cast<size_t>(i)], output.bytes, sizeof(T));
  }
  return keys;
}

// Writes operand elements of slice `base` in permuted order into result.
void ApplyPermutation(const Literal& operand, Literal& result, const std::vector<int64_t>& permutation,
                      int64_t base, int64_t stride) {
  const int64_t size = ElementByteSize(operand.element_type());
  const uint8_t* in = operand.raw();
  uint8_t* out = result.raw();
  for (size_t p = 0; p < permutation.size(); ++p)
    std::memcpy(out + (base + static_cast<int64_t>(p) * stride) * size, in + (base + permutation[p] * stride) * size,
                static_cast<size_t>(size));
}

int64_t CheckSort(const Instruction& sort, Operands operands) {
  if (operands.empty()) KernelError(sort, "sort needs at least one operand");
  if (sort.to_apply() == nullptr) KernelError(sort, "missing comparator computation");
  const Shape& first = operands[0]->shape();
  for (size_t i = 0; i < operands.size(); ++i)
    if (!operands[i]->shape().IsArray() || operands[i]->shape().dims() != first.dims())
      KernelError(sort, StrCat("operand ", i, " is ", operands[i]->shape().ToString(false), "; expected dims of ", first.ToString(false)));
  if (sort.dimensions.size() != 1 || sort.dimensions[0] < 0 || sort.dimensions[0] >= std::max<int64_t>(first.rank(), 1))
    KernelError(sort, StrCat("expected one sort dimension within rank ", first.rank()));
  const Shape& shape = sort.shape();
  const int64_t count = static_cast<int64_t>(operands.size());
  if (sort.to_apply()->num_parameters() != 2 * count)
    KernelError(sort, StrCat("comparator %", sort.to_apply()->name(), " takes ", sort.to_apply()->num_parameters(),
                             " parameters; expected ", 2 * count));
  bool ok = count == 1 ? shape.IsArray() && shape.Compatible(first)
                       : shape.IsTuple() && shape.tuple_size() == count;
  for (int64_t i = 0; ok && count > 1 && i < count; ++i) ok = shape.tuple_shape(i).Compatible(operands[i]->shape());
  if (!ok) KernelError(sort, StrCat("result shape ", shape.ToString(false), " does not match the operands"));
  return count;
}

}  // namespace

Literal EvaluateSort(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  const int64_t count = CheckSort(instruction, operands);
  const Shape& first = operands[0]->shape();
  std::vector<Literal> results;
  for (int64_t i = 0; i < count; ++i) results.emplace_back(operands[i]->shape());
  if (first.rank() == 0) {
    for (int64_t i = 0; i < count; ++i) results[i] = *operands[i];
  } else {
    Slices slices(first.dims(), instruction.dimensions[0]);
    std::vector<int64_t> permutation(static_cast<size_t>(slices.Length()));
    const int64_t stride = slices.Stride();
    std::optional<KeyedOrder> order = RecognizeKeyedOrder(*instruction.to_apply(), operands);
    std::optional<ScalarCaller> caller;
    std::vector<int64_t> sizes;
    if (!order) {
      std::vector<ElementType> params;
      for (int64_t i = 0; i < count; ++i) {
        params.push_back(operands[i]->element_type());
        params.push_back(operands[i]->element_type());
        sizes.push_back(ElementByteSize(operands[i]->element_type()));
      }
      ElementType pred[] = {ElementType::kPred};
      caller.emplace(evaluator, *instruction.to_apply(), instruction, params, pred);
    }
    auto sort_slice = [&](int64_t base) {
      if (order) return;  // done below, with the keys computed once
      SafeStableSort(permutation, [&](int64_t a, int64_t b) {
        for (int64_t i = 0; i < count; ++i) {
          const uint8_t* data = operands[i]->raw();
          caller->SetArgument(2 * i, data + (base + a * stride) * sizes[i]);
          caller->SetArgument(2 * i + 1, data + (base + b * stride) * sizes[i]);
        }
        caller->Call();
        return *static_cast<const bool*>(caller->Result(0));
      });
    };
    auto apply = [&](int64_t base) {
      for (int64_t i = 0; i < count; ++i) ApplyPermutation(*operands[i], results[i], permutation, base, stride);
    };
    if (order) {
      DispatchElementType(order->key_type, [&]<typename T>() {
        std::vector<KeyStorage<T>> keys = ComputeKeys<T>(*operands[order->key_operand], *order);
        for (int64_t s = 0; s < slices.Count(); ++s) {
          const int64_t base = slices.Base(s);
          const KeyStorage<T>* slice = keys.data() + base;
          SafeStableSort(permutation, [&](int64_t a, int64_t b) {
            return KeyLess(static_cast<T>(slice[a * stride]), static_cast<T>(slice[b * stride]), order->descending,
                           order->total_order);
          });
          apply(base);
        }
      });
    }
    for (int64_t s = 0; !order && s < slices.Count(); ++s) {
      const int64_t base = slices.Base(s);
      sort_slice(base);
      apply(base);
    }
  }
  if (count == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

Literal EvaluateTopK(const Instruction& instruction, const Literal& operand) {
  const Shape& shape = operand.shape();
  const Shape& result_shape = instruction.shape();
  if (!shape.IsArray() || shape.rank() == 0) KernelError(instruction, "top-k needs an operand of rank >= 1");
  const bool custom_call = instruction.opcode() == Opcode::kCustomCall;
  if (!result_shape.IsTuple() || result_shape.tuple_size() != 2 || !result_shape.tuple_shape(0).IsArray())
    KernelError(instruction, "the result must be a tuple (values, indices)");
  const int64_t n = shape.dim(shape.rank() - 1);
  const int64_t k = custom_call ? result_shape.tuple_shape(0).dims().back() : instruction.k;
  const bool largest = custom_call ? true : instruction.largest;
  if (k < 0 || k > n) KernelError(instruction, StrCat("k=", k, " is outside [0, ", n, "]"));
  std::vector<int64_t> out_dims = shape.dims();
  out_dims.back() = k;
  if (result_shape.tuple_shape(0).dims() != out_dims || result_shape.tuple_shape(0).element_type() != operand.element_type() ||
      result_shape.tuple_shape(1).dims() != out_dims || !IsInteger(result_shape.tuple_shape(1).element_type()))
    KernelError(instruction, StrCat("result shape ", result_shape.ToString(false), " does not match top-", k, " of ",
                                    shape.ToString(false)));
  Literal values(result_shape.tuple_shape(0)), indices(result_shape.tuple_shape(1));
  const int64_t rows = n == 0 ? 0 : operand.element_count() / n;
  std::vector<int64_t> order(static_cast<size_t>(n));
  DispatchElementType(operand.element_type(), [&]<typename T>() {
    const T* in = operand.data<T>();
    T* out = values.data<T>();
    const ComparisonDirection direction = largest ? ComparisonDirection::kGt : ComparisonDirection::kLt;
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = in + r * n;
      std::iota(order.begin(), order.end(), 0);
      // Floats in total order (NaN beyond +/-inf); ties keep the lower index first.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        if (CompareValues(row[a], row[b], direction, true)) return true;
        if (CompareValues(row[b], row[a], direction, true)) return false;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        out[r * k + j] = row[order[j]];
        indices.SetFromInt64(r * k + j, order[j]);
      }
    }
  });
  std::vector<Literal> elements;
  elements.push_back(std::move(values));
  elements.push_back(std::move(indices));
  return Literal::Tuple(std::move(elements));
}

}  // namespace gspmd
