// ScalarCaller: signature checks and the per-element call of a scalar computation.
#include "runtime/interp/kernel_call.h"

#include "runtime/interp/kernel_util.h"

namespace gspmd::kernel {

ScalarCaller::ScalarCaller(Evaluator& evaluator, const Computation& computation,
                           const Instruction& user, std::span<const ElementType> param_types,
                           std::span<const ElementType> result_types)
    : evaluator_(evaluator),
      computation_(computation),
      user_(user),
      result_types_(result_types.begin(), result_types.end()) {
  if (computation.num_parameters() != static_cast<int64_t>(param_types.size()))
    KernelError(user, StrCat("computation %", computation.name(), " takes ", computation.num_parameters(),
                             " parameters; expected ", param_types.size()));
  for (size_t i = 0; i < param_types.size(); ++i) {
    const Shape& shape = computation.parameter(static_cast<int64_t>(i))->shape();
    if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != param_types[i])
      KernelError(user, StrCat("parameter ", i, " of computation %", computation.name(), " is ",
                               shape.ToString(false), "; expected ", ElementTypeName(param_types[i]), "[]"));
    arguments_.emplace_back(Shape(param_types[i], {}));
    argument_sizes_.push_back(ElementByteSize(param_types[i]));
  }
  for (const Literal& argument : arguments_) argument_pointers_.push_back(&argument);
  program_ = ScalarProgram::Compile(computation);
  if (!program_) return;
  // The compiled program must produce exactly the expected results; otherwise the Evaluator
  // path runs and reports the mismatch.
  bool results_match = program_->result_count() == static_cast<int64_t>(result_types.size());
  for (size_t i = 0; results_match && i < result_types.size(); ++i) {
    const Instruction* root = computation.root();
    const Shape& shape = root->opcode() == Opcode::kTuple ? root->operand(static_cast<int64_t>(i))->shape() : root->shape();
    results_match = shape.element_type() == result_types[i];
  }
  if (!results_match) {
    program_.reset();
    return;
  }
  registers_ = program_->MakeRegisters();
}

void ScalarCaller::CallEvaluator() {
  Literal result = evaluator_.Call(computation_, argument_pointers_);
  results_ = FlattenTuple(std::move(result));
  if (results_.size() != result_types_.size())
    KernelError(user_, StrCat("computation %", computation_.name(), " returns ", results_.size(),
                              " values; expected ", result_types_.size()));
  for (size_t i = 0; i < results_.size(); ++i) {
    const Shape& shape = results_[i].shape();
    if (shape.rank() != 0 || shape.element_type() != result_types_[i])
      KernelError(user_, StrCat("computation %", computation_.name(), " result ", i, " is ",
                                shape.ToString(false), "; expected ", ElementTypeName(result_types_[i]), "[]"));
  }
}

}  // namespace gspmd::kernel
