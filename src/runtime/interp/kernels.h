// The reference interpreter's kernels, one declaration per op family. Each takes the
// instruction (for its attributes and result shape) and the evaluated operands, and returns
// the result. Kernels that apply a called computation get the Evaluator to call it.
#pragma once

#include <span>

#include "ir/instruction.h"
#include "ir/literal.h"

namespace gspmd {

class Evaluator;
struct DeviceContext;
using Operands = std::span<const Literal* const>;

// elementwise.cpp: unary ops (abs ... erf, not, popcnt, is-finite), binary ops (add ... xor,
// shifts, power, atan2, remainder), compare (every direction and type), select, clamp,
// convert, bitcast-convert, reduce-precision.
Literal EvaluateElementwise(const Instruction& instruction, Operands operands);

// shape_ops.cpp: broadcast, reshape, bitcast, transpose, copy, slice, dynamic-slice,
// dynamic-update-slice, pad, concatenate, reverse, iota.
Literal EvaluateShapeOp(const Instruction& instruction, Operands operands);

// dot.cpp, convolution.cpp: dot (general dimension numbers) and convolution (windows,
// padding, strides, lhs/rhs dilation, feature and batch group counts, dim_labels), on oneDNN.
Literal EvaluateDot(const Instruction& instruction, const Literal& lhs, const Literal& rhs);
Literal EvaluateConvolution(const Instruction& instruction, const Literal& lhs, const Literal& rhs);

// reductions.cpp: reduce (variadic), reduce-window, select-and-scatter.
Literal EvaluateReduce(const Instruction& instruction, Operands operands, Evaluator& evaluator);
Literal EvaluateReduceWindow(const Instruction& instruction, Operands operands, Evaluator& evaluator);
Literal EvaluateSelectAndScatter(const Instruction& instruction, Operands operands,
                                 Evaluator& evaluator);

// indexing.cpp: gather and scatter.
Literal EvaluateGather(const Instruction& instruction, const Literal& operand,
                       const Literal& start_indices);
Literal EvaluateScatter(const Instruction& instruction, Operands operands, Evaluator& evaluator);

// sorting.cpp: sort (several operands, any comparator), topk and the TopK custom-call.
Literal EvaluateSort(const Instruction& instruction, Operands operands, Evaluator& evaluator);
Literal EvaluateTopK(const Instruction& instruction, const Literal& operand);

// collectives.cpp: all-reduce, all-gather, reduce-scatter, all-to-all (array and tuple forms),
// collective-permute, collective-broadcast, through context.communicator. With one device
// (no communicator) they act on the single device's data.
Literal EvaluateCollective(const Instruction& instruction, Operands operands,
                           const DeviceContext& context, Evaluator& evaluator);

// collectives.cpp: collective-permute-start hands its operand to the communicator and returns
// the permute's handle; collective-permute-done waits for it and returns what the device
// received (zeros when no pair targets it). The evaluator keeps the handle in the start's value.
class Communicator;
int64_t StartAsyncPermute(const Instruction& start, Literal operand, const DeviceContext& context,
                          Communicator& communicator);
Literal FinishAsyncPermute(int64_t handle, const DeviceContext& context, Communicator& communicator);

// A reducer computation recognized as a plain binary op of its two parameters, so kernels can
// run it without calling the evaluator per element.
enum class BinaryReducer { kUnknown, kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };
BinaryReducer RecognizeReducer(const Computation& computation);

}  // namespace gspmd
