// A scalar computation (reducer, comparator, combiner) compiled into a flat list of typed
// steps, so kernels can apply it per element without going through the Evaluator.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "ir/attributes.h"
#include "ir/computation.h"

namespace gspmd::kernel {

// One value of any scalar element type, stored in its native representation.
struct ScalarRegister {
  alignas(8) uint8_t bytes[8] = {};
};

// Compiles computations made only of scalar parameter, constant, add, subtract, multiply,
// divide, maximum, minimum, and, or, xor, not, negate, abs, copy, compare, select, convert and
// same-width bitcast-convert instructions (no complex or storage-only types), with a scalar or
// tuple-of-scalars root; anything else is not compiled and the caller keeps using the Evaluator.
// Semantics match the elementwise kernels (f16/bf16 computed in float, integers wrap, x/0 = -1,
// NaN-propagating max/min, TOTALORDER compares).
//
//   %argmax (v0: f32[], i0: s32[], v1: f32[], i1: s32[]) -> (f32[], s32[]) { ... }
//   std::optional<ScalarProgram> program = ScalarProgram::Compile(argmax);
//   std::vector<ScalarRegister> registers = program->MakeRegisters();
//   copy arguments into registers[program->parameter_register(i)]; program->Run(registers.data());
//   read results from registers[program->result_register(i)].
class ScalarProgram {
 public:
  static std::optional<ScalarProgram> Compile(const Computation& computation);

  // Registers holding the constants; parameters and temporaries are zero.
  std::vector<ScalarRegister> MakeRegisters() const { return initial_registers_; }
  void Run(ScalarRegister* registers) const {
    for (const Step& step : steps_) step.run(step, registers);
  }
  int32_t parameter_register(int64_t i) const { return parameter_registers_[i]; }
  int32_t result_register(int64_t i) const { return result_registers_[i]; }
  int64_t result_count() const { return static_cast<int64_t>(result_registers_.size()); }

  // One instruction: run(step, registers) computes registers[out] from registers[a, b, c].
  struct Step {
    void (*run)(const Step&, ScalarRegister*) = nullptr;
    int32_t out = 0, a = 0, b = 0, c = 0;
    ComparisonDirection direction = ComparisonDirection::kEq;
    ElementType from = ElementType::kInvalid, to = ElementType::kInvalid;
  };

 private:
  std::vector<Step> steps_;
  std::vector<ScalarRegister> initial_registers_;
  std::vector<int32_t> parameter_registers_;
  std::vector<int32_t> result_registers_;
};

}  // namespace gspmd::kernel
