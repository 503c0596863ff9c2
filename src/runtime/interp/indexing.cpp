// Gather and scatter kernels (full dimension numbers, batching dims, XLA's index clamping).
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
using namespace kernel;

Literal EvaluateGather(const Instruction& instruction, const Literal& operand, const Literal& start_indices) {
  KernelError(instruction, "gather is not implemented yet");
}

Literal EvaluateScatter(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  KernelError(instruction, "scatter is not implemented yet");
}

}  // namespace gspmd
