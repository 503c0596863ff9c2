// Calling a scalar computation (to_apply, comparator, select) element by element through the
// Evaluator, with argument literals reused between calls.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "ir/computation.h"
#include "ir/literal.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernel_scalar_program.h"

namespace gspmd::kernel {

// Binds a computation taking scalars of param_types and returning a scalar or a tuple of
// scalars. Construction checks the signature (a UserError naming `user` when it does not
// match); then SetArgument / Call / Result run it, as a compiled ScalarProgram when the
// computation compiles and through the Evaluator otherwise:
//   ScalarCaller call(evaluator, *reduce.to_apply(), reduce, {kF32, kF32});
//   call.SetArgument(0, &acc); call.SetArgument(1, &x); call.Call();
//   acc = *static_cast<const float*>(call.Result(0));
class ScalarCaller {
 public:
  ScalarCaller(Evaluator& evaluator, const Computation& computation, const Instruction& user,
               std::span<const ElementType> param_types, std::span<const ElementType> result_types);

  void SetArgument(int64_t i, const void* element) {
    void* target = program_ ? registers_[program_->parameter_register(i)].bytes : arguments_[i].raw();
    std::memcpy(target, element, static_cast<size_t>(argument_sizes_[i]));
  }
  void Call() {
    if (program_) {
      program_->Run(registers_.data());
      return;
    }
    CallEvaluator();
  }
  const void* Result(int64_t i) const {
    return program_ ? registers_[program_->result_register(i)].bytes : results_[i].raw();
  }
  bool compiled() const { return program_.has_value(); }

 private:
  Evaluator& evaluator_;
  const Computation& computation_;
  const Instruction& user_;
  std::vector<ElementType> result_types_;
  std::vector<Literal> arguments_;
  std::vector<int64_t> argument_sizes_;
  std::vector<const Literal*> argument_pointers_;
  std::vector<Literal> results_;
  std::optional<ScalarProgram> program_;
  std::vector<ScalarRegister> registers_;

  void CallEvaluator();
};

}  // namespace gspmd::kernel
