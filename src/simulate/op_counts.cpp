// FLOP, transcendental and byte counts per instruction, and the opcode table that decides how
// each opcode is costed and fused.
#include "simulate/op_counts.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ir/computation.h"

namespace gspmd::simulate {
namespace {

bool IsTranscendental(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kTanh: case Opcode::kSqrt: case Opcode::kRsqrt:
    case Opcode::kCbrt: case Opcode::kPower: case Opcode::kSine: case Opcode::kCosine:
    case Opcode::kTan: case Opcode::kErf: case Opcode::kAtan2:
      return true;
    default:
      return false;
  }
}

// Elementwise arithmetic that counts one FLOP (or transcendental) per result element.
bool IsElementwiseArithmetic(Opcode opcode) {
  return IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) || opcode == Opcode::kCompare ||
         opcode == Opcode::kSelect || opcode == Opcode::kClamp || opcode == Opcode::kMap ||
         opcode == Opcode::kReducePrecision;
}

// Custom-calls that only annotate (sharding markers) and cost nothing.
bool IsAnnotation(const Instruction& instruction) {
  const std::string& target = instruction.custom_call_target;
  return target == "Sharding" || target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
         target.starts_with("xla.sdy.") || target.starts_with("local_xla.sdy.");
}

double Elements(const Shape& shape) {
  if (shape.IsTuple()) {
    double total = 0;
    for (const Shape& element : shape.tuple_shapes()) total += Elements(element);
    return total;
  }
  return shape.IsArray() ? static_cast<double>(shape.element_count()) : 0;
}

double Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  double product = 1;
  for (int64_t d : dims) product *= static_cast<double>(sizes.at(d));
  return product;
}

// Pairs (output position, kernel tap) along one spatial dim whose input position is a real
// element: not low/high padding, not a base-dilation hole.
double ValidTapPairs(int64_t input_size, int64_t output_size, const WindowDim& window) {
  const int64_t dilated_input = input_size == 0 ? 0 : (input_size - 1) * window.base_dilation + 1;
  double pairs = 0;
  for (int64_t o = 0; o < output_size; ++o) {
    for (int64_t k = 0; k < window.size; ++k) {
      const int64_t position = o * window.stride + k * window.window_dilation - window.padding_low;
      const bool valid = position >= 0 && position < dilated_input && position % window.base_dilation == 0;
      if (valid) pairs += 1;
    }
  }
  return pairs;
}

double ConvolutionFlops(const Instruction& conv) {
  const ConvDimensionNumbers& dims = conv.conv_dims();
  const Shape& input = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  const Shape& output = conv.shape();
  double flops = 2.0 * static_cast<double>(output.dim(dims.output_batch_dim)) *
                 static_cast<double>(output.dim(dims.output_feature_dim)) *
                 static_cast<double>(kernel.dim(dims.kernel_input_feature_dim));
  for (size_t i = 0; i < dims.input_spatial_dims.size(); ++i) {
    const WindowDim window = i < conv.window().size() ? conv.window()[i] : WindowDim{};
    flops *= ValidTapPairs(input.dim(dims.input_spatial_dims[i]), output.dim(dims.output_spatial_dims[i]), window);
  }
  return flops;
}

double SortFlops(const Instruction& sort) {
  const Shape& keys = sort.operand(0)->shape();
  if (keys.rank() == 0 || sort.called_computations().empty()) return 0;
  const int64_t dim = sort.dimensions.empty() ? keys.rank() - 1 : sort.dimensions[0];
  const double n = static_cast<double>(keys.dim(dim));
  const double rows = Elements(keys) / std::max(1.0, n);
  return n <= 1 ? 0 : rows * n * std::log2(n) * ComputationOps(*sort.called_computations()[0]);
}

double OperandBytes(const Instruction& instruction) {
  double bytes = 0;
  for (const Instruction* operand : instruction.operands()) bytes += static_cast<double>(operand->shape().byte_size());
  return bytes;
}

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

int PrecisionRank(const std::string& precision) {
  if (precision == "highest") return 2;
  if (precision == "high") return 1;
  return 0;
}

}  // namespace

OpClass ClassifyOp(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (IsCollective(opcode)) return OpClass::kCollective;
  if (IsElementwiseArithmetic(opcode)) return OpClass::kLoop;
  switch (opcode) {
    case Opcode::kReshape: case Opcode::kBitcast:
      return OpClass::kView;
    case Opcode::kParameter: case Opcode::kTuple: case Opcode::kGetTupleElement:
    case Opcode::kPartitionId: case Opcode::kReplicaId: case Opcode::kAfterAll: case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier: case Opcode::kDomain: case Opcode::kGetDimensionSize:
      return OpClass::kFree;
    case Opcode::kBroadcast: case Opcode::kIota: case Opcode::kConstant:
      return OpClass::kDuplicable;
    case Opcode::kConvert: case Opcode::kBitcastConvert: case Opcode::kStochasticConvert:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice: case Opcode::kPad:
    case Opcode::kConcatenate: case Opcode::kReverse: case Opcode::kCopy:
      return OpClass::kLoop;
    case Opcode::kReduce: case Opcode::kReduceWindow:
      return OpClass::kReduce;
    case Opcode::kDot: case Opcode::kConvolution:
      return OpClass::kMatrix;
    case Opcode::kDynamicUpdateSlice:
      return OpClass::kInPlace;
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
      return OpClass::kControl;
    case Opcode::kCollectivePermuteStart:  // one collective-permute, launched by the start
      return OpClass::kCollective;
    case Opcode::kCollectivePermuteDone:   // ready when the permute is
      return OpClass::kFree;
    case Opcode::kCustomCall:
      return IsAnnotation(instruction) ? OpClass::kFree : OpClass::kOpaque;
    default:
      return OpClass::kOpaque;
  }
}

double ComputationOps(const Computation& computation) {
  double ops = 0;
  for (const auto& instruction : computation.instructions()) {
    const Opcode opcode = instruction->opcode();
    if (IsElementwiseArithmetic(opcode)) ops += 1;
  }
  return std::max(1.0, ops);
}

OpCounts CountOp(const Instruction& instruction) {
  OpCounts counts;
  const OpClass op_class = ClassifyOp(instruction);
  if (RunsNoKernel(op_class) || op_class == OpClass::kControl) return counts;
  counts.unfused_bytes = OperandBytes(instruction) + static_cast<double>(instruction.shape().byte_size());
  const Opcode opcode = instruction.opcode();
  const double result_elements = Elements(instruction.shape());
  if (opcode == Opcode::kDot) {
    const Shape& lhs = instruction.operand(0)->shape();
    counts.matrix_flops = 2.0 * result_elements * Product(instruction.dot_dims().lhs_contracting_dims, lhs.dims());
  } else if (opcode == Opcode::kConvolution) {
    counts.matrix_flops = ConvolutionFlops(instruction);
  } else if (IsTranscendental(opcode)) {
    counts.transcendentals = result_elements;
  } else if (IsElementwiseArithmetic(opcode)) {
    const double per_element = opcode == Opcode::kMap && !instruction.called_computations().empty()
                                   ? ComputationOps(*instruction.called_computations()[0])
                                   : 1.0;
    counts.vector_flops = result_elements * per_element;
  } else if (opcode == Opcode::kReduce && !instruction.called_computations().empty()) {
    const int64_t inputs = instruction.operand_count() / 2;
    double applications = 0;
    for (int64_t i = 0; i < inputs; ++i) {
      const double in = Elements(instruction.operand(i)->shape());
      const double out = instruction.shape().IsTuple() ? Elements(instruction.shape().tuple_shape(i)) : result_elements;
      applications += std::max(0.0, in - out);
    }
    counts.vector_flops = applications * ComputationOps(*instruction.called_computations()[0]);
  } else if (opcode == Opcode::kReduceWindow && !instruction.called_computations().empty()) {
    double window = 1;
    for (const WindowDim& dim : instruction.window()) window *= static_cast<double>(dim.size);
    counts.vector_flops = result_elements * std::max(0.0, window - 1) * ComputationOps(*instruction.called_computations()[0]);
  } else if (opcode == Opcode::kSort) {
    counts.vector_flops = SortFlops(instruction);
  }
  return counts;
}

MatrixOperands MatrixOperandsOf(const Instruction& matrix_op) {
  MatrixOperands operands;
  operands.element_type = Lowercase(std::string(ElementTypeName(matrix_op.operand(0)->shape().element_type())));
  int rank = 0;
  for (const auto& [name, value] : matrix_op.extra_attributes()) {
    if (name != "operand_precision" && name != "precision_config") continue;
    const std::string text = Lowercase(value);
    for (const char* precision : {"highest", "high", "default"}) {
      // "highest" contains "high": look for whole words between separators.
      size_t pos = 0;
      while ((pos = text.find(precision, pos)) != std::string::npos) {
        const size_t end = pos + std::string(precision).size();
        const bool word = (pos == 0 || !std::isalpha(static_cast<unsigned char>(text[pos - 1]))) &&
                          (end >= text.size() || !std::isalpha(static_cast<unsigned char>(text[end])));
        if (word) rank = std::max(rank, PrecisionRank(precision));
        pos = end;
      }
    }
  }
  operands.precision = rank == 2 ? "HIGHEST" : rank == 1 ? "HIGH" : "DEFAULT";
  return operands;
}

MatrixDims MatrixDimsOf(const Instruction& matrix_op) {
  MatrixDims dims;
  if (matrix_op.opcode() == Opcode::kConvolution) {
    const ConvDimensionNumbers& conv = matrix_op.conv_dims();
    const Shape& kernel = matrix_op.operand(1)->shape();
    dims.k = static_cast<double>(kernel.dim(conv.kernel_input_feature_dim));
    dims.n = static_cast<double>(kernel.dim(conv.kernel_output_feature_dim)) /
             static_cast<double>(std::max<int64_t>(1, matrix_op.feature_group_count));
    dims.m = Elements(matrix_op.shape()) / std::max(1.0, static_cast<double>(kernel.dim(conv.kernel_output_feature_dim)));
    return dims;
  }
  const DotDimensionNumbers& dot = matrix_op.dot_dims();
  const Shape& lhs = matrix_op.operand(0)->shape();
  const Shape& rhs = matrix_op.operand(1)->shape();
  dims.k = Product(dot.lhs_contracting_dims, lhs.dims());
  const double batch = Product(dot.lhs_batch_dims, lhs.dims());
  dims.m = Elements(lhs) / std::max(1.0, dims.k);  // batch x lhs free dims
  dims.n = Elements(rhs) / std::max(1.0, dims.k * batch);
  return dims;
}

}  // namespace gspmd::simulate
