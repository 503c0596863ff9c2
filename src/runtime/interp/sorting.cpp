// Sort (several operands permuted together along one dimension by a comparator computation)
// and top-k (the topk op and the TopK custom-call). A comparator that is one compare of the
// first operand's two parameters sorts with a direct comparison; any other is called per pair.
#include <algorithm>
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

// A comparator that orders by one operand with a direct comparison: compare(p[2k], p[2k+1])
// or the swapped form, LT or GT.
struct DirectOrder {
  bool recognized = false;
  int64_t key_operand = 0;
  bool descending = false;
  bool total_order = false;
};

DirectOrder RecognizeSortOrder(const Computation& comparator, Operands operands) {
  DirectOrder order;
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2) return order;
  const Instruction* lhs = root->operand(0);
  if (lhs->opcode() != Opcode::kParameter) return order;
  int64_t key = lhs->parameter_number / 2;
  if (key >= static_cast<int64_t>(operands.size())) return order;
  SimpleComparison comparison = RecognizeComparison(comparator, operands[key]->element_type());
  if (!comparison.recognized) return order;
  int64_t first = comparison.lhs_parameter, second = comparison.rhs_parameter;
  bool forward = first == 2 * key && second == 2 * key + 1;
  bool backward = first == 2 * key + 1 && second == 2 * key;
  bool strict = comparison.direction == ComparisonDirection::kLt || comparison.direction == ComparisonDirection::kGt;
  if (!(forward || backward) || !strict) return order;
  order.recognized = true;
  order.key_operand = key;
  order.descending = (comparison.direction == ComparisonDirection::kGt) == forward;
  order.total_order = comparison.total_order;
  return order;
}

// Sorts `permutation` (indices into one slice) with less(i, j).
template <typename Less>
void SortPermutation(std::vector<int64_t>& permutation, Less&& less) {
  std::iota(permutation.begin(), permutation.end(), 0);
  std::stable_sort(permutation.begin(), permutation.end(), less);
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
    DirectOrder order = RecognizeSortOrder(*instruction.to_apply(), operands);
    std::optional<ScalarCaller> caller;
    std::vector<int64_t> sizes;
    if (!order.recognized) {
      std::vector<ElementType> params;
      for (int64_t i = 0; i < count; ++i) {
        params.push_back(operands[i]->element_type());
        params.push_back(operands[i]->element_type());
        sizes.push_back(ElementByteSize(operands[i]->element_type()));
      }
      ElementType pred[] = {ElementType::kPred};
      caller.emplace(evaluator, *instruction.to_apply(), instruction, params, pred);
    }
    for (int64_t s = 0; s < slices.Count(); ++s) {
      const int64_t base = slices.Base(s);
      if (order.recognized) {
        DispatchElementType(operands[order.key_operand]->element_type(), [&]<typename T>() {
          const T* keys = operands[order.key_operand]->data<T>() + base;
          ComparisonDirection direction = order.descending ? ComparisonDirection::kGt : ComparisonDirection::kLt;
          SortPermutation(permutation, [&](int64_t a, int64_t b) {
            return CompareValues(keys[a * stride], keys[b * stride], direction, order.total_order);
          });
        });
      } else {
        SortPermutation(permutation, [&](int64_t a, int64_t b) {
          for (int64_t i = 0; i < count; ++i) {
            const uint8_t* data = operands[i]->raw();
            caller->SetArgument(2 * i, data + (base + a * stride) * sizes[i]);
            caller->SetArgument(2 * i + 1, data + (base + b * stride) * sizes[i]);
          }
          caller->Call();
          return *static_cast<const bool*>(caller->Result(0));
        });
      }
      for (int64_t i = 0; i < count; ++i) ApplyPermutation(*operands[i], results[i], permutation, base, stride);
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
