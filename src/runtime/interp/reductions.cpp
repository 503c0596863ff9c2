// Reduction kernels: reduce (variadic, any dims), reduce-window and select-and-scatter. Plain
// binary reducers run typed loops; any other computation is called per element.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernel_call.h"
#include "runtime/interp/kernel_comparator.h"
#include "runtime/interp/kernel_reducer_ops.h"
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
using namespace kernel;
namespace {

// ---------------------------------------------------------------------------------------------
// reduce
// ---------------------------------------------------------------------------------------------

// The input's dims merged into runs that are all reduced or all kept (size-1 dims dropped),
// with each run's stride in the output (0 for reduced runs).
struct ReducePlan {
  std::vector<int64_t> sizes;
  std::vector<bool> reduced;
  std::vector<int64_t> out_strides;
  int64_t output_count = 1;
};

// Fills `plan` (its vectors keep their capacity, so a reused plan allocates nothing).
void MakeReducePlan(const std::vector<int64_t>& dims, const std::vector<int64_t>& reduce_dims, ReducePlan& plan) {
  plan.sizes.clear();
  plan.reduced.clear();
  plan.output_count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    bool reduced = Contains(reduce_dims, static_cast<int64_t>(d));
    if (!reduced) plan.output_count *= dims[d];
    if (dims[d] == 1) continue;
    if (!plan.sizes.empty() && plan.reduced.back() == reduced) {
      plan.sizes.back() *= dims[d];
      continue;
    }
    plan.sizes.push_back(dims[d]);
    plan.reduced.push_back(reduced);
  }
  if (plan.sizes.empty()) {  // a single element
    plan.sizes.push_back(1);
    plan.reduced.push_back(false);
  }
  plan.out_strides.assign(plan.sizes.size(), 0);
  int64_t stride = 1;
  for (int64_t g = static_cast<int64_t>(plan.sizes.size()) - 1; g >= 0; --g) {
    if (plan.reduced[g]) continue;
    plan.out_strides[g] = stride;
    stride *= plan.sizes[g];
  }
}

// Calls body(input_offset, output_offset, n, inner_reduced) for each run of the innermost
// group, in row-major input order: input elements [input_offset, input_offset + n) go to
// output_offset (inner_reduced) or to output_offset + j. The outer index lives on the stack up
// to kInlineGroups groups.
template <typename Body>
void ForEachInnerRun(const ReducePlan& plan, Body&& body) {
  constexpr size_t kInlineGroups = 16;
  const int64_t groups = static_cast<int64_t>(plan.sizes.size());
  const int64_t n = plan.sizes.back();
  const bool inner_reduced = plan.reduced.back();
  const int64_t outer_groups = groups - 1;
  int64_t inline_index[kInlineGroups] = {};
  std::vector<int64_t> heap;
  int64_t* index = inline_index;
  if (outer_groups > static_cast<int64_t>(kInlineGroups)) {
    heap.assign(static_cast<size_t>(outer_groups), 0);
    index = heap.data();
  }
  int64_t runs = 1;
  for (int64_t g = 0; g < outer_groups; ++g) runs *= plan.sizes[g];
  int64_t out = 0;  // sum of index[g] * out_strides[g]
  for (int64_t r = 0; r < runs; ++r) {
    body(r * n, out, n, inner_reduced);
    for (int64_t g = outer_groups - 1; g >= 0; --g) {
      if (++index[g] < plan.sizes[g]) {
        out += plan.out_strides[g];
        break;
      }
      out -= plan.out_strides[g] * (plan.sizes[g] - 1);
      index[g] = 0;
    }
  }
}

// The accumulator of the fast path: float sums and products accumulate in double (closer to
// the exact result than any f32 order XLA might use; rounded once at the end); other
// reducers are exact in the element type (float for 16-bit floats).
template <BinaryReducer kOp, typename T>
using FastAccumulator =
    std::conditional_t<(kOp == BinaryReducer::kAdd || kOp == BinaryReducer::kMultiply) &&
                           (kIsHalfFloat<T> || std::is_floating_point_v<T>),
                       double, AccumulatorType<T>>;

template <typename A, typename T>
inline A Load(T value) {
  return static_cast<A>(Widen(value));
}

// Folds x[0..n) into acc; long sums use eight partial sums so the loop vectorizes.
template <BinaryReducer kOp, typename T>
FastAccumulator<kOp, T> FoldRun(FastAccumulator<kOp, T> acc, const T* x, int64_t n) {
  using A = FastAccumulator<kOp, T>;
  int64_t j = 0;
  if constexpr (kOp == BinaryReducer::kAdd && std::is_floating_point_v<A>) {
    constexpr int kLanes = 8;
    if (n >= 2 * kLanes) {
      A lanes[kLanes] = {};
      for (; j + kLanes <= n; j += kLanes)
        for (int l = 0; l < kLanes; ++l) lanes[l] += Load<A>(x[j + l]);
      for (int width = kLanes / 2; width > 0; width /= 2)
        for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
      acc += lanes[0];
    }
  }
  for (; j < n; ++j) acc = ApplyReducer<kOp, A>(acc, Load<A>(x[j]));
  return acc;
}

template <BinaryReducer kOp, typename T>
void ReduceFastTyped(const ReducePlan& plan, const Literal& input, const Literal& init, Literal& result) {
  using A = FastAccumulator<kOp, T>;
  A* acc = nullptr;
  if constexpr (std::is_same_v<A, T>) {
    acc = result.data<T>();
  } else {
    // Reused by this thread's next reduce of the same kind (kept up to kKeptAccumulators).
    constexpr size_t kKeptAccumulators = size_t{1} << 20;
    thread_local std::vector<A> buffer;
    buffer.resize(static_cast<size_t>(plan.output_count));
    if (buffer.capacity() > kKeptAccumulators && buffer.size() <= kKeptAccumulators) buffer.shrink_to_fit();
    acc = buffer.data();
  }
  std::fill(acc, acc + plan.output_count, Load<A>(init.data<T>()[0]));
  const T* in = input.data<T>();
  ForEachInnerRun(plan, [&](int64_t in_offset, int64_t out_offset, int64_t n, bool inner_reduced) {
    const T* x = in + in_offset;
    if (inner_reduced) {
      acc[out_offset] = FoldRun<kOp, T>(acc[out_offset], x, n);
      return;
    }
    A* out = acc + out_offset;
    for (int64_t j = 0; j < n; ++j) out[j] = ApplyReducer<kOp, A>(out[j], Load<A>(x[j]));
  });
  if constexpr (!std::is_same_v<A, T>) {
    T* out = result.data<T>();
    for (int64_t i = 0; i < plan.output_count; ++i) out[i] = Narrow<T>(static_cast<AccumulatorType<T>>(acc[i]));
  }
}

void ReduceGeneric(const Instruction& reduce, const ReducePlan& plan, Operands inputs, Operands inits,
                   std::vector<Literal>& results, Evaluator& evaluator) {
  const int64_t count = static_cast<int64_t>(inputs.size());
  std::vector<ElementType> param_types, result_types;
  std::vector<int64_t> sizes, in_sizes;
  for (int64_t i = 0; i < count; ++i) param_types.push_back(inits[i]->element_type());
  for (int64_t i = 0; i < count; ++i) param_types.push_back(inputs[i]->element_type());
  for (int64_t i = 0; i < count; ++i) {
    result_types.push_back(results[i].element_type());
    sizes.push_back(ElementByteSize(results[i].element_type()));
    in_sizes.push_back(ElementByteSize(inputs[i]->element_type()));
  }
  ScalarCaller caller(evaluator, *reduce.to_apply(), reduce, param_types, result_types);
  ForEachInnerRun(plan, [&](int64_t in_offset, int64_t out_offset, int64_t n, bool inner_reduced) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t in = in_offset + j;
      int64_t out = inner_reduced ? out_offset : out_offset + j;
      for (int64_t i = 0; i < count; ++i) {
        caller.SetArgument(i, results[i].raw() + out * sizes[i]);
        caller.SetArgument(count + i, inputs[i]->raw() + in * in_sizes[i]);
      }
      caller.Call();
      for (int64_t i = 0; i < count; ++i)
        std::memcpy(results[i].raw() + out * sizes[i], caller.Result(i), static_cast<size_t>(sizes[i]));
    }
  });
}

// Checks the reduce's operands (N arrays of one shape, then N scalar inits), dimensions and
// result shape; returns N.
int64_t CheckReduce(const Instruction& reduce, Operands operands) {
  int64_t count = static_cast<int64_t>(operands.size()) / 2;
  if (operands.size() % 2 != 0 || count == 0)
    KernelError(reduce, StrCat("expected N inputs followed by N init values, got ", operands.size(), " operands"));
  if (reduce.to_apply() == nullptr) KernelError(reduce, "missing to_apply computation");
  const Shape& first = operands[0]->shape();
  for (int64_t i = 0; i < count; ++i) {
    const Shape& input = operands[i]->shape();
    const Shape& init = operands[count + i]->shape();
    if (!input.IsArray() || input.dims() != first.dims())
      KernelError(reduce, StrCat("input ", i, " is ", input.ToString(false), "; expected dims of ", first.ToString(false)));
    if (!init.IsArray() || init.rank() != 0)
      KernelError(reduce, StrCat("init value ", i, " is ", init.ToString(false), "; expected a scalar"));
  }
  for (int64_t d : reduce.dimensions)
    if (d < 0 || d >= first.rank()) KernelError(reduce, StrCat("dimension ", d, " is out of range for rank ", first.rank()));
  // Whether `dims` are the input's dims that are not reduced (checked without building them).
  auto is_kept = [&](const std::vector<int64_t>& dims) {
    size_t next = 0;
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (Contains(reduce.dimensions, d)) continue;
      if (next >= dims.size() || dims[next++] != first.dim(d)) return false;
    }
    return next == dims.size();
  };
  const Shape& shape = reduce.shape();
  bool shape_ok = count == 1 ? shape.IsArray() && is_kept(shape.dims())
                             : shape.IsTuple() && shape.tuple_size() == count;
  for (int64_t i = 0; shape_ok && count > 1 && i < count; ++i)
    shape_ok = shape.tuple_shape(i).IsArray() && is_kept(shape.tuple_shape(i).dims());
  if (!shape_ok) {
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < first.rank(); ++d)
      if (!Contains(reduce.dimensions, d)) kept.push_back(first.dim(d));
    KernelError(reduce, StrCat("result shape ", shape.ToString(false), " does not match ", count,
                               " input(s) reduced to dims ", Shape(first.element_type(), kept).ToString(false)));
  }
  return count;
}

// The single-input reduce whose reducer is a plain op on the input's element type.
BinaryReducer FastReducer(const Instruction& reduce, Operands operands) {
  if (operands.size() != 2) return BinaryReducer::kUnknown;
  ElementType type = operands[0]->element_type();
  if (operands[1]->element_type() != type || reduce.shape().element_type() != type) return BinaryReducer::kUnknown;
  if (reduce.to_apply()->root()->shape().element_type() != type) return BinaryReducer::kUnknown;
  BinaryReducer op = RecognizeReducer(*reduce.to_apply());
  return FastReducerSupported(op, type) ? op : BinaryReducer::kUnknown;
}

}  // namespace

Literal EvaluateReduce(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  const int64_t count = CheckReduce(instruction, operands);
  const bool empty_input = operands[0]->element_count() == 0;
  BinaryReducer op = FastReducer(instruction, operands);
  if (op != BinaryReducer::kUnknown) {
    // The fast path calls no computation, so no reduce runs inside it: one plan per thread.
    thread_local ReducePlan plan;
    MakeReducePlan(operands[0]->shape().dims(), instruction.dimensions, plan);
    Literal result(instruction.shape());
    const Literal& input = *operands[0];
    const Literal& init = *operands[1];
    if (empty_input) {
      for (int64_t i = 0; i < result.element_count(); ++i)
        std::memcpy(result.raw() + i * ElementByteSize(init.element_type()), init.raw(),
                    static_cast<size_t>(ElementByteSize(init.element_type())));
      return result;
    }
    DispatchElementType(input.element_type(), [&]<typename T>() {
      DispatchReducer(op, [&]<BinaryReducer kOp>() { ReduceFastTyped<kOp, T>(plan, input, init, result); });
    });
    return result;
  }
  ReducePlan plan;  // the reducer computation may run reduces of its own
  MakeReducePlan(operands[0]->shape().dims(), instruction.dimensions, plan);
  std::vector<Literal> results;
  for (int64_t i = 0; i < count; ++i) {
    const Shape& shape = count == 1 ? instruction.shape() : instruction.shape().tuple_shape(i);
    Literal result(shape);
    const Literal& init = *operands[count + i];
    if (init.element_type() != shape.element_type())
      KernelError(instruction, StrCat("init value ", i, " is ", ElementTypeName(init.element_type()),
                                      "; expected ", ElementTypeName(shape.element_type())));
    int64_t size = ElementByteSize(init.element_type());
    for (int64_t e = 0; e < result.element_count(); ++e)
      std::memcpy(result.raw() + e * size, init.raw(), static_cast<size_t>(size));
    results.push_back(std::move(result));
  }
  if (!empty_input)
    ReduceGeneric(instruction, plan, operands.subspan(0, count), operands.subspan(count), results, evaluator);
  if (count == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

namespace {

// ---------------------------------------------------------------------------------------------
// windows (reduce-window, select-and-scatter)
// ---------------------------------------------------------------------------------------------

// Where each output element's window reads: taps[d][o] lists, in window order, the input
// offsets (coordinate times the input stride of dim d) that output coordinate o of dim d
// reads. Padding and base-dilation holes are left out (they hold the init value, which the
// reduction starts from anyway).
struct WindowPlan {
  std::vector<int64_t> out_dims;
  std::vector<std::vector<std::vector<int64_t>>> taps;
  int64_t out_count = 1;
};

WindowPlan MakeWindowPlan(const Instruction& instruction, const std::vector<int64_t>& in_dims) {
  const Window& window = instruction.window();
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  if (static_cast<int64_t>(window.size()) != rank)
    KernelError(instruction, StrCat("window has ", window.size(), " dims; the operand has rank ", rank));
  std::vector<int64_t> strides = RowMajorStrides(in_dims);
  WindowPlan plan;
  plan.taps.resize(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDim& w = window[d];
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      KernelError(instruction, StrCat("window dim ", d, " has a negative size or a non-positive stride or dilation"));
    int64_t dilated = in_dims[d] == 0 ? 0 : (in_dims[d] - 1) * w.base_dilation + 1;
    int64_t padded = dilated + w.padding_low + w.padding_high;
    int64_t extent = (w.size - 1) * w.window_dilation + 1;
    int64_t out = padded < extent ? 0 : (padded - extent) / w.stride + 1;
    plan.out_dims.push_back(out);
    plan.out_count *= out;
    plan.taps[d].resize(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        int64_t position = o * w.stride + k * w.window_dilation - w.padding_low;
        if (position < 0 || position >= dilated || position % w.base_dilation != 0) continue;
        plan.taps[d][o].push_back(position / w.base_dilation * strides[d]);
      }
    }
  }
  return plan;
}

// Calls fn(input_offset) for every input element in the window of output `out_index`, in
// row-major window order. `position` is scratch space.
template <typename Fn>
void ForEachTap(const WindowPlan& plan, const std::vector<int64_t>& out_index, std::vector<size_t>& position,
                Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(plan.taps.size());
  if (rank == 0) {
    fn(int64_t{0});
    return;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (plan.taps[d][out_index[d]].empty()) return;
  position.assign(static_cast<size_t>(rank), 0);
  const std::vector<int64_t>& last = plan.taps[rank - 1][out_index[rank - 1]];
  while (true) {
    int64_t base = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) base += plan.taps[d][out_index[d]][position[d]];
    for (int64_t offset : last) fn(base + offset);
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++position[d] < plan.taps[d][out_index[d]].size()) break;
      position[d] = 0;
    }
    if (d < 0) return;
  }
}

template <BinaryReducer kOp, typename T>
void ReduceWindowFastTyped(const WindowPlan& plan, const Literal& input, const Literal& init, Literal& result) {
  using A = FastAccumulator<kOp, T>;
  const T* in = input.data<T>();
  T* out = result.data<T>();
  const A start = Load<A>(init.data<T>()[0]);
  std::vector<size_t> scratch;
  IndexCounter index(plan.out_dims);
  for (int64_t o = 0; o < plan.out_count; ++o, index.Next()) {
    A acc = start;
    ForEachTap(plan, index.index(), scratch, [&](int64_t offset) { acc = ApplyReducer<kOp, A>(acc, Load<A>(in[offset])); });
    out[o] = Narrow<T>(static_cast<AccumulatorType<T>>(acc));
  }
}

void ReduceWindowGeneric(const Instruction& instruction, const WindowPlan& plan, Operands inputs, Operands inits,
                         std::vector<Literal>& results, Evaluator& evaluator) {
  const int64_t count = static_cast<int64_t>(inputs.size());
  std::vector<ElementType> param_types, result_types;
  std::vector<int64_t> sizes, in_sizes;
  for (int64_t i = 0; i < count; ++i) param_types.push_back(inits[i]->element_type());
  for (int64_t i = 0; i < count; ++i) {
    param_types.push_back(inputs[i]->element_type());
    result_types.push_back(results[i].element_type());
    sizes.push_back(ElementByteSize(results[i].element_type()));
    in_sizes.push_back(ElementByteSize(inputs[i]->element_type()));
  }
  ScalarCaller caller(evaluator, *instruction.to_apply(), instruction, param_types, result_types);
  std::vector<size_t> scratch;
  IndexCounter index(plan.out_dims);
  for (int64_t o = 0; o < plan.out_count; ++o, index.Next()) {
    ForEachTap(plan, index.index(), scratch, [&](int64_t offset) {
      for (int64_t i = 0; i < count; ++i) {
        caller.SetArgument(i, results[i].raw() + o * sizes[i]);
        caller.SetArgument(count + i, inputs[i]->raw() + offset * in_sizes[i]);
      }
      caller.Call();
      for (int64_t i = 0; i < count; ++i)
        std::memcpy(results[i].raw() + o * sizes[i], caller.Result(i), static_cast<size_t>(sizes[i]));
    });
  }
}

// Result literals of a variadic op (N arrays of `dims`, or one array), each filled with its init.
std::vector<Literal> ResultsFilledWithInits(const Instruction& instruction, Operands inits,
                                            const std::vector<int64_t>& dims) {
  const int64_t count = static_cast<int64_t>(inits.size());
  const Shape& shape = instruction.shape();
  std::vector<Literal> results;
  for (int64_t i = 0; i < count; ++i) {
    bool fits = count == 1 ? shape.IsArray() : shape.IsTuple() && shape.tuple_size() == count;
    const Shape* element = !fits ? nullptr : count == 1 ? &shape : &shape.tuple_shape(i);
    if (element == nullptr || !element->IsArray() || element->dims() != dims)
      KernelError(instruction, StrCat("result shape ", shape.ToString(false), " does not match ", count,
                                      " result(s) of dims ", Shape(ElementType::kF32, dims).ToString(false)));
    const Literal& init = *inits[i];
    if (!init.shape().IsArray() || init.shape().rank() != 0 || init.element_type() != element->element_type())
      KernelError(instruction, StrCat("init value ", i, " is ", init.shape().ToString(false), "; expected ",
                                      ElementTypeName(element->element_type()), "[]"));
    Literal result(*element);
    int64_t size = ElementByteSize(init.element_type());
    for (int64_t e = 0; e < result.element_count(); ++e)
      std::memcpy(result.raw() + e * size, init.raw(), static_cast<size_t>(size));
    results.push_back(std::move(result));
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// select-and-scatter
// ---------------------------------------------------------------------------------------------

// For each source element (one per window), the offset of the window's selected operand element
// (-1 for an empty window): select(current, candidate) false moves the selection to the
// candidate, so the first of equals wins under GE. Selecting and scattering are separate passes
// so the typed select loops (one per operand type) and the typed scatter loops (one per result
// type and reducer) are instantiated side by side, not one inside the other.
template <typename SelectFn>
std::vector<int64_t> SelectedOffsets(const WindowPlan& plan, SelectFn&& select) {
  std::vector<int64_t> selected_offsets(static_cast<size_t>(plan.out_count), -1);
  std::vector<size_t> scratch;
  IndexCounter index(plan.out_dims);
  for (int64_t s = 0; s < plan.out_count; ++s, index.Next()) {
    int64_t selected = -1;
    ForEachTap(plan, index.index(), scratch, [&](int64_t offset) {
      if (selected < 0 || !select(selected, offset)) selected = offset;
    });
    selected_offsets[static_cast<size_t>(s)] = selected;
  }
  return selected_offsets;
}

}  // namespace

Literal EvaluateReduceWindow(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  const int64_t count = static_cast<int64_t>(operands.size()) / 2;
  if (operands.size() % 2 != 0 || count == 0)
    KernelError(instruction, StrCat("expected N inputs followed by N init values, got ", operands.size(), " operands"));
  if (instruction.to_apply() == nullptr) KernelError(instruction, "missing to_apply computation");
  const Shape& first = operands[0]->shape();
  for (int64_t i = 0; i < count; ++i)
    if (!operands[i]->shape().IsArray() || operands[i]->shape().dims() != first.dims())
      KernelError(instruction, StrCat("input ", i, " is ", operands[i]->shape().ToString(false), "; expected dims of ",
                                      first.ToString(false)));
  WindowPlan plan = MakeWindowPlan(instruction, first.dims());
  std::vector<Literal> results = ResultsFilledWithInits(instruction, operands.subspan(count), plan.out_dims);
  BinaryReducer op = FastReducer(instruction, operands);
  if (op != BinaryReducer::kUnknown) {
    DispatchElementType(first.element_type(), [&]<typename T>() {
      DispatchReducer(op, [&]<BinaryReducer kOp>() {
        ReduceWindowFastTyped<kOp, T>(plan, *operands[0], *operands[1], results[0]);
      });
    });
  } else {
    ReduceWindowGeneric(instruction, plan, operands.subspan(0, count), operands.subspan(count), results, evaluator);
  }
  if (count == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

Literal EvaluateSelectAndScatter(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  if (operands.size() != 3) KernelError(instruction, StrCat("expected operand, source and init value, got ", operands.size(), " operands"));
  if (instruction.called_computations().size() != 2) KernelError(instruction, "expected select and scatter computations");
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Computation& select = *instruction.called_computations()[0];
  const Computation& scatter = *instruction.called_computations()[1];
  if (!operand.shape().IsArray() || !source.shape().IsArray()) KernelError(instruction, "operands must be arrays");
  WindowPlan plan = MakeWindowPlan(instruction, operand.shape().dims());
  if (source.shape().dims() != plan.out_dims)
    KernelError(instruction, StrCat("source is ", source.shape().ToString(false), "; the windows need dims ",
                                    Shape(source.element_type(), plan.out_dims).ToString(false)));
  std::vector<Literal> results = ResultsFilledWithInits(instruction, operands.subspan(2, 1), operand.shape().dims());
  Literal& result = results[0];
  const ElementType type = operand.element_type(), out_type = result.element_type();

  SimpleComparison comparison = RecognizeComparison(select, type);
  comparison.recognized = comparison.recognized && comparison.lhs_parameter != comparison.rhs_parameter;
  BinaryReducer combine = RecognizeReducer(scatter);
  bool fast_scatter = source.element_type() == out_type && scatter.root()->shape().element_type() == out_type &&
                      FastReducerSupported(combine, out_type);

  // select(current, candidate) as a function of two operand offsets.
  std::optional<ScalarCaller> select_caller;
  const int64_t operand_size = ElementByteSize(type);
  if (!comparison.recognized) {
    ElementType params[] = {type, type}, pred[] = {ElementType::kPred};
    select_caller.emplace(evaluator, select, instruction, params, pred);
  }
  std::optional<ScalarCaller> scatter_caller;
  const int64_t out_size = ElementByteSize(out_type), source_size = ElementByteSize(source.element_type());
  if (!fast_scatter) {
    ElementType params[] = {out_type, source.element_type()}, results_types[] = {out_type};
    scatter_caller.emplace(evaluator, scatter, instruction, params, results_types);
  }
  std::vector<int64_t> selected;
  if (comparison.recognized) {
    DispatchElementType(type, [&]<typename T>() {
      const T* values = operand.data<T>();
      bool swapped = comparison.lhs_parameter == 1;
      selected = SelectedOffsets(plan, [&](int64_t current, int64_t candidate) {
        T a = values[current], b = values[candidate];
        return swapped ? CompareValues(b, a, comparison.direction, comparison.total_order)
                       : CompareValues(a, b, comparison.direction, comparison.total_order);
      });
    });
  } else {
    selected = SelectedOffsets(plan, [&](int64_t current, int64_t candidate) {
      select_caller->SetArgument(0, operand.raw() + current * operand_size);
      select_caller->SetArgument(1, operand.raw() + candidate * operand_size);
      select_caller->Call();
      return *static_cast<const bool*>(select_caller->Result(0));
    });
  }
  const int64_t source_count = static_cast<int64_t>(selected.size());
  if (fast_scatter) {
    DispatchElementType(out_type, [&]<typename U>() {
      DispatchReducer(combine, [&]<BinaryReducer kOp>() {
        U* out = result.data<U>();
        const U* src = source.data<U>();
        for (int64_t s = 0; s < source_count; ++s) {
          const int64_t target = selected[static_cast<size_t>(s)];
          if (target < 0) continue;
          out[target] = Narrow<U>(ApplyReducer<kOp, AccumulatorType<U>>(Widen(out[target]), Widen(src[s])));
        }
      });
    });
  } else {
    for (int64_t s = 0; s < source_count; ++s) {
      const int64_t target = selected[static_cast<size_t>(s)];
      if (target < 0) continue;
      scatter_caller->SetArgument(0, result.raw() + target * out_size);
      scatter_caller->SetArgument(1, source.raw() + s * source_size);
      scatter_caller->Call();
      std::memcpy(result.raw() + target * out_size, scatter_caller->Result(0), static_cast<size_t>(out_size));
    }
  }
  return std::move(result);
}

}  // namespace gspmd
