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

namespace gspmd::kernel {

// Binds a computation taking scalars of param_types and returning a scalar or a tuple of
// scalars. Construction checks the signature (a UserError naming `user` when it does not
// match); then SetArgument / Call / Result run it:
//   ScalarCaller call(evaluator, *reduce.to_apply(), reduce, {kF32, kF32});
//   call.SetArgument(0, &acc); call.SetArgument(1, &x); call.Call();
//   acc = *static_cast<const float*>(call.Result(0));
class ScalarCaller {
 public:
  ScalarCaller(Evaluator& evaluator, const Computation& computation, const Instruction& user,
               std::span<const ElementType> param_types, std::span<const ElementType> result_types);

  void SetArgument(int64_t i, const void* element) {
    std::memcpy(arguments_[i].raw(), element, static_cast<size_t>(argument_sizes_[i]));
  }
  void Call();
  const void* Result(int64_t i) const { return results_[i].raw(); }
  int64_t result_count() const { return static_cast<int64_t>(results_.size()); }

 private:
  Evaluator& evaluator_;
  const Computation& computation_;
  const Instruction& user_;
  std::vector<ElementType> result_types_;
  std::vector<Literal> arguments_;
  std::vector<int64_t> argument_sizes_;
  std::vector<const Literal*> argument_pointers_;
  std::vector<Literal> results_;
};

}  // namespace gspmd::kernel
