// Sort (several operands, any comparator) and top-k kernels.
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
using namespace kernel;

Literal EvaluateSort(const Instruction& instruction, Operands operands, Evaluator& evaluator) {
  KernelError(instruction, "sort is not implemented yet");
}

Literal EvaluateTopK(const Instruction& instruction, const Literal& operand) {
  KernelError(instruction, "topk is not implemented yet");
}

}  // namespace gspmd
