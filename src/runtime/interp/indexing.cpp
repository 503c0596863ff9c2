// Gather and scatter kernels: full dimension numbers (including operand/indices batching
// dims and an implicit trailing index vector), XLA's start-index clamping for gather and
// out-of-bounds skipping for scatter, variadic scatter with any combiner.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernel_call.h"
#include "runtime/interp/kernel_reducer_ops.h"
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
using namespace kernel;
namespace {

// The start-index array viewed as a list of index vectors: one per position of its batch dims
// (every dim but index_vector_dim).
struct IndexVectors {
  std::vector<int64_t> batch_dims;   // start_indices dims that enumerate vectors, in order
  std::vector<int64_t> batch_sizes;  // their sizes
  int64_t vector_length = 1;
  int64_t vector_stride = 0;         // element stride along index_vector_dim
  std::vector<int64_t> batch_strides;
};

IndexVectors MakeIndexVectors(const Instruction& instruction, const Shape& indices, int64_t index_vector_dim) {
  if (!indices.IsArray() || !IsInteger(indices.element_type()))
    KernelError(instruction, StrCat("start indices must be an integer array, got ", indices.ToString(false)));
  if (index_vector_dim < 0 || index_vector_dim > indices.rank())
    KernelError(instruction, StrCat("index_vector_dim ", index_vector_dim, " is out of range for indices of rank ", indices.rank()));
  std::vector<int64_t> strides = RowMajorStrides(indices.dims());
  IndexVectors v;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d == index_vector_dim) {
      v.vector_length = indices.dim(d);
      v.vector_stride = strides[d];
      continue;
    }
    v.batch_dims.push_back(d);
    v.batch_sizes.push_back(indices.dim(d));
    v.batch_strides.push_back(strides[d]);
  }
  return v;
}

// The position of indices dim `dim` among the batch dims (for the *_batching_dims maps).
int64_t BatchPosition(const Instruction& instruction, const IndexVectors& v, int64_t dim) {
  auto it = std::find(v.batch_dims.begin(), v.batch_dims.end(), dim);
  if (it == v.batch_dims.end())
    KernelError(instruction, StrCat("indices batching dim ", dim, " is not a batch dim of the start indices"));
  return it - v.batch_dims.begin();
}

// Reads the index vector at batch position `index` (values as int64).
void ReadIndexVector(const Literal& indices, const IndexVectors& v, const std::vector<int64_t>& index,
                     std::vector<int64_t>& out) {
  int64_t base = 0;
  for (size_t i = 0; i < index.size(); ++i) base += index[i] * v.batch_strides[i];
  out.resize(static_cast<size_t>(v.vector_length));
  DispatchElementType(indices.element_type(), [&]<typename I>() {
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* data = indices.data<I>();
      for (int64_t j = 0; j < v.vector_length; ++j) out[j] = static_cast<int64_t>(data[base + j * v.vector_stride]);
    }
  });
}

void CheckDims(const Instruction& instruction, const std::vector<int64_t>& dims, int64_t rank, const char* what) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) KernelError(instruction, StrCat(what, " has a repeated or out-of-range dim ", d));
    seen[d] = true;
  }
}

// Copies n elements of `size` bytes with element strides.
void CopyRun(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride, int64_t n, int64_t size) {
  if (dst_stride == 1 && src_stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n * size));
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dst_stride * size, src + i * src_stride * size, static_cast<size_t>(size));
}

// ---- scatter helpers ----

enum class ScatterCombiner { kGeneric, kReducer, kReplace, kKeep };

struct ScatterPlan {
  int64_t count = 1;  // N operands / updates
  IndexVectors vectors;
  std::vector<int64_t> window_operand_dims;  // operand dims of update_window_dims, in order
  std::vector<int64_t> update_scatter_dims;  // update dims that enumerate index vectors
  std::vector<int64_t> window_sizes;         // update sizes of update_window_dims
  std::vector<int64_t> operand_strides, update_strides;
};

ScatterPlan MakeScatterPlan(const Instruction& instruction, Operands operands) {
  const ScatterDimensionNumbers& dn = instruction.scatter_dims();
  ScatterPlan plan;
  if (operands.size() < 3 || operands.size() % 2 != 1)
    KernelError(instruction, StrCat("expected N operands, the indices and N updates, got ", operands.size(), " operands"));
  plan.count = static_cast<int64_t>(operands.size() - 1) / 2;
  const Shape& operand = operands[0]->shape();
  const Shape& indices = operands[plan.count]->shape();
  const Shape& updates = operands[plan.count + 1]->shape();
  for (int64_t i = 0; i < plan.count; ++i) {
    if (!operands[i]->shape().IsArray() || operands[i]->shape().dims() != operand.dims())
      KernelError(instruction, StrCat("operand ", i, " has dims differing from operand 0"));
    if (!operands[plan.count + 1 + i]->shape().IsArray() || operands[plan.count + 1 + i]->shape().dims() != updates.dims())
      KernelError(instruction, StrCat("update ", i, " has dims differing from update 0"));
  }
  plan.vectors = MakeIndexVectors(instruction, indices, dn.index_vector_dim);
  CheckDims(instruction, dn.update_window_dims, updates.rank(), "update_window_dims");
  std::vector<int64_t> not_window = dn.inserted_window_dims;
  not_window.insert(not_window.end(), dn.input_batching_dims.begin(), dn.input_batching_dims.end());
  CheckDims(instruction, not_window, operand.rank(), "inserted_window_dims and input_batching_dims");
  CheckDims(instruction, dn.scatter_dims_to_operand_dims, operand.rank(), "scatter_dims_to_operand_dims");
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != plan.vectors.vector_length)
    KernelError(instruction, StrCat("index vectors have ", plan.vectors.vector_length, " elements but scatter_dims_to_operand_dims has ",
                                    dn.scatter_dims_to_operand_dims.size()));
  if (dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size())
    KernelError(instruction, "input_batching_dims and scatter_indices_batching_dims differ in length");
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!Contains(not_window, d)) plan.window_operand_dims.push_back(d);
  if (plan.window_operand_dims.size() != dn.update_window_dims.size())
    KernelError(instruction, StrCat("update_window_dims has ", dn.update_window_dims.size(), " dims; the operand has ",
                                    plan.window_operand_dims.size(), " window dims"));
  for (int64_t d = 0; d < updates.rank(); ++d)
    if (!Contains(dn.update_window_dims, d)) plan.update_scatter_dims.push_back(d);
  if (plan.update_scatter_dims.size() != plan.vectors.batch_dims.size())
    KernelError(instruction, "updates' scatter dims do not match the indices' batch dims");
  for (size_t i = 0; i < plan.update_scatter_dims.size(); ++i)
    if (updates.dim(plan.update_scatter_dims[i]) != plan.vectors.batch_sizes[i])
      KernelError(instruction, StrCat("update scatter dim ", plan.update_scatter_dims[i], " has size ",
                                      updates.dim(plan.update_scatter_dims[i]), "; the indices have ", plan.vectors.batch_sizes[i]));
  for (size_t i = 0; i < dn.update_window_dims.size(); ++i) {
    int64_t size = updates.dim(dn.update_window_dims[i]);
    if (size > operand.dim(plan.window_operand_dims[i]))
      KernelError(instruction, StrCat("update window dim ", dn.update_window_dims[i], " (size ", size,
                                      ") is larger than operand dim ", plan.window_operand_dims[i]));
    plan.window_sizes.push_back(size);
  }
  plan.operand_strides = RowMajorStrides(operand.dims());
  plan.update_strides = RowMajorStrides(updates.dims());
  return plan;
}

ScatterCombiner ClassifyCombiner(const Computation& to_apply, Operands operands, int64_t count, BinaryReducer& op) {
  if (count != 1) return ScatterCombiner::kGeneric;
  ElementType type = operands[0]->element_type();
  if (operands[2]->element_type() != type) return ScatterCombiner::kGeneric;
  const Instruction* root = to_apply.root();
  if (to_apply.num_parameters() == 2 && root->shape().IsArray() && root->shape().element_type() == type) {
    if (root == to_apply.parameter(1)) return ScatterCombiner::kReplace;
    if (root == to_apply.parameter(0)) return ScatterCombiner::kKeep;
  }
  if (root->shape().element_type() != type) return ScatterCombiner::kGeneric;
  op = RecognizeReducer(to_apply);
  return FastReducerSupported(op, type) ? ScatterCombiner::kReducer : ScatterCombiner::kGeneric;
}

// Calls apply(operand_offset, update_offset) for every update element whose window lies in
// bounds, in update order (index vectors outer, window inner).
template <typename Apply>
void ForEachScatterElement(const Instruction& instruction, const ScatterPlan& plan, const Literal& indices,
                           const Shape& operand, Apply&& apply) {
  const ScatterDimensionNumbers& dn = instruction.scatter_dims();
  std::vector<int64_t> batching_positions;
  for (int64_t d : dn.scatter_indices_batching_dims) batching_positions.push_back(BatchPosition(instruction, plan.vectors, d));
  const int64_t rank = operand.rank();
  std::vector<int64_t> extent(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < plan.window_operand_dims.size(); ++i) extent[plan.window_operand_dims[i]] = plan.window_sizes[i];
  std::vector<int64_t> vector, start(static_cast<size_t>(rank));
  const int64_t windows = Product(plan.vectors.batch_sizes), window_count = Product(plan.window_sizes);
  IndexCounter batch(plan.vectors.batch_sizes);
  for (int64_t b = 0; b < windows; ++b, batch.Next()) {
    ReadIndexVector(indices, plan.vectors, batch.index(), vector);
    std::fill(start.begin(), start.end(), 0);
    for (size_t j = 0; j < vector.size(); ++j) start[dn.scatter_dims_to_operand_dims[j]] = vector[j];
    for (size_t i = 0; i < batching_positions.size(); ++i) start[dn.input_batching_dims[i]] = batch[batching_positions[i]];
    bool in_bounds = true;
    int64_t operand_base = 0;
    for (int64_t d = 0; d < rank; ++d) {
      in_bounds = in_bounds && start[d] >= 0 && start[d] + extent[d] <= operand.dim(d);
      operand_base += start[d] * plan.operand_strides[d];
    }
    if (!in_bounds) continue;  // XLA skips a window that does not fit entirely
    int64_t update_base = 0;
    for (size_t i = 0; i < plan.update_scatter_dims.size(); ++i)
      update_base += batch[i] * plan.update_strides[plan.update_scatter_dims[i]];
    IndexCounter window(plan.window_sizes);
    for (int64_t w = 0; w < window_count; ++w, window.Next()) {
      int64_t operand_offset = operand_base, update_offset = update_base;
      for (size_t i = 0; i < plan.window_sizes.size(); ++i) {
        operand_offset += window[i] * plan.operand_strides[plan.window_operand_dims[i]];
        update_offset += window[i] * plan.update_strides[dn.update_window_dims[i]];
      }
      apply(operand_offset, update_offset);
    }
  }
}

}  // namespace

Literal EvaluateGather(const Instruction& instruction, const Literal& operand, const Literal& start_indices) {
  const GatherDimensionNumbers& dn = instruction.gather_dims();
  const Shape& shape = operand.shape();
  if (!shape.IsArray()) KernelError(instruction, "the operand must be an array");
  const int64_t rank = shape.rank();
  IndexVectors v = MakeIndexVectors(instruction, start_indices.shape(), dn.index_vector_dim);
  const std::vector<int64_t>& slice_sizes = instruction.gather_slice_sizes();
  if (static_cast<int64_t>(slice_sizes.size()) != rank)
    KernelError(instruction, StrCat("slice_sizes has ", slice_sizes.size(), " entries; the operand has rank ", rank));
  std::vector<int64_t> not_offset = dn.collapsed_slice_dims;
  not_offset.insert(not_offset.end(), dn.operand_batching_dims.begin(), dn.operand_batching_dims.end());
  CheckDims(instruction, not_offset, rank, "collapsed_slice_dims and operand_batching_dims");
  CheckDims(instruction, dn.start_index_map, rank, "start_index_map");
  if (static_cast<int64_t>(dn.start_index_map.size()) != v.vector_length)
    KernelError(instruction, StrCat("index vectors have ", v.vector_length, " elements but start_index_map has ",
                                    dn.start_index_map.size()));
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size())
    KernelError(instruction, "operand_batching_dims and start_indices_batching_dims differ in length");
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > shape.dim(d))
      KernelError(instruction, StrCat("slice size ", slice_sizes[d], " does not fit operand dim ", d, " of size ", shape.dim(d)));
    if (Contains(not_offset, d) && slice_sizes[d] > 1)
      KernelError(instruction, StrCat("collapsed or batching dim ", d, " must have slice size 1"));
  }
  std::vector<int64_t> offset_operand_dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(not_offset, d)) offset_operand_dims.push_back(d);
  if (offset_operand_dims.size() != dn.offset_dims.size())
    KernelError(instruction, StrCat("offset_dims has ", dn.offset_dims.size(), " dims; the slice keeps ", offset_operand_dims.size()));
  const int64_t out_rank = static_cast<int64_t>(v.batch_dims.size() + dn.offset_dims.size());
  CheckDims(instruction, dn.offset_dims, out_rank, "offset_dims");
  std::vector<int64_t> expected(static_cast<size_t>(out_rank)), out_batch_dims;
  for (size_t i = 0; i < dn.offset_dims.size(); ++i) expected[dn.offset_dims[i]] = slice_sizes[offset_operand_dims[i]];
  for (int64_t d = 0, b = 0; d < out_rank; ++d) {
    if (Contains(dn.offset_dims, d)) continue;
    out_batch_dims.push_back(d);
    expected[d] = v.batch_sizes[b++];
  }
  if (!instruction.shape().IsArray() || instruction.shape().dims() != expected ||
      instruction.shape().element_type() != operand.element_type())
    KernelError(instruction, StrCat("result shape ", instruction.shape().ToString(false), " does not match the gather (expected ",
                                    Shape(operand.element_type(), expected).ToString(false), ")"));
  std::vector<int64_t> batching_positions;
  for (int64_t d : dn.start_indices_batching_dims) batching_positions.push_back(BatchPosition(instruction, v, d));

  Literal result(instruction.shape());
  if (result.element_count() == 0) return result;
  const int64_t size = ElementByteSize(operand.element_type());
  std::vector<int64_t> operand_strides = RowMajorStrides(shape.dims()), out_strides = RowMajorStrides(expected);
  std::vector<int64_t> offset_sizes;
  for (int64_t d : offset_operand_dims) offset_sizes.push_back(slice_sizes[d]);
  // The innermost offset dim is copied as a run.
  const int64_t run = offset_sizes.empty() ? 1 : offset_sizes.back();
  const int64_t run_src_stride = offset_sizes.empty() ? 0 : operand_strides[offset_operand_dims.back()];
  const int64_t run_dst_stride = offset_sizes.empty() ? 0 : out_strides[dn.offset_dims.back()];
  std::vector<int64_t> outer_sizes(offset_sizes.begin(), offset_sizes.empty() ? offset_sizes.end() : offset_sizes.end() - 1);
  const int64_t outer_count = Product(outer_sizes);
  std::vector<int64_t> vector, start(static_cast<size_t>(rank));
  IndexCounter batch(v.batch_sizes);
  const int64_t batches = Product(v.batch_sizes);
  for (int64_t b = 0; b < batches; ++b, batch.Next()) {
    ReadIndexVector(start_indices, v, batch.index(), vector);
    std::fill(start.begin(), start.end(), 0);
    for (size_t j = 0; j < vector.size(); ++j) {
      int64_t d = dn.start_index_map[j];
      start[d] = std::clamp<int64_t>(vector[j], 0, shape.dim(d) - slice_sizes[d]);
    }
    for (size_t i = 0; i < batching_positions.size(); ++i) start[dn.operand_batching_dims[i]] = batch[batching_positions[i]];
    int64_t src_base = 0, dst_base = 0;
    for (int64_t d = 0; d < rank; ++d) src_base += start[d] * operand_strides[d];
    for (size_t i = 0; i < out_batch_dims.size(); ++i) dst_base += batch[i] * out_strides[out_batch_dims[i]];
    IndexCounter outer(outer_sizes);
    for (int64_t o = 0; o < outer_count; ++o, outer.Next()) {
      int64_t src = src_base, dst = dst_base;
      for (size_t i = 0; i < outer_sizes.size(); ++i) {
        src += outer[i] * operand_strides[offset_operand_dims[i]];
        dst += outer[i] * out_strides[dn.offset_dims[i]];
      }
      CopyRun(result.raw() + dst * size, run_dst_stride, operand.raw() + src * size, run_src_stride, run, size);
    }
  }
  return result;
}

Literal EvaluateScatter(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  ScatterPlan plan = MakeScatterPlan(instruction, operands);
  const int64_t count = plan.count;
  if (instruction.to_apply() == nullptr) KernelError(instruction, "missing to_apply computation");
  const Shape& shape = instruction.shape();
  for (int64_t i = 0; i < count; ++i) {
    const Shape& expected = count == 1 ? shape : (shape.IsTuple() && shape.tuple_size() == count ? shape.tuple_shape(i) : Shape());
    if (!expected.IsArray() || !expected.Compatible(operands[i]->shape()))
      KernelError(instruction, StrCat("result shape ", shape.ToString(false), " does not match the operands"));
  }
  std::vector<Literal> results;
  for (int64_t i = 0; i < count; ++i) results.push_back(*operands[i]);
  const Literal& indices = *operands[count];
  Operands updates = operands.subspan(count + 1);
  const Shape& operand_shape = operands[0]->shape();
  BinaryReducer op = BinaryReducer::kUnknown;
  ScatterCombiner combiner = ClassifyCombiner(*instruction.to_apply(), operands, count, op);
  if (combiner == ScatterCombiner::kKeep) return std::move(results[0]);
  if (combiner == ScatterCombiner::kReplace || combiner == ScatterCombiner::kReducer) {
    DispatchElementType(results[0].element_type(), [&]<typename T>() {
      T* out = results[0].data<T>();
      const T* update = updates[0]->data<T>();
      if (combiner == ScatterCombiner::kReplace) {
        ForEachScatterElement(instruction, plan, indices, operand_shape, [&](int64_t o, int64_t u) { out[o] = update[u]; });
        return;
      }
      DispatchReducer(op, [&]<BinaryReducer kOp>() {
        ForEachScatterElement(instruction, plan, indices, operand_shape, [&](int64_t o, int64_t u) {
          out[o] = Narrow<T>(ApplyReducer<kOp, AccumulatorType<T>>(Widen(out[o]), Widen(update[u])));
        });
      });
    });
    return std::move(results[0]);
  }
  std::vector<ElementType> param_types, result_types;
  std::vector<int64_t> sizes, update_sizes;
  for (int64_t i = 0; i < count; ++i) {
    param_types.push_back(results[i].element_type());
    result_types.push_back(results[i].element_type());
    sizes.push_back(ElementByteSize(results[i].element_type()));
  }
  for (int64_t i = 0; i < count; ++i) {
    param_types.push_back(updates[i]->element_type());
    update_sizes.push_back(ElementByteSize(updates[i]->element_type()));
  }
  ScalarCaller caller(evaluator, *instruction.to_apply(), instruction, param_types, result_types);
  ForEachScatterElement(instruction, plan, indices, operand_shape, [&](int64_t o, int64_t u) {
    for (int64_t i = 0; i < count; ++i) {
      caller.SetArgument(i, results[i].raw() + o * sizes[i]);
      caller.SetArgument(count + i, updates[i]->raw() + u * update_sizes[i]);
    }
    caller.Call();
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(results[i].raw() + o * sizes[i], caller.Result(i), static_cast<size_t>(sizes[i]));
  });
  if (count == 1) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace gspmd
